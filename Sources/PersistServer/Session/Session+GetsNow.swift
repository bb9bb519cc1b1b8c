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
        let own = hasPendingChanges.load(ordering: .acquiring)
        guard own || state.queriesOnViewContext.load(ordering: .acquiring) == 0 else { return false }
        if requests.count == 1 {
            // A batch's requests are logged and checked one by one in `writeGets`.
            if let refusal = admit(requests[0], under: state.policy) {
                WireReply.failure(id: requests[0].id, error: refusal).write(to: &output)
                return true
            }
        }
        let readContext = own ? context : state.container.viewContext
        readContext.performVoidAndWait { writeGets(requests, in: readContext, into: &output) }
        return true
    }

    /// What ``answer(_:in:)`` does for the `get`s `requests`, each reply appended to `output`
    /// as its line: `{"id":…,"ok":true,"result":` then the result written in place, or, when
    /// the `get` fails, the bytes written for it removed and the failure's line instead.
    private func writeGets(_ requests: [WireRequest], in readContext: ManagedObjectContext, into output: inout [UInt8]) {
        // The IDs each `get` names, parsed once when they are preloaded (see `replies(to:in:)`).
        var parsedIDs: [[ManagedObjectID]?] = []
        if requests.count > 1 || Self.namesSeveralObjects(requests[0]) { parsedIDs = preloadObjects(of: requests, in: readContext) }
        // Read once per batch (a copy under the state's lock), not once per request.
        let policy = requests.count > 1 ? state.policy : nil
        for (index, request) in requests.enumerated() {
            if let policy {
                // A single request was logged and checked by answerGetsNow.
                if let refusal = admit(request, under: policy) {
                    WireReply.failure(id: request.id, error: refusal).write(to: &output)
                    continue
                }
            }
            let mark = output.count
            WireReply.writeSuccessStart(id: request.id, to: &output)
            do throws(WireError) {
                try writeGetResult(request.body, ids: index < parsedIDs.count ? parsedIDs[index] : nil, in: readContext, to: &output)
                JSON.append("}\n", to: &output)
            } catch {
                output.removeSubrange(mark...)
                WireReply.failure(id: request.id, error: error).write(to: &output)
            }
        }
        if readContext === state.container.viewContext {
            readContext.releaseUnreferencedObjects(beyond: Self.viewContextObjectLimit)
        }
    }
}
