import Foundation
import Testing
@testable import PersistKit

/// Our JSON model format: reading, writing, round trips and the normalized form.
@Suite("Model JSON format")
struct ModelJSONTests {
    /// One attribute of every type, each with a default (where the type allows one) and bounds.
    static let everyType = """
        {
          "formatVersion": 1,
          "versionIdentifiers": ["b", "a"],
          "configurations": { "Main": ["Thing"] },
          "entities": [{
            "name": "Thing",
            "className": "App.Thing",
            "userInfo": { "k": "v" },
            "versionHashModifier": "vhm",
            "renamingIdentifier": "OldThing",
            "attributes": [
              { "name": "i16", "type": "integer16", "default": -32768, "min": -32768, "max": 32767 },
              { "name": "i32", "type": "Integer 32", "default": 2147483647 },
              { "name": "i64", "type": "integer64", "default": 9223372036854775807, "optional": false },
              { "name": "dec", "type": "decimal", "default": "12.345678901234567890123", "min": -4.5, "max": 100 },
              { "name": "dbl", "type": "double", "default": 5.2, "min": 0, "max": 1e300 },
              { "name": "flt", "type": "float", "default": 0.25 },
              { "name": "str", "type": "string", "default": "tab\\there \\"quoted\\" ü", "min": 1, "max": 10, "regex": "[a-z]+" },
              { "name": "flag", "type": "Boolean", "default": true },
              { "name": "when", "type": "date", "default": "2013-04-23T12:00:00Z", "min": "2001-01-01T00:00:00.250Z" },
              { "name": "bytes", "type": "binaryData", "default": "AAEC/w==", "allowsExternalStorage": true, "max": 1024 },
              { "name": "id", "type": "uuid", "default": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "preservesValueInHistoryOnDeletion": true },
              { "name": "link", "type": "URI", "default": "https://example.com/a?b=c" },
              { "name": "blob", "type": "transformable", "valueTransformer": "JSONTransformer", "valueClassName": "Notes" },
              { "name": "scratch", "type": "undefined", "transient": true },
              { "name": "ref", "type": "objectID", "transient": true },
              { "name": "count", "type": "integer64", "usesScalarValueType": true, "indexed": true,
                "userInfo": { "a": "b" }, "renamingIdentifier": "total", "versionHashModifier": "x" }
            ]
          }]
        }
        """

