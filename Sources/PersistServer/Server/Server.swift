import Dispatch
import Foundation
import PersistKit
#if canImport(Glibc)
import Glibc
#endif

/// The daemon: one container, one listening socket, many connections.
///
/// ```swift
/// let server = try Server(configuration: configuration)   // loads model and store, binds
/// server.start()                                          // accepts on the listener queue
/// server.shutdown { exit(0) }                             // on SIGTERM
/// ```
///
/// The listener queue accepts connections, keeps the registry of open ones and runs the idle
/// sweep; a few event loops (``EventLoop``, one thread each) serve the connections; see
/// `docs/daemon.md` for the whole threading model.
public final class Server: @unchecked Sendable {
    // @unchecked Sendable: `connections`, `nextID`, `acceptSources`, `idleTimer`,
    // `shutdownCompletion`, `isShuttingDown`, `spareDescriptor`, `isAcceptPaused` and
    // `lastDescriptorWarning` are touched only on `queue`.

    /// The shared state sessions use.
    public let state: ServerState
    /// The listener queue: the serving loop the watchdog checks (``probe(completion:)``).
    let queue = DispatchQueue(label: "persistd.listener")
    /// The listening sockets: the one bound, or every one systemd passed.
    private let listeners: [ListeningSocket]
    private var acceptSources: [any DispatchSourceRead] = []
    private var idleTimer: (any DispatchSourceTimer)?
    private var connections: [Int: Connection] = [:]
    /// The user (`SO_PEERCRED` uid) of each open connection, by connection ID, for the per-user limit.
    private var connectionUsers: [Int: UInt32] = [:]
    private var nextID = 1
    private var isShuttingDown = false
    private var shutdownCompletion: (@Sendable () -> Void)?
    /// A descriptor kept open for one use: when `accept` fails for want of descriptors, it is
    /// closed so the waiting peer can be accepted and told why, then opened again.
    private var spareDescriptor: Int32 = -1
    /// Whether the accept sources are suspended for a moment after running out of descriptors.
    private var isAcceptPaused = false
    private var lastDescriptorWarning: ContinuousClock.Instant?
    private var acceptPausedAt: ContinuousClock.Instant?
    /// The event loops that serve the connections, each on a thread of its own; a connection
    /// stays on the loop it was given when accepted (round robin).
    let loops: [EventLoop]
    /// The context the watchdog's probe reads the store with (its own queue: not blocked by clients' reads).
    let probeContext: ManagedObjectContext

    /// A failure to start, for people: `persistd: <message>`.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        /// What went wrong.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// Loads the model, checks the socket path is free, opens the store and binds the socket;
    /// or, with `activatedSockets` (socket activation), serves those and binds none.
    /// - Throws: ``StartError`` naming what failed.
    ///
    /// A SQLite store made with an older model version is migrated first (staged through every
    /// version of an `.xcdatamodeld` model), each step told to `migrationProgress`: persistd
    /// sends them as `STATUS=` lines before `READY=1`.
    public init(configuration: ServerConfiguration, activatedSockets: [ActivatedSocket]? = nil,
                migrationProgress: (@Sendable (String) -> Void)? = nil) throws(StartError) {
        let model: ManagedObjectModel
        let storeOptions: StoreOptions
        do {
            (model, storeOptions) = try StoreMigration.load(modelPath: configuration.modelPath)
        } catch {
            throw StartError(message: "\(error)")
        }
        let name = URL(fileURLWithPath: configuration.modelPath).deletingPathExtension().lastPathComponent
        let container = PersistentContainer(name: name.isEmpty ? "persistd" : name, managedObjectModel: model)
        let storeURL = configuration.storeType == .inMemory ? nil : URL(fileURLWithPath: configuration.storePath)
        var description = PersistentStoreDescription(url: storeURL, type: configuration.storeType)
        description.options = storeOptions
        description.options.queryTimeout = configuration.queryTimeout
        // Subscriptions and `history` read the store's persistent history; remote change
        // notifications keep the view context current with other processes' commits.
        let sharing = configuration.historyTracking && configuration.storeType == .sqlite
        description.options.persistentHistoryTracking = sharing
        description.options.remoteChangeNotificationPost = sharing
        description.options.busyTimeout = configuration.busyTimeout
        description.options.commitDelay = configuration.commitDelay
        container.persistentStoreDescriptions = [description]

        // Bind first: a second daemon must not touch the store of a live one. (Activated:
        // systemd starts one instance per socket unit, and the unit owns the path.)
        let listeners: [ListeningSocket]
        if let activatedSockets {
            listeners = activatedSockets.map { ListeningSocket(adopting: $0.descriptor, path: $0.path) }
        } else {
            do {
                listeners = [try ListeningSocket(path: configuration.socketPath, mode: configuration.socketMode)]
            } catch {
                throw StartError(message: "\(error)")
            }
        }
        if configuration.storeType == .sqlite, let storeURL {
            do {
                try StoreMigration.migrateIfNeeded(storeURL: storeURL, model: model, options: storeOptions) { migrationProgress?($0) }
            } catch {
                for listener in listeners { listener.close() }
                throw StartError(message: "cannot migrate the store \(configuration.storePath): \(Self.oneLine(error))")
            }
        }
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError {
            for listener in listeners { listener.close() }
            throw StartError(message: "cannot open the store \(configuration.storePath): \(Self.oneLine(loadError))")
        }
        container.viewContext.automaticallyMergesChangesFromParent = true
        // Nothing observes the view context's notifications (merges of every save post one).
        container.viewContext.postsNotifications = false
        do {
            self.state = try ServerState(container: container, configuration: configuration)
        } catch {
            for listener in listeners { listener.close() }
            throw StartError(message: "cannot encode the model: \(Self.oneLine(error))")
        }
        var loops: [EventLoop] = []
        do {
            for index in 0..<max(1, configuration.eventLoops) { loops.append(try EventLoop(name: "persistd io \(index)", busyPoll: configuration.busyPoll)) }
        } catch {
            for listener in listeners { listener.close() }
            throw StartError(message: "cannot create the event loops: \(error)")
        }
        self.loops = loops
        self.listeners = listeners
        state.subscriptions.start()
        self.probeContext = container.newBackgroundContext()
        probeContext.name = "watchdog probe"
    }

