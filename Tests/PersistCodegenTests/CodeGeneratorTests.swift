import Foundation
import Testing
import PersistKit
@testable import PersistCodegen

/// The generator's naming rules and the exact shape of generated code.
@Suite("Code generator")
struct CodeGeneratorTests {
    @Test("registry names come from the model file's name")
    func registryNames() {
        #expect(CodeGenerator.registryName(forModelFile: "Beers.model.json") == "BeersClasses")
        #expect(CodeGenerator.registryName(forModelFile: "My Model 2.xcdatamodel") == "MyModel2Classes")
        #expect(CodeGenerator.registryName(forModelFile: "Advanced.EvolutionDemo.xcdatamodeld") == "AdvancedEvolutionDemoClasses")
        #expect(CodeGenerator.registryName(forModelFile: "2.json") == "_2Classes")
    }

    /// A model with the naming cases: module prefixes, NSManagedObject, shared class names,
    /// entities shadowing Foundation types, keywords.
    static func namingModel() throws -> ManagedObjectModel {
        func entity(_ name: String, _ className: String?, _ properties: [PropertyDescription] = []) -> EntityDescription {
            let entity = EntityDescription(name: name, properties: properties)
            entity.managedObjectClassName = className
            return entity
        }
        let model = ManagedObjectModel(entities: [
            entity("Beer", "MyApp.Beer", [AttributeDescription(name: "when", type: .date),
                                          RelationshipDescription(name: "data", destination: "Data")]),
            entity("Brewery", ".Brewery"),
            entity("Plain", "NSManagedObject"),
            entity("First", "Shared"),
            entity("Second", "Shared"),
            entity("Data", nil),
            entity("Protocol", nil),
            entity("Where", "where"),
        ])
        try model.freeze()
        return model
    }

