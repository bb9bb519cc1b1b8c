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
/// sweep; see `docs/daemon.md` for the whole threading model.
public final class Server: @unchecked Sendable {
    // @unchecked Sendable: `connections`, `nextID`, `acceptSource`, `idleTimer`,
    // `shutdownCompletion` and `isShuttingDown` are touched only on `queue`.

    /// The shared state sessions use.
    public let state: ServerState
    private let queue = DispatchQueue(label: "persistd.listener")
    private let listener: ListeningSocket
    private var acceptSource: (any DispatchSourceRead)?
    private var idleTimer: (any DispatchSourceTimer)?
    private var connections: [Int: Connection] = [:]
    private var nextID = 1
    private var isShuttingDown = false
    private var shutdownCompletion: (@Sendable () -> Void)?

    /// A failure to start, for people: `persistd: <message>`.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        /// What went wrong.
        public var message: String
        /// The message.
        public var description: String { message }
    }

    /// Loads the model, checks the socket path is free, opens the store and binds the socket.
    /// - Throws: ``StartError`` naming what failed.
    public init(configuration: ServerConfiguration) throws(StartError) {
        let model: ManagedObjectModel
        do {
            model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: configuration.modelPath))
            try model.freeze()
        } catch {
            throw StartError(message: "\(error)")
        }
        let name = URL(fileURLWithPath: configuration.modelPath).deletingPathExtension().lastPathComponent
        let container = PersistentContainer(name: name.isEmpty ? "persistd" : name, managedObjectModel: model)
        let storeURL = configuration.storeType == .inMemory ? nil : URL(fileURLWithPath: configuration.storePath)
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: storeURL, type: configuration.storeType)]

        // Bind first: a second daemon must not touch the store of a live one.
        let listener: ListeningSocket
        do {
            listener = try ListeningSocket(path: configuration.socketPath, mode: configuration.socketMode)
        } catch {
            throw StartError(message: "\(error)")
        }
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError {
            listener.close()
            throw StartError(message: "cannot open the store \(configuration.storePath): \(loadError)")
        }
        container.viewContext.automaticallyMergesChangesFromParent = true
        do {
            self.state = try ServerState(container: container, configuration: configuration)
        } catch {
            listener.close()
            throw StartError(message: "cannot encode the model: \(error)")
        }
        self.listener = listener
    }

    /// Starts accepting connections, and the idle sweep.
    public func start() {
        queue.async { [self] in
            let source = DispatchSource.makeReadSource(fileDescriptor: listener.descriptor, queue: queue)
            source.setEventHandler { [unowned self] in acceptAll() }
            source.resume()
            acceptSource = source
            let timeout = state.configuration.idleTimeout
            if timeout > 0 {
                let timer = DispatchSource.makeTimerSource(queue: queue)
                let interval = max(0.05, min(1, timeout / 4))
                timer.schedule(deadline: .now() + interval, repeating: interval)
                timer.setEventHandler { [unowned self] in
                    for connection in connections.values { connection.checkIdle(timeout: timeout) }
                }
                timer.resume()
                idleTimer = timer
            }
        }
    }

    private func acceptAll() {
        while !isShuttingDown {
            let descriptor = retryingOnInterrupt { accept(listener.descriptor, nil, nil) }
            if descriptor < 0 { return } // EAGAIN: nothing more to accept; other errors: try again on the next event.
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
            let session = Session(state: state, peer: peer, name: "connection \(id)")
            let connection = Connection(id: id, descriptor: descriptor, session: session, configuration: configuration,
                                        statistics: state.statistics) { [weak self] closed in
                guard let server = self else { return }
                server.queue.async { server.connectionClosed(closed) }
            }
            connections[id] = connection
            state.statistics.openConnections.add(1, ordering: .relaxed)
            state.statistics.acceptedConnections.add(1, ordering: .relaxed)
            connection.start()
        }
    }

    /// Tells the client why, then closes: one small write that a fresh socket's buffer takes whole.
    private func refuse(_ descriptor: Int32, _ error: WireError) {
        let line = WireReply.failure(id: .null, error: error).line
        _ = line.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.close(descriptor)
    }

    private func connectionClosed(_ connection: Connection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        state.statistics.openConnections.subtract(1, ordering: .relaxed)
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
            acceptSource?.cancel()
            acceptSource = nil
            idleTimer?.cancel()
            idleTimer = nil
            listener.close()
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
        // Every connection's context has rolled back (Connection closes its session first);
        // close the store so SQLite checkpoints and releases its files.
        for store in state.coordinator.persistentStores { try? state.coordinator.remove(store) }
        completion()
    }
}
