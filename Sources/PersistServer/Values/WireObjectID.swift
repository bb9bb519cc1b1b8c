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

    /// ASCII letters, digits and `_`: bytes that URLs and percent-encoding leave alone.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"): return true
        default: return false
        }
    }

    /// `x-coredata://<store>/<Entity>/p<digits>` with a store of letters, digits and `-`, an
    /// entity of name bytes: the parts, without Foundation's URL; `nil` for anything else
    /// (which the URL path then judges).
    private static func simpleParts(_ text: String) -> (store: Substring, entity: Substring, key: Int64)? {
        // One pass over the UTF-8 bytes: no intermediate array of parts. The UTF-8 view's
        // indices are the string's, so the parts are substrings of `text`.
        let bytes = text.utf8
        guard bytes.starts(with: uriPrefix) else { return nil }
        var index = bytes.index(bytes.startIndex, offsetBy: uriPrefix.count)
        /// Advances `index` over bytes accepted by `accept` up to the next `/`; the range, or
        /// `nil` when it is empty, a byte is refused, or no `/` follows.
        func part(_ accept: (UInt8) -> Bool) -> Range<String.Index>? {
            let start = index
            while index < bytes.endIndex, bytes[index] != UInt8(ascii: "/") {
                guard accept(bytes[index]) else { return nil }
                bytes.formIndex(after: &index)
            }
            guard index > start, index < bytes.endIndex else { return nil }
            defer { bytes.formIndex(after: &index) }
            return start..<index
        }
        guard let store = part({ isNameByte($0) || $0 == UInt8(ascii: "-") }), let entity = part(isNameByte),
              index < bytes.endIndex, bytes[index] == UInt8(ascii: "p") else { return nil }
        bytes.formIndex(after: &index)
        guard index < bytes.endIndex else { return nil }
        var key: Int64 = 0
        while index < bytes.endIndex {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = key.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            key = sum
            bytes.formIndex(after: &index)
        }
        return (text[store], text[entity], key)
    }

    private static let uriPrefix = Array("x-coredata://".utf8)

    /// The object ID `json` names.
    ///
    /// - Throws: `bad_request` when `json` is not a string in the URI form (`what` names the
    ///   field); `not_found` when it is well formed but names a store or entity the server does
    ///   not have.
    public static func parse(_ json: JSON, coordinator: PersistentStoreCoordinator, what: String) throws(WireError) -> ManagedObjectID {
        guard case .string(let text) = json else {
            throw WireError(.badRequest, "\(what) must be an object ID string, not \(json.typeName)")
        }
        if let (store, entityName, key) = simpleParts(text) {
            // What coordinator.managedObjectID(forURIRepresentation:) does, for the simple form.
            guard coordinator.persistentStore(withIdentifier: String(store)) != nil,
                  let entity = coordinator.managedObjectModel.entitiesByName[String(entityName)] else {
                throw WireError(.notFound, "no object \(text): unknown store or entity", details: [JSON.Member("object", .string(text))])
            }
            return ManagedObjectID(entity: entity, storeIdentifier: String(store), primaryKey: key)
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
