import Foundation
import Synchronization

/// Connects contexts to stores: it owns the model and the open stores, and routes each
/// entity to the store that holds it.
///
/// The corresponding Core Data class is `NSPersistentStoreCoordinator`. The coordinator takes
/// no lock of its own around store calls: each store guards itself, so contexts on different
/// queues read in parallel.
public final class PersistentStoreCoordinator: Sendable {
    /// The model of every store the coordinator opens.
    public let managedObjectModel: ManagedObjectModel

    /// The open stores, in the order they were added, and the address of each one's
    /// ``PersistentStore/storeToken`` in the same order: ``persistentStore(storeBits:)`` compares
    /// words without calling into each store (a store's identifier, so its token, is fixed).
    private struct OpenStores {
        var list: [any PersistentStore] = []
        var tokenBits: [UInt] = []
    }

    private let stores = Locked(OpenStores())
    /// Moved on, under the lock of `stores`, whenever a store is added or removed: a context
    /// that keeps the store of its last read (``ReadRoute``) uses it while this is unchanged.
    let storesGeneration = Atomic<UInt>(0)
    private let contexts = Locked<[WeakContext]>([])
    /// Saves waiting to be merged into each context (by identity), in save order; a context
    /// has an entry only while a block that will merge them is scheduled on its queue.
    private let pendingMerges = Locked<[ObjectIdentifier: [SavedChanges]]>([:])
    /// The contexts each save is merged into, kept between saves (see ``MergeTargets``).
    private let mergeTargets = Locked(MergeTargets())
    /// One observer per store opened with `remoteChangeNotificationPost`, by store identifier.
    private let remoteObservers = Locked<[String: RemoteChangeObserver]>([:])
    private static let storeClasses = Locked<[StoreType: any PersistentStore.Type]>(StoreRegistry.builtIn)

    /// Creates a coordinator for `model`. The model is frozen (made read-only) when the first
    /// store is added.
    public init(managedObjectModel model: ManagedObjectModel) {
        self.managedObjectModel = model
    }

    /// The open stores, in the order they were added.
    public var persistentStores: [any PersistentStore] { stores.withLock { $0.list } }

    /// Makes `storeClass` the implementation of `type` for every coordinator (Core Data's
    /// `registerStoreClass(_:type:)`).
    public static func registerStoreClass(_ storeClass: any PersistentStore.Type, for type: StoreType) {
        storeClasses.withLock { $0[type] = storeClass }
    }

    /// Opens the store of `type` at `url` (`nil` only for in-memory stores) for the entities of
    /// `configuration` (`nil` for all), and adds it (Core Data's
    /// `addPersistentStore(type:configuration:at:options:)`).
    @discardableResult
    public func addPersistentStore(type: StoreType, configuration: String? = nil, at url: URL?,
                                   options: StoreOptions = StoreOptions()) throws -> any PersistentStore {
        do {
            try managedObjectModel.freeze()
        } catch let error as ModelError {
            throw PersistenceError(.persistentStoreIncompatibleSchema, "the model is invalid: \(error)", path: url?.path)
        }
        guard let storeClass = Self.storeClasses.withLock({ $0[type] }) else {
            throw PersistenceError(.persistentStoreInvalidType, "unknown store type \"\(type.rawValue)\"", path: url?.path)
        }
        if let url, stores.withLock({ $0.list.contains { $0.url?.standardizedFileURL == url.standardizedFileURL } }) {
            throw PersistenceError(.persistentStoreOpen, "the store at \(url.path) is already added to this coordinator", path: url.path)
        }
        let store = try storeClass.init(model: managedObjectModel, configurationName: configuration, url: url, options: options)
        let bits = store.storeToken.bits
        stores.withLock {
            $0.list.append(store)
            $0.tokenBits.append(bits)
            storesGeneration.wrappingAdd(1, ordering: .releasing)
        }
        if options.remoteChangeNotificationPost, let sqlite = store as? SQLiteStore {
            do {
                let observer = try RemoteChangeObserver(store: sqlite, coordinator: self)
                remoteObservers.withLock { $0[store.identifier] = observer }
            } catch {
                removeFromList(store)
                try? store.close()
                throw error
            }
        }
        return store
    }

    /// Closes `store` and removes it from the coordinator.
    public func remove(_ store: any PersistentStore) throws {
        removeFromList(store)
        remoteObservers.withLock { $0.removeValue(forKey: store.identifier) }?.stop()
        try store.close()
    }

    /// Takes `store` and its token's address out of `stores`.
    private func removeFromList(_ store: any PersistentStore) {
        stores.withLock { stores in
            guard let index = stores.list.firstIndex(where: { $0 === store }) else { return }
            stores.list.remove(at: index)
            stores.tokenBits.remove(at: index)
            storesGeneration.wrappingAdd(1, ordering: .releasing)
        }
    }

    /// The store with the given identifier (`NSStoreUUID`), if open.
    public func persistentStore(withIdentifier identifier: String) -> (any PersistentStore)? {
        stores.withLock { $0.list.first { $0.identifier == identifier } }
    }

    /// The open store whose ``PersistentStore/storeToken`` has the address `bits` (an
    /// ``ObjectKey``'s store), if any: the store of a permanent ID found by comparing one word per
    /// store, where ``persistentStore(withIdentifier:)`` compares identifier strings.
    func persistentStore(storeBits bits: UInt) -> (any PersistentStore)? {
        stores.withLock { stores in
            guard let index = stores.tokenBits.firstIndex(of: bits) else { return nil }
            return stores.list[index]
        }
    }

