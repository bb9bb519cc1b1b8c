import Dispatch
import Foundation
import Synchronization

/// A scratch pad of managed objects: fetch them, change them, and save the changes to the
/// parent context or to the stores.
///
/// The corresponding Core Data class is `NSManagedObjectContext`. Every context runs on its
/// own serial `DispatchQueue`; its objects may be used only on that queue. Use ``perform(_:)``
/// or ``performAndWait(_:)`` to run code there. For convenience, each public method of the
/// context hops onto the queue itself (running inline when already there), so calling
/// `save()` or `fetch(_:)` from elsewhere is safe for the context's own state.
///
/// ## `.mainQueue` on Linux
/// Core Data binds a `.mainQueue` context to the main thread's run loop. On Linux nothing
/// drains `DispatchQueue.main` unless a program calls `dispatchMain()` (or runs a run loop), so
/// binding to it would make `performAndWait` deadlock in a plain command-line program. Here a
/// `.mainQueue` context runs on a serial queue of its own, like a private-queue context; the
/// concurrency type is kept so Core Data code reads the same, and marks the context meant for
/// the program's main flow (the container's ``PersistentContainer/viewContext``).
///
/// Like Core Data's, the class is an `NSObject` subclass: its notifications are posted with the
/// context as their object, and Foundation finds an `NSObject`-typed object's identity at once
/// (see ``notificationSender``), where a plain Swift class costs it several dynamic casts per post.
public final class ManagedObjectContext: NSObject, @unchecked Sendable {
    // @unchecked Sendable: the mutable state below (`registered`, the change sets, objects'
    // values) is touched only on `queue` — every entry point goes through `onQueue` — and the
    // settings that other threads read are in the `settings` lock.

    /// The queue a context runs on (`NSManagedObjectContextConcurrencyType`).
    public enum ConcurrencyType: Sendable, Hashable {
        /// The context of the program's main flow; see the type's documentation for what this means on Linux.
        case mainQueue
        /// A context with a private serial queue.
        case privateQueue
    }

    struct Settings {
        var coordinator: PersistentStoreCoordinator?
        var parent: ManagedObjectContext?
        var name: String?
        var automaticallyMergesChangesFromParent = false
        var mergePolicy: MergePolicy = .error
        var transactionAuthor: String?
        /// The children that merge the saves of this context (``registerForMerges()``).
        var children: [WeakContext] = []
        /// Set on a container's view context: remote changes merge into it (see `RemoteChangeObserver`).
        var receivesRemoteChanges = false
        /// See ``ManagedObjectContext/postsNotifications`` (ManagedObjectContext+Notifications.swift).
        var postsNotifications = true
    }

    /// How the context runs.
    public let concurrencyType: ConcurrencyType
    let queue: DispatchQueue
    let settings = Locked(Settings())
    /// Moved on whenever the coordinator or the parent is set: a ``ReadRoute`` or an
    /// ``InsertEntity`` is used only while this is unchanged.
    let settingsGeneration = Atomic<UInt>(0)
    /// The store of the last single-object read of this root context (``loadRow(for:)``) and
    /// what finding it depended on. Confined to the queue, as the registry is.
    @exclusivity(unchecked) private var readRoute: ReadRoute?
    /// The entity of the class this root context last inserted an object of through
    /// `TypedManagedObject.insert(into:)` (``entityForInsert(of:named:)``). Confined to the queue.
    @exclusivity(unchecked) var insertEntity: InsertEntity?
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    // Confined to `queue`, so the dynamic exclusivity checks on the hottest ones are off.
    /// The registered objects, one per ID; it moves its own generation on whenever it may let
    /// go of an object (``ObjectRegistry``).
    @exclusivity(unchecked) var registered = ObjectRegistry()
    /// The inserted objects not yet saved, in insertion order (``InsertedObjects``).
    @exclusivity(unchecked) var insertedInOrder = InsertedObjects()
    /// The deleted objects (``ListedObjects``).
    @exclusivity(unchecked) var deletedList = ListedObjects(.deleted)
    /// The changed objects (``ListedObjects``).
    @exclusivity(unchecked) var changedList = ListedObjects(.changed)
    @exclusivity(unchecked) var pendingDeletePropagation: [ManagedObject] = []
    /// While a save calls `willSave()` (``runWillSaveRounds(inserted:insertedArePlain:updated:deleted:posts:toParent:)``),
    /// the objects other than inserted ones reported changed since the round began, in order,
    /// once per change; `nil` at other times, when nothing is noted.
    @exclusivity(unchecked) var willSaveChanges: [ManagedObject]?
    /// How many saves queued with ``saveQueued(overlapping:leadingIfIdle:completingOn:completion:)`` took their objects
    /// out of the change sets and are still to finish.
    @exclusivity(unchecked) var overlappingSaves = 0
    /// How many objects at the front of `insertedInOrder` overlapping saves that failed put
    /// back while later ones were still to finish; 0 once none is.
    @exclusivity(unchecked) var takenBackInFront = 0

