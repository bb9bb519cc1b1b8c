import Foundation

extension ManagedObjectContext {
    /// Saves the context's changes: to its parent context if it has one, else to the stores,
    /// as one transaction per store (Core Data's `save()`).
    ///
    /// Before writing, `willSave()` is called on the objects being saved (inserted, updated
    /// and deleted ones; a deleted one with `isDeleted` true), in rounds until a round changes
    /// nothing (at most ``maxWillSaveRounds``, else
    /// ``PersistenceError/Code/willSaveDidNotSettle``): what it changes, inserts or deletes is
    /// part of this save. After the write `didSave()` is called on the same objects (a deleted
    /// one is out of the context by then, and `isDeleted` is false). What `didSave()` or an
    /// observer of the did-save notifications changes is not part of the save: it stays
    /// pending, for the next save. Objects inserted and deleted before the save are not saved,
    /// and neither method is called on them.
    ///
    /// Before writing, delete rules run and every changed object is validated; if anything
    /// fails, the error lists every failing object and key (one error, or
    /// ``PersistenceError/Code/validationMultipleErrors`` with ``PersistenceError/detailedErrors``),
    /// nothing is written, and the context keeps its changes.
    ///
    /// The same holds when a store fails to write (an I/O error, a full disk): the store's
    /// transaction is rolled back, the error (``PersistenceError/Code/sqlite`` for a SQLite
    /// store) names the failure, and the context keeps its changes, inserted objects with the
    /// permanent IDs they were given, so calling `save()` again once the cause is gone writes
    /// them (see `docs/stores.md`).
    public func save() throws {
        try onQueue {
            guard let save = try prepareSave() else { return }
            if let parent = save.parent {
                try push(to: parent, inserted: save.inserted, updated: save.updated, deleted: save.deleted,
                         insertedArePlain: save.insertedArePlain)
            } else {
                try commitToStores(save)
            }
        }
    }

    /// What a save writes, once its first half ran (``prepareSave()``).
    struct PreparedSave {
        /// The context's parent, which a child context's save pushes to; `nil` for a root context.
        let parent: ManagedObjectContext?
        var inserted: [ManagedObject]
        /// No object of `inserted` uses save hooks (``ManagedObject/usesSaveHooks``).
        var insertedArePlain: Bool
        var updated: [ManagedObject]
        var deleted: [ManagedObject]
        /// `Set(inserted)`, when the objects-did-change notification built it already.
        let insertedSet: Set<ManagedObject>?
        /// `Set(updated)` and `Set(deleted)`, likewise.
        let updatedSet: Set<ManagedObject>?
        let deletedSet: Set<ManagedObject>?
    }

    /// The first half of every save, before anything is written: pending changes processed,
    /// `willSave()` rounds run, every object validated (throwing what fails). `nil` when the
    /// context has no changes.
    func prepareSave() throws -> PreparedSave? {
        guard hasChanges else { return nil }
        // The settings a save reads, under one lock.
        let (posts, parent) = settings.withLock { ($0.postsNotifications, $0.parent) }
        // Whether every changed and deleted object is still pending: the sets posted below
        // then hold every one of them, the saved ones among them.
        let allPending = changedList.processedCount == 0 && deletedList.processedCount == 0
        let pending = processPendingChangesReturningSets(posts: posts)
        // No userInfo, as Core Data's (an empty dictionary was bridged at every post).
        if posts { post(Self.willSaveObjectsNotification, userInfo: nil) }
        // In insertion order, which is the objects' order in memory: each pass below over
        // a large insert streams through them. The list itself when none is deleted.
        var (inserted, insertedArePlain, updated, deleted) = objectsToSave(toParent: parent != nil)
        // What willSave() changes is part of this save. `ManagedObject`'s own willSave()
        // does nothing: no pass is made when no object is of a subclass.
        let hooksChanged = try runWillSaveRounds(inserted: &inserted, insertedArePlain: &insertedArePlain,
                                                 updated: &updated, deleted: &deleted, posts: posts, toParent: parent != nil)
        try validate(inserted: inserted, updated: updated, deleted: deleted)
        // The objects-did-change sets hold just the objects saved when no willSave() changed
        // anything and they are as many: each inserted object posted is among `inserted`, and,
        // when every change was pending, each of `updated` and `deleted` among those posted
        // (which may hold more: objects whose only changes are transient, new objects deleted).
        // They are posted again.
        return PreparedSave(parent: parent, inserted: inserted, insertedArePlain: insertedArePlain, updated: updated, deleted: deleted,
                            insertedSet: !hooksChanged && pending.inserted.count == inserted.count ? pending.inserted : nil,
                            updatedSet: !hooksChanged && allPending && !updated.isEmpty && pending.updated.count == updated.count ? pending.updated : nil,
                            deletedSet: !hooksChanged && allPending && !deleted.isEmpty && pending.deleted.count == deleted.count ? pending.deleted : nil)
    }

    /// The objects a save writes, from the change sets: the inserted ones not deleted, in
    /// insertion order, with whether all of them are plain `ManagedObject`s
    /// (``InsertedObjects/undeleted()``); the updated ones with persistent changes, or, for a
    /// save to the parent context (`toParent`), with any change (transient values go to the
    /// parent: it is not a store); the deleted ones that are stored (not inserted).
    func objectsToSave(toParent: Bool) -> (inserted: [ManagedObject], insertedArePlain: Bool, updated: [ManagedObject], deleted: [ManagedObject]) {
        let (inserted, insertedArePlain) = insertedInOrder.undeleted()
        // Each list itself when every object in it is saved (the usual case): a filtered copy
        // retained each object once more, and released it with the copy.
        let updated = Self.saved(changedList.objects) { !$0._isDeleted && (toParent ? $0.hasChangedValues : $0.hasPersistentChangedValues) }
        let deleted = Self.saved(deletedList.objects) { !$0._isInserted }
        return (inserted, insertedArePlain, updated, deleted)
    }

    /// `objects` itself when `isSaved` holds for each (borrowed to ask), else those for which it holds.
    private static func saved(_ objects: [ManagedObject], _ isSaved: (ManagedObject) -> Bool) -> [ManagedObject] {
        for position in objects.indices where !objects.withBorrowedElement(at: position, isSaved) {
            return objects.filter(isSaved)
        }
        return objects
    }