    /// The store that holds objects of `entity`: the first whose configuration includes it.
    public func persistentStore(for entity: EntityDescription) throws -> any PersistentStore {
        let found = stores.withLock { stores in
            stores.list.first { store in
                guard let name = store.configurationName, name != "Default" else { return true }
                return managedObjectModel.entities(forConfiguration: name).contains { $0 === entity.rootEntity || $0 === entity }
            }
        }
        guard let found else {
            throw PersistenceError(.persistentStoreOperation, "no store holds entity \(entity.name): add a persistent store first")
        }
        return found
    }

    /// The coordinator's store when it has exactly one and that store holds every entity (it
    /// has no configuration, or the default one): the store ``persistentStore(for:)`` returns
    /// for any entity, found under one lock without looking at the entity. `nil` otherwise.
    func soleStoreForEveryEntity() -> (any PersistentStore)? {
        stores.withLock { stores in
            guard stores.list.count == 1, let only = stores.list.first else { return nil }
            guard let name = only.configurationName, name != "Default" else { return only }
            return nil
        }
    }

    /// The object ID a URI names (`x-coredata://<store>/<Entity>/p<pk>`), if its store is open
    /// and its entity is in the model (Core Data's `managedObjectID(forURIRepresentation:)`).
    public func managedObjectID(forURIRepresentation uri: URL) -> ManagedObjectID? {
        guard uri.scheme == "x-coredata", let storeID = uri.host, persistentStore(withIdentifier: storeID) != nil else { return nil }
        let parts = uri.path.split(separator: "/")
        guard parts.count == 2, parts[1].first == "p", let key = Int64(parts[1].dropFirst()),
              let entity = managedObjectModel.entitiesByName[String(parts[0])] else { return nil }
        return ManagedObjectID(entity: entity, storeIdentifier: storeID, primaryKey: key)
    }

    // MARK: - Context registration, for merging saves between sibling contexts

    /// The observer of other connections' commits to the store with `identifier`, if the store
    /// was opened with ``StoreOptions/remoteChangeNotificationPost``.
    public func remoteChangeObserver(forStoreWithIdentifier identifier: String) -> RemoteChangeObserver? {
        remoteObservers.withLock { $0[identifier] }
    }

    /// The live contexts registered with this coordinator: those that take merges.
    func registeredContexts() -> [ManagedObjectContext] {
        contexts.withLock { $0.compactMap(\.context) }
    }

    /// Registers `context` (weakly) to take other contexts' saves and remote changes, once (see
    /// ``ManagedObjectContext/registerForMerges()``: only contexts that take them register).
    func register(_ context: ManagedObjectContext) {
        contexts.withLock { list in
            list.removeAll { $0.context == nil }
            if !list.contains(where: { $0.context === context }) { list.append(WeakContext(context: context)) }
        }
        MergeTargets.contextSettingsChanged()
    }

    /// The root contexts that merge saves automatically, from the list kept since the last
    /// change of any context's settings, or worked out again.
    private func currentMergeTargets() -> [WeakContext] {
        let generation = MergeTargets.generation.withLock { $0 }
        if let kept = mergeTargets.withLock({ $0.madeAt == generation ? $0.contexts : nil }) { return kept }
        // The contexts' settings are read outside the coordinator's locks.
        let all = contexts.withLock { $0.compactMap(\.context) }
        let targets = all.filter { $0.parent == nil && $0.automaticallyMergesChangesFromParent }.map { WeakContext(context: $0) }
        mergeTargets.withLock { $0 = MergeTargets(madeAt: generation, contexts: targets) }
        return targets
    }

    /// Tells every other root context of this coordinator that `context` saved `changes`.
    ///
    /// Merges are applied in save order on each receiving context's queue. Saves that arrive
    /// while a context's earlier merges still wait are queued behind them and applied by the
    /// same block: under many concurrent saves a busy view context is woken once per run of
    /// saves rather than once per save.
    ///
    /// A save that only inserted objects (no updates, deletions or to-many changes) changes
    /// nothing another context holds: merging it would only post that context's
    /// objects-did-change notification. A context that posts none
    /// (``ManagedObjectContext/postsNotifications``) is not woken for it.
    func contextDidSave(_ context: ManagedObjectContext, changes: SavedChanges) {
        let onlyInserts = changes.updated.isEmpty && changes.deleted.isEmpty && changes.toManyChanged.isEmpty
        // Only the contexts that merge are looked at, not every context of the coordinator.
        for entry in currentMergeTargets() {
            guard let other = entry.context, other !== context else { continue }
            if onlyInserts && !other.postsNotifications { continue }
            let key = ObjectIdentifier(other)
            let schedule = pendingMerges.withLock { pending in
                pending[key, default: []].append(changes)
                return pending[key]?.count == 1
            }
            guard schedule else { continue }
            other.perform { [pendingMerges] in
                let queued = pendingMerges.withLock { $0.removeValue(forKey: key) } ?? []
                for saved in queued { other.mergeSavedChanges(saved) }
            }
        }
    }
}

/// A weak reference to a context, so registering does not keep contexts alive.
struct WeakContext: Sendable {
    weak var context: ManagedObjectContext?
}
