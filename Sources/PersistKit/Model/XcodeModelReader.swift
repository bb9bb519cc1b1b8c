import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads the XML `contents` file of an Xcode `.xcdatamodel` into model descriptions.
///
/// How Xcode's elements and attributes map to descriptions, and what is ignored, is listed
/// in `docs/models.md`. In this format a missing `optional` means *not* optional (Xcode writes
/// `optional="YES"` for optional properties), and a relationship is to-many exactly when it
/// has `toMany="YES"`.
struct XcodeModelReader {
    /// The `contents` file being read, for error messages.
    let file: String?

    /// The `encoding` of the XML declaration `<?xml … encoding="…"?>` that `data` starts with
    /// (after a byte order mark or white space), or `nil` when there is none.
    static func declaredEncoding(_ data: Data) -> String? {
        var bytes = Array(data.prefix(1024))[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        while let byte = bytes.first, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { bytes = bytes.dropFirst() }
        guard bytes.starts(with: Array("<?xml".utf8)) else { return nil }
        let declaration = bytes.prefix { $0 != UInt8(ascii: ">") }
        guard let key = declaration.firstRange(of: Array("encoding".utf8)) else { return nil }
        var rest = declaration[key.upperBound...]
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        while let byte = rest.first, isSpace(byte) { rest = rest.dropFirst() }
        guard rest.first == UInt8(ascii: "=") else { return nil }
        rest = rest.dropFirst()
        while let byte = rest.first, isSpace(byte) { rest = rest.dropFirst() }
        guard let quote = rest.first, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return nil }
        rest = rest.dropFirst()
        return String(decoding: rest.prefix { $0 != quote }, as: UTF8.self)
    }

    /// Fills `model` from the XML document `data`.
    func read(_ data: Data, into model: ManagedObjectModel) throws {
        // FoundationXML's XMLDocument(data:) dereferences a null document (a SEGV, found by the
        // FuzzXcodeModel fuzz target) instead of throwing when libxml2 gives none: for empty data,
        // and for an encoding declaration libxml2 does not know (`encoding="UTng"`).
        guard !data.isEmpty else {
            throw ModelError(file: file, "not a valid XML document: the file is empty")
        }
        // Xcode writes UTF-8: anything else (a NUL byte, UTF-16, invalid bytes) is refused here,
        // before libxml2 guesses another encoding from the first bytes and gives no document.
        guard !data.contains(0), String(validating: data, as: UTF8.self) != nil else {
            throw ModelError(file: file, "not a valid XML document: it is not UTF-8 text (Xcode writes UTF-8)")
        }
        if let encoding = Self.declaredEncoding(data), !["utf-8", "utf8"].contains(encoding.lowercased()) {
            throw ModelError(file: file, "not a valid XML document: it declares the encoding \"\(encoding)\"; Xcode writes UTF-8, the only encoding read")
        }
        let document: XMLDocument
        do {
            document = try XMLDocument(data: data)
        } catch {
            throw ModelError(file: file, "not a valid XML document: \(error.localizedDescription)")
        }
        guard let root = document.rootElement(), root.name == "model" else {
            throw ModelError(file: file, "the root element is not <model>")
        }
        if let identifier = root.attribute("userDefinedModelVersionIdentifier"), !identifier.isEmpty {
            model.versionIdentifiers = [identifier]
        }
        var entities: [EntityDescription] = []
        for element in root.childElements {
            switch element.name {
            case "entity":
                entities.append(try readEntity(element))
            case "configuration":
                guard let name = element.attribute("name") else {
                    throw ModelError(file: file, "a <configuration> has no name")
                }
                model.configurations[name] = element.childElements
                    .filter { $0.name == "memberEntity" }
                    .compactMap { $0.attribute("name") }
            default:
                // <elements> (diagram layout), <fetchRequest> templates and <composite>
                // declarations are ignored; see docs/models.md.
                continue
            }
        }
        model.entities = entities
    }