    /// How many objects ``insertedObjects``, ``updatedObjects`` and ``deletedObjects`` hold,
    /// counted without building the sets (a PersistKit addition).
    public var changeCounts: (inserted: Int, updated: Int, deleted: Int) {
        onQueue {
            var inserted = 0, updated = 0, deleted = 0
            for object in insertedInOrder.objects where !object._isDeleted { inserted += 1 }
            for object in changedList.objects where object.isUpdated { updated += 1 }
            for object in deletedList.objects where !object._isInserted { deleted += 1 }
            return (inserted, updated, deleted)
        }
    }

    // MARK: - Validation

    func validate(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) throws {
        // A struct, not local functions capturing the error list and the entity of the last
        // object: variables a local function captures get a dynamic exclusivity check at every
        // access (about 60 instructions each, a few per object saved).
        var pass = ValidationPass()
        for position in inserted.indices {
            // Borrowed: `inserted` holds every object for the whole loop.
            inserted.withBorrowedElement(at: position) { object in
                pass.noteEntity(of: object)
                pass.collect { try object.validateForInsert() }
            }
        }
        for position in updated.indices {
            updated.withBorrowedElement(at: position) { object in
                pass.noteEntity(of: object)
                pass.collect { try object.validateForUpdate() }
            }
        }
        for position in deleted.indices {
            deleted.withBorrowedElement(at: position) { object in pass.collect { try object.validateForDelete() } }
        }
        // Most entities have no uniqueness constraint: the two lists are then not even joined.
        if pass.anyConstrained {
            pass.collect { try validateUniqueness(of: updated.isEmpty ? inserted : inserted + updated) }
        }
        let errors = pass.errors
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 {
            throw PersistenceError(.validationMultipleErrors, "\(errors.count) validation errors; nothing was saved",
                                   detailedErrors: errors)
        }
    }

    /// What ``validate(inserted:updated:deleted:)`` gathers in its pass over the objects.
    private struct ValidationPass {
        /// The validation errors so far.
        var errors: [PersistenceError] = []
        /// Whether any object's entity has uniqueness constraints.
        private(set) var anyConstrained = false
        /// The entity of the last object noted. Whether an entity has uniqueness constraints is
        /// looked up in the same pass, once per run of objects of one entity: after a large
        /// insert each pass over the objects reads them from memory again.
        private var lastEntity: EntityDescription?

        /// Runs `body`, keeping the errors it throws.
        mutating func collect(_ body: () throws -> Void) {
            do { try body() } catch let error as PersistenceError {
                if error.code == .validationMultipleErrors { errors += error.detailedErrors } else { errors.append(error) }
            } catch {
                errors.append(PersistenceError(.managedObjectValidation, "\(error)"))
            }
        }

        /// Notes `object`'s entity's uniqueness constraints.
        mutating func noteEntity(of object: ManagedObject) {
            guard object.entity !== lastEntity else { return }
            lastEntity = object.entity
            if !anyConstrained && !EntityRules.of(object.entity).uniquenessConstraints.isEmpty { anyConstrained = true }
        }
    }

    /// Checks each uniqueness constraint among the objects being saved and against the store.
    func validateUniqueness(of objects: [ManagedObject]) throws {
        var errors: [PersistenceError] = []
        var seen: [String: [[StoreValue]: ManagedObjectID]] = [:]
        // Objects come grouped by entity more often than not: look the constraints up once per run.
        var lastEntity: EntityDescription?
        var constraints: [[String]] = []
        for object in objects {
            if object.entity !== lastEntity {
                lastEntity = object.entity
                constraints = EntityRules.of(object.entity).uniquenessConstraints
            }
            for constraint in constraints {
                let slots = constraint.compactMap { object.entity.slotIndex(of: $0) }
                guard slots.count == constraint.count else { continue }
                let key = slots.map { object.values[$0] }
                if key.contains(where: \.isNull) { continue }
                let constraintName = "\(object.entity.rootEntity.name):" + constraint.joined(separator: ",")
                if let other = seen[constraintName]?[key], other != object.objectID {
                    errors.append(uniquenessError(object, constraint))
                    continue
                }
                seen[constraintName, default: [:]][key] = object.objectID
                // Under the other merge policies a clash with a stored object is an upsert,
                // resolved when writing (see `ManagedObjectContext+Conflicts.swift`).
                if parent == nil, mergePolicy == .error, let store = try? rootStore(for: object.entity) {
                    let predicate = CompoundPredicate.and(zip(constraint, key).map { FetchPredicate.equal($0, $1) })
                    let request = StoreFetchRequest(entity: object.entity.rootEntity, predicate: predicate, fetchLimit: 2)
                    let clashes = try store.fetch(request).filter { $0.objectID != object.objectID && registered[$0.objectID]?._isDeleted != true }
                    if !clashes.isEmpty { errors.append(uniquenessError(object, constraint)) }
                }
            }
        }
        if errors.count == 1 { throw errors[0] }
        if errors.count > 1 {
            throw PersistenceError(.validationMultipleErrors, "\(errors.count) uniqueness violations", detailedErrors: errors)
        }
    }

    private func uniquenessError(_ object: ManagedObject, _ constraint: [String]) -> PersistenceError {
        let values = constraint.map { name in "\(name)=\(object.entity.slotIndex(of: name).map { object.values[$0].anyValue.map { "\($0)" } ?? "nil" } ?? "?")" }
        return PersistenceError(.managedObjectConstraintValidation,
                                "\(object.entity.name) with \(values.joined(separator: ", ")) already exists (uniqueness constraint)",
                                objectID: object.objectID, key: constraint.joined(separator: ","))
    }

    // MARK: - Saving to the stores

