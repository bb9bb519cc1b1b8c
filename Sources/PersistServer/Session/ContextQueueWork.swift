/// Work for a session context's queue, handed to `perform`: the closure holds the context's
/// objects (or a batch's replies), which are not `Sendable`.
final class ContextQueueWork: @unchecked Sendable {
    // @unchecked Sendable: `body` is made on the context's queue and run only there (directly,
    // or by the context's `perform`); no other thread touches it.
    private let body: () -> Void

    /// Work that runs `body`.
    init(_ body: @escaping () -> Void) {
        self.body = body
    }

    /// Runs the work, on the context's queue.
    func run() {
        body()
    }
}