    /// The paths served, for logs.
    public var socketPaths: [String] { listeners.map(\.path) }

    /// An error's description on one line: `systemctl status` shows the last line of a failure.
    static func oneLine(_ error: any Error) -> String {
        "\(error)".split(whereSeparator: \.isNewline).joined(separator: "; ")
    }

    /// Starts accepting connections, and the idle sweep.
    public func start() {
        for loop in loops { loop.start() }
        queue.async { [self] in
            spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
            for listener in listeners {
                let source = DispatchSource.makeReadSource(fileDescriptor: listener.descriptor, queue: queue)
                source.setEventHandler { [unowned self] in acceptAll(listener.descriptor) }
                source.resume()
                acceptSources.append(source)
            }
            startIdleTimer()
        }
    }

    /// (Re)starts the idle sweep for the idle timeout in force; on `queue`.
    private func startIdleTimer() {
        idleTimer?.cancel()
        idleTimer = nil
        let configuration = state.configuration
        let timeout = configuration.idleTimeout
        let limits = [timeout, configuration.lineTimeout, configuration.writeTimeout].filter { $0 > 0 }
        guard let shortest = limits.min(), !isShuttingDown else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = max(0.05, min(1, shortest / 4))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [unowned self] in
            for connection in connections.values { connection.checkIdle(timeout: timeout) }
            if isAcceptPaused, let paused = acceptPausedAt, ContinuousClock.now - paused >= .milliseconds(100) { resumeAccepting() }
        }
        timer.resume()
        idleTimer = timer
    }

    /// Applies a reloaded configuration: the limits apply to connections accepted from now on,
    /// the access policy to every request from now on, the idle timeout to every connection.
    /// `completion` runs on the listener queue once it is in force.
    public func reload(_ configuration: ServerConfiguration, completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            state.reload(configuration)
            startIdleTimer()
            completion()
        }
    }

    private func acceptAll(_ listening: Int32) {
        while !isShuttingDown {
            let descriptor = retryingOnInterrupt { accept(listening, nil, nil) }
            if descriptor < 0 {
                // EAGAIN: nothing more to accept. Out of descriptors or memory: the peer stays in
                // the backlog and the source fires again at once; refuse it rather than spin.
                let code = errno
                if [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code) { outOfDescriptors(listening, errno: code) }
                return
            }
            makeNonBlocking(descriptor)
            let configuration = state.configuration
            if connections.count >= configuration.maximumConnections {
                refuse(descriptor, WireError(.tooManyConnections,
                    "the server has \(configuration.maximumConnections) connections, as many as it accepts; try again later",
                    details: [JSON.Member("limit", .integer(Int64(configuration.maximumConnections)))]))
                continue
            }
            let id = nextID
            nextID += 1
            let peer = PeerCredentials.of(socket: descriptor)
            let access = configuration.accessPolicy.access(for: peer)
            guard access != .refused else {
                Logger.daemon.log(.notice, "refused a peer: not allowed by the access policy",
                                  [.connection(id)] + LogField.peer(peer))
                let who = peer.map { "user \($0.userID)" } ?? "a peer of unknown credentials"
                refuse(descriptor, WireError(.unauthorized, "\(who) may not connect to this server"))
                continue
            }
            if let user = peer?.userID,
               connectionUsers.values.lazy.filter({ $0 == user }).count >= configuration.maximumConnectionsPerUser {
                Logger.daemon.log(.notice, "refused a peer: too many connections of its user", [.connection(id)] + LogField.peer(peer))
                refuse(descriptor, WireError(.tooManyConnections,
                    "user \(user) has \(configuration.maximumConnectionsPerUser) connections, as many as one user may open; try again later",
                    details: [JSON.Member("limit", .integer(Int64(configuration.maximumConnectionsPerUser))),
                              JSON.Member("scope", .string("user"))]))
                continue
            }
            Logger.daemon.log(.info, "connection opened (\(access.rawValue))", [.connection(id)] + LogField.peer(peer))
            let loop = loops[id % loops.count]
            // The connection's saves are finished, and answered, on its loop's thread.
            let session = Session(state: state, peer: peer, name: "connection \(id)", completingOn: { loop.execute($0) })
            let connection = Connection(id: id, descriptor: descriptor, loop: loop, session: session,
                                        configuration: configuration, statistics: state.statistics) { [weak self] closed in
                guard let server = self else { return }
                server.queue.async { server.connectionClosed(closed) }
            }
            connections[id] = connection
            if let user = peer?.userID { connectionUsers[id] = user }
            state.statistics.openConnections.add(1, ordering: .relaxed)
            state.statistics.acceptedConnections.add(1, ordering: .relaxed)
            connection.start()
        }
    }

    /// `accept` failed with `code` (EMFILE, ENFILE, ENOBUFS, ENOMEM): with the spare descriptor
    /// closed, accept the waiting peer and refuse it with `too_many_connections` (scope
    /// `descriptors`), so it learns why and the backlog drains; when even that fails, stop
    /// accepting until a connection closes or the idle sweep's next tick (at least 100 ms).
    /// Either way the listener queue never spins on the same error.
    private func outOfDescriptors(_ listening: Int32, errno code: Int32) {
        let now = ContinuousClock.now
        if lastDescriptorWarning.map({ now - $0 > .seconds(10) }) ?? true {
            lastDescriptorWarning = now
            Logger.daemon.log(.warning, "cannot accept connections: \(String(cString: strerror(code))); refusing them until descriptors are free (raise LimitNOFILE= or lower max-connections)")
        }
        if spareDescriptor >= 0 {
            Glibc.close(spareDescriptor)
            spareDescriptor = -1
            let descriptor = retryingOnInterrupt { accept(listening, nil, nil) }
            if descriptor >= 0 {
                refuse(descriptor, WireError(.tooManyConnections,
                    "the server is out of file descriptors (\(String(cString: strerror(code)))); try again later",
                    details: [JSON.Member("scope", .string("descriptors"))]))
            }
            spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
            if descriptor >= 0, spareDescriptor >= 0 { return }
        }
        guard !isAcceptPaused, !isShuttingDown else { return }
        isAcceptPaused = true
        acceptPausedAt = now
        // Resumed by the idle sweep's next tick (at most 1 s away) or when a connection closes:
        // no new timer here, as the first timer of a kind costs libdispatch a timerfd, and
        // failing to get one is fatal to it.
        for source in acceptSources { source.suspend() }
    }

    private func resumeAccepting() {
        guard isAcceptPaused else { return }
        isAcceptPaused = false
        // Resumed even when shutting down: a suspended source must not be cancelled and released.
        for source in acceptSources { source.resume() }
    }

    /// Tells the client why, then closes: one small write that a fresh socket's buffer takes whole.
    private func refuse(_ descriptor: Int32, _ error: WireError) {
        let line = WireReply.failure(id: .null, error: error).line
        _ = line.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.close(descriptor)
    }

    private func connectionClosed(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        connectionUsers[connection.id] = nil
        Logger.daemon.log(.info, "connection closed", [.connection(connection.id)])
        state.statistics.openConnections.subtract(1, ordering: .relaxed)
        resumeAccepting() // its descriptor is free again
        if isShuttingDown && connections.isEmpty { finishShutdown() }
    }

    /// Stops accepting, lets every connection answer what it received, closes the store, then
    /// calls `completion` (on the listener queue). Connections still busy after the grace
    /// period are closed anyway; their unsaved changes are discarded.
    public func shutdown(completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            guard !isShuttingDown else { return }
            isShuttingDown = true
            shutdownCompletion = completion
            resumeAccepting()
            for source in acceptSources { source.cancel() }
            acceptSources = []
            idleTimer?.cancel()
            idleTimer = nil
            for listener in listeners { listener.close() }
            if connections.isEmpty { return finishShutdown() }
            for connection in connections.values { connection.beginShutdown() }
            queue.asyncAfter(deadline: .now() + state.configuration.shutdownGracePeriod) { [self] in
                for connection in connections.values { connection.forceClose() }
            }
        }
    }

    private func finishShutdown() {
        guard let completion = shutdownCompletion else { return }
        shutdownCompletion = nil
        if spareDescriptor >= 0 {
            Glibc.close(spareDescriptor)
            spareDescriptor = -1
        }
        // Every connection's context has rolled back (Connection closes its session first);
        // close the store so SQLite checkpoints and releases its files.
        state.subscriptions.stop { [self] in
            queue.async { [self] in
                for store in state.coordinator.persistentStores { try? state.coordinator.remove(store) }
                for loop in loops { loop.stop() }
                completion()
            }
        }
    }
}