    /// Gives inserted objects permanent IDs now, before they are saved (Core Data's
    /// `obtainPermanentIDs(for:)`).
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        try onQueue {
            let temporary = objects.filter { $0.hasTemporaryID }
            guard !temporary.isEmpty else { return }
            guard parent == nil else {
                throw PersistenceError(.persistentStoreOperation, "a child context cannot obtain permanent IDs; save to the root context first")
            }
            var objects: [ManagedObject] = []
            var assigned: [ManagedObjectID?] = []
            let byEntity = Dictionary(grouping: temporary) { ObjectIdentifier($0.entity) }
            for group in byEntity.values {
                let entity = group[0].entity
                let store = try rootStore(for: entity)
                let keys = try store.allocatePrimaryKeys(for: entity, count: group.count)
                for (object, key) in zip(group, keys) {
                    objects.append(object)
                    assigned.append(ManagedObjectID(entity: entity, store: store.storeToken, primaryKey: key))
                }
            }
            remapIDs(of: objects, to: AssignedKeys(ids: assigned))
        }
    }

    /// Gives `objects` the permanent keys in `assigned`, by position (position `i` is the new
    /// key of `objects[i]`, none to leave it; as ``InTransactionKeyAssigning/saveAssigningKeys(_:)``
    /// returns them for a save request's inserted rows): in the registry, and in every changed
    /// object that points at one.
    ///
    /// One pass over `objects`, in their order, moves each registered object to its new key
    /// (no retain or release; a save's new keys are consecutive, so they fill the table in
    /// runs): from ``ObjectTable/bulkRemovalMinimum`` objects on, the pass gathers the old and
    /// new keys and the registry moves them all at once (`ObjectRegistry.rekey(from:to:)` with
    /// both lists, the table rebuilt at most once); a smaller save moves each as it goes,
    /// with no lists made. An object whose temporary ID was never made gets only its new key:
    /// it makes its permanent ID when first asked (most saved objects never are). Only a
    /// temporary ID that was made can be held by a reference: those objects get their permanent
    /// IDs now, the pairs are collected on the way, and the changed objects are searched for
    /// references only when there are any (a large insert usually has none).
    func remapIDs(of objects: [ManagedObject], to assigned: AssignedKeys) {
        guard !assigned.isEmpty else { return }
        // Each temporary ID made before, with its permanent one.
        var madeIDs: [(ManagedObjectID, ManagedObjectID)] = []
        let moving = Swift.min(objects.count, assigned.count)
        let together = moving >= ObjectTable.bulkRemovalMinimum
        var oldKeys: [ObjectKey] = []
        var newKeys: [ObjectKey] = []
        if together {
            oldKeys.reserveCapacity(moving)
            newKeys.reserveCapacity(moving)
        }
        for index in 0..<moving {
            // Borrowed: `objects` holds every object for the whole loop.
            objects.withBorrowedElement(at: index) { object in
                guard let newKey = assigned.objectKey(at: index, entity: object.entity) else { return }
                // By key: a temporary ID never made is not made here (no reference can hold it).
                if together {
                    oldKeys.append(object.objectKey)
                    newKeys.append(newKey)
                } else {
                    registered.rekey(from: object.objectKey, to: newKey)
                }
                if object.hasMadeObjectID {
                    // Force-unwrap: the position has a key, so it has an ID.
                    let new = assigned.objectID(at: index, entity: object.entity)!
                    madeIDs.append((object.objectID, new))
                    object.objectID = new
                } else {
                    object.takePermanentKey(newKey)
                }
            }
        }
        if together { registered.rekey(from: oldKeys, to: newKeys) }
        guard !madeIDs.isEmpty, anyChangedObjectHasReferences() else { return }
        var map: [ManagedObjectID: ManagedObjectID] = [:]
        map.reserveCapacity(madeIDs.count)
        for (old, new) in madeIDs { map[old] = new }
        remapReferences(map)
    }

    /// Whether any inserted, changed or deleted object has a relationship value that could
    /// hold a temporary ID (a to-one slot of an entity with relationships, or to-many state).
    private func anyChangedObjectHasReferences() -> Bool {
        var lastEntity: EntityDescription?
        var hasToOne = false
        func check(_ object: ManagedObject) -> Bool {
            if object.hasToManyStates { return true }
            if object.entity !== lastEntity {
                lastEntity = object.entity
                hasToOne = EntityRules.of(object.entity).hasToOne
            }
            return hasToOne
        }
        for object in insertedInOrder.objects where check(object) { return true }
        for object in changedList.objects where check(object) { return true }
        for object in deletedList.objects where check(object) { return true }
        return false
    }

    /// Replaces the temporary IDs of `map` in every changed object's to-one slots and to-many
    /// states.
    private func remapReferences(_ map: [ManagedObjectID: ManagedObjectID]) {
        // Only to-one slots and to-many states can point at other objects: entities without
        // relationships are skipped (looked up once per run of objects of one entity).
        var lastEntity: EntityDescription?
        var hasToOne = true
        func remapReferences(of object: ManagedObject) {
            if object.entity !== lastEntity {
                lastEntity = object.entity
                hasToOne = EntityRules.of(object.entity).hasToOne
            }
            if hasToOne {
                for index in object.values.indices {
                    if case .object(let id) = object.values[index], let new = map[id] { object.setSlotValue(StoreValue.object(new), at: index) }
                }
            }
            if object.hasToManyStates {
                object.toMany.forEachState { $0.remap(map) }
            }
        }
        for object in insertedInOrder.objects { remapReferences(of: object) }
        for object in changedList.objects { remapReferences(of: object) }
        for object in deletedList.objects { remapReferences(of: object) }
    }

    /// The objects of `inserted` that need permanent IDs before the write: those with a
    /// temporary ID headed for a store that cannot allocate keys inside its save transaction;
    /// and the last entity looked up with its store, which the write then need not look up
    /// again (see ``StoreWrites``).
    ///
    /// A coordinator whose only store holds every entity and allocates keys in its save
    /// transaction (one SQLite store, the common case) needs no pass over the objects: none
    /// of them needs a key now, and that store is every entity's.
    private func objectsNeedingKeysBeforeWriting(_ inserted: [ManagedObject]) -> ([ManagedObject], StoreWrites.Known?) {
        guard let first = inserted.first else { return ([], nil) }
        if let only = persistentStoreCoordinator?.soleStoreForEveryEntity(), Self.keyAssigning(only) != nil {
            return ([], StoreWrites.Known(entity: first.entity, store: only))
        }
        var result: [ManagedObject] = []
        var lastEntity: EntityDescription?
        var lastStore: (any PersistentStore)?
        var storeAssignsKeys = false
        for object in inserted where object.hasTemporaryID {
            if object.entity !== lastEntity {
                lastEntity = object.entity
                // A missing store: obtainPermanentIDs(for:) then throws the error that says so.
                lastStore = try? rootStore(for: object.entity)
                storeAssignsKeys = lastStore.flatMap(Self.keyAssigning) != nil
            }
            if !storeAssignsKeys { result.append(object) }
        }
        guard let lastEntity, let lastStore else { return (result, nil) }
        return (result, StoreWrites.Known(entity: lastEntity, store: lastStore))
    }

    /// The second half of a root context's save: writes `save` to the stores, resolving
    /// conflicts by the merge policy, and then clears the change sets and tells observers.
    func commitToStores(_ save: PreparedSave) throws {
        var (plan, known) = try commitPlan(for: save)
        // Conflicts with other saves are found by the stores (Z_OPT checks, uniqueness checks
        // inside the write transaction), which then write nothing; the merge policy resolves
        // them and the write is tried again, a bounded number of times.
        var attempt = 1
        var writtenUpdated: [RowSnapshot]?
        while true {
            do {
                writtenUpdated = try writeToStores(plan, known: known)
                break
            } catch {
                guard try resolveWriteConflict(error, in: &plan, attempt: &attempt) else { throw error }
            }
        }
        // Handed over, not copied: the rows are changed in place there, which a second
        // reference to their array would copy whole.
        finishCommit(save, plan, writtenUpdated: writtenUpdated.take())
    }

    /// The plan of a root context's save before its first write: objects headed for stores
    /// that cannot give keys inside their save transaction get their permanent IDs now, and
    /// clashes of uniqueness constraints among the objects are resolved. With the entity whose
    /// store was looked up on the way (see ``StoreWrites``).
    func commitPlan(for save: PreparedSave) throws -> (CommitPlan, StoreWrites.Known?) {
        // A SQLite store gives new objects their keys inside the save's transaction (one
        // transaction, and a failed save uses up no key); other stores' objects get them now.
        let (needingKeys, known) = objectsNeedingKeysBeforeWriting(save.inserted)
        try obtainPermanentIDs(for: needingKeys)
        var plan = CommitPlan(inserted: save.inserted, updated: save.updated, deleted: save.deleted)
        try resolveConstraintClashesBeforeWriting(&plan)
        return (plan, known)
    }

    /// Resolves, by the merge policy, the conflict a store's write failed with, and returns
    /// whether the write is to be tried again (attempt `attempt`, counted here): `false` when
    /// `error` is no conflict to resolve, or the attempts are used up.
    func resolveWriteConflict(_ error: any Error, in plan: inout CommitPlan, attempt: inout Int) throws -> Bool {
        guard let error = error as? PersistenceError, attempt < Self.maxCommitAttempts, error.conflicts.isEmpty,
              error.code == .managedObjectMerge || error.code == .managedObjectConstraintMerge else { return false }
        attempt += 1
        if error.code == .managedObjectMerge {
            try resolveOptimisticLockingConflicts(&plan, cause: error)
        } else {
            try resolveConstraintConflictsAfterWriting(&plan, cause: error)
        }
        return true
    }

    /// After `plan`, the resolved form of `save`, was written: clears the change sets, calls
    /// `didSave()` and tells observers (``didCommit(inserted:updated:writtenUpdated:deleted:versionBump:insertedArePlain:insertedSet:updatedSet:deletedSet:leftOut:ownsChangeSets:)``),
    /// and lets go of objects deleted elsewhere. `ownsChangeSets`: see ``didCommit(inserted:updated:writtenUpdated:deleted:versionBump:insertedArePlain:insertedSet:updatedSet:deletedSet:leftOut:ownsChangeSets:)``.
    /// `writtenUpdated`: the updated objects' rows as the store wrote them, in the order of
    /// `plan.updated`, when ``writeToStores(_:known:)`` could give them.
    func finishCommit(_ save: PreparedSave, _ plan: CommitPlan, ownsChangeSets: Bool = true, writtenUpdated: consuming [RowSnapshot]? = nil) {
        // Conflict resolution only drops objects from a save's lists, but for two additions:
        // objects it takes out of the inserted ones become updated (reinserted), and objects
        // deleted elsewhere join the deleted ones (`alreadyDeleted`). Without either, a list
        // as long as the save's is the same set of objects.
        let sameInserted = plan.inserted.count == save.inserted.count
        let sameUpdated = sameInserted && plan.reinserted.isEmpty && plan.updated.count == save.updated.count
        let sameDeleted = plan.alreadyDeleted.isEmpty && plan.deleted.count == save.deleted.count
        didCommit(inserted: plan.inserted, updated: plan.updated, writtenUpdated: writtenUpdated.take(),
                  deleted: plan.alreadyDeleted.isEmpty ? plan.deleted : plan.deleted + plan.alreadyDeleted, versionBump: true,
                  insertedArePlain: save.insertedArePlain,
                  insertedSet: sameInserted ? save.insertedSet : nil, updatedSet: sameUpdated ? save.updatedSet : nil,
                  deletedSet: sameDeleted ? save.deletedSet : nil,
                  leftOut: Self.objectsLeftOut(of: plan, inserted: save.inserted, updated: save.updated, deleted: save.deleted),
                  ownsChangeSets: ownsChangeSets)
        forgetVanished(plan.vanished)
    }

    /// The objects of a save's lists (`inserted`, `updated`, `deleted`, each of which had its
    /// `willSave()`) that conflict resolution took out of `plan`, so that their `didSave()` is
    /// called too: a delete or an update the merge policy gave up, an updated object deleted
    /// elsewhere, an insert merged into a stored object by a uniqueness constraint. Only
    /// objects of a subclass (``hasSaveHooks(_:)``). None when nothing was taken out, which
    /// the lists' sizes tell: resolution removes objects from the lists, and adds one to the
    /// updated ones only when it takes it out of the inserted ones.
    static func objectsLeftOut(of plan: CommitPlan, inserted: [ManagedObject], updated: [ManagedObject],
                               deleted: [ManagedObject]) -> [ManagedObject] {
        guard plan.inserted.count != inserted.count || plan.updated.count != updated.count
                || plan.deleted.count + plan.alreadyDeleted.count != deleted.count else { return [] }
        var kept = Set(plan.inserted.map(ObjectIdentifier.init))
        kept.formUnion(plan.updated.map(ObjectIdentifier.init))
        kept.formUnion(plan.deleted.map(ObjectIdentifier.init))
        kept.formUnion(plan.alreadyDeleted.map(ObjectIdentifier.init))
        return (inserted + updated + deleted).filter { !kept.contains(ObjectIdentifier($0)) && hasSaveHooks($0) }
    }

    /// Writes `plan` with one request per store, built in place: copying a request out of an
    /// array and back for every object would copy its arrays each time.
    ///
    /// Returns the updated objects' rows as written, in the order of `plan.updated`, when one
    /// store wrote them all and the save inserted nothing: the save's committed state then
    /// (``didCommit(inserted:updated:writtenUpdated:deleted:versionBump:insertedArePlain:insertedSet:updatedSet:deletedSet:leftOut:ownsChangeSets:)``
    /// takes them instead of making each row again). With inserted objects, the rows may name
    /// temporary IDs the save replaced; `nil` then, and with several stores.
    @discardableResult
    func writeToStores(_ plan: CommitPlan, known: StoreWrites.Known? = nil) throws -> [RowSnapshot]? {
        var split = false
        var writes = try storeWrites(for: plan, known: known, split: &split)
        try writes.forEachEntry { entry in
            guard !entry.request.isEmpty else { return }
            if let assigning = Self.keyAssigning(entry.store) {
                // The new objects' permanent IDs, valid now that the store committed them.
                remapIDs(of: entry.objects(split: split, plan: plan), to: try assigning.saveAssigningKeys(entry.request))
            } else {
                try entry.store.save(entry.request)
            }
        }
        guard plan.inserted.isEmpty, plan.reinserted.isEmpty, !plan.updated.isEmpty, writes.hasOneEntry else { return nil }
        // Moved out of the entry, not copied.
        let updated = writes.takeFirstRequest().updated
        return updated.count == plan.updated.count ? updated : nil
    }

    /// The requests that write `plan`, one per store; `split` is set to whether its inserted
    /// rows are split between stores or joined by reinserted objects (see
    /// ``StoreWrites/Entry/objects(split:plan:)``). Returned alone, not in a tuple: a tuple
    /// taken apart into a variable copied the writes (every array of their requests retained).
    func storeWrites(for plan: CommitPlan, known: StoreWrites.Known?, split: inout Bool) throws -> StoreWrites {
        let (author, contextName) = settings.withLock { ($0.transactionAuthor, $0.name) }
        var writes = StoreWrites(author: author, contextName: contextName, known: known)
        if let firstObject = plan.inserted.first, try writes.index(for: firstObject.entity, in: self) == 0 {
            // The first store's rows sized once (most saves go to one store): a large insert
            // then copies no growing array of rows.
            writes.reserveFirst(inserted: plan.inserted.count)
        }
        // Whether the inserted rows are split between stores or joined by reinserted objects:
        // only then is each request's list of objects built. Otherwise the first store's rows
        // are `plan.inserted`'s objects, in order, and that list serves (see below).
        split = false
        for position in plan.inserted.indices {
            // Borrowed: `plan.inserted` holds every object for the whole loop.
            try plan.inserted.withBorrowedElement(at: position) { object in
                let index = try writes.index(for: object.entity, in: self)
                writes.withEntry(index) { $0.request.inserted.append(object.storeRow(version: 0)) }
                if index != 0 { split = true }
                if object.hasToManyStates { writes.withEntry(index) { $0.request.toManyChanges += object.toManyChanges() } }
            }
        }
        for position in plan.updated.indices {
            // Borrowed: `plan.updated` holds every object for the whole loop.
            try plan.updated.withBorrowedElement(at: position) { object in
                let index = try writes.index(for: object.entity, in: self)
                if !plan.reinserted.isEmpty && plan.reinserted.contains(ObjectIdentifier(object)) {
                    writes.withEntry(index) { $0.request.inserted.append(object.storeRow(version: 0)) }
                    split = true
                } else {
                    writes.withEntry(index) { entry in
                        entry.request.updated.append(object.storeRow(version: object.committedVersion))
                        // Only for a store that reads them (persistent history): an array of names
                        // and a dictionary entry per updated object cost more than its row.
                        guard entry.store.readsUpdatedKeys else { return }
                        let slots = object.entity.slots
                        // A SlotSet goes through its slots in ascending order: no sort.
                        entry.request.updatedKeys[object.objectID] = object.changedSlots.compactMap { $0 < slots.count ? slots[$0].name : nil }
                            + object.toMany.namesWithChanges.sorted()
                    }
                }
                // Most updated objects changed no to-many relationship: their table of states is not walked.
                if object.hasToManyChanges { writes.withEntry(index) { $0.request.toManyChanges += object.toManyChanges() } }
            }
        }
        for position in plan.deleted.indices {
            // Borrowed, as the updated objects above; the ID read once.
            try plan.deleted.withBorrowedElement(at: position) { object in
                let id = object.objectID
                guard !id.isTemporaryID else { return }
                object.willAccessValue()
                let index = try writes.index(for: object.entity, in: self)
                // The version read in place; the committed state copied once, for its values.
                let row = RowSnapshot(objectID: id, version: object.committedVersion, values: object.committed?.values ?? [])
                writes.withEntry(index) { $0.request.deleted.append(row) }
            }
        }
        if split {
            // Each request's objects in the order of its rows: the inserted objects, then the
            // reinserted ones, as the rows were added above.
            for object in plan.inserted {
                let index = try writes.index(for: object.entity, in: self)
                writes.withEntry(index) { $0.insertedObjects.append(object) }
            }
            for object in plan.updated where plan.reinserted.contains(ObjectIdentifier(object)) {
                let index = try writes.index(for: object.entity, in: self)
                writes.withEntry(index) { $0.insertedObjects.append(object) }
            }
        }
        // Moved out: the loop's closures capture `writes`, and a plain return copied it.
        return consume writes
    }

    /// `store` as a store that gives new objects their keys inside its save transaction, if it
    /// is one. A SQLite store is recognized by a class check first: looking up a protocol
    /// conformance costs the runtime a thousand instructions or more, at every save.
    static func keyAssigning(_ store: any PersistentStore) -> (any InTransactionKeyAssigning)? {
        if let sqlite = store as? SQLiteStore { return sqlite }
        return store as? any InTransactionKeyAssigning
    }

    /// Clears the change sets after a successful save, and tells observers. The sets are
    /// cleared before `didSave()` and the notifications: what those change stays pending.
    /// `didSave()` is called on the inserted, updated and deleted objects; a deleted object is
    /// out of the context by then (no ``ManagedObject/managedObjectContext``, `isDeleted`
    /// false).
    /// `leftOut`: objects whose `willSave()` was called that conflict resolution took out of
    /// the save (``objectsLeftOut(of:inserted:updated:deleted:)``); they get `didSave()` too.
    /// `insertedArePlain`: no object of `inserted` uses save hooks (each is a `ManagedObject`
    /// itself, or of a class whose ``ManagedObject/usesSaveHooks`` is `false`), as
    /// ``InsertedObjects/undeleted()`` found at the save's start (`inserted` is those objects,
    /// or fewer). `writtenUpdated`, when given, is the rows the store wrote for `updated`, in
    /// its order (``writeToStores(_:known:)``). `insertedSet`, `updatedSet` and `deletedSet`,
    /// when given, are `Set(inserted)`, `Set(updated)` and `Set(deleted)` built already.
    /// `ownsChangeSets` false: the save's objects were taken out of the change sets when its
    /// write was queued (``saveQueued(overlapping:leadingIfIdle:completingOn:completion:)``),
    /// and what the sets hold now belongs to later changes; they are left as they are.
    func didCommit(inserted: [ManagedObject], updated: [ManagedObject], writtenUpdated: consuming [RowSnapshot]? = nil, deleted: [ManagedObject], versionBump: Bool,
                   insertedArePlain: Bool, insertedSet: Set<ManagedObject>? = nil, updatedSet: Set<ManagedObject>? = nil,
                   deletedSet: Set<ManagedObject>? = nil, leftOut: [ManagedObject] = [],
                   ownsChangeSets: Bool = true) {
        // The settings read once, under one lock.
        let (contextName, author, isRoot, coordinator, hasChildren, posts) = settings.withLock {
            ($0.name, $0.transactionAuthor, $0.parent == nil, $0.coordinator, !$0.children.isEmpty, $0.postsNotifications)
        }
        var changes = SavedChanges()
        changes.contextName = contextName
        changes.transactionAuthor = author
        changes.inserted.reserveCapacity(inserted.count)
        // Whether an object of `inserted` was deleted meanwhile (by a `willSave()`, say).
        var anyInsertedDeleted = false
        for position in inserted.indices {
            // Borrowed: `inserted` holds every object for the whole loop.
            inserted.withBorrowedElement(at: position) { object in
                anyInsertedDeleted = anyInsertedDeleted || object._isDeleted
                object._isInserted = false
                object.commitStoredValues(version: versionBump ? 1 : 0)
                if object.hasToManyStates { changes.toManyChanged[object.objectID] = Set(object.toMany.namesWithChanges) }
                object.clearChanges()
                changes.inserted.append(object.objectID)
            }
        }
        // Taken out of the parameter, the caller's own: the one reference to the array, which
        // is changed in place below.
        if var rows = writtenUpdated.take(), rows.count == updated.count {
            // The rows the store wrote, one per object in order: with the new version, each is
            // the object's saved state, not made again (its ID, entity and values retained
            // once more, and the written row's released).
            rows.withUnsafeMutableBufferPointer { rows in
                for position in rows.indices {
                    // Borrowed, as the inserted objects above.
                    updated.withBorrowedElement(at: position) { object in
                        assert(rows[position].key == object.objectKey, "didCommit: a written row is not its object's")
                        let version = object.committedVersion + (versionBump ? 1 : 0)
                        rows[position].version = version
                        object.commitValues(version: version) { rows[position].values }
                        if object.hasToManyChanges { changes.toManyChanged[object.objectID] = Set(object.toMany.namesWithChanges) }
                        object.clearChanges()
                    }
                }
            }
            changes.updated = rows
        } else {
            if !updated.isEmpty { changes.updated.reserveCapacity(updated.count) }
            for position in updated.indices {
                // Borrowed, as the inserted objects above.
                updated.withBorrowedElement(at: position) { object in
                    let version = object.committedVersion + (versionBump ? 1 : 0)
                    let row = object.storeRow(version: version)
                    object.commitValues(version: version) { row.values }
                    if object.hasToManyChanges { changes.toManyChanged[object.objectID] = Set(object.toMany.namesWithChanges) }
                    object.clearChanges()
                    changes.updated.append(row)
                }
            }
        }
        if !deleted.isEmpty { changes.deleted.reserveCapacity(deleted.count) }
        for position in deleted.indices {
            // Borrowed, as the inserted objects above; let go of by its key (no ID looked at).
            deleted.withBorrowedElement(at: position) { object in
                registered.removeValue(forKey: object.objectKey)
                object.managedObjectContext = nil
                // Removed from the store (or pushed to the parent): no longer to be deleted.
                if !object._isInserted {
                    object._isDeleted = false
                    changes.deleted.append(object.objectID)
                }
            }
        }
        // Inserted objects deleted before the save are let go of. `inserted` comes from
        // `insertedInOrder`: when it holds every object there and none of them is deleted, there
        // is none, and the objects (out of cache after a large save) are not read again.
        if !ownsChangeSets {
            // Taken out of the sets when the save was queued: nothing of theirs is left there.
        } else if anyInsertedDeleted || insertedInOrder.count != inserted.count {
            var anyUnsaved = false
            for object in insertedInOrder.objects {
                if object._isDeleted {
                    registered.removeValue(forKey: object.objectID)
                    object.managedObjectContext = nil
                } else if object._isInserted {
                    anyUnsaved = true
                }
            }
            // An object inserted after the save took its list (by a validation method, say)
            // was not saved: it stays inserted, for the next save.
            if anyUnsaved {
                insertedInOrder.removeAll { !$0._isInserted || $0._isDeleted }
            } else {
                insertedInOrder.removeAll()
            }
        } else {
            insertedInOrder.removeAll()
        }
        if ownsChangeSets && changedList.count > updated.count {
            // Objects whose only changes were to transient properties were not written (see
            // `objectsToSave(toParent:)`); the save commits their changes all the same, as Core Data's
            // does: they are no longer updated. Only when the set holds more than the save's
            // updated objects, so a large update is not walked twice.
            for object in changedList.objects where !object._isDeleted && object.hasChangedValues && !object.hasPersistentChangedValues {
                object.clearChanges()
            }
        }
        if ownsChangeSets {
            // Objects an overlapping save put back in front were saved with the rest.
            takenBackInFront = 0
            deletedList.removeAll()
            changedList.removeAll()
        }
        // `ManagedObject`'s own didSave() does nothing: the pass is skipped when no inserted
        // object uses save hooks.
        if !insertedArePlain { for object in inserted where Self.hasSaveHooks(object) { object.didSave() } }
        for object in updated where Self.hasSaveHooks(object) { object.didSave() }
        for object in deleted where Self.hasSaveHooks(object) { object.didSave() }
        for object in leftOut { object.didSave() }
        if posts {
            // The saved changes are boxed once and shared by both notifications.
            let boxedChanges: Any = changes
            Self.savedObjectsUserInfo.post(Self.didSaveObjectsNotification, object: self,
                                           insertedSet ?? Set(members: inserted), updatedSet ?? Set(members: updated),
                                           deletedSet ?? Set(members: deleted), last: boxedChanges)
            Self.savedObjectIDsUserInfo.post(Self.didSaveObjectIDsNotification, object: self,
                                             Set(members: changes.inserted), changes.updatedIDSet(),
                                             Set(members: changes.deleted), last: boxedChanges)
        }
        let saved = changes
        if hasChildren {
            for child in children where child.automaticallyMergesChangesFromParent {
                child.perform { child.mergeSavedChanges(saved) }
            }
        }
        if isRoot { coordinator?.contextDidSave(self, changes: saved) }
    }

    // MARK: - Saving to the parent context

    func push(to parent: ManagedObjectContext, inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject],
              insertedArePlain: Bool) throws {
        // Transient values included: the parent keeps them in memory, as this context did.
        let insertedRows = inserted.map { ($0.storeRow(version: 0, keepingTransients: true), $0.toManyChanges()) }
        let updatedRows = updated.map { object in
            (object.objectID, object.changedSlots.map { ($0, object.values[$0]) }, object.toManyChanges())
        }
        let deletedIDs = deleted.map(\.objectID)
        parent.onQueue {
            for (row, toManyChanges) in insertedRows {
                let id = row.objectID
                let object = row.entity.managedObjectClass.init(entity: row.entity, insertInto: nil)
                object.objectID = id
                object.replaceValues(row.values)
                object.managedObjectContext = parent
                object._isInserted = true
                parent.registered[id] = object
                parent.insertedInOrder.append(object)
                parent.apply(toManyChanges, to: object)
            }
            for (id, slots, toManyChanges) in updatedRows {
                let object = parent.object(with: id)
                for (slot, value) in slots { object.setSlot(slot, to: value) }
                parent.apply(toManyChanges, to: object)
            }
            for id in deletedIDs {
                let object = parent.object(with: id)
                guard !object._isDeleted else { continue }
                object.willAccessValue()
                parent.markDeleted(object)
            }
        }
        didCommit(inserted: inserted, updated: updated, deleted: deleted, versionBump: false, insertedArePlain: insertedArePlain)
    }

    private func apply(_ changes: [StoreSaveRequest.ToManyChange], to object: ManagedObject) {
        for change in changes {
            for id in change.removed { object.primitiveRemove(change.relationship, id) }
            for id in change.added { object.primitiveAdd(change.relationship, id) }
            if let order = change.order { object.setOrder(change.relationship, order) }
        }
    }
}