    @Test("class names: module prefixes stripped, fallbacks to entity names, reserved names suffixed")
    func classNames() throws {
        let plan = ModelPlan(model: try Self.namingModel(), registryName: "TestClasses")
        #expect(plan.classNames == [
            "Beer": "Beer", "Brewery": "Brewery", "Plain": "Plain", "First": "First", "Second": "Second",
            "Data": "Data", "Protocol": "ProtocolEntity", "Where": "whereEntity",
        ])
        #expect(plan.qualified("Data") == "Foundation.Data")
        #expect(plan.qualified("Date") == "Date")
    }

    @Test("a class named like a Foundation type makes the generator qualify that type")
    func qualification() throws {
        let files = CodeGenerator().files(for: try Self.namingModel(), modelFileName: "Test.model.json")
        let beer = try #require(files.first { $0.name == "_Beer.swift" })
        #expect(beer.contents.contains("    var when: Date? {"))
        #expect(beer.contents.contains("    var data: Data? {\n        get { relatedObject(forKey: \"data\", as: Data.self) }"))
        #expect(files.map(\.name) == [
            "_Beer.swift", "Beer.swift", "_Brewery.swift", "Brewery.swift", "_Data.swift", "Data.swift",
            "_First.swift", "First.swift", "_Plain.swift", "Plain.swift", "_ProtocolEntity.swift", "ProtocolEntity.swift",
            "_Second.swift", "Second.swift", "_whereEntity.swift", "whereEntity.swift", "_TestClasses.swift",
        ])
        #expect(files.filter { $0.kind == .human }.count == 8)
    }

    @Test("member names: keywords in backticks, member-hostile and shadowing names get a trailing _")
    func memberNames() throws {
        let entity = EntityDescription(name: "E", properties: [
            AttributeDescription(name: "default", type: .string),
            AttributeDescription(name: "Type", type: .string),
            AttributeDescription(name: "Attributes", type: .string),
            AttributeDescription(name: "AttributeKeys", type: .string),
            AttributeDescription(name: "Type_", type: .string),
            AttributeDescription(name: "value", type: .string),
        ])
        let model = ManagedObjectModel(entities: [entity])
        try model.freeze()
        #expect(ModelPlan.memberNames(for: entity) == [
            "default": "default", "Type": "Type_", "Attributes": "Attributes_", "AttributeKeys": "AttributeKeys_",
            "Type_": "Type__", "value": "value",
        ])
        #expect(ModelPlan.className(for: EntityDescription(name: "AttributeKeys", properties: []), registryName: "R") == "AttributeKeysEntity")
        let text = CodeGenerator().files(for: model, modelFileName: "E.json")[0].contents
        #expect(text.contains("    var `default`: String? {\n        get { string(AttributeKeys.`default`) }"))
        #expect(text.contains("        static let `default`: String = \"default\""))
        #expect(text.contains("        static let `default` = AttributeKey(\"default\")"))
        #expect(text.contains("    var Type_: String? {\n        get { string(AttributeKeys.Type_) }"))
        #expect(text.contains("        static let Type_ = AttributeKey(\"Type\")"))
    }

    @Test("each attribute type is read with its typed getter, narrowed where the getter is wider, and written with its typed setter, widened; the rest with a cast and setValue")
    func getters() throws {
        func attribute(_ name: String, _ type: AttributeType, scalar: Bool = false) -> AttributeDescription {
            let attribute = AttributeDescription(name: name, type: type)
            attribute.usesScalarValueType = scalar
            // Object ID and Undefined attributes are allowed only as transients.
            attribute.isTransient = type == .objectID || type == .undefined
            return attribute
        }
        let entity = EntityDescription(name: "E", properties: [
            attribute("a16", .integer16), attribute("a32", .integer32, scalar: true), attribute("a64", .integer64),
            attribute("aDouble", .double, scalar: true), attribute("aFloat", .float), attribute("aDecimal", .decimal),
            attribute("aBool", .boolean, scalar: true), attribute("aString", .string), attribute("aDate", .date),
            attribute("aData", .binaryData), attribute("aUUID", .uuid), attribute("aURL", .uri),
            attribute("anID", .objectID), attribute("anything", .undefined), attribute("aTransformable", .transformable),
        ])
        let model = ManagedObjectModel(entities: [entity])
        try model.freeze()
        let text = CodeGenerator().files(for: model, modelFileName: "E.json")[0].contents
        let getters = text.split(separator: "\n").filter { $0.contains("get { ") }.map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(getters == [
            "get { int64(AttributeKeys.a16).map { Int16(truncatingIfNeeded: $0) } }",
            "get { int64(AttributeKeys.a32).map { Int32(truncatingIfNeeded: $0) } ?? 0 }",
            "get { int64(AttributeKeys.a64) }",
            "get { double(AttributeKeys.aDouble) ?? 0 }",
            "get { double(AttributeKeys.aFloat).map { Float($0) } }",
            "get { decimal(AttributeKeys.aDecimal) }",
            "get { bool(AttributeKeys.aBool) ?? false }",
            "get { string(AttributeKeys.aString) }",
            "get { date(AttributeKeys.aDate) }",
            "get { data(AttributeKeys.aData) }",
            "get { uuid(AttributeKeys.aUUID) }",
            "get { url(AttributeKeys.aURL) }",
            "get { value(forKey: \"anID\") as? ManagedObjectID }",
            "get { value(forKey: \"anything\") }",
            "get { value(forKey: \"aTransformable\") }",
        ])
        let setters = text.split(separator: "\n").filter { $0.contains("set { ") }.map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(setters == [
            "set { setInt64(newValue.map { Int64($0) }, for: AttributeKeys.a16) }",
            "set { setInt64(Int64(newValue), for: AttributeKeys.a32) }",
            "set { setInt64(newValue, for: AttributeKeys.a64) }",
            "set { setDouble(newValue, for: AttributeKeys.aDouble) }",
            "set { setDouble(newValue.map { Double($0) }, for: AttributeKeys.aFloat) }",
            "set { setDecimal(newValue, for: AttributeKeys.aDecimal) }",
            "set { setBool(newValue, for: AttributeKeys.aBool) }",
            "set { setString(newValue, for: AttributeKeys.aString) }",
            "set { setDate(newValue, for: AttributeKeys.aDate) }",
            "set { setData(newValue, for: AttributeKeys.aData) }",
            "set { setUUID(newValue, for: AttributeKeys.aUUID) }",
            "set { setURL(newValue, for: AttributeKeys.aURL) }",
            "set { setValue(newValue, forKey: \"anID\") }",
            "set { setValue(newValue, forKey: \"anything\") }",
            "set { setValue(newValue, forKey: \"aTransformable\") }",
        ])
        // The keys: one for each attribute read with a typed getter, none for the others.
        let keys = text.split(separator: "\n").filter { $0.contains("= AttributeKey(") }.map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(keys == ["a16", "a32", "a64", "aDouble", "aFloat", "aDecimal", "aBool", "aString", "aDate", "aData", "aUUID", "aURL"]
            .map { "static let \($0) = AttributeKey(\"\($0)\")" })
    }

    @Test("the machine file of a small model, exactly")
    func exactMachineFile() throws {
        let parent = EntityDescription(name: "Drink", properties: [
            AttributeDescription(name: "abv", type: .double),
        ])
        let scalar = AttributeDescription(name: "count", type: .integer64, isOptional: false)
        scalar.usesScalarValueType = true
        let child = EntityDescription(name: "Tea", properties: [
            scalar,
            RelationshipDescription(name: "cups", destination: "Cup", toMany: true, inverse: "tea"),
        ])
        child.superentityName = "Drink"
        let cup = EntityDescription(name: "Cup", properties: [
            RelationshipDescription(name: "tea", destination: "Tea", inverse: "cups"),
        ])
        let model = ManagedObjectModel(entities: [parent, child, cup])
        try model.freeze()
        let files = CodeGenerator(options: .init(access: .public)).files(for: model, modelFileName: "Tea.model.json")
        let tea = try #require(files.first { $0.name == "_Tea.swift" })
        #expect(tea.contents == """
            // _Tea.swift: generated by persistctl codegen from Tea.model.json, entity Tea.
            // Rewritten on every run: do not edit. Your own code for Tea goes in Tea.swift.

            import Foundation
            import PersistKit

            /// An object of the entity `Tea`.
            public final class Tea: Drink {
                /// The name of the entity: "Tea".
                override public class var entityName: String { "Tea" }
                /// The class overrides neither `willSave()` nor `didSave()`: a save does not call them.
                override public class var usesSaveHooks: Bool { false }

                /// The names of the attributes of `Tea` (inherited ones included), for predicates,
                /// sort descriptors and key paths.
                public enum Attributes {
                    /// "abv"
                    public static let abv: String = "abv"
                    /// "count"
                    public static let count: String = "count"
                }

                /// The names of the relationships of `Tea` (inherited ones included), for predicates,
                /// sort descriptors and key paths.
                public enum Relationships {
                    /// "cups"
                    public static let cups: String = "cups"
                }

                /// The keys the typed getters and setters use: each keeps the attribute's slot.
                private enum AttributeKeys {
                    static let count = AttributeKey("count")
                }

                /// The attribute `count` (Integer 64, required, scalar: nil reads as 0).
                public var count: Int64 {
                    get { int64(AttributeKeys.count) ?? 0 }
                    set { setInt64(newValue, for: AttributeKeys.count) }
                }

                /// The to-many relationship `cups` (to Cup, inverse tea).
                public var cups: Set<Cup> {
                    get { relatedObjects(forKey: "cups", as: Cup.self) }
                    set { setValue(newValue.map { $0 as ManagedObject }, forKey: "cups") }
                }

                /// Adds `object` to `cups`, keeping the inverse in step.
                public func addToCups(_ object: Cup) {
                    addObject(object, forKey: "cups")
                }

                /// Removes `object` from `cups`, keeping the inverse in step.
                public func removeFromCups(_ object: Cup) {
                    removeObject(object, forKey: "cups")
                }
            }

            """)
        let drink = try #require(files.first { $0.name == "_Drink.swift" })
        #expect(drink.contents.contains("public class Drink: ManagedObject, TypedManagedObject {\n    /// The name of the entity: \"Drink\".\n    public class var entityName: String { \"Drink\" }"))
        let registry = try #require(files.last)
        #expect(registry.name == "_TeaClasses.swift")
        let dictionary = [
            "    public static var classesByEntityName: [String: ManagedObject.Type] {",
            "        [",
            "            \"Cup\": Cup.self,",
            "            \"Drink\": Drink.self,",
            "            \"Tea\": Tea.self,",
            "        ]",
            "    }",
        ].joined(separator: "\n")
        #expect(registry.contents.contains(dictionary))
    }
}