    @Test("every attribute type reads into the exact typed values")
    func everyAttributeTypeReads() throws {
        let model = try ModelTestSupport.model(json: Self.everyType)
        let thing = try #require(model.entitiesByName["Thing"])
        let a = thing.attributesByName
        #expect(model.versionIdentifiers == ["a", "b"])
        #expect(model.configurations == ["Main": ["Thing"]])
        #expect(thing.managedObjectClassName == "App.Thing")
        #expect(thing.userInfo == ["k": "v"])
        #expect(thing.versionHashModifier == "vhm")
        #expect(thing.renamingIdentifier == "OldThing")
        #expect(a["i16"]?.attributeType == .integer16)
        #expect(a["i16"]?.defaultValue == .integer(-32768))
        #expect(a["i16"]?.minValue == .integer(-32768))
        #expect(a["i16"]?.maxValue == .integer(32767))
        #expect(a["i32"]?.attributeType == .integer32)
        #expect(a["i32"]?.defaultValue == .integer(2147483647))
        #expect(a["i64"]?.defaultValue == .integer(Int64.max))
        #expect(a["i64"]?.isOptional == false)
        #expect(a["dec"]?.defaultValue == .decimal(try #require(Decimal(string: "12.345678901234567890123"))))
        #expect(a["dec"]?.minValue == .decimal(Decimal(string: "-4.5")!))
        #expect(a["dec"]?.maxValue == .decimal(100))
        #expect(a["dbl"]?.defaultValue == .double(5.2))
        #expect(a["dbl"]?.minValue == .double(0))
        #expect(a["dbl"]?.maxValue == .double(1e300))
        #expect(a["flt"]?.defaultValue == .double(0.25))
        #expect(a["str"]?.defaultValue == .string("tab\there \"quoted\" ü"))
        #expect(a["str"]?.minValue == .integer(1))
        #expect(a["str"]?.maxValue == .integer(10))
        #expect(a["str"]?.regularExpression == "[a-z]+")
        #expect(a["flag"]?.attributeType == .boolean)
        #expect(a["flag"]?.defaultValue == .bool(true))
        #expect(a["when"]?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 388_411_200)))
        #expect(a["when"]?.minValue == .date(Date(timeIntervalSinceReferenceDate: 0.25)))
        #expect(a["bytes"]?.defaultValue == .data(Data([0, 1, 2, 255])))
        #expect(a["bytes"]?.allowsExternalBinaryDataStorage == true)
        #expect(a["bytes"]?.maxValue == .integer(1024))
        #expect(a["id"]?.defaultValue == .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))
        #expect(a["id"]?.preservesValueInHistoryOnDeletion == true)
        #expect(a["link"]?.attributeType == .uri)
        #expect(a["link"]?.defaultValue == .url(URL(string: "https://example.com/a?b=c")!))
        #expect(a["blob"]?.attributeType == .transformable)
        #expect(a["blob"]?.valueTransformerName == "JSONTransformer")
        #expect(a["blob"]?.attributeValueClassName == "Notes")
        #expect(a["scratch"]?.attributeType == .undefined)
        #expect(a["scratch"]?.isTransient == true)
        #expect(a["ref"]?.attributeType == .objectID)
        #expect(a["count"]?.usesScalarValueType == true)
        #expect(a["count"]?.isIndexed == true)
        #expect(a["count"]?.userInfo == ["a": "b"])
        #expect(a["count"]?.renamingIdentifier == "total")
        #expect(a["count"]?.versionHashModifier == "x")
        #expect(a["count"]?.isOptional == true)
        #expect(a["count"]?.isTransient == false)
    }

    @Test("every attribute type round-trips: load, write, load gives the same normalized form")
    func everyAttributeTypeRoundTrips() throws {
        let model = try ModelTestSupport.model(json: Self.everyType)
        let written = try model.jsonRepresentation()
        let reloaded = try ManagedObjectModel(json: written, sourceURL: nil)
        #expect(try reloaded.normalizedJSON() == model.normalizedJSON())
        #expect(try reloaded.jsonRepresentation() == written)
        let text = String(decoding: written, as: UTF8.self)
        // Decimals are written as strings so that no digit is lost.
        #expect(text.contains(#""default": "12.345678901234567890123""#))
        #expect(text.contains(#""default": "2013-04-23T12:00:00Z""#))
        #expect(text.contains(#""min": "2001-01-01T00:00:00.250Z""#))
        #expect(text.contains(#""default": "tab\there \"quoted\" ü""#))
        #expect(text.contains(#""type": "integer32""#))
    }

    /// Every relationship shape: to-one, to-many, ordered, bounded, many-to-many, no inverse,
    /// reflexive, every delete rule.
    static let relationships = """
        {
          "entities": [
            { "name": "A", "relationships": [
                { "name": "one", "destination": "B", "inverse": "many", "optional": false, "deleteRule": "deny" },
                { "name": "manyB", "destination": "B", "inverse": "manyA", "toMany": true, "ordered": true,
                  "minCount": 1, "maxCount": 5, "deleteRule": "cascade" },
                { "name": "loose", "destination": "B", "deleteRule": "noAction", "transient": true },
                { "name": "parent", "destination": "A", "inverse": "children" },
                { "name": "children", "destination": "A", "inverse": "parent", "toMany": true, "deleteRule": "Cascade" }
            ]},
            { "name": "B", "relationships": [
                { "name": "many", "destination": "A", "inverse": "one", "toMany": true },
                { "name": "manyA", "destination": "A", "inverse": "manyB", "toMany": true, "maxCount": 0 }
            ]}
          ]
        }
        """

