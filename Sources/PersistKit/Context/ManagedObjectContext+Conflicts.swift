import Foundation

/// What a save writes, as conflicts with other saves reshape it.
struct CommitPlan {
    var inserted: [ManagedObject]
    var updated: [ManagedObject]
    var deleted: [ManagedObject]
    /// Updated objects another save deleted, written again as inserts (object-trump and overwrite).
    var reinserted: Set<ObjectIdentifier> = []
    /// Objects this context deletes that another save deleted already: not written, but
    /// removed from the context like the deleted ones.
    var alreadyDeleted: [ManagedObject] = []
    /// Updated objects another save deleted whose deletion wins (store-trump and rollback):
    /// not written, and removed from the context after the save.
    var vanished: [ManagedObject] = []

    init(inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject]) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }
}

/// Conflict resolution at save, by ``MergePolicy``, as Core Data's `NSMergePolicy` defines it.
///
/// An *optimistic-locking* conflict is an object this context updates or deletes whose row
/// another save changed (its `Z_OPT` moved on) or deleted since this context read it. For each
/// property, "ours" is this context's value, "theirs" the store's, and each side changed the
/// property when its value differs from the one this context read:
///
/// | policy | updated here, changed there | updated here, deleted there | deleted here, changed there |
/// |---|---|---|---|
/// | `error` | save fails, nothing written: `managedObjectMerge` listing every conflict | same | same |
/// | `mergeByPropertyStoreTrump` | per property: theirs where they changed it, else ours | the deletion wins | the deletion goes ahead |
/// | `mergeByPropertyObjectTrump` | per property: ours where we changed it, else theirs | our object is written again | the deletion goes ahead |
/// | `overwrite` | our whole object is written | our object is written again | the deletion goes ahead |
/// | `rollback` | our changes are dropped: the object takes the store's values | the deletion wins | our deletion is dropped |
///
/// A *constraint* conflict is an inserted object whose uniqueness-constrained values equal a
/// stored object's. Under `error` the save fails with `managedObjectConstraintValidation`;
/// under the other policies the insert becomes an update of the stored object (an upsert):
/// the inserted object takes the stored object's ID, and its values are ours where we set
/// them (object-trump), theirs where the store has one (store-trump), all ours (overwrite) or
/// all theirs (rollback).
extension ManagedObjectContext {
    /// How many times a save writes before giving up on other saves that keep conflicting.
    static let maxCommitAttempts = 16

    // MARK: - Optimistic locking

    /// Finds every conflict of `plan`'s updated and deleted objects with the stores, and
    /// resolves them by the merge policy, or throws them all under ``MergePolicy/error``.
    func resolveOptimisticLockingConflicts(_ plan: inout CommitPlan, cause: PersistenceError) throws {
        let candidates = (plan.updated + plan.deleted).filter {
            !$0.objectID.isTemporaryID && !plan.reinserted.contains(ObjectIdentifier($0))
        }
        var current: [ManagedObjectID: RowSnapshot] = [:]
        for row in try loadRows(for: candidates.map(\.objectID)) { current[row.objectID] = row }
        let deletedHere = Set(plan.deleted.map(ObjectIdentifier.init))
        var conflicts: [(object: ManagedObject, theirs: RowSnapshot?)] = []
        for object in candidates {
            let theirs = current[object.objectID]
            if theirs?.version != object.committedVersion || theirs == nil { conflicts.append((object, theirs)) }
        }
        // The store saw a conflict this read does not (the row changed back between the two):
        // writing again is the resolution.
        if conflicts.isEmpty { return }
        let policy = mergePolicy
        if policy == .error {
            let list = conflicts.map { mergeConflict($0.object, theirs: $0.theirs, deletedHere: deletedHere.contains(ObjectIdentifier($0.object))) }
            let names = list.map { "\($0.objectID.entity.name) \($0.objectID.uriRepresentation().absoluteString)" }
            throw PersistenceError(.managedObjectMerge,
                                   "the save conflicts with changes saved elsewhere to \(list.count) object(s) (\(names.joined(separator: ", "))); nothing was saved",
                                   objectID: list.first?.objectID, underlying: cause.description, conflicts: list)
        }
        for (object, theirs) in conflicts {
            let key = ObjectIdentifier(object)
            if deletedHere.contains(key) {
                resolveDeleteConflict(object, theirs: theirs, policy: policy, plan: &plan)
            } else {
                resolveUpdateConflict(object, theirs: theirs, policy: policy, plan: &plan)
            }
        }
    }

