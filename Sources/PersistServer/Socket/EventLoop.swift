import Foundation
import PersistKit
import Synchronization

/// What an ``EventLoop`` calls when a registered descriptor is ready; on the loop's thread.
protocol EventLoopHandler: AnyObject {
    /// `events` happened on the descriptor registered with this handler.
    func handle(_ events: Epoll.Events)
}

/// One thread running an epoll loop: it waits for the descriptors registered with it, calls
/// their handlers, and runs the tasks other threads hand it (``execute(_:)``).
///
/// Everything a handler does runs on this one thread, so a connection's state needs no lock
/// as long as it is touched only from its handler and from tasks given to its loop. A task
/// handed over from another thread wakes the loop through the epoll instance's eventfd.
final class EventLoop: @unchecked Sendable {
    // @unchecked Sendable: `handlers`, `nextToken`, `isStopping`, `handlingEvent`,
    // `eventsAfterCurrent`, the last event's token and times (`eventTime`), and `readBuffer`'s
    // bytes are touched only on the loop's thread; `tasks` is under its `Locked`; `epoll` is
    // immutable (its calls are thread-safe system calls), as is `busyPollNanoseconds`;
    // `pollCount` is atomic.

    /// The loop's name, for its thread.
    let name: String
    private let epoll: Epoll
    /// Tasks waiting to run, and whether the loop was woken for them since it last took them.
    private let tasks = Locked<(waiting: [@Sendable () -> Void], woken: Bool)>(([], false))
    /// The loop's thread (`pthread_self()` in ``run()``; 0 before it starts): a task handed over
    /// on that thread needs no wake-up, as the loop runs every task before it waits again.
    private let loopThread = Atomic<UInt>(0)
    private var handlers: [UInt64: any EventLoopHandler] = [:]
    private var nextToken: UInt64 = 1
    private var isStopping = false
    /// A handler or task wrote something to a client since the loop last looked (see
    /// ``noteOutput()``); on the loop's thread.
    private var wroteOutput = false
    /// How long the loop polls for the next event after it wrote output, before it sleeps
    /// (see ``run()``); 0: it sleeps at once.
    private let busyPollNanoseconds: UInt64
    /// The waits that polled without sleeping (for tests); relaxed, counted on the loop's thread.
    private let pollCount = Atomic<Int>(0)
    /// Whether a handler is running for an event of the current wait; on the loop's thread.
    private var handlingEvent = false
    /// How many events the current wait reported after the one being handled.
    private var eventsAfterCurrent = 0
    /// The registration of the last event handled.
    private var lastEventToken: UInt64 = 0
    /// When the loop took the last event handled (the one being handled, while a handler
    /// runs): read once per event, for the loop and for the handler's own time stamps.
    private(set) var eventTime = DispatchTime(uptimeNanoseconds: 0)
    /// When an event of another registration than the current run's was last handled (0:
    /// never, which is as long ago as the machine's uptime).
    private var othersLastSeen: UInt64 = 0
    /// How long the other registrations must have been quiet for ``isOtherwiseIdle``: 1 ms, some
    /// thirty round trips of a busy client on this machine.
    private static let othersQuietNanoseconds: UInt64 = 1_000_000

    /// Whether the loop has nothing to do after the event being handled: it is handling one
    /// (not running a task), the same wait reported no other, no other registration had an
    /// event in the last millisecond, and no task is waiting. A handler may then do a short
    /// blocking job itself (commit a lone write) rather than hand it to another thread and be
    /// woken for its result: as far as the loop can tell, one client is talking to it. (Other
    /// clients that are merely between requests, as many clients are right after a group of
    /// saves was answered, would otherwise wait behind the job.) On the loop's thread.
    var isOtherwiseIdle: Bool {
        guard handlingEvent, eventsAfterCurrent == 0 else { return false }
        guard eventTime.uptimeNanoseconds &- othersLastSeen > Self.othersQuietNanoseconds else { return false }
        return tasks.withLock { $0.waiting.isEmpty }
    }

    /// The most events one wait takes.
    private static let eventsPerWait = 256
    /// The bytes one `read` of a connection takes at most.
    static let readBufferSize = 64 * 1024
    /// The buffer every connection of this loop reads into, on the loop's thread: one for the
    /// loop rather than a 64 KiB heap allocation per `read` (a temporary allocation that large
    /// is not placed on the stack). A read's bytes are consumed before the handler returns,
    /// and no handler runs inside another, so one buffer serves them all.
    let readBuffer: UnsafeMutableBufferPointer<UInt8>

