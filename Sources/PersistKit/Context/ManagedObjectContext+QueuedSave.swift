import Foundation

extension ManagedObjectContext {
    /// Saves as ``save()`` does, without holding the context's queue while the store commits:
    /// for a server that runs many contexts' saves at once (a PersistKit addition).
    ///
    /// Call it on the context's queue. The first half of the save (pending changes,
    /// `willSave()`, validation, the rows to write) runs before this returns; when the context
    /// is a root context whose coordinator has one SQLite store for every entity, the write is
    /// then queued for the store's group commit and this returns, and the second half (new
    /// objects' permanent IDs, the change sets cleared, `didSave()`) runs on the context's queue
    /// once the write's transaction committed, from the group commit's committer thread
    /// (`performAndWait`), and calls `completion` there. A conflict is resolved by the merge
    /// policy and the write queued again, as ``save()`` retries it. Any other context saves with
    /// ``save()`` before this returns. `completion` gets `nil` once saved, or the error, exactly
    /// as ``save()`` would have thrown it, with the context left as a failed ``save()`` leaves it.
    ///
    /// Returns whether the context may be used before `completion` runs: when `completion` ran
    /// already, and when `overlapping` let the save go on without it. Otherwise the caller must
    /// not use the context, nor hand it work that does, until `completion` runs: the save's
    /// objects are in neither state until then.
    ///
    /// `overlapping`: a save of new objects alone (nothing updated or deleted, no relationship
    /// set, no uniqueness constraint unless the merge policy is ``MergePolicy/error``, no
    /// `ManagedObject` subclass, nothing else pending) takes
    /// its objects out of the change sets when its write is queued, and the context takes more
    /// changes, and more such saves, meanwhile; the writes commit in the order they were queued.
    /// The caller must not touch the queued save's objects, nor call ``reset()`` or
    /// ``rollback()``, until `completion` runs (``hasOverlappingSaves``). If the write fails,
    /// its objects are put back, inserted, in front of any inserted since: they are pending
    /// again, for the next save (which a save queued behind the failed one is not).
    ///
    /// `leadingIfIdle`: when the store's group commit has nothing else going on (no group
    /// running, no write waiting or expected from another thread), the write is committed on
    /// this thread and `completion` runs before this returns, with no thread woken; otherwise
    /// the write is queued as without it. For a caller whose thread has nothing else to do
    /// meanwhile (an event loop with no other client waiting); a thread serving others should
    /// not take it, as the transaction holds it for the commit's writes.
    ///
    /// `completingOn`: where the second half runs instead of the committer thread, which hands
    /// it over once the write committed (or failed): the executor runs it on a thread of its
    /// own (an event loop), still inside `performAndWait` on the context's queue. Whatever the
    /// save made on the caller's thread is then freed there too, and the committer goes on to
    /// the next group at once.
    @discardableResult
    package func saveQueued(overlapping: Bool = false, leadingIfIdle: Bool = false,
                            completingOn: CompletionExecutor? = nil,
                            completion: @escaping ((any Error)?) -> Void) -> Bool {
        onQueue {
            do {
                guard let save = try prepareSave() else {
                    completion(nil)
                    return true
                }
                guard save.parent == nil, let store = queueingStore else {
                    if let parent = save.parent {
                        try push(to: parent, inserted: save.inserted, updated: save.updated, deleted: save.deleted,
                                 insertedArePlain: save.insertedArePlain)
                    } else {
                        try commitToStores(save)
                    }
                    completion(nil)
                    return true
                }
                let (plan, known) = try commitPlan(for: save)
                let overlaps = overlapping && mayOverlap(save)
                // Moved into the queued save, not copied (each copy retains their arrays).
                let queued = QueuedSave(store: store, save: consume save, plan: consume plan, known: consume known,
                                        overlapping: overlaps, leadingIfIdle: leadingIfIdle, completingOn: completingOn)
                if queued.overlapping {
                    insertedInOrder.removeAll()
                    takenBackInFront = 0
                    overlappingSaves += 1
                }
                do {
                    // Called on the context's queue (``finish(_:_:completion:)``), before
                    // `submit` returns when this thread committed the write itself.
                    try submit(queued) { error in
                        queued.isFinished = true
                        completion(error)
                    }
                } catch {
                    // Nothing was queued: the objects are pending again.
                    if queued.overlapping { takeBack(queued) }
                    throw error
                }
                return queued.overlapping || queued.isFinished
            } catch {
                completion(error)
                return true
            }
        }
    }

