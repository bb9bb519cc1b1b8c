import Dispatch
import PersistKit
@testable import PersistServer

/// A batch of requests sent to a session, and the session's `close` after it, each recording
/// when it is done: the order of `"replied"` and `"closed"` in ``events`` tells whether the
/// close waited for the batch.
final class BatchAndClose: Sendable {
    /// `"replied"` when the batch was answered, `"closed"` when the close completed.
    let events = Locked<[String]>([])
    /// The batch's replies, once answered.
    let replies = Locked<[JSON]>([])
    private let done = DispatchGroup()

    /// Sends `requests` to `session` as one batch.
    func send(_ requests: [WireRequest], to session: Session) {
        done.enter()
        session.handle(requests) { [self] answers in
            replies.withLock { $0 = answers.map(\.json) }
            events.withLock { $0.append("replied") }
            done.leave()
        }
    }

    /// Closes `session`.
    func close(_ session: Session) {
        done.enter()
        session.close { [self] in
            events.withLock { $0.append("closed") }
            done.leave()
        }
    }

    /// Waits (at most 30 s) until the batch is answered and the close done; whether they were.
    func wait() -> Bool { done.wait(timeout: .now() + 30) == .success }
}
