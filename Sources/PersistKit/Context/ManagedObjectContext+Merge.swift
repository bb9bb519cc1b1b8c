import Foundation

extension ManagedObjectContext {
    /// Merges the changes a save of another context made, as posted in its
    /// ``didSaveObjectsNotification`` or ``didSaveObjectIDsNotification``
    /// (Core Data's `mergeChanges(fromContextDidSave:)`).
    ///
    /// Objects deleted there are removed here; objects updated there take the saved values for
    /// every property this context has not changed itself; to-many relationships changed there
    /// are reloaded on next access.
    public func mergeChanges(fromContextDidSave notification: Notification) {
        guard let changes = notification.userInfo?[Self.savedChangesKey] as? SavedChanges else { return }
        mergeSavedChanges(changes)
    }

    /// Merges changes saved elsewhere — by another process, or by a batch request — given as
    /// object IDs, into each of `contexts` (Core Data's `mergeChanges(fromRemoteContextSave:into:)`).
    /// Updated objects are refreshed from their stores.
    public static func mergeChanges(fromRemoteContextSave changes: [String: [ManagedObjectID]],
                                    into contexts: [ManagedObjectContext]) {
        for context in contexts {
            context.onQueue {
                var saved = SavedChanges()
                saved.inserted = changes[insertedObjectIDsKey] ?? changes[insertedObjectsKey] ?? []
                saved.deleted = changes[deletedObjectIDsKey] ?? changes[deletedObjectsKey] ?? []
                let updatedIDs = changes[updatedObjectIDsKey] ?? changes[updatedObjectsKey] ?? []
                saved.updated = (try? context.loadRows(for: updatedIDs)) ?? []
                for id in updatedIDs {
                    saved.toManyChanged[id] = Set(id.entity.relationshipsByName.values.filter(\.isToMany).map(\.name))
                }
                context.mergeSavedChanges(saved)
            }
        }
    }

    /// Applies `changes` saved by another context (on this context's queue).
    func mergeSavedChanges(_ changes: SavedChanges) {
        onQueue {
            var refreshed: Set<ManagedObject> = []
            var deleted: Set<ManagedObject> = []
            for id in changes.deleted {
                guard let object = registered.removeValue(forKey: id) else { continue }
                changedList.remove(object)
                deletedList.remove(object)
                object._isDeleted = true
                object.managedObjectContext = nil
                deleted.insert(object)
            }
            // Other objects may still point at the deleted ones: drop those references.
            let deletedIDs = Set(changes.deleted)
            if !deletedIDs.isEmpty {
                // In place: the body changes objects, not the registry.
                registered.forEachObject { object in
                    guard !object._isFault else { return }
                    for index in object.values.indices {
                        if case .object(let id) = object.values[index], deletedIDs.contains(id) {
                            object.setSlotValue(.null, at: index)
                            if object.committed.map({ index < $0.values.count }) ?? false { object.committed?.values[index] = .null }
                        }
                    }
                    if object.hasToManyStates {
                        object.toMany.forEachState { state in
                            state.committed?.removeAll { deletedIDs.contains($0) }
                            state.added.removeAll { deletedIDs.contains($0) }
                        }
                    }
                }
            }
            for row in changes.updated {
                guard let object = registered[row.objectID] else { continue }
                if object._isFault {
                    object.pendingRow = parent == nil ? CommittedState(row) : nil
                } else {
                    for index in row.values.indices where index < object.values.count && !object.changedSlots.contains(index) {
                        object.setSlotValue(row.values[index], at: index)
                    }
                    object.committed = CommittedState(row)
                }
                refreshed.insert(object)
            }
            for (id, names) in changes.toManyChanged {
                guard let object = registered[id] else { continue }
                for name in names { object.toMany[name]?.committed = nil }
                refreshed.insert(object)
            }
            if refreshed.isEmpty && deleted.isEmpty && changes.inserted.isEmpty { return }
            guard postsNotifications else { return }
            Self.mergedObjectsUserInfo.post(Self.didChangeObjectsNotification, object: self,
                                            refreshed, deleted, Set<ManagedObject>(), Set<ManagedObject>())
        }
    }

    /// Discards every unsaved change: inserted objects leave the context, deleted ones come
    /// back, changed ones return to their last saved values (Core Data's `rollback()`).
    public func rollback() {
        onQueue {
            for object in insertedInOrder.objects {
                registered.removeValue(forKey: object.objectID)
                object.managedObjectContext = nil
                object._isInserted = false
            }
            for object in changedList.objects + deletedList.objects where !object._isInserted {
                object._isDeleted = false
                object.revertToCommitted()
            }
            forgetChanges()
        }
    }

    /// Forgets every object: all registered objects leave the context, unsaved changes are
    /// dropped (Core Data's `reset()`).
    public func reset() {
        onQueue {
            // The registry keeps its table for the objects the context will register next (a
            // context reset between rounds of work registers as many again), up to a bound so
            // one huge fetch does not pin a huge table.
            emptyRegistry(keepingCapacity: registered.count <= Self.registryCapacityKeptByReset) { object in
                object.managedObjectContext = nil
                // A fault that left the context has no values (it fills itself from a row at hand).
                object.pendingRow = nil
                // Prefetched members held as objects are let go of (they may hold each other).
                if object.hasToManyStates { object.forgetMemberObjects(keepingIDs: false) }
            }
            forgetChanges()
        }
    }

    /// The most registered objects whose table ``reset()`` keeps (a table of at most 4 MiB).
    static var registryCapacityKeptByReset: Int { 1 << 17 }

    /// Reloads `object` from its parent or store. With `mergeChanges`, its unsaved changes are
    /// kept on top of the fresh values; without, they are dropped and the object becomes a
    /// fault (Core Data's `refresh(_:mergeChanges:)`).
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        onQueue {
            guard object.managedObjectContext === self, !object._isInserted else { return }
            if !mergeChanges || !object.hasChanges {
                changedList.remove(object)
                object.changedSlots = []
                object.toMany = [:]
                object.replaceValues(SlotValues())
                object.committed = nil
                object.pendingRow = nil
                object._isFault = true
                object.didTurnIntoFault()
                return
            }
            guard let row = try? loadRows(for: [object.objectID]).first else { return }
            for index in row.values.indices where index < object.values.count && !object.changedSlots.contains(index) {
                object.setSlotValue(row.values[index], at: index)
            }
            object.committed = CommittedState(row)
            if object.hasToManyStates { object.toMany.forEachState { $0.committed = nil } }
        }
    }

    /// Refreshes every registered object without unsaved changes (Core Data's `refreshAllObjects()`).
    public func refreshAllObjects() {
        onQueue {
            for object in Array(registered.values) where !object.hasChanges {
                refresh(object, mergeChanges: false)
            }
        }
    }
}

extension ManagedObjectContext {
    /// Empties every change set, as after a rollback or a reset.
    func forgetChanges() {
        insertedInOrder = InsertedObjects()
        deletedList = ListedObjects(.deleted)
        changedList = ListedObjects(.changed)
        pendingDeletePropagation = []
    }
}

extension ManagedObject {
    /// Returns the object to its last saved state, dropping its unsaved changes.
    func revertToCommitted() {
        changedSlots = []
        toMany = [:]
        if hasCommittedState {
            shareCommittedValues()
        } else {
            replaceValues(SlotValues())
            _isFault = true
        }
    }
}
