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
        let prefix = "x-coredata://"
        guard text.hasPrefix(prefix) else { return nil }
        let rest = text.dropFirst(prefix.count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, parts[2].count > 1, parts[2].first == "p",
              parts[0].utf8.allSatisfy({ isNameByte($0) || $0 == UInt8(ascii: "-") }), parts[1].utf8.allSatisfy(isNameByte),
              parts[2].utf8.dropFirst().allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let key = Int64(parts[2].dropFirst()) else { return nil }
        return (parts[0], parts[1], key)
    }

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
