import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads the elements of an XML store file into ``AtomicStoreContents``, checking each against
/// the model; every error names the file and the element.
struct XMLStoreReader {
    let path: String
    let model: ManagedObjectModel
    let identifier: String
    let format: XMLStoreFormat
    var contents = AtomicStoreContents()

    /// Reads one child of `<store>`.
    mutating func read(_ element: XMLElement) throws {
        switch element.name {
        case "metadata":
            for case let entry as XMLElement in element.children ?? [] where entry.name == "entry" {
                let key = try attribute("key", of: entry)
                contents.metadata[key] = try text(of: entry)
            }
        case "primaryKeys":
            for case let entity as XMLElement in element.children ?? [] where entity.name == "entity" {
                let name = try attribute("name", of: entity)
                _ = try format.entity(named: name, in: model, path: path, at: describe(entity))
                contents.lastPrimaryKeys[name] = try integer("last", of: entity)
            }
        case "object":
            try readObject(element)
        case "relationship":
            try readRelationship(element)
        default:
            throw format.openError(path, "unexpected element \(describe(element))")
        }
    }

    private mutating func readObject(_ element: XMLElement) throws {
        let id = try reference(element)
        let entity = id.entity
        if entity.isAbstract {
            throw format.openError(path, "\(describe(element)) is an instance of the abstract entity \(entity.name)")
        }
        let version = try integer("version", of: element)
        var values = [StoreValue](repeating: .null, count: entity.slots.count)
        for case let child as XMLElement in element.children ?? [] {
            guard child.name == "value" else { throw format.openError(path, "unexpected element \(describe(child)) in \(describe(element))") }
            let name = try attribute("name", of: child)
            guard let slot = entity.slotIndex(of: name) else {
                throw format.openError(path, "\(describe(child)) in \(describe(element)): entity \(entity.name) has no attribute or to-one relationship \(name)")
            }
            let value = try self.value(child, in: element)
            let property = entity.slots[slot]
            if !AtomicStoreContents.fits(value, in: property) {
                throw format.openError(path, "\(describe(child)) in \(describe(element)) holds a value of the wrong type for \(entity.name).\(name)")
            }
            values[slot] = value
        }
        if contents.row(for: id) != nil {
            throw format.openError(path, "\(describe(element)) appears twice")
        }
        contents.rows[entity.name, default: [:]][id.primaryKey] = RowSnapshot(objectID: id, version: version, values: values)
        contents.notePrimaryKey(of: id)
    }

    private mutating func readRelationship(_ element: XMLElement) throws {
        let source = try reference(element)
        let name = try attribute("name", of: element)
        guard let relationship = source.entity.propertiesByName[name] as? RelationshipDescription, relationship.isToMany else {
            throw format.openError(path, "\(describe(element)): entity \(source.entity.name) has no to-many relationship \(name)")
        }
        var destinations: [ManagedObjectID] = []
        for case let member as XMLElement in element.children ?? [] {
            guard member.name == "member" else { throw format.openError(path, "unexpected element \(describe(member)) in \(describe(element))") }
            destinations.append(try reference(member))
        }
        contents.memberships[source, default: [:]][name] = destinations
    }

    private func value(_ element: XMLElement, in object: XMLElement) throws -> StoreValue {
        let type = try attribute("type", of: element)
        if type == "object" { return .object(try reference(element)) }
        let string = try text(of: element)
        guard let value = StoreValueText.decode(type: type, text: string) else {
            throw format.openError(path, "\(describe(element)) in \(describe(object)) is not a valid \(type): \(string.prefix(40))")
        }
        return value
    }

    // MARK: - Helpers

    private func reference(_ element: XMLElement) throws -> ManagedObjectID {
        let entity = try format.entity(named: try attribute("entity", of: element), in: model, path: path, at: describe(element))
        return ManagedObjectID(entity: entity, storeIdentifier: identifier, primaryKey: try integer("pk", of: element))
    }

    private func attribute(_ name: String, of element: XMLElement) throws -> String {
        guard let value = element.attribute(forName: name)?.stringValue else {
            throw format.openError(path, "\(describe(element)) has no \(name) attribute")
        }
        return value
    }

    private func integer(_ name: String, of element: XMLElement) throws -> Int64 {
        let text = try attribute(name, of: element)
        guard let value = Int64(text) else {
            throw format.openError(path, "the \(name) attribute of \(describe(element)) is not an integer: \(text)")
        }
        return value
    }

    private func text(of element: XMLElement) throws -> String {
        let string = element.stringValue ?? ""
        guard element.attribute(forName: "encoding")?.stringValue == "base64" else { return string }
        guard let data = Data(base64Encoded: string), let decoded = String(data: data, encoding: .utf8) else {
            throw format.openError(path, "\(describe(element)) is not valid base64-encoded UTF-8")
        }
        return decoded
    }

    /// `<object entity="Beer" pk="1">`, for error messages.
    private func describe(_ element: XMLElement) -> String {
        let attributes = (element.attributes ?? []).prefix(3).map { "\($0.name ?? "")=\"\($0.stringValue ?? "")\"" }
        return "<" + ([element.name ?? "?"] + attributes).joined(separator: " ") + ">"
    }
}
