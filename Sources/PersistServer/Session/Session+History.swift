import PersistKit

extension Session {
    /// `history {since?, limit?}` → `{"transactions":[…],"token":"…"}`: the store's persistent
    /// history after `since` (from the start without it), oldest first, at most `limit`.
    /// On the session's own context queue.
    func history(_ body: JSON) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "history")
        guard state.subscriptions.isAvailable else {
            throw WireError(.unsupported, "history: this daemon keeps no persistent history (it needs a SQLite store and --history on)")
        }
        let since = try body["since"].flatMap { json throws(WireError) in json == .null ? nil : try WireHistory.token(json, op: "history") }
        let limit = try fields.integer("limit", minimum: 1)
        if let since, since.storeIdentifier != state.store?.identifier {
            throw WireError(.historyExpired, "history: token \(since) belongs to another store")
        }
        let result = try run { try context.execute(.fetchHistory(after: since, limit: limit)) }
        let token = result.token ?? since
        return .object([
            JSON.Member("transactions", .array(result.transactions.map(WireHistory.encode))),
            JSON.Member("token", token.map { .string($0.description) } ?? .null),
        ])
    }
}
