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
    /// Until `completion` runs, the caller must not use the context, nor hand it work that
    /// does: the save's objects are in neither state until then.
    package func saveQueued(completion: @escaping ((any Error)?) -> Void) {
        onQueue {
            do {
                guard let save = try prepareSave() else { return completion(nil) }
                guard save.parent == nil, let store = queueingStore else {
                    if let parent = save.parent {
                        try push(to: parent, inserted: save.inserted, updated: save.updated, deleted: save.deleted,
                                 insertedArePlain: save.insertedArePlain)
                    } else {
                        try commitToStores(save)
                    }
                    return completion(nil)
                }
                let (plan, known) = try commitPlan(for: save)
                try submit(QueuedSave(store: store, save: save, plan: plan, known: known), completion: completion)
            } catch {
                completion(error)
            }
        }
    }

    /// Whether ``saveQueued(completion:)`` queues this context's writes: it is a root context
    /// whose coordinator has one SQLite store for every entity. Otherwise it saves at once,
    /// and may wait for the store's write lock.
    package var queuesSaves: Bool { queueingStore != nil }

    /// The store ``saveQueued(completion:)`` queues writes for, if it does.
    private var queueingStore: SQLiteStore? {
        guard settings.withLock({ $0.parent == nil }) else { return nil }
        return persistentStoreCoordinator?.soleStoreForEveryEntity() as? SQLiteStore
    }

    /// Queues `queued`'s write; its completion finishes the save on the context's queue.
    private func submit(_ queued: QueuedSave, completion: @escaping ((any Error)?) -> Void) throws {
        let (writes, split) = try storeWrites(for: queued.plan, known: queued.known)
        var request = StoreSaveRequest()
        // The sole store's request: every entity's rows are in it.
        writes.forEachEntry { entry in
            request = entry.request
            queued.insertedObjects = entry.objects(split: split, plan: queued.plan)
        }
        queued.store.saveAssigningKeysQueued(request) { [self] result in
            performAndWait { finish(queued, result, completion: completion) }
        }
    }

    /// The second half of a queued save, on the context's queue, once its write is done.
    private func finish(_ queued: QueuedSave, _ result: Result<[ManagedObjectID?], any Error>,
                        completion: @escaping ((any Error)?) -> Void) {
        switch result {
        case .success(let assigned):
            // The new objects' permanent IDs, valid now that the store committed them.
            remapIDs(of: queued.insertedObjects, to: assigned, allRegistered: true)
            finishCommit(queued.save, queued.plan)
            completion(nil)
        case .failure(let error):
            do {
                guard try resolveWriteConflict(error, in: &queued.plan, attempt: &queued.attempt) else { return completion(error) }
                try submit(queued, completion: completion)
            } catch {
                completion(error)
            }
        }
    }
}

/// A save whose write is queued for a SQLite store's group commit
/// (``ManagedObjectContext/saveQueued(completion:)``), between its two halves.
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

    init(store: SQLiteStore, save: ManagedObjectContext.PreparedSave, plan: CommitPlan, known: StoreWrites.Known?) {
        self.store = store
        self.save = save
        self.plan = plan
        self.known = known
    }
}
