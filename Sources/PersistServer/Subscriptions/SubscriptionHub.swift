import Dispatch
import Foundation
import PersistKit

/// Feeds every subscription of the daemon from the store's persistent history.
///
/// One hub per daemon. Whatever committed a transaction (a connection of this daemon, a batch
/// request, another persistd on the same store file, a Swift program linking PersistKit), it
/// is in the history, numbered in commit order. The hub reads the transactions after the last
/// one it processed and, for each transaction in order and each subscription, builds the
/// `changes` event (``Subscription/changes(for:in:)``) and hands it to the subscription's
/// connection. So events come in commit order, each transaction once per subscription.
///
/// It reads when told something was committed: a context of this process saved
/// (`didSaveObjectIDsNotification`), the ``RemoteChangeObserver`` noticed another process's
/// commit (`storeRemoteChangeNotification`), or a batch request ran (``kick()``); and every
/// ``pollInterval`` as a safety net while subscriptions exist.
final class SubscriptionHub: @unchecked Sendable {
    // @unchecked Sendable: `subscriptions`, `token`, `isStale`, `nextNumber` and `timer` are
    // touched only on `queue`; `context` is used only inside its own `performAndWait`, called
    // from `queue`; `kickPending` and `observers` are `Locked`.

    /// The hub's serial queue.
    let queue = DispatchQueue(label: "persistd.subscriptions")
    /// Whether the store keeps persistent history (subscriptions and `history` need it).
    let isAvailable: Bool
    /// The safety-net poll interval while subscriptions exist.
    static let pollInterval: DispatchTimeInterval = .milliseconds(250)
    /// The most history transactions read at once.
    static let batchLimit = 256

    private let coordinator: PersistentStoreCoordinator
    private let context: ManagedObjectContext
    private var subscriptions: [Subscription] = []
    private var token: PersistentHistoryToken?
    /// No subscription existed while transactions were committed: `token` is behind, and
    /// nobody needs what is between; the next subscription starts from the current token.
    private var isStale = true
    private var nextNumber = 1
    private var timer: (any DispatchSourceTimer)?
    private let observers = Locked<[any NSObjectProtocol]>([])
    private let kickPending = Locked(false)
    /// Subscriptions live or being created (counted before the new one reads the current
    /// token, so a commit after that token always kicks). With none, a commit needs no read
    /// of the history: a later subscription starts from the token current when it is made.
    private let liveSubscriptions = Locked(0)

    /// Creates the hub for `container`'s store; it does nothing until ``start()``.
    init(container: PersistentContainer) {
        coordinator = container.persistentStoreCoordinator
        context = container.newBackgroundContext()
        context.name = "persistd subscriptions"
        let tokens = (try? coordinator.currentPersistentHistoryTokens()) ?? [:]
        isAvailable = !tokens.isEmpty
        token = tokens.values.first
    }

