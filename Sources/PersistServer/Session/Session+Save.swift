import PersistKit

extension Session {
    /// `save` → `{"inserted":n,"updated":n,"deleted":n}`. On failure nothing is written, the
    /// connection keeps its changes (fix them, or `rollback`), and the error lists every
    /// failing object and key. `mergePolicy` applies to this save only.
    func save(_ body: JSON = .object([])) throws(WireError) -> JSON {
        let policy = try Self.mergePolicy(RequestFields(body, op: "save"))
        let configured = context.mergePolicy
        if let policy { context.mergePolicy = policy }
        defer { context.mergePolicy = configured }
        context.processPendingChanges()
        let (inserted, updated, deleted) = context.changeCounts
        do {
            try context.save()
        } catch {
            throw WireError(persistenceError: error)
        }
        if inserted + updated + deleted > 0 { state.statistics.saves.add(1, ordering: .relaxed) }
        return .object(["inserted": .integer(Int64(inserted)), "updated": .integer(Int64(updated)), "deleted": .integer(Int64(deleted))])
    }
}