extension ManagedObject {
    /// The object's slots as a store row, with transient slots emptied unless `keepingTransients`.
    func storeRow(version: Int64, keepingTransients: Bool = false) -> RowSnapshot {
        let values = storedValues(keepingTransients: keepingTransients)
        // A new object that never made its temporary ID: the row carries the ID's number.
        if hasTemporaryID && !hasMadeObjectID {
            return RowSnapshot(temporaryEntity: entity, number: idPrimaryKey, version: version, values: values)
        }
        let id = objectID
        // The entity and key from the object's own fields; the ID is read only for its flag,
        // and only when the object's key says it may be temporary.
        return RowSnapshot(objectID: id, entity: entity, primaryKey: idPrimaryKey, isTemporaryID: hasTemporaryID && id.isTemporaryID,
                           version: version, values: values)
    }

    /// Makes the object's store row of `version` its committed state, as a save does for an
    /// updated object; `rowValues` gives the row's values (``storeRow(version:keepingTransients:)``).
    /// When the entity has no transient slot they are ``values`` themselves, which the committed
    /// state then shares, as ``commitStoredValues(version:)`` shares a new object's, rather than
    /// holding a reference of its own (and `rowValues` is not called). The row is not passed
    /// whole: read out of an array for the call, it was copied (its entity, ID and values
    /// retained and released).
    @inline(__always)
    func commitValues(version: Int64, rowValues: () -> SlotValues) {
        if entity.withRules({ $0.transientSlots.isEmpty }) {
            commitValuesShared(version: version)
        } else {
            committed = CommittedState(version: version, values: rowValues())
        }
    }

