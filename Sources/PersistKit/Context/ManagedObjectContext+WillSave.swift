import Foundation

extension ManagedObjectContext {
    /// The most rounds of `willSave()` calls one save makes before it gives up with
    /// ``PersistenceError/Code/willSaveDidNotSettle``. Core Data documents no bound (a
    /// `willSave()` that changes something on every call is called "until your program
    /// crashes"); see `docs/core-data-differences.md`.
    static let maxWillSaveRounds = 100

    /// An inserted object whose `willSave()` was called, with its values and to-many changes as
    /// they stood when the call began: a change to either since means the object changed since
    /// its last `willSave()` call. (An inserted object's slot writes are not reported to the
    /// context, see ``ManagedObject/setSlot(_:to:)``, so they are found by comparing.)
    struct WillSaveMark {
        /// The object.
        let object: ManagedObject
        /// Its values when its last `willSave()` call began.
        var values: [StoreValue]
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
    /// every inserted and updated object, then, until nothing changes, on every object that
    /// changed since its last call and on every object the calls inserted or changed. What the
    /// calls change is part of this save: after a round that changed anything, pending changes
    /// are processed (delete rules, ``didChangeObjectsNotification``) and `inserted`, `updated`,
    /// `deleted` and `insertedArePlain` are made again from the context's change sets.
    ///
    /// `ManagedObject`'s own `willSave()` does nothing: objects of that class are not called
    /// (only listed), so a save of such objects alone (``InsertedObjects/undeleted()`` found
    /// `insertedArePlain`, no updated object of a subclass) makes no pass here.
    ///
    /// Returns whether the calls changed anything. Throws
    /// ``PersistenceError/Code/willSaveDidNotSettle``, naming the objects still changing, when
    /// the objects still change after ``maxWillSaveRounds`` rounds; nothing is written then.
    func runWillSaveRounds(inserted: inout [ManagedObject], insertedArePlain: inout Bool, updated: inout [ManagedObject],
                           deleted: inout [ManagedObject], posts: Bool) throws -> Bool {
        // The first round's objects; nothing to do when every one is plain.
        var due: [ManagedObject] = []
        if !insertedArePlain { due = inserted }
        for object in updated where Self.hasSaveHooks(object) { due.append(object) }
        if due.isEmpty { return false }
        // Inserted objects' marks, and, for each other object called, how many changes had
        // been noted (``willSaveChanges``) when its last call began.
        var marks: [WillSaveMark] = []
        var markIndex: [ObjectIdentifier: Int] = [:]
        var callStart: [ObjectIdentifier: Int] = [:]
        var noted: [ManagedObject] = []
        willSaveChanges = []
        defer { willSaveChanges = nil }
        var seenInserted = insertedInOrder.count
        var seenDeleted = deletedByID.count
        var checked = 0
        var changedAny = false
        var round = 0
        while !due.isEmpty {
            round += 1
            if round > Self.maxWillSaveRounds { throw Self.willSaveDidNotSettle(due) }
            if round == 2 {
                // The first round's marks were made in order, without a lookup; the later
                // rounds find them by object.
                markIndex.reserveCapacity(marks.count)
                for index in marks.indices { markIndex[ObjectIdentifier(marks[index].object)] = index }
            }
            for object in due {
                // An object deleted by an earlier call is not saved.
                if object._isDeleted { continue }
                if object._isInserted {
                    if !Self.hasSaveHooks(object) { continue }
                    // In the first round each inserted object comes once, in order.
                    if round > 1, let index = markIndex[ObjectIdentifier(object)] {
                        marks[index] = WillSaveMark(object)
                    } else {
                        if round > 1 { markIndex[ObjectIdentifier(object)] = marks.count }
                        marks.append(WillSaveMark(object))
                    }
                } else {
                    callStart[ObjectIdentifier(object)] = noted.count + (willSaveChanges?.count ?? 0)
                }
                object.willSave()
            }
            noted += willSaveChanges ?? []
            willSaveChanges = []
            if !pendingDeletePropagation.isEmpty { propagateDeletes() }
            due = []
            var dueKeys = Set<ObjectIdentifier>()
            func makeDue(_ object: ManagedObject) {
                guard !object._isDeleted, Self.hasSaveHooks(object), dueKeys.insert(ObjectIdentifier(object)).inserted else { return }
                due.append(object)
            }
            // Inserted objects changed since their last call (by it or by another's).
            for mark in marks where !mark.object._isDeleted && mark.object._isInserted && mark.objectChanged { makeDue(mark.object) }
            // Other objects changed since their last call began, or never called.
            var changedOthers = false
            while checked < noted.count {
                let object = noted[checked]
                if callStart[ObjectIdentifier(object)].map({ checked >= $0 }) ?? true { makeDue(object) }
                changedOthers = true
                checked += 1
            }
            // Objects the calls inserted.
            let newInserts = insertedInOrder.count != seenInserted
            if newInserts {
                for object in insertedInOrder.objects[seenInserted...] { makeDue(object) }
                seenInserted = insertedInOrder.count
            }
            let newDeletes = deletedByID.count != seenDeleted
            seenDeleted = deletedByID.count
            guard !due.isEmpty || changedOthers || newInserts || newDeletes else { break }
            changedAny = true
            _ = processPendingChangesReturningInserted(posts: posts)
            seenDeleted = deletedByID.count
        }
        guard changedAny else { return false }
        (inserted, insertedArePlain) = insertedInOrder.undeleted()
        deleted = deletedByID.isEmpty ? [] : deletedByID.values.filter { !$0._isInserted }
        updated = changedByID.isEmpty ? [] : changedByID.values.filter { !$0._isDeleted && $0.hasPersistentChangedValues }
        return true
    }

    /// Whether `object` may override `willSave()` and `didSave()`: it is of a subclass of
    /// ``ManagedObject``, whose own hooks do nothing.
    @inline(__always) static func hasSaveHooks(_ object: ManagedObject) -> Bool {
        type(of: object) != ManagedObject.self
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
