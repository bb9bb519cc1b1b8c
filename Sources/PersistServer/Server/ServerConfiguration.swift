import Foundation
import PersistKit
#if canImport(Glibc)
import Glibc
#endif

/// Everything `persistd` needs to serve, resolved from flags, environment and config file.
///
/// A value passed to ``Server/init(configuration:)``; see ``DaemonConfiguration`` for how it is
/// resolved.
public struct ServerConfiguration: Sendable, Equatable {
    /// The model file.
    public var modelPath: String
    /// The store file (ignored for in-memory stores).
    public var storePath: String
    /// The store's type.
    public var storeType: StoreType = .sqlite
    /// The socket's path.
    public var socketPath: String
    /// The socket file's permission bits.
    public var socketMode: UInt32 = 0o660
    /// The most connections open at once; more are refused with `too_many_connections`.
    public var maximumConnections = 256
    /// The most connections open at once by one user (`SO_PEERCRED` uid); more are refused
    /// with `too_many_connections` (`"scope": "user"`), so one user cannot take every slot.
    public var maximumConnectionsPerUser = 64
    /// The longest request line in bytes; longer ones get `line_too_long` and are disconnected.
    public var maximumLineLength = 1 << 20
    /// The most requests waiting per connection (pipelined, not yet answered); more get `too_many_requests`.
    public var maximumQueuedRequests = 128
    /// Seconds a connection may stay idle (nothing in flight, nothing received) before it is closed; 0 for never.
    public var idleTimeout: Double = 300
    /// Seconds a client has to finish a line once its first byte arrived (slow clients); 0 for
    /// never. Past it the client gets a `closing` event (`line_timeout`) and is disconnected.
    public var lineTimeout: Double = 30
    /// Bytes of replies buffered for a client that does not read; past it the connection stops
    /// reading requests until the client catches up.
    public var maximumQueuedBytes = 4 << 20
    /// Seconds a client may leave replies unread (no byte of them taken) before it is
    /// disconnected; 0 for never.
    public var writeTimeout: Double = 60
    /// Seconds one query (fetch or count) may run in the store before it is interrupted with
    /// `query_timeout`; 0 for no limit.
    public var queryTimeout: Double = 10
    /// Event loops (threads) serving the connections; read at start, a reload does not change it.
    /// By default half the processors, at least 1 and at most 4: reads of clean connections
    /// take turns on the one view context, so more loops add contention sooner than throughput.
    public var eventLoops = min(4, max(1, ProcessInfo.processInfo.activeProcessorCount / 2))
    /// Seconds an event loop polls for the next request after it wrote a reply, before it
    /// sleeps in `epoll_wait` (``defaultBusyPoll``); 0 to sleep at once. Polling spends a
    /// processor for that long after each reply, and saves the two thread wake-ups a client's
    /// next request otherwise costs. Read at start, a reload does not change it.
    public var busyPoll = Self.defaultBusyPoll
    /// 50 µs: longer than a client on another processor takes to answer a reply with its next
    /// request (about 20 µs measured), short enough that an idle daemon spends nothing.
    public static let defaultBusyPoll = 50e-6
    /// Seconds shutdown waits for requests in flight before closing connections anyway.
    public var shutdownGracePeriod: Double = 10
    /// Who may connect, and who may only read; by default root and the daemon's own user only.
    public var accessPolicy = AccessPolicy(serviceUserID: geteuid())
    /// Keep persistent history and notice other processes' commits (subscriptions and
    /// `history` need it; SQLite stores only). Needs a restart to change.
    public var historyTracking = true
    /// Seconds a save waits for another process's write lock before failing with `busy`.
    public var busyTimeout: Double = 5
    /// Seconds a group commit waits, once its statements ran, for the saves connections have
    /// started before it commits without them (`StoreOptions.commitDelay`); 0, the default,
    /// for never: on the machine the daemon was measured on, waiting gained no throughput at
    /// any client count and pipelining depth tried and cost up to 14 % (docs/daemon.md, "The
    /// wait, measured again"). Needs a restart to change.
    public var commitDelay: Double = 0
    /// The most subscription events queued unread per connection; past it, one `overflow`.
    public var maximumQueuedEvents = 1024
    /// The least important log messages written.
    public var logLevel: LogLevel = .info

    /// Users with full access (`allow-uids`, the older name of `allow-users`).
    public var allowedUserIDs: [UInt32] {
        get { accessPolicy.users }
        set { accessPolicy.users = newValue }
    }

    /// Creates a configuration.
    public init(modelPath: String, storePath: String, socketPath: String) {
        self.modelPath = modelPath
        self.storePath = storePath
        self.socketPath = socketPath
    }
}
