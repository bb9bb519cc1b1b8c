import Foundation

extension ManagedObjectContext {
    /// The most rounds of `willSave()` calls one save makes before it gives up with
    /// ``PersistenceError/Code/willSaveDidNotSettle``. Core Data documents no bound (a
    /// `willSave()` that changes something on every call is called again and again, without
    /// end); see `docs/core-data-differences.md`.
    static let maxWillSaveRounds = 100

    /// An inserted object whose `willSave()` was called, with its values and to-many changes as
    /// they stood when the call began: a change to either since means the object changed since
    /// its last `willSave()` call. (An inserted object's slot writes are not reported to the
    /// context, see ``ManagedObject/setSlot(_:to:)``, so they are found by comparing.)
    struct WillSaveMark {
        /// The object.
        let object: ManagedObject
        /// Its values when its last `willSave()` call began.
        var values: SlotValues
        /// Its to-many changes when that call began (empty when it had no to-many state).
        var toMany: [String: ToManyMark]

        /// The mark of `object` now, before a `willSave()` call.
        init(_ object: ManagedObject) {
            self.object = object
            values = object.values
            toMany = ToManyMark.of(object)
        }

        /// Whether the object changed since the mark was made.
        var objectChanged: Bool { object.values != values || ToManyMark.of(object) != toMany }
    }

    /// The unsaved changes of one to-many relationship of an object, as compared between
    /// `willSave()` rounds.
    struct ToManyMark: Equatable {
        /// Members added since the last save.
        let added: [ManagedObjectID]
        /// Members removed since the last save.
        let removed: Set<ManagedObjectID>
        /// The order set by the program, if any.
        let order: [ManagedObjectID]?

        /// The marks of `object`'s to-many states, by relationship name.
        static func of(_ object: ManagedObject) -> [String: ToManyMark] {
            let states = object.toMany
            if states.isEmpty { return [:] }
            return states.mapValues { ToManyMark(added: $0.added, removed: $0.removed, order: $0.order) }
        }
    }