    @Test("every relationship shape reads, resolves and round-trips")
    func relationshipShapes() throws {
        let model = try ModelTestSupport.model(json: Self.relationships)
        try model.freeze()
        let a = try #require(model.entitiesByName["A"]).relationshipsByName
        let b = try #require(model.entitiesByName["B"]).relationshipsByName
        let one = try #require(a["one"])
        #expect(one.isToMany == false)
        #expect(one.maxCount == 1)
        #expect(one.isOptional == false)
        #expect(one.deleteRule == .deny)
        #expect(one.inverseRelationship === b["many"])
        #expect(one.destinationEntity === model.entitiesByName["B"])
        let manyB = try #require(a["manyB"])
        #expect(manyB.isToMany && manyB.isOrdered && manyB.isManyToMany)
        #expect(manyB.minCount == 1)
        #expect(manyB.maxCount == 5)
        #expect(manyB.deleteRule == .cascade)
        #expect(a["loose"]?.inverseRelationship == nil)
        #expect(a["loose"]?.deleteRule == DeleteRule.noAction)
        #expect(a["loose"]?.isTransient == true)
        #expect(a["children"]?.deleteRule == DeleteRule.cascade)
        #expect(a["children"]?.inverseRelationship === a["parent"])
        #expect(b["many"]?.isManyToMany == false)
        #expect(b["manyA"]?.maxCount == 0)
        #expect(b["many"]?.deleteRule == DeleteRule.nullify)

        let reloaded = try ManagedObjectModel(json: model.jsonRepresentation(), sourceURL: nil)
        #expect(try reloaded.normalizedJSON() == model.normalizedJSON())
    }

    @Test("the normalized form sorts entities and properties and writes every key")
    func normalizedForm() throws {
        let model = try ModelTestSupport.model(json: """
            { "entities": [
                { "name": "Zoo", "attributes": [{ "name": "z", "type": "string" }, { "name": "a", "type": "integer16", "default": 3 }],
                  "relationships": [{ "name": "keeper", "destination": "Keeper" }] },
                { "name": "Keeper" }
            ]}
            """)
        let expected = """
            {
              "configurations": {},
              "entities": [
                {
                  "abstract": false,
                  "attributes": [],
                  "indexes": [],
                  "name": "Keeper",
                  "relationships": [],
                  "uniquenessConstraints": [],
                  "userInfo": {}
                },
                {
                  "abstract": false,
                  "attributes": [
                    {
                      "allowsExternalStorage": false,
                      "default": 3,
                      "indexed": false,
                      "name": "a",
                      "optional": true,
                      "preservesValueInHistoryOnDeletion": false,
                      "transient": false,
                      "type": "integer16",
                      "userInfo": {},
                      "usesScalarValueType": false
                    },
                    {
                      "allowsExternalStorage": false,
                      "indexed": false,
                      "name": "z",
                      "optional": true,
                      "preservesValueInHistoryOnDeletion": false,
                      "transient": false,
                      "type": "string",
                      "userInfo": {},
                      "usesScalarValueType": false
                    }
                  ],
                  "indexes": [],
                  "name": "Zoo",
                  "relationships": [
                    {
                      "deleteRule": "nullify",
                      "destination": "Keeper",
                      "indexed": false,
                      "maxCount": 1,
                      "minCount": 0,
                      "name": "keeper",
                      "optional": true,
                      "ordered": false,
                      "toMany": false,
                      "transient": false,
                      "userInfo": {}
                    }
                  ],
                  "uniquenessConstraints": [],
                  "userInfo": {}
                }
              ],
              "formatVersion": 1,
              "versionIdentifiers": []
            }

            """
        #expect(String(decoding: try model.normalizedJSON(), as: UTF8.self) == expected)
        // The compact representation keeps model order and leaves defaults out.
        let compact = String(decoding: try model.jsonRepresentation(), as: UTF8.self)
        #expect(compact.firstRange(of: "Zoo")!.lowerBound < compact.firstRange(of: "Keeper")!.lowerBound)
        #expect(!compact.contains("optional"))
    }

