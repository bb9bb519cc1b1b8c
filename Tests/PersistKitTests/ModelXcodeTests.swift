import Foundation
import Testing
@testable import PersistKit

/// Reading Xcode `.xcdatamodel` / `.xcdatamodeld` files.
@Suite("Model Xcode format")
struct ModelXcodeTests {
    static let bundle = ModelTestSupport.fixturesURL.appendingPathComponent("Beers.xcdatamodeld")

    @Test("the bundle's current version is the one .xccurrentversion names")
    func currentVersion() throws {
        #expect(try ManagedObjectModel.versionURLs(inBundle: Self.bundle).map(\.lastPathComponent) == ["Beers.xcdatamodel", "Beers 2.xcdatamodel"])
        #expect(try ManagedObjectModel.currentVersionURL(inBundle: Self.bundle).lastPathComponent == "Beers 2.xcdatamodel")
        let model = try ManagedObjectModel(contentsOf: Self.bundle)
        #expect(model.versionIdentifiers == ["2"])
        #expect(model.sourceURL?.path == Self.bundle.path + "/Beers 2.xcdatamodel/contents")
    }

    @Test("the fixture's entities, attributes and relationships are read exactly")
    func fixtureContents() throws {
        let model = try ManagedObjectModel(contentsOf: Self.bundle)
        try model.freeze()
        #expect(model.entities.map(\.name) == ["Beer", "Brewery", "Drink", "Lemonade", "Tag"])
        #expect(model.configurations == ["Cloud": ["Beer", "Brewery"]])

        let beer = try #require(model.entitiesByName["Beer"])
        #expect(beer.managedObjectClassName == "Beer")
        #expect(beer.properties.map(\.name) == [
            "abv", "brewedOn", "ibu", "isFavorite", "label", "name", "price", "style", "tasting", "uuid", "website", "brewery", "tags",
        ])
        let a = beer.attributesByName
        #expect(a["abv"]?.attributeType == .double)
        #expect(a["abv"]?.isOptional == true)
        #expect(a["abv"]?.defaultValue == .double(5))
        #expect(a["abv"]?.minValue == .double(0))
        #expect(a["abv"]?.maxValue == .double(100))
        #expect(a["abv"]?.usesScalarValueType == true)
        // defaultDateTimeInterval (seconds since 2001) wins over the display string.
        #expect(a["brewedOn"]?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 388_411_200)))
        #expect(a["ibu"]?.attributeType == .integer16)
        #expect(a["ibu"]?.defaultValue == .integer(0))
        // No optional="YES": not optional.
        #expect(a["isFavorite"]?.isOptional == false)
        #expect(a["isFavorite"]?.defaultValue == .bool(false))
        #expect(a["label"]?.attributeType == .binaryData)
        #expect(a["label"]?.allowsExternalBinaryDataStorage == true)
        #expect(a["name"]?.isOptional == false)
        #expect(a["name"]?.minValue == .integer(1))
        #expect(a["name"]?.regularExpression == "[A-Za-z].*")
        #expect(a["name"]?.renamingIdentifier == "title")
        #expect(a["price"]?.defaultValue == .decimal(Decimal(string: "3.5")!))
        #expect(a["style"]?.isIndexed == true)
        #expect(a["tasting"]?.attributeType == .transformable)
        #expect(a["tasting"]?.isTransient == true)
        #expect(a["tasting"]?.valueTransformerName == "NSSecureUnarchiveFromData")
        #expect(a["tasting"]?.attributeValueClassName == "TastingNotes")
        #expect(a["uuid"]?.attributeType == .uuid)
        #expect(a["uuid"]?.preservesValueInHistoryOnDeletion == true)
        #expect(a["website"]?.attributeType == .uri)
        #expect(beer.indexes == [FetchIndexDescription(name: "byStyleAndName", elements: [
            .init(propertyName: "style", isAscending: true), .init(propertyName: "name", isAscending: false),
        ])])
        #expect(beer.uniquenessConstraints == [["uuid"]])
        #expect(beer.userInfo == ["note": "the example model of persistd"])

        let brewery = try #require(beer.relationshipsByName["brewery"])
        #expect(brewery.destinationEntityName == "Brewery")
        #expect(brewery.isToMany == false)
        #expect(brewery.isOptional == true)
        #expect(brewery.deleteRule == .nullify)
        let tags = try #require(beer.relationshipsByName["tags"])
        #expect(tags.isToMany && tags.isOrdered && tags.isManyToMany)
        #expect(tags.maxCount == 0)

        let breweryEntity = try #require(model.entitiesByName["Brewery"])
        let beers = try #require(breweryEntity.relationshipsByName["beers"])
        #expect(beers.deleteRule == .cascade)
        #expect(beers.minCount == 1)
        #expect(beers.maxCount == 50)
        #expect(beers.userInfo == ["sync": "full"])
        #expect(beers.inverseRelationship === brewery)
        #expect(breweryEntity.attributesByName["founded"]?.attributeType == .integer32)
        #expect(breweryEntity.attributesByName["founded"]?.minValue == .integer(1000))

        let drink = try #require(model.entitiesByName["Drink"])
        #expect(drink.isAbstract)
        #expect(drink.versionHashModifier == "v2")
        #expect(drink.attributesByName["volume"]?.attributeType == .float)
        #expect(drink.attributesByName["volume"]?.defaultValue == .double(0.33))
        let lemonade = try #require(model.entitiesByName["Lemonade"])
        #expect(lemonade.superentity === drink)
        #expect(lemonade.allProperties.map(\.name) == ["volume", "sugar"])
        #expect(lemonade.attributesByName["sugar"]?.attributeType == .integer64)

        let tag = try #require(model.entitiesByName["Tag"])
        #expect(tag.relationshipsByName["beers"]?.deleteRule == .deny)
        #expect(tag.uniquenessConstraints == [["name"]])
    }

    @Test("the first version, and a stand-alone .xcdatamodel directory, load")
    func firstVersion() throws {
        let model = try ManagedObjectModel(contentsOf: Self.bundle.appendingPathComponent("Beers.xcdatamodel"))
        #expect(model.versionIdentifiers == ["1"])
        #expect(model.entities.map(\.name) == ["Beer", "Brewery"])
        #expect(model.entitiesByName["Beer"]?.attributesByName["name"]?.isOptional == false)
    }

    @Test("an Xcode model and its JSON form have the same normalized form")
    func xcodeToJSON() throws {
        let model = try ManagedObjectModel(contentsOf: Self.bundle)
        let json = try ManagedObjectModel(json: model.jsonRepresentation(), sourceURL: nil)
        #expect(try json.normalizedJSON() == model.normalizedJSON())
    }

    @Test("Xcode's lenient default value strings", arguments: [
        ("Integer 16", "NO", StoreValue.integer(0)),
        ("Integer 32", "0.0", .integer(0)),
        ("Integer 64", "-12", .integer(-12)),
        ("Boolean", "YES", .bool(true)),
        ("Boolean", "0", .bool(false)),
        ("Double", "-1", .double(-1)),
        ("Decimal", "0.0", .decimal(0)),
        ("String", "", .string("")),
        ("Date", "2013-04-23 12:00:00 +0000", .date(Date(timeIntervalSinceReferenceDate: 388_411_200))),
        ("UUID", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
        ("URI", "https://example.com", .url(URL(string: "https://example.com")!)),
    ])
    func defaultValueStrings(type: String, text: String, expected: StoreValue) throws {
        let model = try xcodeModel(attribute: #"<attribute name="a" optional="YES" attributeType="\#(type)" defaultValueString="\#(text)"/>"#)
        #expect(model.entitiesByName["E"]?.attributesByName["a"]?.defaultValue == expected)
    }

    @Test("invalid Xcode values name the file, entity and property", arguments: [
        (#"<attribute name="a" attributeType="UUID" defaultValueString="empy"/>"#,
         #"/m/M.xcdatamodel/contents: entity E, property a: default value "empy" is not a valid UUID"#),
        (#"<attribute name="a" attributeType="Integer 16" defaultValueString="40000"/>"#,
         #"/m/M.xcdatamodel/contents: entity E, property a: default value "40000" is not a valid Integer 16"#),
        (#"<attribute name="a" attributeType="Decimal" defaultValueString="1.5x"/>"#,
         #"/m/M.xcdatamodel/contents: entity E, property a: default value "1.5x" is not a valid Decimal"#),
        (#"<attribute name="a" attributeType="Integer 32" minValueString="ten"/>"#,
         #"/m/M.xcdatamodel/contents: entity E, property a: minimum "ten" is not valid for type Integer 32"#),
        (#"<attribute name="a" attributeType="Money"/>"#,
         #"/m/M.xcdatamodel/contents: entity E, property a: unknown attribute type "Money""#),
        (#"<attribute name="a" attributeType="Composite" composite="C"/>"#,
         #"/m/M.xcdatamodel/contents: entity E, property a: composite attributes (attributeType Composite) are not supported"#),
        (#"<relationship name="r" deletionRule="Explode" destinationEntity="E"/>"#,
         #"/m/M.xcdatamodel/contents: entity E, property r: unknown deletion rule "Explode""#),
        (#"<relationship name="r" toMany="YES" maxCount="1" deletionRule="Nullify" destinationEntity="E"/>"#,
         #"/m/M.xcdatamodel/contents: entity E, property r: a to-many relationship cannot have a maximum count of 1 (make it to-one)"#),
        (#"<relationship name="r" deletionRule="Nullify" destinationEntity="E" inverseName="r" inverseEntity="F"/>"#,
         #"/m/M.xcdatamodel/contents: entity E, property r: inverseEntity F is not the destination entity E"#),
    ])
    func invalidValues(element: String, message: String) {
        let error = ModelTestSupport.modelError { _ = try xcodeModel(attribute: element) }
        #expect(error?.description == message)
    }

    @Test("a bundle with no version, and a missing file, are errors naming the file")
    func bundleErrors() throws {
        let directory = try ModelTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(ModelTestSupport.modelError { _ = try ManagedObjectModel(contentsOf: empty) }?.description
            == "\(empty.path): the model bundle holds no .xcdatamodel version")
        let missing = directory.appendingPathComponent("Nope.xcdatamodel")
        #expect(ModelTestSupport.modelError { _ = try ManagedObjectModel(contentsOf: missing) }?.description
            == "\(missing.path)/contents: no such file")
        let other = directory.appendingPathComponent("model.yaml")
        #expect(ModelTestSupport.modelError { _ = try ManagedObjectModel(contentsOf: other) }?.description
            == "\(other.path): unknown model file type (expected .json, .xcdatamodel or .xcdatamodeld)")
        // Without .xccurrentversion: the last version in numeric order.
        let bundle = directory.appendingPathComponent("M.xcdatamodeld")
        for name in ["M 9", "M 10", "M"] {
            let version = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try Data(#"<model userDefinedModelVersionIdentifier="\#(name)"/>"#.utf8).write(to: version.appendingPathComponent("contents"))
        }
        #expect(try ManagedObjectModel(contentsOf: bundle).versionIdentifiers == ["M 10"])
        // .xccurrentversion naming a version that is not there.
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Gone.xcdatamodel</string></dict></plist>
            """.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        #expect(ModelTestSupport.modelError { _ = try ManagedObjectModel(contentsOf: bundle) }?.description
            == "\(bundle.path): the current version Gone.xcdatamodel named by .xccurrentversion is not in the bundle")
    }

    private func xcodeModel(attribute element: String) throws -> ManagedObjectModel {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" userDefinedModelVersionIdentifier="">
                <entity name="E" representedClassName="E" syncable="YES">\(element)</entity>
            </model>
            """
        return try ManagedObjectModel(xcdatamodelContents: Data(xml.utf8), sourceURL: URL(fileURLWithPath: "/m/M.xcdatamodel/contents"))
    }
}