    /// Whether a save queued with ``saveQueued(overlapping:leadingIfIdle:completingOn:completion:)`` is still to finish
    /// with its objects out of the change sets (a PersistKit addition).
    package var hasOverlappingSaves: Bool { onQueue { overlappingSaves > 0 } }

    /// Whether `save` may overlap the context's later work (see
    /// ``saveQueued(overlapping:leadingIfIdle:completingOn:completion:)``): it saves every pending change, and they are
    /// new plain objects that no other object refers to, and whose uniqueness constraints, if
    /// any, a clash can only fail (the error policy), so no later change can touch its objects,
    /// and no conflict can change them. (A clash with a save still in flight is found by the
    /// store's check inside the write's transaction, which sees the writes before it.)
    private func mayOverlap(_ save: PreparedSave) -> Bool {
        guard save.updated.isEmpty, save.deleted.isEmpty, save.insertedArePlain, changedList.isEmpty, deletedList.isEmpty,
              insertedInOrder.count == save.inserted.count, insertedInOrder.isProcessed else { return false }
        var lastEntity: EntityDescription?
        // The slots of the run's entity that hold to-one relationships.
        var toOneSlots: [Int] = []
        for object in save.inserted {
            // A new object's to-many state without changes has no members (validation makes
            // the states it reads).
            guard !object.hasToManyChanges else { return false }
            if object.entity !== lastEntity {
                lastEntity = object.entity
                let rules = EntityRules.of(object.entity)
                // Under the error policy a clash fails the write and changes no object; another
                // policy could merge the object into a stored one.
                guard rules.uniquenessConstraints.isEmpty || mergePolicy == .error else { return false }
                toOneSlots = rules.toOneSlots
            }
            for slot in toOneSlots where slot < object.values.count && !object.values[slot].isNull { return false }
        }
        return true
    }

    /// Puts the objects of the overlapping save `queued`, which did not write them, back into
    /// the change sets, in front of the objects inserted since.
    ///
    /// Writes finish in the order they were queued: the objects of an earlier save that failed
    /// too, put back already, stay in front of these (``takenBackInFront``).
    private func takeBack(_ queued: QueuedSave) {
        let position = min(takenBackInFront, insertedInOrder.count)
        insertedInOrder.insert(queued.save.inserted, at: position)
        takenBackInFront = position + queued.save.inserted.count
        overlappingSaveEnded()
    }

    /// Counts one overlapping save as finished, written or taken back; with none left, no
    /// object in front of `insertedInOrder` is a taken-back one still to keep in order.
    private func overlappingSaveEnded() {
        overlappingSaves -= 1
        if overlappingSaves == 0 { takenBackInFront = 0 }
    }

    /// Whether ``saveQueued(overlapping:leadingIfIdle:completingOn:completion:)`` queues this context's writes: it is a root context
    /// whose coordinator has one SQLite store for every entity. Otherwise it saves at once,
    /// and may wait for the store's write lock.
    package var queuesSaves: Bool { queueingStore != nil }

    /// The store ``saveQueued(overlapping:leadingIfIdle:completingOn:completion:)`` queues writes for, if it does.
    private var queueingStore: SQLiteStore? {
        guard settings.withLock({ $0.parent == nil }) else { return nil }
        return persistentStoreCoordinator?.soleStoreForEveryEntity() as? SQLiteStore
    }