    private func readEntity(_ element: XMLElement) throws -> EntityDescription {
        guard let name = element.attribute("name"), !name.isEmpty else {
            throw ModelError(file: file, "an <entity> has no name")
        }
        let entity = EntityDescription(name: name)
        entity.managedObjectClassName = element.attribute("representedClassName")
        entity.superentityName = element.attribute("parentEntity")
        entity.isAbstract = element.bool("isAbstract")
        entity.versionHashModifier = element.attribute("versionHashModifier")
        entity.renamingIdentifier = element.attribute("elementID") ?? element.attribute("renamingIdentifier")
        var properties: [PropertyDescription] = []
        var legacyIndexCount = 0
        for child in element.childElements {
            switch child.name {
            case "attribute":
                properties.append(try readAttribute(child, entity: name))
            case "relationship":
                properties.append(try readRelationship(child, entity: name))
            case "userInfo":
                entity.userInfo = child.userInfo
            case "uniquenessConstraints":
                entity.uniquenessConstraints = child.childElements
                    .filter { $0.name == "uniquenessConstraint" }
                    .map { $0.childElements.filter { $0.name == "constraint" }.compactMap { $0.attribute("value") } }
            case "fetchIndex":
                entity.indexes.append(try readFetchIndex(child, entity: name))
            case "compoundIndexes":
                // Xcode's older form of multi-property indexes; kept as fetch indexes.
                for compound in child.childElements where compound.name == "compoundIndex" {
                    legacyIndexCount += 1
                    let elements = compound.childElements
                        .filter { $0.name == "index" }
                        .compactMap { $0.attribute("value") }
                        .map { FetchIndexDescription.Element(propertyName: $0) }
                    if !elements.isEmpty {
                        entity.indexes.append(FetchIndexDescription(name: "compoundIndex\(legacyIndexCount)", elements: elements))
                    }
                }
            default:
                // <fetchedProperty> is ignored; see docs/models.md.
                continue
            }
        }
        entity.properties = properties
        return entity
    }

    private func readCommon(_ element: XMLElement, into property: PropertyDescription) {
        property.isOptional = element.bool("optional")
        property.isTransient = element.bool("transient")
        property.isIndexed = element.bool("indexed")
        property.versionHashModifier = element.attribute("versionHashModifier")
        property.renamingIdentifier = element.attribute("elementID") ?? element.attribute("renamingIdentifier")
        if let userInfo = element.childElements.first(where: { $0.name == "userInfo" }) {
            property.userInfo = userInfo.userInfo
        }
    }

    private func readAttribute(_ element: XMLElement, entity: String) throws -> AttributeDescription {
        guard let name = element.attribute("name"), !name.isEmpty else {
            throw ModelError(file: file, entity: entity, "an <attribute> has no name")
        }
        func fail(_ message: String) -> ModelError {
            ModelError(file: file, entity: entity, property: name, message)
        }
        guard let typeName = element.attribute("attributeType") else {
            throw fail("the attribute has no attributeType")
        }
        guard let type = AttributeType(xcodeName: typeName) else {
            if typeName == "Composite" {
                throw fail("composite attributes (attributeType Composite) are not supported")
            }
            throw fail("unknown attribute type \"\(typeName)\"")
        }
        let attribute = AttributeDescription(name: name, type: type)
        readCommon(element, into: attribute)
        if let text = element.attribute("defaultDateTimeInterval"), type == .date {
            guard let date = AttributeValueCoding.date(fromReferenceInterval: text) else {
                throw fail("default date \"\(text)\" is not a number of seconds")
            }
            attribute.defaultValue = .date(date)
        } else if let text = element.attribute("defaultValueString") {
            guard let value = AttributeValueCoding.value(fromXcode: text, type: type) else {
                throw fail("default value \"\(text)\" is not a valid \(typeName)")
            }
            attribute.defaultValue = value
        }
        attribute.minValue = try readBound(element, word: "minimum", prefix: "min", type: type, fail: fail)
        attribute.maxValue = try readBound(element, word: "maximum", prefix: "max", type: type, fail: fail)
        attribute.regularExpression = element.attribute("regularExpressionString")
        attribute.allowsExternalBinaryDataStorage = element.bool("allowsExternalBinaryDataStorage")
        attribute.valueTransformerName = element.attribute("valueTransformerName")
        attribute.attributeValueClassName = element.attribute("customClassName")
        attribute.usesScalarValueType = element.bool("usesScalarValueType")
        attribute.preservesValueInHistoryOnDeletion = element.bool("preserveAfterDeletion")
        return attribute
    }

