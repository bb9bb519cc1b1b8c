/// One line the subscription hub hands a connection: a `changes` event of one subscription.
struct SubscriptionEvent: Sendable {
    /// The subscription the event belongs to (`"s1"`).
    let subscription: String
    /// The encoded event line, with its `\n`.
    let line: [UInt8]
    /// The history token before the event's transaction: where a client that misses this
    /// event resumes with `history {since: …}`.
    let previousToken: String
}