    /// Makes the object's stored values (``storedValues(keepingTransients:)``) its committed
    /// state of `version`, as a save does for a new object: shared with ``values`` when the
    /// entity has no transient slot, so no reference to their storage is taken (a retain now
    /// and a release when the object goes: two atomic operations per object).
    func commitStoredValues(version: Int64) {
        willAccessValue()
        commitValues(version: version) { storedValues() }
    }

    /// The object's slot values as a store keeps them, with transient slots emptied (kept when
    /// `keepingTransients`, for a parent context, which is not a store).
    func storedValues(keepingTransients: Bool = false) -> SlotValues {
        willAccessValue()
        if keepingTransients { return values }
        // Most entities have no transient slot: their values are stored as they are, the
        // rules only looked at, borrowed (copying them out retained and released references).
        return entity.withRules { rules in
            if rules.transientSlots.isEmpty { return values }
            var stored = values
            for index in rules.transientSlots where index < stored.count { stored[index] = .null }
            return stored
        }
    }

    /// The unsaved changes of every to-many relationship, for a save request.
    func toManyChanges() -> [StoreSaveRequest.ToManyChange] {
        var changes: [StoreSaveRequest.ToManyChange] = []
        for (name, state) in toMany where state.hasChanges {
            guard let relationship = entity.relationshipsByName[name] else { continue }
            let order = relationship.isOrdered ? toManyMembers(relationship) : nil
            changes.append(StoreSaveRequest.ToManyChange(relationship: relationship, source: objectID,
                                                         added: state.added, removed: Array(state.removed), order: order))
        }
        return changes
    }

