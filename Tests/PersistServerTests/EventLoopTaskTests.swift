import Dispatch
import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// Tasks handed to an ``EventLoop``: from another thread they wake the loop; from the loop's
/// own thread (a task that finishes a save hands the connection its replies) they wake
/// nothing, and still run before the loop waits again.
@Suite("event loop tasks", .timeLimit(.minutes(1)))
struct EventLoopTaskTests {
    @Test("a task handed over by a task on the loop runs before the loop sleeps, in order")
    func tasksFromTheLoopsOwnThread() throws {
        let loop = try EventLoop(name: "task-test")
        loop.start()
        defer { loop.stop() }
        // Let the loop go idle, so that it sleeps in epoll_wait until woken.
        Thread.sleep(forTimeInterval: 0.2)
        let order = Locked<[String]>([])
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            order.withLock { $0.append("outer") }
            loop.execute {
                order.withLock { $0.append("inner") }
                loop.execute {
                    order.withLock { $0.append("innermost") }
                    done.signal()
                }
            }
            order.withLock { $0.append("outer end") }
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(order.withLock { $0 } == ["outer", "outer end", "inner", "innermost"])
        // The loop still wakes for a task from another thread afterwards.
        Thread.sleep(forTimeInterval: 0.2)
        let later = DispatchSemaphore(value: 0)
        loop.execute { later.signal() }
        #expect(later.wait(timeout: .now() + 5) == .success)
    }
}

/// After output a loop polls for the next event for its busy-poll time, then sleeps; with no
/// busy-poll time, or after events that wrote nothing, it sleeps at once.
@Suite("event loop polling after output", .timeLimit(.minutes(1)))
struct EventLoopPollTests {
    /// Runs `task` on `loop` and waits until it ran.
    private func run(on loop: EventLoop, _ task: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            task()
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
    }

    @Test("output starts polling for the busy-poll time, and the loop sleeps after it")
    func pollsForItsTimeThenSleeps() throws {
        let loop = try EventLoop(name: "poll-test", busyPoll: 0.05)
        loop.start()
        defer { loop.stop() }
        Thread.sleep(forTimeInterval: 0.1)
        // Nothing written yet: the loop sleeps without polling.
        #expect(loop.polls == 0)
        run(on: loop) { loop.noteOutput() }
        // Polling for 50 ms, then asleep: the count grows, then stops.
        Thread.sleep(forTimeInterval: 0.3)
        let afterPolling = loop.polls
        #expect(afterPolling > 0)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(loop.polls == afterPolling)
        // A task that writes nothing does not start polling again.
        run(on: loop) {}
        Thread.sleep(forTimeInterval: 0.2)
        #expect(loop.polls == afterPolling)
    }

    @Test("with no busy-poll time, or one that is not a positive number, the loop sleeps right after output",
          arguments: [0, -1, Double.nan, -Double.infinity])
    func noBusyPollNeverPolls(_ busyPoll: Double) throws {
        let loop = try EventLoop(name: "no-poll-test", busyPoll: busyPoll)
        loop.start()
        defer { loop.stop() }
        run(on: loop) { loop.noteOutput() }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(loop.polls == 0)
    }
}
