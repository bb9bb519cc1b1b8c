import Foundation
import Testing
@testable import PersistKit

/// Validation on load: every error names the file, entity and property, with an exact message.
@Suite("Model validation")
struct ModelValidationTests {
    static let file = "/models/test.json"

    /// A model with entities A and B, each given `aProperties` / `bProperties` (JSON array bodies).
    static func model(a aProperties: String = "", b bProperties: String = "", extra: String = "") -> String {
        """
        { \(extra) "entities": [
            { "name": "A", "attributes": [{ "name": "x", "type": "string" }], "relationships": [\(aProperties)] },
            { "name": "B", "relationships": [\(bProperties)] }
        ]}
        """
    }

    @Test("each invalid model gives its exact error", arguments: [
        (model(a: #"{ "name": "r", "destination": "Nope" }"#),
         "entity A, property r: destination entity Nope does not exist"),
        (model(a: #"{ "name": "r", "destination": "B", "inverse": "back" }"#),
         "entity A, property r: inverse relationship back does not exist on entity B"),
        (model(a: #"{ "name": "r", "destination": "B", "inverse": "s" }, { "name": "t", "destination": "B" }"#,
               b: #"{ "name": "s", "destination": "A", "inverse": "t" }"#),
         "entity A, property r: inverse s on B names t as its inverse, not r"),
        (model(a: #"{ "name": "r", "destination": "B", "inverse": "s" }"#,
               b: #"{ "name": "s", "destination": "B" }"#),
         "entity A, property r: inverse s points to B, not back to A"),
        (#"{ "entities": [{ "name": "A" }, { "name": "A" }] }"#,
         "entity A: duplicate entity name"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "string" }, { "name": "x", "type": "date" }] }] }"#,
         "entity A, property x: duplicate property name"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "money" }] }] }"#,
         #"entity A, property x: unknown attribute type "money""#),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "integer16", "default": "abc" }] }] }"#,
         #"entity A, property x: default value "abc" is not a valid integer16"#),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "integer16", "default": 40000 }] }] }"#,
         "entity A, property x: default value 40000 is not a valid integer16"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "date", "default": "yesterday" }] }] }"#,
         #"entity A, property x: default value "yesterday" is not a valid date"#),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "description", "type": "string" }] }] }"#,
         "entity A, property description: description is a reserved name: a managed object already has a member with that name"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "objectID", "type": "string" }] }] }"#,
         "entity A, property objectID: objectID is a reserved name: a managed object already has a member with that name"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "a.b", "type": "string" }] }] }"#,
         #"entity A, property a.b: a property name cannot contain "." (it separates the parts of a key path)"#),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "integer32", "min": 10, "max": 2 }] }] }"#,
         "entity A, property x: minimum 10 is greater than maximum 2"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "string", "min": 10, "max": 2 }] }] }"#,
         "entity A, property x: minimum 10 is greater than maximum 2"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "date", "min": "2020-01-01T00:00:00Z", "max": "2010-01-01T00:00:00Z" }] }] }"#,
         "entity A, property x: minimum 2020-01-01T00:00:00Z is greater than maximum 2010-01-01T00:00:00Z"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "string", "min": -1 }] }] }"#,
         "entity A, property x: minimum -1 is not a valid length (a non-negative integer)"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "boolean", "max": 1 }] }] }"#,
         "entity A, property x: a maximum is not allowed for type boolean"),
        (model(a: #"{ "name": "r", "destination": "B", "toMany": true, "minCount": 5, "maxCount": 2 }"#),
         "entity A, property r: minimum count 5 and maximum count 2 do not form a range"),
        (model(a: #"{ "name": "r", "destination": "B", "maxCount": 3 }"#),
         "entity A, property r: a to-one relationship cannot have a maximum count of 3 (make it to-many)"),
        (model(a: #"{ "name": "r", "destination": "B", "ordered": true }"#),
         "entity A, property r: a to-one relationship cannot be ordered"),
        (model(a: #"{ "name": "r", "destination": "B", "deleteRule": "explode" }"#),
         #"entity A, property r: unknown delete rule "explode""#),
        (#"{ "entities": [{ "name": "A", "parent": "Base" }] }"#,
         "entity A: parent entity Base does not exist"),
        (#"{ "entities": [{ "name": "A", "parent": "B" }, { "name": "B", "parent": "A" }] }"#,
         "entity A: inheritance cycle through A"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "undefined" }] }] }"#,
         "entity A, property x: type Undefined is allowed only for transient attributes"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "string", "regex": "[a-" }] }] }"#,
         "entity A, property x: regular expression [a- does not compile"),
        (#"{ "entities": [{ "name": "A", "uniquenessConstraints": [["nope"]] }] }"#,
         "entity A, property nope: uniqueness constraint names an unknown property"),
        (#"{ "entities": [{ "name": "A", "indexes": [{ "name": "i", "elements": [{ "property": "nope" }] }] }] }"#,
         "entity A, property nope: fetch index i names an unknown property"),
        (#"{ "configurations": { "Cloud": ["A", "Gone"] }, "entities": [{ "name": "A" }] }"#,
         "entity Gone: configuration Cloud names entity Gone, which does not exist"),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "string", "optinal": false }] }] }"#,
         #"entity A, property x: unknown key "optinal" in attribute"#),
        (#"{ "entities": [{ "name": "A", "attributes": [{ "name": "x", "type": "string", "optional": "no" }] }] }"#,
         #"entity A, property x: key "optional" of attribute must be a boolean, not a string"#),
        (#"{ "entities": [{ "attributes": [] }] }"#,
         #"entity #1: entity has no "name""#),
        (#"{ "formatVersion": 2, "entities": [] }"#,
         "formatVersion 2 is not supported (this version of persistd reads 1)"),
        (#"{ "entities": [ "#,
         "not valid JSON: The given data was not valid JSON."),
    ])
    func invalidModel(json: String, message: String) {
        let error = ModelTestSupport.modelError { _ = try ModelTestSupport.model(json: json, path: Self.file) }
        #expect(error?.file == Self.file)
        #expect(error?.description == "\(Self.file): \(message)")
    }

    @Test("a relationship with no inverse is allowed, as in Core Data")
    func relationshipWithoutInverse() throws {
        let model = try ModelTestSupport.model(json: Self.model(a: #"{ "name": "r", "destination": "B" }"#))
        try model.freeze()
        #expect(model.entitiesByName["A"]?.relationshipsByName["r"]?.inverseRelationship == nil)
    }

    @Test("errors carry the entity and property as separate fields")
    func errorFields() {
        let error = ModelTestSupport.modelError {
            _ = try ModelTestSupport.model(json: #"{ "entities": [{ "name": "Beer", "attributes": [{ "name": "abv", "type": "double", "default": true }] }] }"#)
        }
        #expect(error == ModelError(file: "/models/test.json", entity: "Beer", property: "abv", "default value true is not a valid double"))
    }

    @Test("a model built in code is validated when frozen")
    func modelBuiltInCode() {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "A", properties: [AttributeDescription(name: "n", type: .integer16, defaultValue: .string("x"))]),
        ])
        let error = ModelTestSupport.modelError { try model.freeze() }
        #expect(error?.description == "entity A, property n: default value x is not a valid Integer 16")
    }
}

