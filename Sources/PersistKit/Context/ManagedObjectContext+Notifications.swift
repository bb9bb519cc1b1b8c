import Foundation

extension ManagedObjectContext {
    /// Posted when objects in the context change, with the sets of inserted, updated and
    /// deleted objects under ``insertedObjectsKey``, ``updatedObjectsKey`` and ``deletedObjectsKey``
    /// (Core Data's `NSManagedObjectContextObjectsDidChange`). The object is the context.
    public static let didChangeObjectsNotification = Notification.Name("NSObjectsChangedInManagingContextNotification")
    /// Posted before the context saves (Core Data's `NSManagedObjectContextWillSave`), with no
    /// `userInfo`.
    public static let willSaveObjectsNotification = Notification.Name("NSManagingContextWillSaveChangesNotification")
    /// Posted after the context saved, with the sets of objects (Core Data's `NSManagedObjectContextDidSave`).
    public static let didSaveObjectsNotification = Notification.Name("NSManagingContextDidSaveChangesNotification")
    /// Posted after the context saved, with object IDs under ``insertedObjectIDsKey`` and
    /// the others (Core Data's `NSManagedObjectContextDidSaveObjectIDs`); safe to use on any thread.
    public static let didSaveObjectIDsNotification = Notification.Name("NSManagedObjectContextDidSaveObjectIDsNotification")

    /// The inserted objects, a `Set<ManagedObject>` (`NSInsertedObjectsKey`).
    public static let insertedObjectsKey = "inserted"
    /// The updated objects, a `Set<ManagedObject>` (`NSUpdatedObjectsKey`).
    public static let updatedObjectsKey = "updated"
    /// The deleted objects, a `Set<ManagedObject>` (`NSDeletedObjectsKey`).
    public static let deletedObjectsKey = "deleted"
    /// The refreshed objects, a `Set<ManagedObject>` (`NSRefreshedObjectsKey`).
    public static let refreshedObjectsKey = "refreshed"
    /// The inserted object IDs, a `Set<ManagedObjectID>` (`NSInsertedObjectIDsKey`).
    public static let insertedObjectIDsKey = "inserted_objectIDs"
    /// The updated object IDs, a `Set<ManagedObjectID>` (`NSUpdatedObjectIDsKey`).
    public static let updatedObjectIDsKey = "updated_objectIDs"
    /// The deleted object IDs, a `Set<ManagedObjectID>` (`NSDeletedObjectIDsKey`).
    public static let deletedObjectIDsKey = "deleted_objectIDs"
    /// The whole ``SavedChanges`` of a save, for ``mergeChanges(fromContextDidSave:)``.
    public static let savedChangesKey = "PersistKitSavedChanges"

    // The `userInfo` layouts of the notifications posted at every save, each key holding an
    // empty set (or empty saved changes) unless a post fills it. `nonisolated(unsafe)`:
    // immutable once built (a `let`), and each post works on its own copy (its thread's).
    nonisolated(unsafe) static let objectsUserInfo = NotificationUserInfoTemplate(
        keys: [insertedObjectsKey, updatedObjectsKey, deletedObjectsKey],
        emptyValues: [Set<ManagedObject>(), Set<ManagedObject>(), Set<ManagedObject>()])
    nonisolated(unsafe) static let savedObjectsUserInfo = NotificationUserInfoTemplate(
        keys: [insertedObjectsKey, updatedObjectsKey, deletedObjectsKey, savedChangesKey],
        emptyValues: [Set<ManagedObject>(), Set<ManagedObject>(), Set<ManagedObject>(), SavedChanges()])
    nonisolated(unsafe) static let savedObjectIDsUserInfo = NotificationUserInfoTemplate(
        keys: [insertedObjectIDsKey, updatedObjectIDsKey, deletedObjectIDsKey, savedChangesKey],
        emptyValues: [Set<ManagedObjectID>(), Set<ManagedObjectID>(), Set<ManagedObjectID>(), SavedChanges()])
    /// The objects-did-change notification of a merge of another context's save.
    nonisolated(unsafe) static let mergedObjectsUserInfo = NotificationUserInfoTemplate(
        keys: [refreshedObjectsKey, deletedObjectsKey, insertedObjectsKey, updatedObjectsKey],
        emptyValues: [Set<ManagedObject>(), Set<ManagedObject>(), Set<ManagedObject>(), Set<ManagedObject>()])

    /// Whether the context posts its notifications: ``didChangeObjectsNotification``,
    /// ``willSaveObjectsNotification``, ``didSaveObjectsNotification`` and
    /// ``didSaveObjectIDsNotification`` (a PersistKit addition; `true`, Core Data's behaviour,
    /// unless set).
    ///
    /// A context nothing outside observes (a server's per-connection context, say) may turn
    /// them off: its saves then build no notification sets and post nothing, which saves about
    /// a quarter of the work of saving one object. Everything else works as before: a save
    /// is still merged into the contexts that merge changes automatically, children still
    /// get their parent's changes, and the store still records persistent history; only
    /// observers of these notifications, whether registered for this context or for any
    /// object, no longer hear from it. See `docs/core-data-differences.md`.
    public var postsNotifications: Bool {
        get { settings.withLock { $0.postsNotifications } }
        set { settings.withLock { $0.postsNotifications = newValue } }
    }

    /// Posts `name` with `userInfo`, built with `AnyHashable` keys as `Notification` keys them
    /// (a `[String: Any]` would be converted, key by key, at every post).
    func post(_ name: Notification.Name, userInfo: [AnyHashable: Any]?) {
        NotificationCenter.default.post(name: name, object: notificationSender, userInfo: userInfo)
    }

