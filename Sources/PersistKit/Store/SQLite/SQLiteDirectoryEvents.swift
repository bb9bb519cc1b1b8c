import Foundation

/// The kernel's word on entries added, removed or renamed in the directories of open stores:
/// one `inotify` instance per process, asked before each write whether anything happened
/// since, with one `ioctl` instead of a `stat`.
///
/// The kernel queues an event while the `rename`, `unlink` or `creat` that causes it is still
/// running, so by the time that call returns, ``changeCount(of:)`` (which collects the queued
/// events first) counts it: a check made after a replacement sees it, exactly as a `stat` made
/// then would. Only events naming a watched file count, so other files coming and going in the
/// directory cost nothing; the directory itself moved or deleted, the watch lost, or the
/// kernel's queue overflowed counts for every file concerned.
///
/// `inotify` sees what happens through the local kernel only: ``SQLiteFileWatch`` uses it where
/// it already lets the directory stand for the files (local file systems, no symbolic links).
final class SQLiteDirectoryEvents: Sendable {
    /// The process's instance, or `nil` where `inotify` is not available (the checks then
    /// look at the files, as before).
    static let shared: SQLiteDirectoryEvents? = SQLiteDirectoryEvents()

    /// What one watch of a file watch is told: the names it cares about, and how many events
    /// concerned them. Registered until ``SQLiteDirectoryEvents/cancel(_:)``.
    final class Subscription: Sendable {
        /// The directory's watch descriptor.
        fileprivate let watch: Int32
        /// The base names of the watched files, as bytes.
        fileprivate let names: [[UInt8]]
        /// The instance that delivers the events.
        let events: SQLiteDirectoryEvents

        fileprivate init(watch: Int32, names: [[UInt8]], events: SQLiteDirectoryEvents) {
            self.watch = watch
            self.names = names
            self.events = events
        }
    }

    /// The events counted for one subscription.
    private struct Tally {
        var count: UInt64 = 0
        /// Whether events may have been missed (the watch lost, the queue unreadable): the
        /// subscription can never be trusted again.
        var lost = false
    }

    /// What the lock guards: each watch descriptor's subscriptions, and each subscription's tally.
    private struct Registry {
        var subscriptions: [Int32: [Subscription]] = [:]
        var tallies: [ObjectIdentifier: Tally] = [:]
    }

    /// Entries created, deleted or renamed in the directory, and the directory itself
    /// deleted or moved.
    private static let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    private let descriptor: Int32
    private let registry = Locked(Registry())

    /// A new instance; `nil` when the kernel refuses one (no `inotify`, or the user's limit
    /// of instances reached).
    init?() {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Watches the directory `directory` for entries named `names` (base names) created,
    /// deleted or renamed; `nil` when the kernel refuses the watch (the user's limit of
    /// watches reached, or no such directory).
    func subscribe(directory: ContiguousArray<CChar>, names: [String]) -> Subscription? {
        registry.withLock { registry in
            let watch = directory.withUnsafeBufferPointer { inotify_add_watch(descriptor, $0.baseAddress, Self.mask) }
            guard watch >= 0 else { return nil }
            let subscription = Subscription(watch: watch, names: names.map { Array($0.utf8) }, events: self)
            registry.subscriptions[watch, default: []].append(subscription)
            registry.tallies[ObjectIdentifier(subscription)] = Tally()
            return subscription
        }
    }

    /// Ends `subscription`; the directory's watch ends with its last subscription.
    func cancel(_ subscription: Subscription) {
        registry.withLock { registry in
            registry.tallies[ObjectIdentifier(subscription)] = nil
            guard var list = registry.subscriptions[subscription.watch] else { return }
            list.removeAll { $0 === subscription }
            if list.isEmpty {
                registry.subscriptions[subscription.watch] = nil
                inotify_rm_watch(descriptor, subscription.watch)
            } else {
                registry.subscriptions[subscription.watch] = list
            }
        }
    }

    /// How many events concerned `subscription`'s files so far, the ones queued until now
    /// included; `nil` once its watch was lost (the directory deleted, its file system
    /// unmounted) or the kernel could not be asked.
    func changeCount(of subscription: Subscription) -> UInt64? {
        registry.withLock { registry in
            var queued: Int32 = 0
            if ioctl(descriptor, UInt(FIONREAD), &queued) != 0 {
                Self.loseAll(&registry)
            } else if queued > 0 {
                collect(&registry)
            }
            guard let tally = registry.tallies[ObjectIdentifier(subscription)], !tally.lost else { return nil }
            return tally.count
        }
    }

    /// Reads every queued event and counts it for the subscriptions it concerns.
    private func collect(_ registry: inout Registry) {
        // Room for many events at once; the kernel never splits one event across reads.
        let capacity = 16 * (MemoryLayout<inotify_event>.size + Int(NAME_MAX) + 1)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, capacity)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                // EAGAIN: all read. Anything else: events may be lost, so nothing is trusted.
                if count < 0 && errno != EAGAIN { Self.loseAll(&registry) }
                return
            }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = buffer + offset + MemoryLayout<inotify_event>.size
                let name = UnsafeRawBufferPointer(start: nameStart, count: Int(event.len))
                deliver(event, name: name, &registry)
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
            }
        }
    }

    /// Counts `event` (whose name, NUL-padded, is `name`) for the subscriptions it concerns.
    private func deliver(_ event: inotify_event, name: UnsafeRawBufferPointer, _ registry: inout Registry) {
        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
            // Events were dropped: any of them may have concerned any file.
            for list in registry.subscriptions.values { for subscription in list { Self.count(subscription, &registry) } }
            return
        }
        guard let list = registry.subscriptions[event.wd] else { return }
        if event.mask & UInt32(IN_IGNORED | IN_UNMOUNT) != 0 {
            // The watch is gone (the directory deleted, its file system unmounted): its
            // subscriptions fall back to looking at the files, for good.
            for subscription in list { registry.tallies[ObjectIdentifier(subscription)]?.lost = true }
            registry.subscriptions[event.wd] = nil
            return
        }
        let entry = name.prefix { $0 != 0 }
        for subscription in list where event.len == 0 || subscription.names.contains(where: { $0.elementsEqual(entry) }) {
            Self.count(subscription, &registry)
        }
    }

    /// Counts one event for `subscription`.
    private static func count(_ subscription: Subscription, _ registry: inout Registry) {
        registry.tallies[ObjectIdentifier(subscription)]?.count &+= 1
    }

    /// Makes every subscription untrustworthy for good (events may have been lost).
    private static func loseAll(_ registry: inout Registry) {
        for key in registry.tallies.keys { registry.tallies[key]?.lost = true }
    }
}
