import Foundation

/// Reads the body of a binary store file into ``AtomicStoreContents``, checking it against the
/// model; every error names the file and the offset.
struct BinaryStoreReader {
    var reader: ByteReader
    let model: ManagedObjectModel
    let path: String
    let format: BinaryStoreFormat

    /// One entity of the file's entity table, with its slots mapped to the model's.
    private struct TableEntity {
        let entity: EntityDescription
        /// For each slot in the file, the model's slot index.
        let slots: [Int]
    }

    mutating func read() throws -> (identifier: String, contents: AtomicStoreContents) {
        var contents = AtomicStoreContents()
        let identifier = try reader.string("the store UUID")
        for _ in 0..<(try reader.count("the metadata count")) {
            let key = try reader.string("a metadata key")
            contents.metadata[key] = try reader.string("the metadata value of \(key)")
        }
        var table: [TableEntity] = []
        for _ in 0..<(try reader.count("the entity count")) {
            let start = reader.offset
            let name = try reader.string("an entity name")
            let entity = try format.entity(named: name, in: model, path: path, at: "the entity table at offset \(start)")
            var slots: [Int] = []
            for _ in 0..<(try reader.count("the slot count of \(name)")) {
                let slot = try reader.string("a slot name of \(name)")
                guard let index = entity.slotIndex(of: slot) else {
                    throw format.openError(path, "the entity table names \(name).\(slot), which the model does not have")
                }
                slots.append(index)
            }
            table.append(TableEntity(entity: entity, slots: slots))
        }
        func entity(_ what: String) throws -> TableEntity {
            let start = reader.offset
            let index = try reader.count(what)
            guard index < table.count else {
                throw format.openError(path, "\(what) at offset \(start) is entity #\(index), but the table has \(table.count)")
            }
            return table[index]
        }
        for _ in 0..<(try reader.count("the counter count")) {
            let counted = try entity("a counter's entity")
            contents.lastPrimaryKeys[counted.entity.name] = try reader.i64("a primary key counter")
        }
        for _ in 0..<(try reader.count("the object count")) {
            let start = reader.offset
            let object = try entity("an object's entity")
            let id = ManagedObjectID(entity: object.entity, storeIdentifier: identifier, primaryKey: try reader.i64("a primary key"))
            if object.entity.isAbstract {
                throw format.openError(path, "the object at offset \(start) is an instance of the abstract entity \(object.entity.name)")
            }
            let version = try reader.i64("an object version")
            var values = [StoreValue](repeating: .null, count: object.entity.slots.count)
            for slot in object.slots {
                let valueStart = reader.offset
                let value = try self.value(identifier: identifier, table: table)
                let property = object.entity.slots[slot]
                if !AtomicStoreContents.fits(value, in: property) {
                    throw format.openError(path, "the value at offset \(valueStart) has the wrong type for \(object.entity.name).\(property.name)")
                }
                values[slot] = value
            }
            if contents.row(for: id) != nil {
                throw format.openError(path, "the object \(object.entity.name) p\(id.primaryKey) at offset \(start) appears twice")
            }
            contents.rows[object.entity.name, default: [:]][id.primaryKey] = RowSnapshot(objectID: id, version: version, values: values)
            contents.notePrimaryKey(of: id)
        }
        for _ in 0..<(try reader.count("the membership count")) {
            let source = try entity("a membership's entity")
            let sourceID = ManagedObjectID(entity: source.entity, storeIdentifier: identifier, primaryKey: try reader.i64("a primary key"))
            let name = try reader.string("a relationship name")
            guard let relationship = source.entity.propertiesByName[name] as? RelationshipDescription, relationship.isToMany else {
                throw format.openError(path, "entity \(source.entity.name) has no to-many relationship \(name) (before offset \(reader.offset))")
            }
            var destinations: [ManagedObjectID] = []
            for _ in 0..<(try reader.count("a membership count")) {
                let destination = try entity("a member's entity")
                destinations.append(ManagedObjectID(entity: destination.entity, storeIdentifier: identifier, primaryKey: try reader.i64("a primary key")))
            }
            contents.memberships[sourceID, default: [:]][name] = destinations
        }
        guard reader.isAtEnd else {
            throw format.openError(path, "unexpected bytes after the last membership at offset \(reader.offset)")
        }
        return (identifier, contents)
    }

    private mutating func value(identifier: String, table: [TableEntity]) throws -> StoreValue {
        let start = reader.offset
        guard let tag = BinaryStoreFormat.Tag(rawValue: try reader.u8("a value tag")) else {
            throw format.openError(path, "unknown value tag at offset \(start)")
        }
        switch tag {
        case .null: return .null
        case .integer: return .integer(try reader.i64("an integer"))
        case .double: return .double(try reader.f64("a double"))
        case .decimal:
            let text = try reader.string("a decimal")
            guard let value = StoreValueText.decode(type: "decimal", text: text) else {
                throw format.openError(path, "the decimal at offset \(start) is not a number: \(text)")
            }
            return value
        case .string: return .string(try reader.string("a string"))
        case .bool:
            switch try reader.u8("a Boolean") {
            case 0: return .bool(false)
            case 1: return .bool(true)
            case let other: throw format.openError(path, "the Boolean at offset \(start) is \(other), not 0 or 1")
            }
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try reader.f64("a date")))
        case .data: return .data(Data(try reader.blob("binary data")))
        case .uuid:
            let b = Array(try reader.take(16, "a UUID"))
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .url:
            let text = try reader.string("a URL")
            guard let url = URL(string: text) else { throw format.openError(path, "the URL at offset \(start) is not valid: \(text)") }
            return .url(url)
        case .object:
            let index = try reader.count("a to-one entity")
            guard index < table.count else {
                throw format.openError(path, "the to-one reference at offset \(start) names entity #\(index), but the table has \(table.count)")
            }
            return .object(ManagedObjectID(entity: table[index].entity, storeIdentifier: identifier, primaryKey: try reader.i64("a primary key")))
        }
    }
}