    /// Forgets the record of changes, after a save.
    func clearChanges() {
        if !changedSlots.isEmpty { changedSlots = [] }
        if hasToManyStates {
            toMany.forEachState { $0.commit() }
        }
    }
}

/// The requests of one save, one per store, with (when needed) the objects of each request's
/// inserted rows in row order. A value type whose lookup is a method, not a closure over local variables:
/// variables a closure captures and changes are boxed and checked for exclusive access at
/// run time on every use.
///
/// The first store's entry is held inline: a save to one store (the common case) makes no
/// arrays of stores and requests, which cost more to allocate and free than the rest of the
/// bookkeeping of a one-object save.
struct StoreWrites {
    /// One store's request, with the objects of its inserted rows in row order.
    struct Entry {
        let store: any PersistentStore
        var request: StoreSaveRequest
        /// The objects of the inserted rows, by position; listed only when a save's inserted
        /// rows go to more than one store or include reinserted objects (see
        /// ``ManagedObjectContext/writeToStores(_:known:)``), else empty.
        var insertedObjects: [ManagedObject] = []

        /// The objects of the inserted rows, by position, for a save of `plan` (`split` as
        /// ``ManagedObjectContext/storeWrites(for:known:split:)`` set it). Not split: every
        /// inserted row is the first store's (another store's request has none), and its
        /// objects are `plan.inserted`.
        func objects(split: Bool, plan: CommitPlan) -> [ManagedObject] {
            split || request.inserted.isEmpty ? insertedObjects : plan.inserted
        }
    }