    /// Calls `willSave()` on the objects of a save, in rounds, as Core Data does: first on
    /// every inserted, updated and deleted object, then, until nothing changes, on every object
    /// that changed since its last call and on every object the calls inserted, changed or
    /// deleted. What the calls change is part of this save: after a round that changed
    /// anything, pending changes are processed (delete rules, ``didChangeObjectsNotification``)
    /// and `inserted`, `updated`, `deleted` and `insertedArePlain` are made again from the
    /// context's change sets (``objectsToSave(toParent:)``).
    ///
    /// A deleted object (one the save removes from its store, `isDeleted` true during the
    /// call) is called once per save, whether it was deleted before the save, by a delete rule
    /// or by another object's `willSave()`; an updated object deleted after its call is called
    /// again, as a deleted one. What its call changes in other objects is part of the save as
    /// for any call. Its own values are not written (the object is removed), and changing them
    /// does not call it again. An object inserted and deleted before the save is not saved and
    /// not called.
    ///
    /// `ManagedObject`'s own `willSave()` does nothing: objects of that class, and of classes
    /// whose ``ManagedObject/usesSaveHooks`` is `false`, are not called (only listed), so a save
    /// of such objects alone (``InsertedObjects/undeleted()`` found `insertedArePlain`, no
    /// updated or deleted object uses hooks) makes no pass here.
    ///
    /// Returns whether the calls changed anything. Throws
    /// ``PersistenceError/Code/willSaveDidNotSettle``, naming the objects still changing, when
    /// the objects still change after ``maxWillSaveRounds`` rounds; nothing is written then.
    func runWillSaveRounds(inserted: inout [ManagedObject], insertedArePlain: inout Bool, updated: inout [ManagedObject],
                           deleted: inout [ManagedObject], posts: Bool, toParent: Bool) throws -> Bool {
        // The first round's objects, each with the index of its mark (below) or -1 for none
        // yet; nothing to do when every one is plain.
        var due: [(object: ManagedObject, mark: Int)] = []
        if !insertedArePlain {
            due.reserveCapacity(inserted.count)
            for object in inserted where Self.hasSaveHooks(object) { due.append((object, -1)) }
        }
        for object in updated where Self.hasSaveHooks(object) { due.append((object, -1)) }
        for object in deleted where Self.hasSaveHooks(object) { due.append((object, -1)) }
        if due.isEmpty { return false }
        // Each inserted object's mark; for each other object called, how many changes had been
        // noted (``willSaveChanges``) when its last call began.
        var marks: [WillSaveMark] = []
        var callStart: [ObjectIdentifier: Int] = [:]
        var noted: [ManagedObject] = []
        // The deleted objects called already (each is called once per save).
        var calledDeleted = Set<ObjectIdentifier>()
        willSaveChanges = []
        defer { willSaveChanges = nil }
        var seenInserted = insertedInOrder.count
        var seenDeleted = deletedList.count
        var changedAny = false
        var round = 0
        while !due.isEmpty {
            round += 1
            if round > Self.maxWillSaveRounds { throw Self.willSaveDidNotSettle(due.map(\.object)) }
            for (object, mark) in due {
                if object._isDeleted {
                    // An inserted object deleted (by an earlier call, say) is not saved; a
                    // stored one is called once as deleted.
                    guard !object._isInserted, calledDeleted.insert(ObjectIdentifier(object)).inserted else { continue }
                } else if object._isInserted {
                    if mark >= 0 { marks[mark] = WillSaveMark(object) } else { marks.append(WillSaveMark(object)) }
                } else {
                    callStart[ObjectIdentifier(object)] = noted.count + (willSaveChanges?.count ?? 0)
                }
                object.willSave()
            }
            // Delete rules first: what they change counts as changed by the round.
            if !pendingDeletePropagation.isEmpty { propagateDeletes() }
            let checked = noted.count
            noted += willSaveChanges ?? []
            willSaveChanges = []
            due = []
            // Inserted objects changed since their last call began (by it or by another's).
            for index in marks.indices {
                let mark = marks[index]
                if !mark.object._isDeleted && mark.objectChanged { due.append((mark.object, index)) }
            }
            // Other objects changed since their last call began, or never called; each once.
            var dueOthers = Set<ObjectIdentifier>()
            for position in checked..<noted.count {
                let object = noted[position]
                let key = ObjectIdentifier(object)
                guard !object._isDeleted, Self.hasSaveHooks(object), callStart[key].map({ position >= $0 }) ?? true,
                      dueOthers.insert(key).inserted else { continue }
                due.append((object, -1))
            }
            // Objects the calls inserted.
            let newInserts = insertedInOrder.count != seenInserted
            if newInserts {
                for object in insertedInOrder.objects[seenInserted...] where !object._isDeleted && Self.hasSaveHooks(object) {
                    due.append((object, -1))
                }
                seenInserted = insertedInOrder.count
            }
            // Stored objects the calls or their delete rules deleted, not called as deleted yet.
            let newDeletes = deletedList.count != seenDeleted
            if newDeletes {
                for object in deletedList.objects
                where !object._isInserted && Self.hasSaveHooks(object) && !calledDeleted.contains(ObjectIdentifier(object)) {
                    due.append((object, -1))
                }
            }
            guard !due.isEmpty || noted.count != checked || newInserts || newDeletes else { break }
            changedAny = true
            // The round's changes processed (and posted) before the next round.
            _ = processPendingChangesReturningSets(posts: posts)
            seenDeleted = deletedList.count
        }
        guard changedAny else { return false }
        (inserted, insertedArePlain, updated, deleted) = objectsToSave(toParent: toParent)
        return true
    }

    /// Whether a save calls `willSave()` and `didSave()` on `object`: it is of a subclass of
    /// ``ManagedObject`` (whose own hooks do nothing) whose ``ManagedObject/usesSaveHooks`` is
    /// `true`. A plain object is told apart without a call.
    @inline(__always) static func hasSaveHooks(_ object: ManagedObject) -> Bool {
        let type = type(of: object)
        return type != ManagedObject.self && type.usesSaveHooks
    }

    /// The error of a save whose `willSave()` calls still changed `objects` after
    /// ``maxWillSaveRounds`` rounds.
    static func willSaveDidNotSettle(_ objects: [ManagedObject]) -> PersistenceError {
        let details = objects.map { object in
            PersistenceError(.willSaveDidNotSettle, "\(object.entity.name) still changed after its willSave()",
                             objectID: object.objectID)
        }
        return PersistenceError(.willSaveDidNotSettle,
                                "willSave() still changed \(objects.count) object(s) after \(maxWillSaveRounds) rounds; nothing was saved",
                                objectID: objects.first?.objectID, detailedErrors: details)
    }
}