    /// Starts listening for commits (when the store keeps history).
    func start() {
        guard isAvailable else { return }
        let center = NotificationCenter.default
        let coordinator = self.coordinator
        let saved = center.addObserver(forName: ManagedObjectContext.didSaveObjectIDsNotification, object: nil, queue: nil) { [weak self] note in
            guard let context = note.object as? ManagedObjectContext, context.persistentStoreCoordinator === coordinator else { return }
            self?.kick()
        }
        let remote = center.addObserver(forName: PersistentStoreCoordinator.storeRemoteChangeNotification, object: coordinator, queue: nil) { [weak self] _ in
            self?.kick()
        }
        observers.withLock { $0 = [saved, remote] }
        queue.async { [self] in
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval, leeway: .milliseconds(20))
            timer.setEventHandler { [weak self] in self?.catchUp() }
            timer.resume()
            self.timer = timer
        }
    }

    /// Stops listening (shutdown); `completion` runs on the hub's queue afterwards.
    func stop(completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            timer?.cancel()
            timer = nil
            for observer in observers.withLock({ $0 }) { NotificationCenter.default.removeObserver(observer) }
            observers.withLock { $0 = [] }
            removeSubscriptions { _ in true }
            completion()
        }
    }

    /// Something was committed: reads the history soon. Calls arriving while a read is
    /// already queued are merged into it.
    func kick() {
        guard isAvailable, liveSubscriptions.withLock({ $0 }) > 0 else { return }
        let first = kickPending.withLock { pending in
            defer { pending = true }
            return !pending
        }
        guard first else { return }
        queue.async { [self] in
            kickPending.withLock { $0 = false }
            catchUp()
        }
    }

    /// Creates a subscription and answers with its ID, token and the objects matching now;
    /// `completion` runs on the hub's queue, before any event of the subscription is sent.
    func subscribe(entity: EntityDescription, predicate: FetchPredicate?, sort: [FetchSortDescriptor]?, properties: [String]?,
                   outbox: SessionOutbox, completion: @escaping @Sendable (Result<JSON, WireError>) -> Void) {
        liveSubscriptions.withLock { $0 += 1 }
        queue.async { [self] in
            if isStale || subscriptions.isEmpty {
                do {
                    token = try coordinator.currentPersistentHistoryTokens().values.first ?? token
                    isStale = false
                } catch {
                    liveSubscriptions.withLock { $0 -= 1 }
                    return completion(.failure(WireError(persistenceError: error)))
                }
            } else {
                catchUp()
            }
            let id = "s\(nextNumber)"
            nextNumber += 1
            let subscription = Subscription(id: id, entity: entity, predicate: predicate, sort: sort, properties: properties, outbox: outbox)
            let context = self.context
            let objects: [JSON]
            do {
                objects = try context.performAndWait {
                    context.reset()
                    return try subscription.initialObjects(in: context)
                }
            } catch {
                liveSubscriptions.withLock { $0 -= 1 }
                return completion(.failure(WireError(persistenceError: error)))
            }
            subscription.position = token?.transactionNumber ?? 0
            subscriptions.append(subscription)
            outbox.add(id)
            completion(.success(.object([
                JSON.Member("subscription", .string(id)),
                JSON.Member("token", .string(token?.description ?? "")),
                JSON.Member("objects", .array(objects)),
            ])))
        }
    }

    /// Ends `subscription` of `outbox`; `false` if it is not one of its live subscriptions.
    /// No event of it is written after this returns.
    func unsubscribe(_ subscription: String, outbox: SessionOutbox) -> Bool {
        guard outbox.remove(subscription) else { return false }
        queue.async { [self] in removeSubscriptions { $0.id == subscription } }
        return true
    }

    /// Ends every subscription of `outbox` (its connection closed).
    func unsubscribeAll(_ outbox: SessionOutbox) {
        let ids = Set(outbox.removeAll())
        guard !ids.isEmpty else { return }
        queue.async { [self] in removeSubscriptions { ids.contains($0.id) } }
    }

    /// Removes the subscriptions `matching` says; on `queue`.
    private func removeSubscriptions(_ matching: (Subscription) -> Bool) {
        let before = subscriptions.count
        subscriptions.removeAll(where: matching)
        let removed = before - subscriptions.count
        if removed > 0 { liveSubscriptions.withLock { $0 -= removed } }
    }

    /// Processes every transaction after `token`, in order; on `queue`.
    private func catchUp() {
        guard !subscriptions.isEmpty else {
            isStale = true
            return
        }
        let context = self.context
        while true {
            let after = token
            let result: PersistentHistoryResult
            do {
                result = try context.performAndWait { try context.execute(.fetchHistory(after: after, limit: Self.batchLimit)) }
            } catch let error as PersistenceError where error.code == .persistentHistoryTokenExpired {
                Logger.daemon.log(.warning, "subscriptions: history was purged past the last transaction processed; resuming at the current token")
                token = try? coordinator.currentPersistentHistoryTokens().values.first
                return
            } catch {
                // A busy store: the next kick or poll reads again from the same token.
                Logger.daemon.log(.info, "subscriptions: reading history failed: \(error)")
                return
            }
            guard !result.transactions.isEmpty else { return }
            context.performAndWait { context.reset() }
            for transaction in result.transactions {
                let previous = token?.description ?? "\(transaction.storeIdentifier):0"
                for subscription in subscriptions where subscription.position < transaction.transactionNumber {
                    do {
                        let reply = try context.performAndWait { try subscription.changes(for: transaction, in: context) }
                        subscription.position = transaction.transactionNumber
                        if let reply {
                            subscription.outbox.send(SubscriptionEvent(subscription: subscription.id, line: reply.line, previousToken: previous))
                        }
                    } catch {
                        // Read again from here at the next kick or poll; subscriptions already
                        // past this transaction skip it then.
                        Logger.daemon.log(.info, "subscriptions: reading changed objects failed: \(error)")
                        return
                    }
                }
                token = transaction.token
            }
            if result.transactions.count < Self.batchLimit { return }
        }
    }
}
