import Foundation
import PersistKit

/// The store and entity of a simple object ID (`x-coredata://<store>/<Entity>/p<key>`) parsed
/// before, keyed by the bytes before its key: a connection's `get`s name IDs of one store and
/// mostly of one entity, so ``WireObjectID/parse(_:coordinator:what:prefix:)`` compares those
/// bytes and reads only the key, instead of making the store's and entity's strings and looking
/// the entity up by name. The store is still asked for at every parse, so an ID of a store
/// removed since fails as it would without the cache.
///
/// Immutable, and a class so that holding it (a pending `get` of a connection does, see
/// ``SimpleGet``) costs one reference count, not one per field.
final class WireObjectIDPrefix: Sendable {
    /// `x-coredata://<store>/<Entity>/`.
    let bytes: [UInt8]
    /// The coordinator the entity was found in; another one makes the entry unused.
    let coordinator: PersistentStoreCoordinator
    /// The store's identifier.
    let store: String
    /// The store's token (one per identifier for the life of the process): looking an object up
    /// by it and the key needs no ``ManagedObjectID`` and no string comparison.
    let storeToken: StoreToken
    /// The entity the prefix names.
    let entity: EntityDescription

    /// What an object of this prefix's IDs starts with in a reply, before its key:
    /// `{"id":"x-coredata://<store>/<Entity>/p` (``WireObjectWriter``).
    let objectHead: [UInt8]
    /// What follows the key: `","entity":"<Entity>","version":`.
    let objectMiddle: [UInt8]

    /// A prefix of `bytes` naming `entity` in the store `store` of `coordinator`.
    init(bytes: [UInt8], coordinator: PersistentStoreCoordinator, store: String, entity: EntityDescription) {
        self.bytes = bytes
        self.coordinator = coordinator
        self.store = store
        self.storeToken = StoreToken.forIdentifier(store)
        self.entity = entity
        var head: [UInt8] = []
        JSON.append("{\"id\":\"", to: &head)
        head.append(contentsOf: bytes)
        head.append(UInt8(ascii: "p"))
        objectHead = head
        var middle: [UInt8] = []
        JSON.append("\",\"entity\":", to: &middle)
        JSON.writeString(entity.name, to: &middle)
        JSON.append(",\"version\":", to: &middle)
        objectMiddle = middle
    }

    /// The ID `text` names when it is this prefix then `p` and a key (decimal digits, no
    /// overflow) and the store is still there; `nil` otherwise (the full parse then judges).
    func id(_ text: String, coordinator: PersistentStoreCoordinator) -> ManagedObjectID? {
        guard coordinator === self.coordinator else { return nil }
        var text = text
        let key = text.withUTF8 { utf8 -> Int64? in
            let count = bytes.count
            guard utf8.count > count + 1, utf8[count] == UInt8(ascii: "p") else { return nil }
            let same = bytes.withUnsafeBufferPointer { prefix in
                // The force-unwraps cannot fail: `bytes` is never empty (it starts `x-coredata://`)
                // and `utf8` holds more than `count` bytes (checked above).
                memcmp(prefix.baseAddress!, utf8.baseAddress!, count) == 0
            }
            guard same else { return nil }
            return WireObjectID.primaryKey(in: utf8, from: count + 1)
        }
        guard let key, coordinator.persistentStore(withIdentifier: store) != nil else { return nil }
        return ManagedObjectID(entity: entity, store: storeToken, primaryKey: key)
    }
}
