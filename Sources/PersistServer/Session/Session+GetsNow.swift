import PersistKit

extension Session {
    /// Writes the replies to `requests` into `output` (each line as ``WireReply/write(to:)``
    /// writes it) and returns `true` when they are all `get`s that can be answered on the
    /// calling thread right now; `false` otherwise, with nothing done (the caller then goes
    /// through ``handle(_:completion:)-([WireRequest],_)``).
    ///
    /// The same replies, checks and log lines as that path, without its completion closures,
    /// hand-off and reply values: `get`s are read on the connection's own context while it has
    /// pending changes, else on the view context when no query holds it (a synchronous hop,
    /// which runs on the calling thread when the context is free), and each reply is written
    /// straight into the connection's output.
    func answerGetsNow(_ requests: [WireRequest], into output: inout [UInt8]) -> Bool {
        for request in requests where request.op != "get" { return false }
        guard let readContext = getContextNow() else { return false }
        if requests.count == 1 {
            // A batch's requests are logged and checked one by one in `writeGets`.
            if let refusal = admit(requests[0], under: access()) {
                WireReply.failure(id: requests[0].id, error: refusal).write(to: &output)
                return true
            }
        }
        readContext.performVoidAndWait { writeGets(requests, in: readContext, into: &output) }
        return true
    }

    /// The context reads go to: the connection's own while it has pending changes (`own`: the
    /// reads see them), else the shared view context.
    func contextForReads() -> (context: ManagedObjectContext, own: Bool) {
        let own = hasPendingChanges.load(ordering: .acquiring)
        return (own ? context : state.container.viewContext, own)
    }

    /// Whether `get`s may read now on the calling thread, on the context ``contextForReads()``
    /// chose (`own` as it said): always on the connection's own, on the view context only
    /// while no query holds it (a query may take up to the query timeout).
    func mayReadNow(own: Bool) -> Bool {
        own || state.queriesOnViewContext.load(ordering: .acquiring) == 0
    }

    /// The context `get`s read on right now (``contextForReads()``), or `nil` when they may not
    /// (``mayReadNow(own:)``).
    func getContextNow() -> ManagedObjectContext? {
        let (readContext, own) = contextForReads()
        return mayReadNow(own: own) ? readContext : nil
    }

    /// After a read on `readContext`: the view context lets go of unreferenced objects past
    /// ``viewContextObjectLimit``, so reads of many objects leave its memory bounded.
    func releaseObjects(after readContext: ManagedObjectContext) {
        if readContext === state.container.viewContext {
            readContext.releaseUnreferencedObjects(beyond: Self.viewContextObjectLimit)
        }
    }

    /// The reply line to the `get` `body` (of request `id`; `ids` its IDs when already parsed)
    /// appended to `output`: `{"id":…,"ok":true,"result":` then the result written in place, or,
    /// when the `get` fails, the failure's line instead.
    func writeGetReply(id: JSON, body: JSON, ids: [ManagedObjectID]?, in readContext: ManagedObjectContext, into output: inout [UInt8]) {
        let mark = output.count
        WireReply.writeSuccessStart(id: id, to: &output)
        do throws(WireError) {
            try writeGetResult(body, ids: ids, in: readContext, to: &output)
            JSON.append("}\n", to: &output)
        } catch {
            Self.replaceReply(since: mark, with: error, id: id, in: &output)
        }
    }

    /// The bytes of a failed reply, from `mark` on, removed from `output` and the failure's
    /// line written instead.
    static func replaceReply(since mark: Int, with error: WireError, id: JSON, in output: inout [UInt8]) {
        output.removeSubrange(mark...)
        WireReply.failure(id: id, error: error).write(to: &output)
    }

    /// What ``answer(_:in:)`` does for the `get`s `requests`, each reply appended to `output`
    /// as its line: `{"id":…,"ok":true,"result":` then the result written in place, or, when
    /// the `get` fails, the bytes written for it removed and the failure's line instead.
    private func writeGets(_ requests: [WireRequest], in readContext: ManagedObjectContext, into output: inout [UInt8]) {
        // The IDs each `get` names, parsed once when they are preloaded (see `replies(to:in:)`).
        var parsedIDs: [[ManagedObjectID]?] = []
        if requests.count > 1 || Self.namesSeveralObjects(requests[0]) { parsedIDs = preloadObjects(of: requests, in: readContext) }
        // Decided once per batch, not once per request.
        let access = requests.count > 1 ? self.access() : nil
        for (index, request) in requests.enumerated() {
            if let access {
                // A single request was logged and checked by answerGetsNow.
                if let refusal = admit(request, under: access) {
                    WireReply.failure(id: request.id, error: refusal).write(to: &output)
                    continue
                }
            }
            let ids = index < parsedIDs.count ? parsedIDs[index] : nil
            writeGetReply(id: request.id, body: request.body, ids: ids, in: readContext, into: &output)
        }
        releaseObjects(after: readContext)
    }
}
