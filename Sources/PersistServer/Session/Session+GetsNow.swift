import PersistKit

extension Session {
    /// The replies to `requests` when they are all `get`s that can be answered on the calling
    /// thread right now; `nil` otherwise, with nothing done (the caller then goes through
    /// ``handle(_:completion:)-([WireRequest],_)``).
    ///
    /// The same replies, checks and log lines as that path, without its completion closures
    /// and hand-off: `get`s are read on the connection's own context while it has pending
    /// changes, else on the view context when no query holds it (a synchronous hop, which runs
    /// on the calling thread when the context is free).
    func answerGetsNow(_ requests: [WireRequest]) -> [WireReply]? {
        for request in requests where request.op != "get" { return nil }
        let own = hasPendingChanges.load(ordering: .acquiring)
        guard own || state.queriesOnViewContext.load(ordering: .acquiring) == 0 else { return nil }
        if requests.count == 1 {
            // A batch's requests are logged and checked one by one in `answer`.
            let request = requests[0]
            Logger.daemon.log(.debug, "request", [.requestID(request.id.encoded), .op(request.op)] + LogField.peer(peer))
            guard state.policy.allows(peer, op: request.op) else {
                return [.failure(id: request.id, error: AccessPolicy.refusal(peer, op: request.op))]
            }
        }
        let readContext = own ? context : state.container.viewContext
        var replies: [WireReply] = []
        readContext.performVoidAndWait { replies = answer(requests, in: readContext) }
        return replies
    }
}
