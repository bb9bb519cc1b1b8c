import Dispatch
import Foundation

/// Notices commits other connections (other processes, other coordinators) make to a SQLite
/// store, merges them into the coordinator's contexts that want them, and posts
/// ``PersistentStoreCoordinator/storeRemoteChangeNotification``.
///
/// Core Data posts `NSPersistentStoreRemoteChange` when a store is opened with
/// `NSPersistentStoreRemoteChangeNotificationPostOptionKey`; here the same option is
/// ``StoreOptions/remoteChangeNotificationPost``, and the coordinator starts one observer per
/// such store. The observer polls `PRAGMA data_version` on the store's connection every
/// ``interval`` (25 ms by default) on a Dispatch timer, so a commit elsewhere is noticed within
/// about that time. It then:
///
/// - with ``StoreOptions/persistentHistoryTracking``: reads the transactions after the last
///   one it saw (at most ``batchLimit`` per tick, the rest on the next ticks), skips the ones
///   this store's own connection wrote (already merged in-process), and merges the inserted,
///   updated and deleted object IDs into the targets with
///   ``ManagedObjectContext/mergeChanges(fromRemoteContextSave:into:)``; the notification
///   carries the history token after the last transaction read;
/// - without history: it cannot tell what changed, so it refreshes every registered object
///   without unsaved changes in each target (``ManagedObjectContext/refreshAllObjects()``), and
///   the notification carries no token.
///
/// Targets are the container's ``PersistentContainer/viewContext`` and every root context of
/// the coordinator with ``ManagedObjectContext/automaticallyMergesChangesFromParent``.
/// ``stop()`` (or closing the store, or the coordinator going away) ends the polling.
public final class RemoteChangeObserver: @unchecked Sendable {
    // @unchecked Sendable: `timer` is created in `init` and only cancelled afterwards (a
    // thread-safe DispatchSource call); everything mutable is in `state` (a `Locked`), and
    // `poll()` runs only on `queue`, which is serial.
    struct State {
        var token: PersistentHistoryToken?
        var stopped = false
        var lastError: PersistenceError?
        /// A history read stopped at `batchLimit`: read on at the next tick without waiting
        /// for `data_version` to move.
        var moreHistory = false
    }

    /// How often the store is polled.
    public let interval: DispatchTimeInterval
    /// The most history transactions read and merged per tick.
    public let batchLimit: Int
    /// The store, held strongly: it holds nothing of the observer, and the coordinator that
    /// holds both stops and drops the observer when it drops the store (or goes itself), so the
    /// store lives as long as before (a poll in progress, which kept it with a strong reference
    /// of its own, keeps it until it ends, as before). A weak reference gave the store a side
    /// table, and every retain and release of it (a fetch and a save each find it) the runtime's
    /// slow path.
    private let store: SQLiteStore
    /// Weak: the coordinator holds the observer.
    private weak var coordinator: PersistentStoreCoordinator?
    private let queue = DispatchQueue(label: "PersistKit.remoteChanges")
    private let timer: DispatchSourceTimer
    private let state = Locked(State())