    /// Creates the loop's epoll instance; ``start()`` starts its thread. After it writes output
    /// the loop polls for `busyPoll` seconds before it sleeps (see ``run()``; 0, or anything
    /// not a positive number, never polls; at most one second).
    init(name: String, busyPoll: Double = ServerConfiguration.defaultBusyPoll) throws(SocketError) {
        self.name = name
        self.busyPollNanoseconds = busyPoll > 0 ? UInt64(min(busyPoll, 1) * 1e9) : 0
        self.epoll = try Epoll(capacity: Self.eventsPerWait)
        self.readBuffer = .allocate(capacity: Self.readBufferSize)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Starts the loop's thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Runs `task` on the loop's thread, after what it is doing now (from any thread, the loop's too).
    func execute(_ task: @escaping @Sendable () -> Void) {
        let wake = tasks.withLock { state -> Bool in
            state.waiting.append(task)
            guard !state.woken else { return false }
            state.woken = true
            return true
        }
        // On the loop's thread (a task finishing a save hands the connection its replies), the
        // loop takes the task before it waits again (``runTasks()``): writing the eventfd would
        // only make the next wait return at once.
        if wake && loopThread.load(ordering: .relaxed) != pthread_self() { epoll.wake() }
    }

    /// Ends the loop's thread once the tasks handed over so far have run. Every descriptor
    /// should be unregistered by then.
    func stop() {
        execute { [self] in isStopping = true }
    }

    /// Registers `fd` for `events`; `handler` is called with what happens. On the loop's thread.
    /// - Returns: the registration's token, or `nil` (with the error) when epoll refuses `fd`.
    func register(_ fd: Int32, _ events: Epoll.Events, handler: any EventLoopHandler) -> Result<UInt64, SocketError> {
        let token = nextToken
        nextToken += 1
        let result = epoll.add(fd, events, token: token)
        guard result == 0 else { return .failure(SocketError("epoll_ctl add", errno: -result)) }
        handlers[token] = handler
        return .success(token)
    }

    /// Changes what the registration `token` of `fd` waits for. On the loop's thread.
    @discardableResult
    func update(_ fd: Int32, token: UInt64, _ events: Epoll.Events) -> Int32 {
        epoll.modify(fd, events, token: token)
    }

    /// Ends the registration `token` of `fd` (before `fd` is closed); events of it already
    /// taken are dropped. On the loop's thread.
    func unregister(_ fd: Int32, token: UInt64) {
        _ = epoll.remove(fd)
        handlers[token] = nil
    }

    /// Tells the loop that a reply (or event) was just written to a client, which usually
    /// answers with its next request within microseconds: the loop polls for it before it
    /// sleeps. On the loop's thread.
    func noteOutput() {
        wroteOutput = true
    }

    /// The waits that polled without sleeping so far (for tests).
    var polls: Int { pollCount.load(ordering: .relaxed) }

    /// After the loop wrote output it polls `epoll_wait` without sleeping until
    /// `busyPollNanoseconds` have passed, then blocks: a client answered at once usually sends
    /// its next request within tens of microseconds, and catching it awake saves two thread
    /// wake-ups per request (which cost most when the client runs on another processor). The
    /// bound is a time, not a number of polls, as a poll's cost differs between machines (about
    /// 0.1 µs to 0.5 µs). After events that wrote nothing (a write handed to its context, whose
    /// reply comes back from that thread much later, or part of a line) the loop sleeps at
    /// once: polling then would only take a processor from the thread doing the work, and the
    /// reply's task wakes the loop anyway.
    private func run() {
        loopThread.store(pthread_self(), ordering: .relaxed)
        // The uptime until which the loop polls; 0: it sleeps.
        var pollUntil: UInt64 = 0
        while !isStopping {
            let polling = pollUntil != 0 && DispatchTime.now().uptimeNanoseconds < pollUntil
            if polling { pollCount.add(1, ordering: .relaxed) }
            let count = epoll.wait(timeout: polling ? 0 : -1) { event in
                guard event.token != Epoll.wakeToken, let handler = handlers[event.token] else { return }
                let now = DispatchTime.now()
                if event.token != lastEventToken {
                    othersLastSeen = eventTime.uptimeNanoseconds
                    lastEventToken = event.token
                }
                eventTime = now
                eventsAfterCurrent = event.reportedAfter
                handlingEvent = true
                handler.handle(event.events)
                handlingEvent = false
            }
            runTasks()
            if wroteOutput {
                wroteOutput = false
                pollUntil = busyPollNanoseconds == 0 ? 0 : DispatchTime.now().uptimeNanoseconds + busyPollNanoseconds
            } else if count > 0 {
                pollUntil = 0
            }
        }
    }

    /// Runs the tasks handed over, and those they hand over in turn, until none is left.
    private func runTasks() {
        while true {
            let batch = tasks.withLock { state -> [@Sendable () -> Void] in
                state.woken = false
                defer { state.waiting.removeAll(keepingCapacity: true) }
                return state.waiting
            }
            if batch.isEmpty { return }
            for task in batch { task() }
        }
    }
}