    /// The context as the object of its notifications: the same object, held as an `NSObject`.
    ///
    /// `NotificationCenter` finds the identity of every post's object (`object as AnyObject`,
    /// observed or not). For an `Any` that holds a value of its own class's type, that takes
    /// dynamic casts costing about 3,000 instructions per post; for one that holds an
    /// `NSObject` whose class is a subclass, the runtime returns the object at once. Observers
    /// see no difference: `note.object` is this context, `as? ManagedObjectContext` works, and
    /// observers registered for this context hear it.
    @inline(__always) var notificationSender: Any { self as NSObject }

    /// Applies pending delete rules and posts ``didChangeObjectsNotification`` for the changes
    /// made since the last call (Core Data's `processPendingChanges()`).
    public func processPendingChanges() {
        onQueue { _ = processPendingChangesReturningSets(posts: postsNotifications) }
    }

    /// The sets of objects an objects-did-change notification posted: inserted, updated and
    /// deleted (empty when it posted nothing).
    struct PostedChangeSets {
        var inserted: Set<ManagedObject> = []
        var updated: Set<ManagedObject> = []
        var deleted: Set<ManagedObject> = []
    }

    /// ``processPendingChanges()`` on the context's queue, returning the sets it posted, so a
    /// save can post the same sets again when it saves exactly those objects. `posts` gives
    /// ``postsNotifications``, asked only when there are changes to post (a save passes the
    /// value it read with its other settings, under one lock).
    func processPendingChangesReturningSets(posts: @autoclosure () -> Bool) -> PostedChangeSets {
        if !pendingDeletePropagation.isEmpty { propagateDeletes() }
        if insertedInOrder.isProcessed && changedList.isProcessed && deletedList.isProcessed { return PostedChangeSets() }
        guard posts() else {
            // Nothing to post: the pending changes are only marked processed, no set is built.
            markPendingChangesProcessed()
            return PostedChangeSets()
        }
        // The sets are built straight from the pending lists (no filtered copies first).
        // Not `Set(minimumCapacity:)`: see `Set(roomFor:)`.
        var inserted = Set<ManagedObject>(roomFor: insertedInOrder.unprocessedCount)
        insertedInOrder.forEachUnprocessed { object in
            if !object._isDeleted { inserted.add(object) }
        }
        // An empty list makes an empty set without allocating one.
        var updated = Set<ManagedObject>(roomFor: changedList.unprocessedCount)
        changedList.forEachUnprocessed { object in
            if !object._isDeleted { updated.add(object) }
        }
        var deleted = Set<ManagedObject>(roomFor: deletedList.unprocessedCount)
        deletedList.forEachUnprocessed { deleted.add($0) }
        markPendingChangesProcessed()
        if inserted.isEmpty && updated.isEmpty && deleted.isEmpty { return PostedChangeSets() }
        Self.objectsUserInfo.post(Self.didChangeObjectsNotification, object: self, inserted, updated, deleted)
        return PostedChangeSets(inserted: inserted, updated: updated, deleted: deleted)
    }

    /// Marks the inserted, changed and deleted objects processed: the next call of
    /// ``processPendingChanges()`` reports only what changes after this.
    private func markPendingChangesProcessed() {
        insertedInOrder.markProcessed()
        changedList.markProcessed()
        deletedList.markProcessed()
    }

    /// Runs the delete rules of every object deleted since the last call: nullify removes it
    /// from its destinations' inverse relationships, cascade deletes the destinations.
    ///
    /// The pending list is taken whole and walked in order; the objects a cascade deletes go
    /// to a new list, walked next, so the order is first in, first out, as a queue's. (Taking
    /// one object at a time off the front of the list moved every later one: a save of n
    /// deleted objects cost n²/2 moves.)
    func propagateDeletes() {
        while !pendingDeletePropagation.isEmpty {
            let round = pendingDeletePropagation
            pendingDeletePropagation = []
            // Borrowed: `round` holds every object for the whole loop.
            for position in round.indices { round.withBorrowedElement(at: position) { propagateDelete(of: $0) } }
        }
    }

    /// The delete rules of the relationships of one deleted object; objects it cascades to are
    /// marked deleted and added to ``pendingDeletePropagation``.
    private func propagateDelete(of object: ManagedObject) {
        // An entity without relationships has no rule to run (no cast of each property).
        if object.entity.relationshipsByName.isEmpty { return }
        for case let relationship as RelationshipDescription in object.entity.allProperties {
            let destinations: [ManagedObjectID] = relationship.isToMany
                ? object.toManyMembers(relationship)
                : object.toOneID(relationship).map { [$0] } ?? []
            for id in destinations {
                let destination = self.object(with: id)
                switch relationship.deleteRule {
                case .cascade:
                    if !destination._isDeleted {
                        destination.willAccessValue()
                        markDeleted(destination)
                        pendingDeletePropagation.append(destination)
                    }
                    nullifyInverse(of: relationship, on: destination, pointingAt: object)
                case .nullify:
                    nullifyInverse(of: relationship, on: destination, pointingAt: object)
                case .deny, .noAction:
                    break
                }
            }
        }
    }

    private func nullifyInverse(of relationship: RelationshipDescription, on destination: ManagedObject, pointingAt object: ManagedObject) {
        guard let inverse = relationship.inverseRelationship, !destination._isDeleted else { return }
        if inverse.isToMany {
            // The destination was reached through the deleted object's own relationship, so the
            // inverse holds the object (inverse maintenance keeps both sides together): its
            // removal is recorded without listing the destination's members, or loading them
            // when they are not loaded. Listing them for each deleted object made deleting n
            // members of one object cost n² (10,000 children of one parent: 2.7 s a save).
            destination.primitiveRemove(inverse, object.objectID)
        } else if destination.toOneID(inverse) == object.objectID {
            destination.primitiveSetToOne(inverse, nil)
        }
    }
}