    /// Starts observing `store` for `coordinator`; see the type's documentation.
    init(store: SQLiteStore, coordinator: PersistentStoreCoordinator, interval: DispatchTimeInterval = .milliseconds(25),
         batchLimit: Int = 256) throws {
        self.store = store
        self.coordinator = coordinator
        self.interval = interval
        self.batchLimit = max(1, batchLimit)
        store.beginObserving()
        _ = try store.pollExternalCommits()
        let token = store.isHistoryTracked ? try store.currentHistoryToken() : nil
        state.withLock { $0.token = token }
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.poll() }
        timer.resume()
    }

    deinit {
        timer.cancel()
    }

    /// The history token after the last transaction merged, or `nil` without history tracking.
    public var lastToken: PersistentHistoryToken? { state.withLock { $0.token } }

    /// The last error a poll met (a busy store, a purged token…), if any; polling goes on.
    public var lastError: PersistenceError? { state.withLock { $0.lastError } }

    /// Stops polling; later ticks do nothing. Safe to call more than once, from any thread.
    public func stop() {
        let wasRunning = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        if wasRunning { timer.cancel() }
    }

    /// Waits until a poll that started after this call has finished (for tests and shutdown).
    public func drain() {
        queue.sync {}
    }

    private func poll() {
        let (stopped, more, token) = state.withLock { ($0.stopped, $0.moreHistory, $0.token) }
        guard !stopped else { return }
        guard let coordinator else {
            stop()
            return
        }
        do {
            let poll = try store.pollExternalCommits()
            guard poll.changed || more else {
                // Nothing committed elsewhere: everything up to the last transaction is ours
                // or merged, so the token moves on without reading.
                if let last = poll.lastTransaction, store.isHistoryTracked {
                    state.withLock { state in
                        if let token = state.token, token.transactionNumber < last { state.token?.transactionNumber = last }
                    }
                }
                return
            }
            guard store.isHistoryTracked else {
                mergeWithoutHistory(coordinator, store)
                return
            }
            let result = try store.externalHistory(after: token, limit: batchLimit)
            let readCount = (result.token?.transactionNumber ?? 0) - (token?.transactionNumber ?? 0)
            state.withLock { state in
                state.token = result.token ?? state.token
                state.moreHistory = readCount >= Int64(batchLimit)
                state.lastError = nil
            }
            guard !result.transactions.isEmpty else { return }
            merge(result.transactions, into: coordinator.remoteChangeTargets())
            post(coordinator, store, token: result.token)
        } catch let error as PersistenceError {
            // `data_version` has moved on already: read again at the next tick.
            state.withLock { state in
                state.lastError = error
                state.moreHistory = true
            }
            if error.code == .persistentHistoryTokenExpired {
                // History was purged past our token: we cannot know what changed, so refresh
                // conservatively and resume from the store's current token.
                let fresh = try? store.currentHistoryToken()
                state.withLock { $0.token = fresh }
                mergeWithoutHistory(coordinator, store)
            }
        } catch {
            state.withLock { state in
                state.lastError = PersistenceError(.persistentStoreOperation, "\(error)")
                state.moreHistory = true
            }
        }
    }

    private func merge(_ transactions: [PersistentHistoryTransaction], into contexts: [ManagedObjectContext]) {
        var inserted: [ManagedObjectID] = [], updated: [ManagedObjectID] = [], deleted: [ManagedObjectID] = []
        var seenUpdated: Set<ManagedObjectID> = []
        for transaction in transactions {
            for change in transaction.changes {
                switch change.changeType {
                case .insert: inserted.append(change.changedObjectID)
                case .update: if seenUpdated.insert(change.changedObjectID).inserted { updated.append(change.changedObjectID) }
                case .delete: deleted.append(change.changedObjectID)
                }
            }
        }
        let changes: [String: [ManagedObjectID]] = [
            ManagedObjectContext.insertedObjectIDsKey: inserted,
            ManagedObjectContext.updatedObjectIDsKey: updated,
            ManagedObjectContext.deletedObjectIDsKey: deleted,
        ]
        for context in contexts {
            context.perform { ManagedObjectContext.mergeChanges(fromRemoteContextSave: changes, into: [context]) }
        }
    }

    private func mergeWithoutHistory(_ coordinator: PersistentStoreCoordinator, _ store: SQLiteStore) {
        for context in coordinator.remoteChangeTargets() {
            context.perform { context.refreshAllObjects() }
        }
        post(coordinator, store, token: nil)
    }

    private func post(_ coordinator: PersistentStoreCoordinator, _ store: SQLiteStore, token: PersistentHistoryToken?) {
        var userInfo: [String: Any] = [PersistentStoreCoordinator.storeUUIDKey: store.identifier]
        if let url = store.url { userInfo[PersistentStoreCoordinator.storeURLKey] = url }
        if let token { userInfo[PersistentStoreCoordinator.historyTokenKey] = token }
        NotificationCenter.default.post(name: PersistentStoreCoordinator.storeRemoteChangeNotification, object: coordinator, userInfo: userInfo)
    }
}

extension PersistentStoreCoordinator {
    /// Posted (by a ``RemoteChangeObserver``, on its queue) after another connection's commits
    /// to a store were noticed and merged (Core Data's `NSPersistentStoreRemoteChange`). The
    /// object is the coordinator; the user info has ``storeUUIDKey``, ``storeURLKey`` and, with
    /// history tracking, ``historyTokenKey``.
    public static let storeRemoteChangeNotification = Notification.Name("NSPersistentStoreRemoteChangeNotification")
    /// The store's identifier, a `String` (`NSStoreUUIDKey`).
    public static let storeUUIDKey = "storeUUID"
    /// The store's file, a `URL` (`NSPersistentStoreURLKey`).
    public static let storeURLKey = "storeURL"
    /// The ``PersistentHistoryToken`` after the last transaction merged (`NSPersistentHistoryTokenKey`).
    public static let historyTokenKey = "historyToken"

    /// Root contexts that take remote changes: view contexts and those with
    /// ``ManagedObjectContext/automaticallyMergesChangesFromParent``.
    func remoteChangeTargets() -> [ManagedObjectContext] {
        registeredContexts().filter { context in
            context.parent == nil && (context.automaticallyMergesChangesFromParent || context.receivesRemoteChanges)
        }
    }
}

extension ManagedObjectContext {
    /// Whether remote changes are merged into this context even without
    /// ``automaticallyMergesChangesFromParent`` (the container's view context).
    var receivesRemoteChanges: Bool {
        get { settings.withLock { $0.receivesRemoteChanges } }
        set {
            settings.withLock { $0.receivesRemoteChanges = newValue }
            registerForMerges()
        }
    }
}
