import CEpoll
#if canImport(Glibc)
import Glibc
#endif

/// The one wrapper of Linux's epoll and eventfd: an epoll instance whose registrations carry a
/// 64-bit token, and an eventfd registered in it that wakes ``wait(into:)`` from other threads.
///
/// Level-triggered: a descriptor is reported while it is readable or writable and registered
/// for that. Hang-ups and errors are reported whatever the registration (``Events/hangUp``).
final class Epoll: @unchecked Sendable {
    // @unchecked Sendable: the descriptors are immutable (epoll_ctl and the eventfd's write are
    // thread-safe); `buffer` is used only by ``wait(timeout:_:)``, on the one thread that waits.

    /// What a descriptor is registered for, or was reported for.
    struct Events: OptionSet, Sendable {
        let rawValue: UInt32
        /// Readable (or the peer shut down its side).
        static let readable = Events(rawValue: EPOLLIN.rawValue)
        /// Writable.
        static let writable = Events(rawValue: EPOLLOUT.rawValue)
        /// Hung up or failed: a read or write now returns at once (0, or an error).
        static let hangUp = Events(rawValue: EPOLLHUP.rawValue | EPOLLERR.rawValue)
    }

    /// One reported descriptor: its token and what happened.
    struct Event {
        var token: UInt64
        var events: Events
        /// How many events the same wait reported after this one.
        var reportedAfter: Int = 0
    }

    /// The token of the wake-up eventfd's registration.
    static let wakeToken = UInt64.max

    private let descriptor: Int32
    private let wakeDescriptor: Int32
    private let buffer: UnsafeMutableBufferPointer<epoll_event>

    /// Creates the epoll instance and its wake-up eventfd; `capacity`: the most events one wait returns.
    init(capacity: Int) throws(SocketError) {
        let descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard descriptor >= 0 else { throw SocketError("epoll_create1", errno: errno) }
        let wake = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        guard wake >= 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw SocketError("eventfd", errno: code)
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeToken
        guard epoll_ctl(descriptor, EPOLL_CTL_ADD, wake, &event) == 0 else {
            let code = errno
            Glibc.close(wake)
            Glibc.close(descriptor)
            throw SocketError("epoll_ctl add eventfd", errno: code)
        }
        self.descriptor = descriptor
        self.wakeDescriptor = wake
        self.buffer = .allocate(capacity: capacity)
    }

    deinit {
        Glibc.close(wakeDescriptor)
        Glibc.close(descriptor)
        buffer.deallocate()
    }

    /// Registers `fd` for `events` under `token`; returns 0 or `-errno`.
    func add(_ fd: Int32, _ events: Events, token: UInt64) -> Int32 {
        control(EPOLL_CTL_ADD, fd, events, token: token)
    }

    /// Changes what `fd` is registered for; returns 0 or `-errno`.
    func modify(_ fd: Int32, _ events: Events, token: UInt64) -> Int32 {
        control(EPOLL_CTL_MOD, fd, events, token: token)
    }

    /// Unregisters `fd` (before it is closed); returns 0 or `-errno`.
    func remove(_ fd: Int32) -> Int32 {
        var event = epoll_event()
        return epoll_ctl(descriptor, EPOLL_CTL_DEL, fd, &event) == 0 ? 0 : -errno
    }

    private func control(_ operation: Int32, _ fd: Int32, _ events: Events, token: UInt64) -> Int32 {
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = token
        return epoll_ctl(descriptor, operation, fd, &event) == 0 ? 0 : -errno
    }

    /// Waits up to `timeout` milliseconds (-1: without end, 0: not at all) and calls `body`
    /// with each event; returns how many there were. The wake-up eventfd is drained here and
    /// reported with ``wakeToken``.
    @discardableResult
    func wait(timeout: Int32, _ body: (Event) -> Void) -> Int {
        let count = retryingOnInterrupt { epoll_wait(descriptor, buffer.baseAddress, Int32(buffer.count), timeout) }
        guard count > 0 else { return 0 }
        for index in 0..<Int(count) {
            let event = buffer[index]
            let token = event.data.u64
            if token == Self.wakeToken {
                var value: UInt64 = 0
                _ = Glibc.read(wakeDescriptor, &value, MemoryLayout<UInt64>.size)
            }
            body(Event(token: token, events: Events(rawValue: event.events), reportedAfter: Int(count) - index - 1))
        }
        return Int(count)
    }

    /// Wakes a thread blocked in ``wait(timeout:_:)`` (from any thread).
    func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
    }
}
