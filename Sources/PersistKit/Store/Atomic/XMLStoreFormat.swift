import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The XML store's file format, version 1: one human-readable document holding the store's
/// UUID, metadata, primary key counters, every object and every to-many membership.
///
/// See `docs/stores.md` for the full description; in short:
///
/// ```xml
/// <store format="persistd-xml" version="1" type="XML" uuid="…">
///   <metadata><entry key="…">…</entry></metadata>
///   <primaryKeys><entity name="Beer" last="2"/></primaryKeys>
///   <object entity="Beer" pk="1" version="1">
///     <value name="abv" type="double">8.5</value>
///     <value name="brewery" type="object" entity="Brewery" pk="1"/>
///   </object>
///   <relationship entity="Brewery" pk="1" name="lineup"><member entity="Beer" pk="1"/></relationship>
/// </store>
/// ```
struct XMLStoreFormat: AtomicStoreFileFormat {
    /// The `format` attribute of the root element.
    static let formatName = "persistd-xml"
    /// The format version this code writes and reads.
    static let version = 1

    func encode(_ contents: AtomicStoreContents, identifier: String, model: ManagedObjectModel) throws -> Data {
        let root = XMLElement(name: "store")
        root.addAttribute(attribute("format", Self.formatName))
        root.addAttribute(attribute("version", String(Self.version)))
        root.addAttribute(attribute("type", StoreType.xml.rawValue))
        root.addAttribute(attribute("uuid", identifier))

        let metadata = XMLElement(name: "metadata")
        for key in contents.metadata.keys.sorted() {
            let entry = text("entry", contents.metadata[key] ?? "")
            entry.addAttribute(attribute("key", key))
            metadata.addChild(entry)
        }
        root.addChild(metadata)

        let keys = XMLElement(name: "primaryKeys")
        for name in contents.lastPrimaryKeys.keys.sorted() {
            let entity = XMLElement(name: "entity")
            entity.addAttribute(attribute("name", name))
            entity.addAttribute(attribute("last", String(contents.lastPrimaryKeys[name] ?? 0)))
            keys.addChild(entity)
        }
        root.addChild(keys)

        for row in contents.sortedRows {
            let object = reference("object", row.objectID)
            object.addAttribute(attribute("version", String(row.version)))
            for (slot, value) in zip(row.objectID.entity.slots, row.values) where !value.isNull {
                object.addChild(try element(for: value, name: slot.name, of: row.objectID))
            }
            root.addChild(object)
        }

        for membership in contents.sortedMemberships {
            let relationship = reference("relationship", membership.source)
            relationship.addAttribute(attribute("name", membership.relationship))
            for destination in membership.destinations {
                relationship.addChild(reference("member", destination))
            }
            root.addChild(relationship)
        }

        let document = XMLDocument(rootElement: root)
        document.version = "1.0"
        document.characterEncoding = "UTF-8"
        return document.xmlData(options: [.nodePrettyPrint])
    }

    func decode(_ data: Data, path: String, model: ManagedObjectModel) throws -> (identifier: String, contents: AtomicStoreContents) {
        // XMLDocument parses in libxml2's recovery mode and accepts a truncated file, so check
        // that the file is well-formed with the strict streaming parser first.
        let parser = XMLParser(data: data)
        _ = parser.parse()
        if let error = parser.parserError {
            throw openError(path, "it is not well-formed XML (line \(parser.lineNumber), column \(parser.columnNumber), "
                + "libxml2 error \((error as NSError).code))")
        }
        let document: XMLDocument
        do {
            document = try XMLDocument(data: data, options: [])
        } catch {
            throw openError(path, "it is not well-formed XML (\(error.localizedDescription))")
        }
        guard let root = document.rootElement(), root.name == "store",
              root.attribute(forName: "format")?.stringValue == Self.formatName else {
            throw openError(path, "the root element is not <store format=\"\(Self.formatName)\">")
        }
        guard let version = root.attribute(forName: "version")?.stringValue, version == String(Self.version) else {
            throw openError(path, "format version \(root.attribute(forName: "version")?.stringValue ?? "(none)") is not supported (expected \(Self.version))")
        }
        guard let identifier = root.attribute(forName: "uuid")?.stringValue, !identifier.isEmpty else {
            throw openError(path, "the <store> element has no uuid attribute")
        }
        var reader = XMLStoreReader(path: path, model: model, identifier: identifier, format: self)
        for case let element as XMLElement in root.children ?? [] {
            try reader.read(element)
        }
        return (identifier, reader.contents)
    }

    // MARK: - Writing

    private func attribute(_ name: String, _ value: String) -> XMLNode {
        // `XMLNode.attribute(withName:stringValue:)` always returns an attribute node.
        XMLNode.attribute(withName: name, stringValue: value) as! XMLNode
    }

    private func text(_ name: String, _ value: String) -> XMLElement {
        let element = XMLElement(name: name)
        if StoreValueText.isXMLSafe(value) {
            element.stringValue = value
        } else {
            element.addAttribute(attribute("encoding", "base64"))
            element.stringValue = Data(value.utf8).base64EncodedString()
        }
        return element
    }

    private func reference(_ name: String, _ id: ManagedObjectID) -> XMLElement {
        let element = XMLElement(name: name)
        element.addAttribute(attribute("entity", id.entity.name))
        element.addAttribute(attribute("pk", String(id.primaryKey)))
        return element
    }

    private func element(for value: StoreValue, name: String, of object: ManagedObjectID) throws -> XMLElement {
        if case .object(let destination) = value {
            let element = reference("value", destination)
            element.addAttribute(attribute("type", "object"))
            element.insertAttribute(name, at: 0)
            return element
        }
        guard let (type, string) = StoreValueText.encode(value) else {
            throw PersistenceError(.persistentStoreSave, "A collection cannot be stored in an attribute", objectID: object, key: name)
        }
        let element = text("value", string ?? "")
        element.insertAttribute(name, at: 0)
        element.addAttribute(attribute("type", type))
        return element
    }
}

extension XMLElement {
    /// Adds the `name` attribute first, so each value line reads `<value name=… type=…>`.
    fileprivate func insertAttribute(_ name: String, at index: Int) {
        // `XMLNode.attribute(withName:stringValue:)` always returns an attribute node.
        let node = XMLNode.attribute(withName: "name", stringValue: name) as! XMLNode
        var nodes = attributes ?? []
        nodes.insert(node, at: Swift.min(index, nodes.count))
        attributes = nodes
    }
}
