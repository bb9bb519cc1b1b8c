import Foundation

/// Everything an atomic store holds, as one value: rows, to-many memberships, primary key
/// counters and metadata.
///
/// A value type, so a save copies it (copy-on-write), changes the copy, writes the copy to disk
/// and only then swaps it in: a save that fails changes nothing.
struct AtomicStoreContents: Sendable, Equatable {
    /// Rows by concrete entity name, then by primary key.
    var rows: [String: [Int64: RowSnapshot]] = [:]
    /// To-many destinations by source object, then by relationship name; in order for ordered
    /// relationships, in the order they were added otherwise.
    var memberships: [ManagedObjectID: [String: [ManagedObjectID]]] = [:]
    /// The last primary key handed out, by root entity name.
    var lastPrimaryKeys: [String: Int64] = [:]
    /// Metadata kept in the file besides `NSStoreType` and `NSStoreUUID`.
    var metadata: [String: String] = [:]

    /// The row of `objectID`, if the store holds it.
    func row(for objectID: ManagedObjectID) -> RowSnapshot? {
        rows[objectID.entity.name]?[objectID.primaryKey]
    }

    /// Every row, by entity name and then primary key, for a deterministic file layout.
    var sortedRows: [RowSnapshot] {
        rows.keys.sorted().flatMap { name in
            // `name` comes from `rows.keys`, so the lookup cannot fail.
            rows[name]!.values.sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
        }
    }

    /// Every membership as (source, relationship name, destinations), in a deterministic order.
    var sortedMemberships: [(source: ManagedObjectID, relationship: String, destinations: [ManagedObjectID])] {
        memberships
            .sorted { a, b in (a.key.entity.name, a.key.primaryKey) < (b.key.entity.name, b.key.primaryKey) }
            .flatMap { source, byName in
                byName.keys.sorted().compactMap { name in
                    // `name` comes from `byName.keys`, so the lookup cannot fail.
                    let destinations = byName[name]!
                    return destinations.isEmpty ? nil : (source, name, destinations)
                }
            }
    }

    /// Raises the counter of `objectID`'s root entity to at least its primary key.
    mutating func notePrimaryKey(of objectID: ManagedObjectID) {
        let root = objectID.entity.rootEntity.name
        lastPrimaryKeys[root] = max(lastPrimaryKeys[root] ?? 0, objectID.primaryKey)
    }

    /// Whether `value` may be stored in `slot`: an attribute's type accepts it (any value for a
    /// transient attribute, which the store keeps as `nil`), or a to-one holds `nil` or an
    /// object of its destination entity.
    static func fits(_ value: StoreValue, in slot: PropertyDescription) -> Bool {
        if let attribute = slot as? AttributeDescription {
            return attribute.isTransient || attribute.attributeType.accepts(value)
        }
        if case .object(let destination) = value {
            return (slot as? RelationshipDescription)?.destinationEntity.map { destination.entity.isKind(of: $0) } ?? true
        }
        return value.isNull
    }
}