    private func readBound(
        _ element: XMLElement, word: String, prefix: String, type: AttributeType, fail: (String) -> ModelError
    ) throws -> StoreValue? {
        if type == .date, let text = element.attribute("\(prefix)DateTimeInterval") {
            guard let date = AttributeValueCoding.date(fromReferenceInterval: text) else {
                throw fail("\(word) date \"\(text)\" is not a number of seconds")
            }
            return .date(date)
        }
        guard let text = element.attribute("\(prefix)ValueString") else { return nil }
        guard let value = AttributeValueCoding.bound(fromXcode: text, type: type) else {
            throw fail("\(word) \"\(text)\" is not valid for type \(type.xcodeName)")
        }
        return value
    }

    private func readRelationship(_ element: XMLElement, entity: String) throws -> RelationshipDescription {
        guard let name = element.attribute("name"), !name.isEmpty else {
            throw ModelError(file: file, entity: entity, "a <relationship> has no name")
        }
        func fail(_ message: String) -> ModelError {
            ModelError(file: file, entity: entity, property: name, message)
        }
        guard let destination = element.attribute("destinationEntity") else {
            throw fail("the relationship has no destinationEntity")
        }
        let ruleName = element.attribute("deletionRule") ?? DeleteRule.nullify.xcodeName
        guard let rule = DeleteRule(xcodeName: ruleName) else {
            throw fail("unknown deletion rule \"\(ruleName)\"")
        }
        let inverseName = element.attribute("inverseName")
        if let inverseEntity = element.attribute("inverseEntity"), inverseName != nil, inverseEntity != destination {
            throw fail("inverseEntity \(inverseEntity) is not the destination entity \(destination)")
        }
        let relationship = RelationshipDescription(name: name, destination: destination, inverse: inverseName, deleteRule: rule)
        readCommon(element, into: relationship)
        let toMany = element.bool("toMany")
        relationship.isOrdered = element.bool("ordered")
        relationship.minCount = try integer(element, "minCount", fail: fail) ?? 0
        relationship.maxCount = try RelationshipCounts.maxCount(
            toMany: toMany, written: integer(element, "maxCount", fail: fail), error: fail)
        return relationship
    }

    private func integer(_ element: XMLElement, _ key: String, fail: (String) -> ModelError) throws -> Int? {
        guard let text = element.attribute(key) else { return nil }
        guard let value = Int(text) else { throw fail("\(key) \"\(text)\" is not an integer") }
        return value
    }

    private func readFetchIndex(_ element: XMLElement, entity: String) throws -> FetchIndexDescription {
        guard let name = element.attribute("name") else {
            throw ModelError(file: file, entity: entity, "a <fetchIndex> has no name")
        }
        var elements: [FetchIndexDescription.Element] = []
        for child in element.childElements where child.name == "fetchIndexElement" {
            guard let property = child.attribute("property") else {
                throw ModelError(file: file, entity: entity, "fetch index \(name) has an element with no property")
            }
            let kind = child.attribute("type") ?? "Binary"
            guard kind == "Binary" else {
                throw ModelError(file: file, entity: entity, property: property,
                                 "fetch index \(name): index type \(kind) is not supported (only Binary)")
            }
            elements.append(.init(propertyName: property, isAscending: child.attribute("order") != "descending"))
        }
        if elements.isEmpty {
            throw ModelError(file: file, entity: entity, "fetch index \(name) has no elements")
        }
        return FetchIndexDescription(name: name, elements: elements)
    }
}

extension XMLElement {
    /// The value of the XML attribute `name`, or `nil`.
    fileprivate func attribute(_ name: String) -> String? {
        attribute(forName: name)?.stringValue
    }

    /// Whether the XML attribute `name` is `YES` (Xcode's spelling of true).
    fileprivate func bool(_ name: String) -> Bool {
        attribute(name) == "YES"
    }

    /// The child elements, in document order.
    fileprivate var childElements: [XMLElement] {
        (children ?? []).compactMap { $0 as? XMLElement }
    }

    /// The `<entry key value>` children of a `<userInfo>` element.
    fileprivate var userInfo: [String: String] {
        var result: [String: String] = [:]
        for entry in childElements where entry.name == "entry" {
            if let key = entry.attribute("key") { result[key] = entry.attribute("value") ?? "" }
        }
        return result
    }
}
