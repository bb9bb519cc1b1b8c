import Foundation

/// The binary store's file format, version 1: compact, checksummed, fast to load.
///
/// All integers are little-endian; a string is a `u32` byte length and UTF-8; see
/// `docs/stores.md` for the full layout.
///
/// ```text
/// header  magic 89 50 4B 42 0D 0A 1A 0A ("\x89PKB\r\n\x1a\n") · u32 version · u32 CRC-32 of body · u64 body length
/// body    string uuid
///         u32 n · n × (string key, string value)                    metadata
///         u32 n · n × (string entity, u32 m, m × string slot name)  entity table
///         u32 n · n × (u32 entity, i64 last primary key)            counters, by root entity
///         u32 n · n × (u32 entity, i64 pk, i64 version, value per slot of the entity table)
///         u32 n · n × (u32 entity, i64 pk, string relationship, u32 m, m × (u32 entity, i64 pk))
/// value   u8 tag · payload: 0 nil · 1 i64 · 2 f64 · 3 string decimal · 4 string · 5 u8 bool
///         · 6 f64 seconds since 2001 · 7 u32 length + bytes · 8 16 UUID bytes · 9 string URL
///         · 10 u32 entity + i64 pk (to-one)
/// ```
struct BinaryStoreFormat: AtomicStoreFileFormat {
    /// The file's first eight bytes; like PNG's, they catch text-mode transfers that rewrite line ends.
    static let magic: [UInt8] = [0x89, 0x50, 0x4B, 0x42, 0x0D, 0x0A, 0x1A, 0x0A]
    /// The format version this code writes and reads.
    static let version: UInt32 = 1
    /// The header's size: magic, version, checksum, body length.
    static let headerSize = 8 + 4 + 4 + 8

    enum Tag: UInt8 {
        case null = 0, integer, double, decimal, string, bool, date, data, uuid, url, object
    }

    func encode(_ contents: AtomicStoreContents, identifier: String, model: ManagedObjectModel) throws -> Data {
        var body = ByteWriter()
        try body.string(identifier)
        try body.count(contents.metadata.count)
        for key in contents.metadata.keys.sorted() {
            try body.string(key)
            try body.string(contents.metadata[key] ?? "")
        }
        let entities = model.entities
        let index = Dictionary(entities.enumerated().map { (ObjectIdentifier($1), UInt32($0)) }, uniquingKeysWith: { a, _ in a })
        func entityIndex(_ entity: EntityDescription) throws -> UInt32 {
            guard let i = index[ObjectIdentifier(entity)] else {
                throw PersistenceError(.persistentStoreSave, "The entity \(entity.name) is not in the store's model")
            }
            return i
        }
        try body.count(entities.count)
        for entity in entities {
            try body.string(entity.name)
            try body.count(entity.slots.count)
            for slot in entity.slots { try body.string(slot.name) }
        }
        let counters = contents.lastPrimaryKeys.sorted { $0.key < $1.key }
        try body.count(counters.count)
        for (name, last) in counters {
            guard let entity = model.entitiesByName[name] else {
                throw PersistenceError(.persistentStoreSave, "The entity \(name) is not in the store's model")
            }
            body.u32(try entityIndex(entity))
            body.i64(last)
        }
        let rows = contents.sortedRows
        try body.count(rows.count)
        for row in rows {
            body.u32(try entityIndex(row.objectID.entity))
            body.i64(row.objectID.primaryKey)
            body.i64(row.version)
            for (slot, value) in zip(row.objectID.entity.slots, row.values) {
                try write(value, to: &body, entityIndex: entityIndex, object: row.objectID, key: slot.name)
            }
        }
        let memberships = contents.sortedMemberships
        try body.count(memberships.count)
        for membership in memberships {
            body.u32(try entityIndex(membership.source.entity))
            body.i64(membership.source.primaryKey)
            try body.string(membership.relationship)
            try body.count(membership.destinations.count)
            for destination in membership.destinations {
                body.u32(try entityIndex(destination.entity))
                body.i64(destination.primaryKey)
            }
        }

        var file = ByteWriter()
        file.raw(Self.magic)
        file.u32(Self.version)
        file.u32(CRC32.checksum(body.bytes))
        file.u64(UInt64(body.bytes.count))
        file.raw(body.bytes)
        return Data(file.bytes)
    }

    private func write(_ value: StoreValue, to body: inout ByteWriter, entityIndex: (EntityDescription) throws -> UInt32,
                       object: ManagedObjectID, key: String) throws {
        switch value {
        case .null: body.u8(Tag.null.rawValue)
        case .integer(let v): body.u8(Tag.integer.rawValue); body.i64(v)
        case .double(let v): body.u8(Tag.double.rawValue); body.f64(v)
        case .decimal(let v): body.u8(Tag.decimal.rawValue); try body.string(v.description)
        case .string(let v): body.u8(Tag.string.rawValue); try body.string(v)
        case .bool(let v): body.u8(Tag.bool.rawValue); body.u8(v ? 1 : 0)
        case .date(let v): body.u8(Tag.date.rawValue); body.f64(v.timeIntervalSinceReferenceDate)
        case .data(let v): body.u8(Tag.data.rawValue); try body.blob(v)
        case .uuid(let v):
            body.u8(Tag.uuid.rawValue)
            withUnsafeBytes(of: v.uuid) { body.raw(Array($0)) }
        case .url(let v): body.u8(Tag.url.rawValue); try body.string(v.absoluteString)
        case .object(let id):
            body.u8(Tag.object.rawValue)
            body.u32(try entityIndex(id.entity))
            body.i64(id.primaryKey)
        case .array:
            throw PersistenceError(.persistentStoreSave, "A collection cannot be stored in an attribute", objectID: object, key: key)
        }
    }

    func decode(_ data: Data, path: String, model: ManagedObjectModel) throws -> (identifier: String, contents: AtomicStoreContents) {
        let bytes = [UInt8](data)
        var header = ByteReader(bytes) { openError(path, $0) }
        guard bytes.count >= Self.headerSize, Array(try header.take(8, "the magic number")) == Self.magic else {
            throw openError(path, "it does not start with the binary store's magic number (is it a binary store file?)")
        }
        let version = try header.u32("the format version")
        guard version == Self.version else {
            throw openError(path, "format version \(version) is not supported (expected \(Self.version))")
        }
        let checksum = try header.u32("the checksum")
        let length = try header.u64("the body length")
        guard length == UInt64(bytes.count - Self.headerSize) else {
            throw openError(path, "the header gives a body of \(length) bytes but the file holds \(bytes.count - Self.headerSize) (truncated or extended)")
        }
        guard CRC32.checksum(bytes[Self.headerSize...]) == checksum else {
            throw openError(path, "the checksum does not match: the file is corrupt")
        }
        var reader = BinaryStoreReader(reader: ByteReader(bytes, offset: Self.headerSize) { openError(path, $0) },
                                       model: model, path: path, format: self)
        return try reader.read()
    }
}
