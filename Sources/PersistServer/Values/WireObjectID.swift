import Foundation
import PersistKit

/// Object IDs on the wire: strings in Core Data's URI form, `x-coredata://<store UUID>/<Entity>/p<key>`.
public enum WireObjectID {
    /// The ID's URI string.
    public static func format(_ id: ManagedObjectID) -> String {
        // The common case without Foundation's URL: a permanent ID whose entity name needs no
        // percent-encoding gives the very text `uriRepresentation()` would.
        if !id.isTemporaryID, let store = id.storeIdentifier, id.entity.name.utf8.allSatisfy(isNameByte) {
            return "x-coredata://" + store + "/" + id.entity.name + "/p" + String(id.primaryKey)
        }
        return id.uriRepresentation().absoluteString
    }

    /// ASCII letters, digits and `_`: bytes that URLs and percent-encoding leave alone (the
    /// bytes of a simple ID's store and entity, here and in ``WireObjectWriter``).
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"): return true
        default: return false
        }
    }

    /// `x-coredata://<store>/<Entity>/p<digits>` with a store of letters, digits and `-`, an
    /// entity of name bytes: the parts, without Foundation's URL; `nil` for anything else
    /// (which the URL path then judges).
    private static func simpleParts(_ text: String) -> (store: String, entity: String, key: Int64)? {
        // One pass over the string's contiguous UTF-8 bytes, by offset: walking the UTF-8 view
        // index by index cost about a hundred instructions a byte.
        var text = text
        return text.withUTF8 { bytes -> (store: String, entity: String, key: Int64)? in
            let prefixCount = uriPrefix.count
            guard bytes.count > prefixCount else { return nil }
            for offset in 0..<prefixCount where bytes[offset] != uriPrefix[offset] { return nil }
            var index = prefixCount
            /// Advances `index` over bytes accepted by `accept` up to the next `/`; the range, or
            /// `nil` when it is empty, a byte is refused, or no `/` follows.
            func part(_ accept: (UInt8) -> Bool) -> Range<Int>? {
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "/") {
                    guard accept(bytes[index]) else { return nil }
                    index += 1
                }
                guard index > start, index < bytes.count else { return nil }
                defer { index += 1 }
                return start..<index
            }
            guard let store = part({ isNameByte($0) || $0 == UInt8(ascii: "-") }), let entity = part(isNameByte),
                  index < bytes.count, bytes[index] == UInt8(ascii: "p") else { return nil }
            index += 1
            guard let key = primaryKey(in: bytes, from: index) else { return nil }
            return (String(decoding: UnsafeBufferPointer(rebasing: bytes[store]), as: UTF8.self),
                    String(decoding: UnsafeBufferPointer(rebasing: bytes[entity]), as: UTF8.self), key)
        }
    }

    private static let uriPrefix = Array("x-coredata://".utf8)

    /// The object ID `json` names.
    ///
    /// - Throws: `bad_request` when `json` is not a string in the URI form (`what` names the
    ///   field); `not_found` when it is well formed but names a store or entity the server does
    ///   not have.
    public static func parse(_ json: JSON, coordinator: PersistentStoreCoordinator, what: String) throws(WireError) -> ManagedObjectID {
        try parse(json, coordinator: coordinator, what: what, prefix: nil)
    }

    /// ``parse(_:coordinator:what:)``, trying `prefix`'s store and entity first and keeping
    /// there those of the last simple ID that parsed (see ``WireObjectIDPrefix``): the same
    /// IDs and the same errors.
    static func parse(_ json: JSON, coordinator: PersistentStoreCoordinator, what: String,
                      prefix: Locked<WireObjectIDPrefix?>?) throws(WireError) -> ManagedObjectID {
        guard case .string(let text) = json else {
            throw WireError(.badRequest, "\(what) must be an object ID string, not \(json.typeName)")
        }
        if let prefix, let id = prefix.withLock({ $0?.id(text, coordinator: coordinator) }) { return id }
        if let (store, entityName, key) = simpleParts(text) {
            // What coordinator.managedObjectID(forURIRepresentation:) does, for the simple form.
            guard let found = coordinator.persistentStore(withIdentifier: store),
                  let entity = coordinator.managedObjectModel.entitiesByName[entityName] else {
                throw WireError(.notFound, "no object \(text): unknown store or entity", details: [JSON.Member("object", .string(text))])
            }
            if let prefix {
                let bytes = Array("x-coredata://\(store)/\(entityName)/".utf8)
                // The store's own identifier (equal to `store`), not the string just read: the IDs
                // made from the prefix then share its storage with the store's and with every
                // other connection's, and comparing two of them (the registry's lookups, the
                // store's) ends at their identical storage instead of comparing their bytes.
                let identifier = found.identifier
                prefix.withLock { $0 = WireObjectIDPrefix(bytes: bytes, coordinator: coordinator, store: identifier, entity: entity) }
            }
            return ManagedObjectID(entity: entity, storeIdentifier: store, primaryKey: key)
        }
        guard let url = URL(string: text), url.scheme == "x-coredata", let host = url.host, !host.isEmpty else {
            throw WireError(.badRequest, "\(what) \"\(text)\" is not an object ID (x-coredata://<store>/<Entity>/p<key>)")
        }
        let parts = url.path.split(separator: "/")
        guard parts.count == 2, parts[1].first == "p", Int64(parts[1].dropFirst()) != nil else {
            throw WireError(.badRequest, "\(what) \"\(text)\" is not an object ID (x-coredata://<store>/<Entity>/p<key>)")
        }
        guard let id = coordinator.managedObjectID(forURIRepresentation: url) else {
            throw WireError(.notFound, "no object \(text): unknown store or entity", details: [JSON.Member("object", .string(text))])
        }
        return id
    }
}

extension WireObjectID {
    /// The primary key written in `bytes` from `start` to the end: one decimal digit or more,
    /// no sign, within `Int64`; `nil` otherwise.
    static func primaryKey(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int64? {
        guard start < bytes.count else { return nil }
        var key: Int64 = 0
        for index in start..<bytes.count {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = key.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            key = sum
        }
        return key
    }
}
