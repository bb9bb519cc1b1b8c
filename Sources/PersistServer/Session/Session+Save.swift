import PersistKit

extension Session {
    /// `save` → `{"inserted":n,"updated":n,"deleted":n}`. On failure nothing is written, the
    /// connection keeps its changes (fix them, or `rollback`), and the error lists every
    /// failing object and key. `mergePolicy` applies to this save only.
    func save(_ body: JSON = .object([])) throws(WireError) -> JSON {
        let (inserted, updated, deleted) = try saveCounts(body)
        return .object(["inserted": .integer(Int64(inserted)), "updated": .integer(Int64(updated)), "deleted": .integer(Int64(deleted))])
    }

    /// Runs `save` and returns how many objects it inserted, updated and deleted.
    func saveCounts(_ body: JSON) throws(WireError) -> (inserted: Int, updated: Int, deleted: Int) {
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
        if inserted + updated + deleted > 0 {
            state.statistics.saves.add(1, ordering: .relaxed)
            // The context posts no did-save notification (Session.init): the hub is told here.
            state.subscriptions.kick()
        }
        return (inserted, updated, deleted)
    }

    /// The bytes of ``save(_:)``'s result for `counts` (what its `JSON` writes).
    static func saveResult(_ counts: (inserted: Int, updated: Int, deleted: Int)) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(48)
        JSON.append("{\"inserted\":", to: &bytes)
        JSON.writeInteger(Int64(counts.inserted), to: &bytes)
        JSON.append(",\"updated\":", to: &bytes)
        JSON.writeInteger(Int64(counts.updated), to: &bytes)
        JSON.append(",\"deleted\":", to: &bytes)
        JSON.writeInteger(Int64(counts.deleted), to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