    private func resolveDeleteConflict(_ object: ManagedObject, theirs: RowSnapshot?, policy: MergePolicy, plan: inout CommitPlan) {
        let key = ObjectIdentifier(object)
        guard let theirs else {
            plan.deleted.removeAll { ObjectIdentifier($0) == key }
            plan.alreadyDeleted.append(object)
            return
        }
        if policy == .rollback {
            plan.deleted.removeAll { ObjectIdentifier($0) == key }
            deletedList.remove(object)
            object._isDeleted = false
            object.changedSlots = []
            object.toMany = [:]
            object.replaceValues(theirs.values)
            object.committed = CommittedState(theirs)
        } else {
            object.committed = CommittedState(theirs)
        }
    }

    private func resolveUpdateConflict(_ object: ManagedObject, theirs: RowSnapshot?, policy: MergePolicy, plan: inout CommitPlan) {
        let key = ObjectIdentifier(object)
        guard let theirs else {
            switch policy {
            case .mergeByPropertyObjectTrump, .overwrite:
                plan.reinserted.insert(key)
                object.committed = CommittedState(version: 0, values: object.values)
            case .mergeByPropertyStoreTrump, .rollback, .error:
                plan.updated.removeAll { ObjectIdentifier($0) == key }
                plan.vanished.append(object)
            }
            return
        }
        let base = object.committed?.values ?? []
        let ours = object.values
        for slot in ours.indices where slot < theirs.values.count {
            let theyChanged = slot >= base.count || base[slot] != theirs.values[slot]
            let weChanged = object.changedSlots.contains(slot)
            switch policy {
            case .mergeByPropertyStoreTrump:
                if theyChanged { object.setSlotValue(theirs.values[slot], at: slot) } else if !weChanged { object.setSlotValue(theirs.values[slot], at: slot) }
            case .mergeByPropertyObjectTrump:
                if !weChanged { object.setSlotValue(theirs.values[slot], at: slot) }
            case .rollback:
                object.setSlotValue(theirs.values[slot], at: slot)
            case .overwrite, .error:
                break
            }
        }
        object.committed = CommittedState(theirs)
        object.changedSlots = SlotSet(object.values.indices.filter { $0 < theirs.values.count && object.values[$0] != theirs.values[$0] })
        if policy == .overwrite {
            // The whole object is written; history and merges see every property as changed.
            object.changedSlots = SlotSet(object.values.indices.filter { !object.entity.slots[$0].isTransient })
        }
        if policy == .rollback {
            object.changedSlots = []
            object.toMany = [:]
        }
        if !object.hasPersistentChangedValues && policy != .overwrite {
            plan.updated.removeAll { ObjectIdentifier($0) == key }
        }
    }

    /// The ``MergeConflict`` describing `object` against the store's row `theirs`.
    func mergeConflict(_ object: ManagedObject, theirs: RowSnapshot?, deletedHere: Bool) -> MergeConflict {
        let slots = object.entity.slots
        let base = object.committed?.values ?? []
        func snapshot(_ values: SlotValues) -> [String: StoreValue] {
            var result: [String: StoreValue] = [:]
            for (index, property) in slots.enumerated() where index < values.count && !property.isTransient {
                result[property.name] = values[index]
            }
            return result
        }
        var properties: [MergeConflict.Property] = []
        for (index, property) in slots.enumerated() where !property.isTransient && index < object.values.count {
            let original = index < base.count ? base[index] : .null
            let theirValue = theirs.map { index < $0.values.count ? $0.values[index] : .null } ?? .null
            let ours = object.values[index]
            let weChanged = !deletedHere && object.changedSlots.contains(index)
            let theyChanged = theirs != nil && theirValue != original
            guard weChanged || theyChanged, deletedHere || theirs == nil || ours != theirValue else { continue }
            properties.append(MergeConflict.Property(key: property.name, ours: ours, theirs: theirValue, original: original,
                                                     changedByUs: weChanged, changedByThem: theyChanged))
        }
        return MergeConflict(objectID: object.objectID, oldVersion: object.committedVersion, newVersion: theirs?.version ?? 0,
                             objectSnapshot: deletedHere ? nil : snapshot(object.values), cachedSnapshot: snapshot(base),
                             persistedSnapshot: theirs.map { snapshot($0.values) }, properties: properties)
    }

    /// Removes objects another save deleted (and whose deletion won) from the context.
    func forgetVanished(_ objects: [ManagedObject]) {
        guard !objects.isEmpty else { return }
        var changes = SavedChanges()
        changes.deleted = objects.map(\.objectID)
        mergeSavedChanges(changes)
    }