    /// The entry of the first store looked up (index 0).
    private var first: Entry?
    /// The entries of the other stores (index 1 and on).
    private var others: [Entry] = []
    let author: String?
    let contextName: String?
    /// The entity last looked up and its entry: objects come grouped by entity more often than not.
    private var lastEntity: EntityDescription?
    private var lastIndex = 0
    /// An entity whose store the save looked up already, in the same save.
    private let known: Known?

    /// An entity and its store, as looked up earlier in the same save.
    struct Known {
        let entity: EntityDescription
        let store: any PersistentStore
    }

    init(author: String?, contextName: String?, known: Known? = nil) {
        self.author = author
        self.contextName = contextName
        self.known = known
    }

    /// The entry at `index`, as ``index(for:in:)`` returned it.
    subscript(index: Int) -> Entry {
        // `first` exists once an index was handed out (index 0 is made first).
        index == 0 ? first! : others[index - 1]
    }

    /// Runs `body` on the entry at `index` (as ``index(for:in:)`` returned it) in place.
    ///
    /// A method rather than a `_modify` accessor of the subscript: the accessor's coroutine
    /// frame did not fit the caller's buffer, so every change through it allocated the frame
    /// with `malloc` and freed it (a pair per inserted object, workload 1 under callgrind).
    @inline(__always)
    mutating func withEntry<R>(_ index: Int, _ body: (inout Entry) throws -> R) rethrows -> R {
        // As in the getter: index 0 is handed out only once `first` is set.
        if index == 0 { return try body(&first!) }
        return try body(&others[index - 1])
    }