    /// Queues `queued`'s write; its completion finishes the save on the context's queue.
    private func submit(_ queued: QueuedSave, completion: @escaping ((any Error)?) -> Void) throws {
        var split = false
        var writes: StoreWrites
        do {
            // The plan is lent out of the queued save while the writes are built (a read of the
            // property would copy it, retaining each of its arrays), and put back before the
            // store may finish the save: on this thread, when it commits the write itself.
            let plan = queued.takePlan()
            defer { queued.plan = plan }
            writes = try storeWrites(for: plan, known: queued.known, split: &split)
            // The sole store's request: every entity's rows are in it. Moved out of the writes
            // and into the store's queued write, not copied (a copy retains each of its arrays).
            writes.forEachEntry { entry in
                queued.insertedObjects = entry.objects(split: split, plan: plan)
            }
        }
        let request = writes.takeFirstRequest()
        queued.store.saveAssigningKeysQueued(request, leadingIfIdle: queued.leadingIfIdle,
                                             completingOn: queued.completingOn) { [self] result in
            performAndWait { finish(queued, result, completion: completion) }
        }
    }

    /// The second half of a queued save, on the context's queue, once its write is done.
    private func finish(_ queued: QueuedSave, _ result: Result<AssignedKeys, any Error>,
                        completion: @escaping ((any Error)?) -> Void) {
        switch result {
        case .success(let assigned):
            // The new objects' permanent IDs, valid now that the store committed them.
            remapIDs(of: queued.insertedObjects, to: assigned)
            if queued.overlapping { overlappingSaveEnded() }
            // The save is done with its plan: moved out, not copied.
            finishCommit(queued.save, queued.takePlan(), ownsChangeSets: !queued.overlapping)
            completion(nil)
        case .failure(let error):
            do {
                guard try resolveWriteConflict(error, in: &queued.plan, attempt: &queued.attempt) else {
                    if queued.overlapping { takeBack(queued) }
                    return completion(error)
                }
                try submit(queued, completion: completion)
            } catch {
                if queued.overlapping { takeBack(queued) }
                completion(error)
            }
        }
    }
}

/// A save whose write is queued for a SQLite store's group commit
/// (``ManagedObjectContext/saveQueued(overlapping:leadingIfIdle:completingOn:completion:)``), between its two halves.
private final class QueuedSave: @unchecked Sendable {
    // @unchecked Sendable: made on the context's queue, and used only there: the write's
    // completion reads it inside the context's `performAndWait`, and the store's threads
    // never touch it.
    let store: SQLiteStore
    let save: ManagedObjectContext.PreparedSave
    var plan: CommitPlan
    let known: StoreWrites.Known?
    /// The write attempt (conflicts resolved send it again), as ``ManagedObjectContext/save()`` counts.
    var attempt = 1
    /// The objects of the request's inserted rows, by position.
    var insertedObjects: [ManagedObject] = []
    /// The save's objects are out of the context's change sets while its write is queued
    /// (``ManagedObjectContext/saveQueued(overlapping:leadingIfIdle:completingOn:completion:)``).
    let overlapping: Bool
    /// The saving thread commits the write itself when the group commit is idle
    /// (``ManagedObjectContext/saveQueued(overlapping:leadingIfIdle:completingOn:completion:)``).
    let leadingIfIdle: Bool
    /// Whether the save's completion ran (on the context's queue).
    var isFinished = false
    /// Where the committer has the second half run (``ManagedObjectContext/saveQueued(overlapping:leadingIfIdle:completingOn:completion:)``).
    let completingOn: CompletionExecutor?

    /// ``plan``, moved out with an empty plan left in its place: a read of the property copies
    /// it, retaining each of its arrays, and releases them again after.
    func takePlan() -> CommitPlan {
        var taken = CommitPlan(inserted: [], updated: [], deleted: [])
        swap(&taken, &plan)
        return taken
    }

    init(store: SQLiteStore, save: ManagedObjectContext.PreparedSave, plan: CommitPlan, known: StoreWrites.Known?,
         overlapping: Bool, leadingIfIdle: Bool, completingOn: CompletionExecutor?) {
        self.store = store
        self.save = save
        self.plan = plan
        self.known = known
        self.overlapping = overlapping
        self.leadingIfIdle = leadingIfIdle
        self.completingOn = completingOn
    }
}