    /// Creates a context of the given concurrency type. Set ``persistentStoreCoordinator`` or
    /// ``parent`` before using it.
    public init(concurrencyType: ConcurrencyType) {
        self.concurrencyType = concurrencyType
        let label = concurrencyType == .mainQueue ? "PersistKit.context.main" : "PersistKit.context.private"
        self.queue = DispatchQueue(label: label)
        super.init()
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    deinit {
        // The registry's objects go lowest address first (see emptyRegistry(keepingCapacity:_:)),
        // each letting go of the prefetched members it holds as objects (which may hold it).
        // Objects held elsewhere outlive the context: their unretained reference to it is
        // cleared (see ManagedObject.managedObjectContext).
        emptyRegistry(keepingCapacity: false) { object in
            object.managedObjectContext = nil
            if object.hasToManyStates { object.forgetMemberObjects(keepingIDs: false) }
        }
    }

    // MARK: - Settings

    /// The coordinator this context (or its root ancestor) saves through.
    public var persistentStoreCoordinator: PersistentStoreCoordinator? {
        get { settings.withLock { $0.coordinator ?? $0.parent?.persistentStoreCoordinator } }
        set {
            settings.withLock { $0.coordinator = newValue }
            settingsGeneration.wrappingAdd(1, ordering: .releasing)
            registerForMerges()
            MergeTargets.contextSettingsChanged()
        }
    }

    /// The parent context: saving pushes changes to it rather than to the stores.
    public var parent: ManagedObjectContext? {
        get { settings.withLock { $0.parent } }
        set {
            settings.withLock { $0.parent = newValue }
            settingsGeneration.wrappingAdd(1, ordering: .releasing)
            registerForMerges()
            MergeTargets.contextSettingsChanged()
        }
    }

    /// Registers the context, weakly, where the saves it merges come from, once it takes them:
    /// with its coordinator as a root context that merges saves automatically or takes remote
    /// changes, with its parent as a child that merges automatically. A context that takes no
    /// merges is registered nowhere: a weak reference would give it a side table, and every
    /// retain and release of the context the slow path (see
    /// ``ManagedObject/managedObjectContext``). Called whenever one of those settings changes;
    /// registering is idempotent, and a context stays registered (the lists are filtered by the
    /// settings when used).
    func registerForMerges() {
        let (merges, parent, coordinator) = settings.withLock { settings in
            (settings.automaticallyMergesChangesFromParent || (settings.parent == nil && settings.receivesRemoteChanges),
             settings.parent, settings.coordinator)
        }
        guard merges else { return }
        if let parent {
            parent.settings.withLock { parentSettings in
                parentSettings.children.removeAll { $0.context == nil }
                if !parentSettings.children.contains(where: { $0.context === self }) {
                    parentSettings.children.append(WeakContext(context: self))
                }
            }
        } else {
            coordinator?.register(self)
        }
    }

    /// A name for logs, notifications and history.
    public var name: String? {
        get { settings.withLock { $0.name } }
        set { settings.withLock { $0.name = newValue } }
    }

    /// Whether saves of the parent (or, for a root context, of sibling contexts on the same
    /// coordinator) are merged into this context automatically.
    public var automaticallyMergesChangesFromParent: Bool {
        get { settings.withLock { $0.automaticallyMergesChangesFromParent } }
        set {
            settings.withLock { $0.automaticallyMergesChangesFromParent = newValue }
            registerForMerges()
            MergeTargets.contextSettingsChanged()
        }
    }

    /// How a save resolves conflicts with changes saved by others.
    public var mergePolicy: MergePolicy {
        get { settings.withLock { $0.mergePolicy } }
        set { settings.withLock { $0.mergePolicy = newValue } }
    }

    /// The author recorded with this context's saves in persistent history.
    public var transactionAuthor: String? {
        get { settings.withLock { $0.transactionAuthor } }
        set { settings.withLock { $0.transactionAuthor = newValue } }
    }

    var children: [ManagedObjectContext] { settings.withLock { $0.children.compactMap(\.context) } }

    // MARK: - Running on the queue

    /// Whether the caller is running on this context's queue.
    ///
    /// A block this context runs (through ``ReadScope``) says so in a thread-local slot, read
    /// first; otherwise Dispatch is asked for the queue's specific value.
    var isOnQueue: Bool {
        let identity = ObjectIdentifier(self)
        return ReadScope.isRunning(context: identity) || DispatchQueue.getSpecific(key: Self.queueKey) == identity
    }

    /// Runs `block` on the context's queue asynchronously (Core Data's `perform(_:)`).
    public func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async { ReadScope.run(for: self, block) }
    }

