import Foundation
import Testing
@testable import PersistKit

/// `ManagedObjectModel.mergedModel(from:)`.
@Suite("Model merging")
struct ModelMergingTests {
    static let beers = """
        { "versionIdentifiers": ["beers"], "configurations": { "Main": ["Beer"] }, "entities": [
            { "name": "Beer", "attributes": [{ "name": "name", "type": "string" }],
              "relationships": [{ "name": "brewery", "destination": "Brewery", "inverse": "beers" }] }
        ]}
        """
    static let breweries = """
        { "versionIdentifiers": ["breweries"], "configurations": { "Main": ["Brewery"] }, "entities": [
            { "name": "Brewery", "relationships": [{ "name": "beers", "destination": "Beer", "inverse": "brewery", "toMany": true }] }
        ]}
        """

    @Test("entities of several models merge, with relationships across them")
    func merge() throws {
        // Each half alone names an entity of the other: load the halves unvalidated.
        let first = ManagedObjectModel(entities: [])
        try ModelJSONReader(file: "/m/beers.json").read(JSONValue.parse(Data(Self.beers.utf8), file: nil), into: first)
        first.sourceURL = URL(fileURLWithPath: "/m/beers.json")
        let second = ManagedObjectModel(entities: [])
        try ModelJSONReader(file: "/m/breweries.json").read(JSONValue.parse(Data(Self.breweries.utf8), file: nil), into: second)
        let merged = try ManagedObjectModel.mergedModel(from: [first, second])
        try merged.freeze()
        #expect(merged.entities.map(\.name) == ["Beer", "Brewery"])
        #expect(merged.versionIdentifiers == ["beers", "breweries"])
        #expect(merged.configurations == ["Main": ["Beer", "Brewery"]])
        let brewery = try #require(merged.entitiesByName["Beer"]?.relationshipsByName["brewery"])
        #expect(brewery.destinationEntity === merged.entitiesByName["Brewery"])
        #expect(brewery.inverseRelationship === merged.entitiesByName["Brewery"]?.relationshipsByName["beers"])
        // The models merged are not changed, and share no descriptions with the result.
        #expect(first.entities[0] !== merged.entities[0])
        #expect(first.entities[0].managedObjectModel === first)
    }

    @Test("frozen models merge and stay frozen")
    func mergeFrozen() throws {
        let beers = try ModelTestSupport.model(json: #"{ "entities": [{ "name": "Beer", "attributes": [{ "name": "abv", "type": "double", "default": 5.5 }] }] }"#)
        let people = try ModelTestSupport.model(json: #"{ "entities": [{ "name": "Person", "parent": "Being" }, { "name": "Being", "abstract": true }] }"#)
        try beers.freeze()
        try people.freeze()
        let merged = try ManagedObjectModel.mergedModel(from: [beers, people])
        #expect(merged.isFrozen == false)
        #expect(merged.entities.map(\.name) == ["Beer", "Person", "Being"])
        #expect(merged.entitiesByName["Person"]?.superentity === merged.entitiesByName["Being"])
        #expect(merged.entitiesByName["Beer"]?.attributesByName["abv"]?.defaultValue == .double(5.5))
        #expect(beers.isFrozen && people.isFrozen)
    }

    @Test("an entity defined in two models is an error naming both sources")
    func duplicateEntity() throws {
        let a = try ModelTestSupport.model(json: #"{ "entities": [{ "name": "Beer" }] }"#, path: "/m/a.json")
        let b = try ModelTestSupport.model(json: #"{ "entities": [{ "name": "Beer" }] }"#, path: "/m/b.json")
        let c = ManagedObjectModel(entities: [EntityDescription(name: "Beer")])
        #expect(ModelTestSupport.modelError { _ = try ManagedObjectModel.mergedModel(from: [a, b]) }?.description
            == "entity Beer: entity Beer is defined in both /m/a.json and /m/b.json")
        #expect(ModelTestSupport.modelError { _ = try ManagedObjectModel.mergedModel(from: [a, c]) }?.description
            == "entity Beer: entity Beer is defined in both /m/a.json and model 2 (not loaded from a file)")
    }

    @Test("merging nothing gives an empty model")
    func mergeNothing() throws {
        #expect(try ManagedObjectModel.mergedModel(from: []).entities.isEmpty)
    }
}