    @Test("the normalized form is byte-identical across loads")
    func normalizedIsDeterministic() throws {
        let url = ModelTestSupport.packageRoot.appendingPathComponent("Examples/Beers.model.json")
        let first = try ManagedObjectModel(contentsOf: url).normalizedJSON()
        for _ in 0..<5 {
            #expect(try ManagedObjectModel(contentsOf: url).normalizedJSON() == first)
        }
    }

    @Test("the bundled Beers example loads with its entities and relationships")
    func beersExample() throws {
        let url = ModelTestSupport.packageRoot.appendingPathComponent("Examples/Beers.model.json")
        let model = try ManagedObjectModel(contentsOf: url)
        try model.freeze()
        #expect(model.entities.map(\.name) == ["Beer", "Brewery", "Bison", "Student", "Person", "Tag"])
        let beer = try #require(model.entitiesByName["Beer"])
        #expect(beer.properties.map(\.name) == [
            "name", "abv", "ibu", "style", "brewedOn", "uuid", "price", "isFavorite", "label", "website", "brewery", "tags",
        ])
        #expect(beer.attributesByName["name"]?.isOptional == false)
        #expect(beer.attributesByName["abv"]?.attributeType == .double)
        #expect(beer.attributesByName["ibu"]?.attributeType == .integer16)
        #expect(beer.attributesByName["brewedOn"]?.attributeType == .date)
        #expect(beer.attributesByName["uuid"]?.attributeType == .uuid)
        #expect(beer.attributesByName["price"]?.defaultValue == .decimal(Decimal(string: "3.5")!))
        let brewery = try #require(beer.relationshipsByName["brewery"])
        #expect(!brewery.isToMany && brewery.deleteRule == .nullify && brewery.inverseName == "beers")
        let beers = try #require(model.entitiesByName["Brewery"]?.relationshipsByName["beers"])
        #expect(beers.isToMany && beers.deleteRule == .cascade && beers.inverseRelationship === brewery)
        #expect(model.entitiesByName["Brewery"]?.attributesByName["founded"]?.attributeType == .integer32)
        #expect(model.entitiesByName["Person"]?.attributesByName["age"]?.attributeType == .integer16)
        #expect(model.entitiesByName["Bison"]?.attributesByName["birthDay"]?.attributeType == .date)
        #expect(model.entitiesByName["Student"]?.attributesByName["date"]?.attributeType == .date)
        let tag = try #require(model.entitiesByName["Tag"])
        #expect(tag.uniquenessConstraints == [["name"]])
        #expect(beer.relationshipsByName["tags"]?.isManyToMany == true)
        #expect(tag.relationshipsByName["beers"]?.inverseRelationship === beer.relationshipsByName["tags"])
        #expect(beer.indexes == [FetchIndexDescription(name: "byStyleAndName", elements: [.init(propertyName: "style"), .init(propertyName: "name")])])
    }

    @Test("a model built in code writes and reloads")
    func modelBuiltInCode() throws {
        let person = EntityDescription(name: "Person", properties: [
            AttributeDescription(name: "name", type: .string, isOptional: false, defaultValue: .string("")),
            RelationshipDescription(name: "friends", destination: "Person", toMany: true, inverse: "friends"),
        ])
        let model = ManagedObjectModel(entities: [person])
        let reloaded = try ManagedObjectModel(json: model.jsonRepresentation(), sourceURL: nil)
        #expect(try reloaded.normalizedJSON() == model.normalizedJSON())
        #expect(reloaded.entitiesByName["Person"]?.attributesByName["name"]?.defaultValue == .string(""))
    }
}