    /// Runs `block` on the context's queue and waits for it; runs inline when already on the
    /// queue, so it may be nested (Core Data's `performAndWait(_:)`).
    public func performAndWait<T>(_ block: () throws -> T) rethrows -> T {
        try onQueue(block)
    }

    /// Runs `block` on the context's queue and returns its result (Core Data's async `perform`).
    public func perform<T: Sendable>(_ block: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try ReadScope.run(for: self, block) })
            }
        }
    }

    /// Runs `block` on the context's queue: inline when already there, else as a new
    /// ``ReadScope`` (single-object reads of one block may share a read transaction).
    @inline(__always) func onQueue<T>(_ block: () throws -> T) rethrows -> T {
        if isOnQueue { return try block() }
        return try hop(block, rescue: { throw $0 })
    }

    /// `block` run synchronously on the context's queue as a new ``ReadScope``, its result or
    /// error carried back, through Dispatch's non-generic `sync`.
    ///
    /// Dispatch's generic `sync` keeps the result in an `Optional<T>` and the error beside it,
    /// and `T` is not known where Dispatch is compiled: every call looked up `Optional<T>`'s
    /// metadata twice in the runtime's cache (about 650 instructions) and wrapped the closure
    /// again. Here the result goes into memory of `T`'s size that needs no metadata beyond
    /// `T`'s own: room on the stack for a result of up to four words (``HopResultRoom``),
    /// else a heap allocation. Not `withUnsafeTemporaryAllocation`: it carries its closure's
    /// result in a `Result<T, any Error>`, whose metadata it looked up in the runtime's cache
    /// at every call (about 650 instructions, `performAndWait` being generic and called from
    /// other modules). `rescue` rethrows the block's error: a `rethrows` function may throw
    /// only through a closure it is given (the caller passes `{ throw $0 }`, as Dispatch does).
    private func hop<T>(_ block: () throws -> T, rescue: (any Error) throws -> T) rethrows -> T {
        if MemoryLayout<T>.size <= MemoryLayout<HopResultRoom>.size
            && MemoryLayout<T>.alignment <= MemoryLayout<HopResultRoom>.alignment {
            var room = HopResultRoom()
            return try withUnsafeMutableBytes(of: &room) { bytes in
                // `room` has bytes: its size is four words, not zero.
                try hop(block, into: bytes.baseAddress.unsafelyUnwrapped, rescue: rescue)
            }
        }
        let slot = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
        defer { slot.deallocate() }
        return try hop(block, into: slot, rescue: rescue)
    }

    /// ``hop(_:rescue:)`` with the result carried in `slot`: uninitialized memory with room
    /// for a `T`, left uninitialized again.
    @inline(__always)
    private func hop<T>(_ block: () throws -> T, into slot: UnsafeMutableRawPointer,
                        rescue: (any Error) throws -> T) rethrows -> T {
        var failure: (any Error)?
        queue.sync {
            do {
                slot.initializeMemory(as: T.self, to: try ReadScope.run(for: self, block))
            } catch {
                failure = error
            }
        }
        if let failure { return try rescue(failure) }
        return slot.assumingMemoryBound(to: T.self).move()
    }

    // MARK: - Registered objects

    /// The objects registered in the context: every object fetched, inserted or faulted in.
    public var registeredObjects: Set<ManagedObject> { onQueue { Set(registered.values) } }
    /// The object registered for `objectID`, or `nil` if the context has none; unlike
    /// ``object(with:)`` it neither registers a fault nor reads the store (Core Data's
    /// `registeredObject(for:)`).
    public func registeredObject(for objectID: ManagedObjectID) -> ManagedObject? { onQueue { registered[objectID] } }

    /// The object registered for the row `primaryKey` of `entity` in the store of `store`, or
    /// `nil` if the context has none; like ``registeredObject(for:)`` but without an ID: it
    /// allocates nothing, interns nothing and compares no strings (a PersistKit addition).
    ///
    /// For a server's lookups by ID: prepare the store's token once
    /// (``StoreToken/forIdentifier(_:)``, or ``PersistentStore/storeToken``), then look up each
    /// key read from a request; build a ``ManagedObjectID`` only for a key the context does not
    /// hold (and pass it to ``existingObject(with:)``). `entity` is the object's concrete
    /// entity, as in its ID: an object of a subentity is not found under its superentity.
    public func registeredObject(entity: EntityDescription, store: StoreToken, primaryKey: Int64) -> ManagedObject? {
        let key = ObjectKey(entity: entity, store: store, primaryKey: primaryKey)
        return onQueue { registered[key] }
    }

    /// ``registeredObject(entity:store:primaryKey:)`` without a reference count, for a server
    /// answering a batch of reads on the context's queue: the object is the registry's, lent
    /// for as long as it stays registered, which it does while the caller's block runs on the
    /// queue and unregisters nothing itself (no ``releaseUnreferencedObjects(beyond:)``,
    /// ``reset()`` or ``refreshAllObjects()`` in between).
    ///
    /// - Precondition: called on the context's queue.
    package func unretainedRegisteredObject(entity: EntityDescription, store: StoreToken, primaryKey: Int64) -> Unmanaged<ManagedObject>? {
        precondition(isOnQueue, "ManagedObjectContext: unretainedRegisteredObject called off the context's queue")
        return registered.unretainedObject(forKey: ObjectKey(entity: entity, store: store, primaryKey: primaryKey))
    }

    /// The object registered for the row `primaryKey` of `entity` in the store whose
    /// identifier is `storeIdentifier`, or `nil`: ``registeredObject(entity:store:primaryKey:)``
    /// after interning the identifier (a lock and a hash of the string; no allocation once the
    /// store's token exists). Prefer the token form in loops.
    public func registeredObject(entity: EntityDescription, storeIdentifier: String, primaryKey: Int64) -> ManagedObject? {
        registeredObject(entity: entity, store: StoreToken.forIdentifier(storeIdentifier), primaryKey: primaryKey)
    }

    /// The object registered for `key`, or `nil` if the context has none (see
    /// ``registeredObject(entity:store:primaryKey:)``).
    public func registeredObject(forKey key: ObjectKey) -> ManagedObject? { onQueue { registered[key] } }
    /// Objects inserted and not yet saved.
    public var insertedObjects: Set<ManagedObject> { onQueue { Set(insertedInOrder.objects.filter { !$0._isDeleted }) } }
    /// Objects with unsaved changes that are neither inserted nor deleted.
    public var updatedObjects: Set<ManagedObject> { onQueue { Set(changedList.objects.filter { $0.isUpdated }) } }
    /// Objects deleted and not yet saved (inserted objects deleted again are not listed).
    public var deletedObjects: Set<ManagedObject> { onQueue { Set(deletedList.objects.filter { !$0._isInserted }) } }

    /// Whether the context has unsaved inserts, updates or deletes (an update of transient
    /// properties alone included, as ``updatedObjects`` lists it).
    public var hasChanges: Bool {
        onQueue {
            insertedInOrder.objects.contains { !$0._isDeleted }
                || deletedList.objects.contains { !$0._isInserted }
                || changedList.objects.contains { $0.hasChangedValues }
        }
    }

    /// The entity in the context's model whose class is `type`.
    func entity(forClass type: ManagedObject.Type) -> EntityDescription? {
        persistentStoreCoordinator?.managedObjectModel.entities.first { $0.managedObjectClass == type }
    }

    /// Registers `object` as inserted; it is saved at the next save (Core Data's `insert(_:)`).
    public func insert(_ object: ManagedObject) {
        onQueue {
            precondition(!object.isRegisteredInAnyContext || object.isRegistered(in: self),
                         "ManagedObjectContext: an object can be inserted into one context only")
            let wasRegistered = object.isRegistered(in: self)
            if object._isInserted && wasRegistered { return }
            object.managedObjectContext = self
            object._isInserted = true
            if object.hasTemporaryID && !wasRegistered {
                // Its temporary key is the process's only one: no look-up can find another
                // object under it, so it is registered unfiled (``ObjectRegistry/appendUnfiled(_:)``).
                registered.appendUnfiled(object)
            } else {
                // By key: a new object's temporary ID is made only when asked for.
                registered[object.objectKey] = object
            }
            // Not listed yet: an object inserted in this context returned above.
            insertedInOrder.append(object)
            object.awakeFromInsert()
        }
    }

    /// Marks `object` deleted; at the next save its delete rules run and it is removed
    /// (Core Data's `delete(_:)`).
    public func delete(_ object: ManagedObject) {
        onQueue {
            guard object.isRegistered(in: self), !object._isDeleted else { return }
            object.willAccessValue()
            markDeleted(object)
            pendingDeletePropagation.append(object)
        }
    }

    func markDeleted(_ object: ManagedObject) {
        object._isDeleted = true
        deletedList.add(object)
    }

    /// The object for `objectID`: the registered one, or a fault that loads on first access
    /// (Core Data's `object(with:)`). The object need not exist; touching a fault for a missing
    /// object gives an object with no values.
    public func object(with objectID: ManagedObjectID) -> ManagedObject {
        onQueue { registeredObject(with: objectID) }
    }

    /// The object for `objectID`, loaded, or an error if no store or parent has it
    /// (Core Data's `existingObject(with:)`).
    public func existingObject(with objectID: ManagedObjectID) throws -> ManagedObject {
        try onQueue {
            let existing = registered[objectID]
            if let existing, !existing._isFault { return existing }
            guard let row = try loadRow(for: objectID) else {
                throw PersistenceError(.objectNotFound, "no object exists for \(objectID.uriRepresentation().absoluteString)",
                                       objectID: objectID)
            }
            // Loading rows registers nothing in this context, so the first lookup still holds.
            // The row is moved straight into the fault (what fulfillFault(_:) would do with it
            // as the pending row), rather than stored as its pending row then taken out again.
            if let object = existing {
                object.fill(with: row)
                return object
            }
            let object = makeFault(objectID)
            registered[objectID] = object
            object.fill(with: row)
            return object
        }
    }

    /// Loads the objects of `objectIDs` that are not loaded yet with one call to the store (or
    /// the parent), leaving each as ``existingObject(with:)`` would: registered and not a
    /// fault. IDs that name no object are skipped. A PersistKit addition for batches of lookups
    /// by ID: afterwards `existingObject(with:)` on any of them makes no store call.
    public func loadObjects(with objectIDs: [ManagedObjectID]) throws {
        try onQueue {
            var missing: [ManagedObjectID] = []
            var seen = Set<ObjectKey>()
            for id in objectIDs where seen.insert(id.key).inserted {
                if let object = registered[id], !object._isFault { continue }
                missing.append(id)
            }
            guard missing.count > 1 else { return } // one object: existingObject(with:) is as cheap
            for row in try loadRows(for: missing) where seen.contains(row.key) {
                // (A row of a subentity read for a superentity's ID is left to existingObject(with:).)
                let object = registeredObject(for: row)
                guard object._isFault else { continue }
                object.pendingRow = CommittedState(row)
                fulfillFault(object)
            }
        }
    }

    func registerFault(_ objectID: ManagedObjectID, row: RowSnapshot?) -> ManagedObject {
        let object = makeFault(objectID)
        object.pendingRow = row.map(CommittedState.init)
        registered[objectID] = object
        return object
    }

    /// ``object(with:)`` for callers already on the context's queue: the registered object for
    /// `objectID`, or a new fault registered for it, without checking the queue, with one probe
    /// of the registry (a lookup then an insert would hash the ID twice).
    @inline(__always)
    func registeredObject(with objectID: ManagedObjectID) -> ManagedObject {
        registered.object(for: objectID, orRegister: { makeFault(objectID) })
    }

    /// The object registered for the row's key, or a new fault registered for it (given the
    /// row's ID when the row was made with one, else made without an ID); one probe.
    @inline(__always)
    func registeredObject(for row: borrowing RowSnapshot) -> ManagedObject {
        registeredObject(row.key, row.entity, row.objectIDIfMade)
    }

    /// The registered object of `key`, or a new fault for it (of `entity`, with `id` if given)
    /// registered now (see ``registeredObject(for:)``).
    @inline(__always)
    func registeredObject(_ key: ObjectKey, _ entity: EntityDescription, _ id: ManagedObjectID?) -> ManagedObject {
        if let id {
            return registered.object(for: key, orRegister: { makeFault(id) })
        }
        return registered.object(for: key, orRegister: { makeFault(key, entity: entity) })
    }

    /// A new, unregistered fault for `objectID` belonging to this context.
    @inline(__always)
    func makeFault(_ objectID: ManagedObjectID) -> ManagedObject {
        let object = objectID.entity.managedObjectClass.init(fault: objectID)
        object.managedObjectContext = self
        return object
    }

    /// A new, unregistered fault for `key` (of `entity`) belonging to this context, its ID
    /// made only when asked.
    @inline(__always)
    func makeFault(_ key: ObjectKey, entity: EntityDescription) -> ManagedObject {
        let object = entity.managedObjectClass.init(fault: key, entity: entity)
        object.managedObjectContext = self
        return object
    }

    /// The registry's generation (``ObjectRegistry/generation``): member objects a to-many
    /// state recorded at it (``ToManyState/memberObjects(generation:)``) are all still
    /// registered, so alive, while it is unchanged.
    var registryGeneration: UInt64 {
        @inline(__always) get { registered.generation }
    }

    /// Records that `object` changed, so saves and `hasChanges` see it.
    func objectDidChange(_ object: ManagedObject) {
        guard !object._isInserted, !object._isDeleted else { return }
        changedList.add(object)
        willSaveChanges?.append(object)
    }

    // MARK: - Faults

    /// Loads a fault's values: from the row fetched with it, or from the parent or store.
    func fulfillFault(_ object: ManagedObject) {
        guard object._isFault else { return }
        // The state of the row fetched with the fault (a fault's `committed`), moved out (not
        // copied) so its values stay uniquely referenced.
        var state = object.committed.take()
        if state == nil {
            if let batch = object.faultingBatch {
                loadFaultingBatch(batch)
                state = object.committed.take()
            }
            if state == nil, let row = try? loadRow(for: object.objectID) { state = CommittedState(row) }
        }
        guard let state else {
            if object.faultingBatch != nil { object.faultingBatch = nil }
            object.fillWithNulls()
            return
        }
        object.fill(with: state)
    }

    /// The row of one object from the parent context, or from its store for a root context:
    /// ``loadRows(for:)`` for one ID, without arrays (a fault firing, `existingObject(with:)`).
    func loadRow(for id: ManagedObjectID) throws -> RowSnapshot? {
        let storeBits = id.storeBits // 0 for a temporary ID
        // The store of the last read, while neither the context's settings nor the
        // coordinator's stores changed: no lock taken and nothing retained. The route is
        // borrowed: the context holds it, and only this queue replaces it, never during a
        // store's read (bound to a local, it and its coordinator were retained and released
        // at every lookup).
        if readRoute != nil {
            let routed: RowSnapshot?? = try Unmanaged.passUnretained(readRoute.unsafelyUnwrapped)._withUnsafeGuaranteedRef { route in
                guard route.storeBits == storeBits, route.settingsGeneration == settingsGeneration.load(ordering: .acquiring),
                      route.storesGeneration == route.coordinator.storesGeneration.load(ordering: .acquiring) else { return nil }
                return .some(try route.store.row(for: id))
            }
            if let routed { return routed }
        }
        return try loadRowFindingStore(for: id, storeBits: storeBits)
    }

    /// ``loadRow(for:)`` through the settings and the coordinator, keeping the store found as
    /// the context's ``ReadRoute``.
    private func loadRowFindingStore(for id: ManagedObjectID, storeBits: UInt) throws -> RowSnapshot? {
        // The generations first: a change made meanwhile leaves the route stale, never wrong.
        let generation = settingsGeneration.load(ordering: .acquiring)
        // One trip through the settings lock for both (a root context has no parent, so its
        // coordinator is its own).
        let (parent, ownCoordinator) = settings.withLock { ($0.parent, $0.coordinator) }
        if let parent {
            return try parent.onQueue { try parent.rowsForChild([id]) }.first
        }
        guard let coordinator = ownCoordinator else {
            throw PersistenceError(.persistentStoreOperation, "the context has neither a coordinator nor a parent")
        }
        let storesGeneration = coordinator.storesGeneration.load(ordering: .acquiring)
        guard storeBits != 0, let store = coordinator.persistentStore(storeBits: storeBits) else { return nil }
        readRoute = ReadRoute(settingsGeneration: generation, storesGeneration: storesGeneration, coordinator: coordinator,
                              storeBits: storeBits, store: store)
        return try store.row(for: id)
    }

    /// Rows for `ids` from the parent context, or from the stores for a root context.
    func loadRows(for ids: [ManagedObjectID]) throws -> [RowSnapshot] {
        if ids.count == 1 { return try loadRow(for: ids[0]).map { [$0] } ?? [] }
        // One trip through the settings lock for both (a root context has no parent, so its
        // coordinator is its own).
        let (parent, ownCoordinator) = settings.withLock { ($0.parent, $0.coordinator) }
        if let parent {
            return try parent.onQueue { try parent.rowsForChild(ids) }
        }
        guard let coordinator = ownCoordinator else {
            throw PersistenceError(.persistentStoreOperation, "the context has neither a coordinator nor a parent")
        }
        var rows: [RowSnapshot] = []
        // By store token: one word per ID, no identifier string made and hashed per ID.
        var byStore: [UInt: [ManagedObjectID]] = [:]
        for id in ids where !id.isTemporaryID {
            byStore[id.storeBits, default: []].append(id)
        }
        for (storeBits, storeIDs) in byStore {
            guard let store = coordinator.persistentStore(storeBits: storeBits) else { continue }
            rows += try store.rows(for: storeIDs)
        }
        return rows
    }

    /// This context's view of rows, for a child context: its own current values where it has
    /// the object loaded, without objects it deleted.
    func rowsForChild(_ ids: [ManagedObjectID]) throws -> [RowSnapshot] {
        var rows: [RowSnapshot] = []
        var missing: [ManagedObjectID] = []
        for id in ids {
            if let object = registered[id] {
                if object._isDeleted { continue }
                if !object._isFault {
                    rows.append(RowSnapshot(objectID: id, version: object.committedVersion, values: object.values))
                    continue
                }
            }
            missing.append(id)
        }
        if !missing.isEmpty { rows += try loadRows(for: missing) }
        return rows
    }

    /// The committed destinations of a to-many relationship, from the parent or the store.
    func loadDestinations(of objectID: ManagedObjectID, relationship: RelationshipDescription) -> [ManagedObjectID] {
        if let parent {
            return parent.onQueue {
                if let object = parent.registered[objectID] { return object.toManyMembers(relationship) }
                return parent.loadDestinations(of: objectID, relationship: relationship)
            }
        }
        guard !objectID.isTemporaryID,
              let store = persistentStoreCoordinator?.persistentStore(storeBits: objectID.storeBits) else { return [] }
        return (try? store.destinations(of: objectID, relationship: relationship)) ?? []
    }
}