    /// Whether the writes go to one store.
    var hasOneEntry: Bool { first != nil && others.isEmpty }

    /// Makes room for `count` inserted rows in the first store's entry.
    mutating func reserveFirst(inserted count: Int) {
        first?.request.inserted.reserveCapacity(count)
    }

    /// The first store's request, moved out of its entry (which keeps an empty one); an empty
    /// request when there is no entry.
    mutating func takeFirstRequest() -> StoreSaveRequest {
        var request = StoreSaveRequest()
        // Unwrapped in place, so the entry is not copied to swap its request.
        if first != nil { swap(&request, &first!.request) }
        return request
    }

    /// Runs `body` on every entry, in the order their stores were first looked up (with no
    /// array made for a single entry). In place: an entry bound to a local, or passed on by
    /// value, was copied (its store, its request's arrays and strings retained and released).
    mutating func forEachEntry(_ body: (inout Entry) throws -> Void) rethrows {
        guard first != nil else { return }
        try body(&first!)
        for index in others.indices { try body(&others[index]) }
    }

    /// The index of the entry for `entity`'s store, added when the store has none yet.
    mutating func index(for entity: EntityDescription, in context: ManagedObjectContext) throws -> Int {
        if entity === lastEntity { return lastIndex }
        let store = try known.flatMap { $0.entity === entity ? $0.store : nil } ?? context.rootStore(for: entity)
        let index: Int
        // Only the first entry's store is read: binding the entry to a local copied it (its
        // store, its request's arrays and strings: about ten retains and releases).
        if first?.store === store {
            index = 0
        } else if let known = others.firstIndex(where: { $0.store === store }) {
            index = known + 1
        } else {
            var request = StoreSaveRequest()
            request.transactionAuthor = author
            request.contextName = contextName
            if first == nil {
                first = Entry(store: store, request: request)
                index = 0
            } else {
                others.append(Entry(store: store, request: request))
                index = others.count
            }
        }
        lastEntity = entity
        lastIndex = index
        return index
    }
}