/// `EntityDescription.isKind(of:)`: an entity is of its own kind and of every superentity's, at
/// any depth, and of no subentity's or unrelated entity's.
@Suite("Entity kinds")
struct EntityKindTests {
    @Test func anEntityIsOfItsOwnAndItsAncestorsKindsOnly() throws {
        let json = #"""
        { "entities": [
            { "name": "Item", "abstract": true, "attributes": [{ "name": "title", "type": "string" }] },
            { "name": "Book", "parent": "Item", "attributes": [{ "name": "pages", "type": "integer32" }] },
            { "name": "Novel", "parent": "Book", "attributes": [{ "name": "genre", "type": "string" }] },
            { "name": "Film", "parent": "Item" },
            { "name": "Shelf" }
        ]}
        """#
        let model = try ManagedObjectModel(json: Data(json.utf8), sourceURL: nil)
        let entities = model.entitiesByName
        let item = try #require(entities["Item"]), book = try #require(entities["Book"])
        let novel = try #require(entities["Novel"]), film = try #require(entities["Film"])
        let shelf = try #require(entities["Shelf"])
        for entity in [item, book, novel, film, shelf] { #expect(entity.isKind(of: entity)) }
        #expect(book.isKind(of: item))
        #expect(novel.isKind(of: book))
        #expect(novel.isKind(of: item))
        #expect(film.isKind(of: item))
        #expect(!item.isKind(of: book))
        #expect(!book.isKind(of: novel))
        #expect(!film.isKind(of: book))
        #expect(!novel.isKind(of: film))
        #expect(!shelf.isKind(of: item))
        #expect(!item.isKind(of: shelf))
    }
}
