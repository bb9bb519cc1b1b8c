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
