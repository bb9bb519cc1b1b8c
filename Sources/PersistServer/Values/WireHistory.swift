import PersistKit

/// Persistent history on the wire: tokens and transactions of the `history` op.
///
/// A token is `<store UUID>:<transaction number>` (``PersistentHistoryToken``'s string form).
/// A transaction:
/// `{"token","timestamp","author","contextName","bundleID","processID","changes":[{"object","entity","type","updatedProperties"?,"tombstone"?}]}`.
public enum WireHistory {
    /// The token a `since` field holds.
    /// - Throws: `bad_request` when it is not a string of the token form.
    public static func token(_ json: JSON, op: String) throws(WireError) -> PersistentHistoryToken {
        guard case .string(let text) = json, let token = PersistentHistoryToken(string: text) else {
            throw WireError(.badRequest, "\(op): \"since\" must be a history token \"<store UUID>:<transaction number>\", not \(json.encoded)")
        }
        return token
    }

    /// A transaction as JSON.
    public static func encode(_ transaction: PersistentHistoryTransaction) -> JSON {
        func text(_ value: String?) -> JSON { value.map(JSON.string) ?? .null }
        return .object([
            JSON.Member("token", .string(transaction.token.description)),
            JSON.Member("timestamp", .string(WireDate.format(transaction.timestamp))),
            JSON.Member("author", text(transaction.author)),
            JSON.Member("contextName", text(transaction.contextName)),
            JSON.Member("bundleID", text(transaction.bundleID)),
            JSON.Member("processID", text(transaction.processID)),
            JSON.Member("changes", .array(transaction.changes.map(encode))),
        ])
    }

    /// One change as JSON.
    public static func encode(_ change: PersistentHistoryChange) -> JSON {
        let entity = change.changedObjectID.entity
        var members = [
            JSON.Member("object", .string(WireObjectID.format(change.changedObjectID))),
            JSON.Member("entity", .string(entity.name)),
        ]
        switch change.changeType {
        case .insert:
            members.append(JSON.Member("type", "insert"))
        case .update:
            members.append(JSON.Member("type", "update"))
            members.append(JSON.Member("updatedProperties", .array(change.updatedProperties.sorted().map(JSON.string))))
        case .delete:
            members.append(JSON.Member("type", "delete"))
            let attributes = entity.attributesByName
            members.append(JSON.Member("tombstone", .object(change.tombstone.keys.sorted().map { key in
                // The force-unwrap is safe: `key` is one of the dictionary's own keys.
                JSON.Member(key, WireValueCoder.encode(change.tombstone[key]!, type: attributes[key]?.attributeType))
            })))
        }
        return .object(members)
    }
}
