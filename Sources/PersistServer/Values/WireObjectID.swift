import Foundation
import PersistKit

/// Object IDs on the wire: strings in Core Data's URI form, `x-coredata://<store UUID>/<Entity>/p<key>`.
public enum WireObjectID {
    /// The ID's URI string.
    public static func format(_ id: ManagedObjectID) -> String {
        id.uriRepresentation().absoluteString
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
