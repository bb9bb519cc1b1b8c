/// The writes of one batch on their way through a session's context
/// (``Session/writeReplies(_:leadingIfIdle:then:)``).
final class WriteBatch {
    /// The batch's requests.
    let requests: [WireRequest]
    /// The replies so far, by request.
    var replies: [WireReply?]
    /// The first request not started.
    var next = 0
    /// How many saves (and `insert`+`save` units) started and not yet answered.
    var inFlight = 0
    /// Whether ``Session`` is running the batch's requests in a loop right now.
    var isAdvancing = false
    /// Whether the batch's saves commit on the calling thread when the store's group commit is
    /// idle (``Session/writeReplies(_:leadingIfIdle:then:)``).
    let leadingIfIdle: Bool
    /// Gets the replies once every request is answered.
    private let then: ([WireReply]) -> Void

    /// A batch of `requests`, none started yet.
    init(_ requests: [WireRequest], leadingIfIdle: Bool = false, then: @escaping ([WireReply]) -> Void) {
        self.requests = requests
        self.leadingIfIdle = leadingIfIdle
        self.replies = Array(repeating: nil, count: requests.count)
        self.then = then
    }

    /// Passes the replies on: every request has one. Each is moved out of ``replies``, not
    /// copied (a copy retained what a reply holds, and the batch's own then released it).
    func finish() {
        var answered: [WireReply] = []
        answered.reserveCapacity(replies.count)
        for index in replies.indices {
            // Each request is answered before the batch finishes (Session.advance(_:)).
            guard let reply = replies[index].take() else { preconditionFailure("WriteBatch: a request finished without a reply") }
            answered.append(reply)
        }
        then(answered)
    }
}