    // MARK: - Uniqueness constraints

    /// Under a policy other than ``MergePolicy/error``, turns each inserted object whose
    /// constrained values equal a stored object's into an update of that object (an upsert).
    func resolveConstraintClashesBeforeWriting(_ plan: inout CommitPlan) throws {
        guard mergePolicy != .error else { return }
        for object in plan.inserted where !object.entity.inheritedUniquenessConstraints.isEmpty {
            guard let stored = try storedClash(for: object) else { continue }
            try upsert(object, into: stored, plan: &plan)
        }
    }

    /// After a store found a constraint clash inside its write transaction (another
    /// connection inserted the same values since validation): under ``MergePolicy/error``
    /// validation runs again and throws; otherwise the clashes become upserts.
    func resolveConstraintConflictsAfterWriting(_ plan: inout CommitPlan, cause: PersistenceError) throws {
        if mergePolicy == .error {
            try validateUniqueness(of: plan.inserted + plan.updated)
            throw cause
        }
        let before = plan.inserted.count
        try resolveConstraintClashesBeforeWriting(&plan)
        if plan.inserted.count == before {
            // The clash is an updated object's new values: two stored objects cannot be merged.
            throw PersistenceError(.managedObjectConstraintValidation, cause.message, objectID: cause.objectID, key: cause.key,
                                   underlying: cause.description)
        }
    }

    /// The stored row that has `object`'s values for one of its uniqueness constraints, if any.
    private func storedClash(for object: ManagedObject) throws -> RowSnapshot? {
        let store = try rootStore(for: object.entity)
        for constraint in object.entity.inheritedUniquenessConstraints {
            let slots = constraint.compactMap { object.entity.slotIndex(of: $0) }
            guard slots.count == constraint.count else { continue }
            let key = slots.map { object.values[$0] }
            if key.contains(where: \.isNull) { continue }
            let predicate = CompoundPredicate.and(zip(constraint, key).map { FetchPredicate.equal($0, $1) })
            let request = StoreFetchRequest(entity: object.entity.rootEntity, predicate: predicate, fetchLimit: 2)
            if let clash = try store.fetch(request).first(where: { $0.objectID != object.objectID && registered[$0.objectID]?._isDeleted != true }) {
                return clash
            }
        }
        return nil
    }

    /// Makes the inserted `object` stand for the stored object `stored`, merging values by policy.
    private func upsert(_ object: ManagedObject, into stored: RowSnapshot, plan: inout CommitPlan) throws {
        guard stored.objectID.entity === object.entity else {
            throw PersistenceError(.managedObjectConstraintValidation,
                                   "\(object.entity.name) collides with a stored \(stored.objectID.entity.name) on a uniqueness constraint; objects of different entities cannot be merged",
                                   objectID: object.objectID)
        }
        if let existing = registered[stored.objectID], existing !== object {
            guard !existing.hasChanges else {
                throw PersistenceError(.managedObjectConstraintValidation,
                                       "\(object.entity.name) collides on a uniqueness constraint with \(stored.objectID), which this context also changed",
                                       objectID: object.objectID)
            }
            registered.removeValue(forKey: stored.objectID)
            existing.managedObjectContext = nil
        }
        let key = ObjectIdentifier(object)
        let ourSet = Set(object.values.indices.filter { !object.values[$0].isNull })
        remapIDs(of: [object], to: AssignedKeys(ids: [stored.objectID]))
        insertedInOrder.remove(object)
        plan.inserted.removeAll { ObjectIdentifier($0) == key }
        object._isInserted = false
        for slot in object.values.indices where slot < stored.values.count {
            switch mergePolicy {
            case .mergeByPropertyObjectTrump:
                if !ourSet.contains(slot) { object.setSlotValue(stored.values[slot], at: slot) }
            case .mergeByPropertyStoreTrump:
                if !stored.values[slot].isNull { object.setSlotValue(stored.values[slot], at: slot) }
            case .rollback:
                object.setSlotValue(stored.values[slot], at: slot)
            case .overwrite, .error:
                break
            }
        }
        object.committed = CommittedState(stored)
        object.changedSlots = SlotSet(object.values.indices.filter { $0 < stored.values.count && object.values[$0] != stored.values[$0] })
        if object.hasToManyStates { object.toMany.forEachState { $0.committed = nil } }
        if mergePolicy == .rollback { object.toMany = [:] }
        changedList.add(object)
        if object.hasPersistentChangedValues { plan.updated.append(object) }
    }
}
