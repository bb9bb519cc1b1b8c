import Foundation

extension ManagedObject {
    /// Adds `object` to the to-many relationship `key`, keeping the inverse in step
    /// (the generated `addToBeers(_:)` of Core Data).
    public func addObject(_ object: ManagedObject, forKey key: String) {
        let relationship = toManyRelationship(key)
        do {
            try checkDestination(object, for: relationship)
        } catch {
            preconditionFailure("ManagedObject: \(error)")
        }
        addToMany(relationship, object)
    }

    /// Removes `object` from the to-many relationship `key`, keeping the inverse in step
    /// (the generated `removeFromBeers(_:)` of Core Data).
    public func removeObject(_ object: ManagedObject, forKey key: String) {
        removeFromMany(toManyRelationship(key), object)
    }

    /// Inserts `object` at `index` of the ordered to-many relationship `key`
    /// (the generated `insertIntoBeers(_:at:)` of Core Data).
    public func insertObject(_ object: ManagedObject, at index: Int, forKey key: String) {
        let relationship = toManyRelationship(key)
        precondition(relationship.isOrdered, "ManagedObject: \(entity.name).\(key) is not an ordered relationship")
        var members = toManyMembers(relationship).filter { $0 != object.objectID }
        addToMany(relationship, object)
        members.insert(object.objectID, at: min(max(index, 0), members.count))
        setOrder(relationship, members)
    }

    // MARK: - Internals

    func toManyRelationship(_ key: String) -> RelationshipDescription {
        guard let relationship = entity.relationshipsByName[key], relationship.isToMany else {
            preconditionFailure("ManagedObject: entity \(entity.name) has no to-many relationship \"\(key)\"")
        }
        return relationship
    }

    /// The current members of a to-many relationship, loading the committed ones if needed.
    func toManyMembers(_ relationship: RelationshipDescription) -> [ManagedObjectID] {
        var state = toMany[relationship.name] ?? ToManyState()
        if !state.isLoaded, state.order == nil {
            if _isInserted {
                state.committed = []
            } else {
                state.committed = managedObjectContext?.loadDestinations(of: objectID, relationship: relationship) ?? []
            }
            toMany[relationship.name] = state
        }
        return state.members(committed: state.committed ?? [])
    }

    /// Lets go of the member objects every to-many relationship recorded with a prefetch
    /// (``ToManyState/forgetMemberObjects(keepingIDs:)``).
    func forgetMemberObjects(keepingIDs: Bool) {
        // Each state changed in place: no array of the names and no look-up of each name again
        // (a context letting go of prefetched sources does this once per source).
        toMany.forEachState { $0.forgetMemberObjects(keepingIDs: keepingIDs) }
    }

    /// The destination ID of a to-one relationship.
    func toOneID(_ relationship: RelationshipDescription) -> ManagedObjectID? {
        willAccessValue()
        guard let slot = entity.slotIndex(of: relationship.name), case .object(let id) = values[slot] else { return nil }
        return id
    }

    func checkDestination(_ object: ManagedObject, for relationship: RelationshipDescription) throws {
        if let destination = relationship.destinationEntity, !object.entity.isKind(of: destination) {
            throw PersistenceError(.validationInvalidType,
                                   "\(entity.name).\(relationship.name) takes \(destination.name) objects, not \(object.entity.name)",
                                   objectID: objectID, key: relationship.name)
        }
        if let mine = managedObjectContext, let theirs = object.managedObjectContext, mine !== theirs {
            throw PersistenceError(.managedObjectExternalRelationship,
                                   "\(entity.name).\(relationship.name) cannot refer to an object in another context",
                                   objectID: objectID, key: relationship.name)
        }
    }

    func setRelationship(_ relationship: RelationshipDescription, to value: Any?) throws {
        if !relationship.isToMany {
            let destination: ManagedObject?
            switch value {
            case nil, is NSNull: destination = nil
            case let object as ManagedObject: destination = object
            default:
                throw PersistenceError(.validationInvalidType,
                                       "\(entity.name).\(relationship.name) takes a ManagedObject, not \(value.map { "\(type(of: $0))" } ?? "nil")",
                                       objectID: objectID, key: relationship.name)
            }
            if let destination { try checkDestination(destination, for: relationship) }
            setToOne(relationship, destination)
            return
        }
        let objects: [ManagedObject]
        switch value {
        case nil, is NSNull: objects = []
        case let set as Set<ManagedObject>: objects = Array(set)
        case let array as [ManagedObject]: objects = array
        default:
            throw PersistenceError(.validationInvalidType,
                                   "\(entity.name).\(relationship.name) takes a Set or Array of ManagedObject, not \(value.map { "\(type(of: $0))" } ?? "nil")",
                                   objectID: objectID, key: relationship.name)
        }
        for object in objects { try checkDestination(object, for: relationship) }
        let newIDs = Set(objects.map(\.objectID))
        for id in toManyMembers(relationship) where !newIDs.contains(id) {
            if let old = managedObjectContext?.object(with: id) { removeFromMany(relationship, old) }
        }
        for object in objects { addToMany(relationship, object) }
        if relationship.isOrdered { setOrder(relationship, objects.map(\.objectID)) }
    }

    func setToOne(_ relationship: RelationshipDescription, _ newDestination: ManagedObject?) {
        let oldID = toOneID(relationship)
        if oldID == newDestination?.objectID { return }
        primitiveSetToOne(relationship, newDestination?.objectID)
        guard let inverse = relationship.inverseRelationship else { return }
        if let oldID, let old = managedObjectContext?.object(with: oldID) {
            if inverse.isToMany {
                old.primitiveRemove(inverse, objectID)
            } else if old.toOneID(inverse) == objectID {
                old.primitiveSetToOne(inverse, nil)
            }
        }
        guard let newDestination else { return }
        if inverse.isToMany {
            newDestination.primitiveAdd(inverse, objectID)
        } else {
            if let stolenID = newDestination.toOneID(inverse), stolenID != objectID,
               let stolen = managedObjectContext?.object(with: stolenID) {
                stolen.primitiveSetToOne(relationship, nil)
            }
            newDestination.primitiveSetToOne(inverse, objectID)
        }
    }

    func addToMany(_ relationship: RelationshipDescription, _ object: ManagedObject) {
        if toManyMembers(relationship).contains(object.objectID) { return }
        primitiveAdd(relationship, object.objectID)
        guard let inverse = relationship.inverseRelationship else { return }
        if inverse.isToMany {
            object.primitiveAdd(inverse, objectID)
        } else {
            if let ownerID = object.toOneID(inverse), ownerID != objectID,
               let owner = managedObjectContext?.object(with: ownerID) {
                owner.primitiveRemove(relationship, object.objectID)
            }
            object.primitiveSetToOne(inverse, objectID)
        }
    }

    func removeFromMany(_ relationship: RelationshipDescription, _ object: ManagedObject) {
        guard toManyMembers(relationship).contains(object.objectID) else { return }
        primitiveRemove(relationship, object.objectID)
        guard let inverse = relationship.inverseRelationship else { return }
        if inverse.isToMany {
            object.primitiveRemove(inverse, objectID)
        } else if object.toOneID(inverse) == objectID {
            object.primitiveSetToOne(inverse, nil)
        }
    }

    func primitiveSetToOne(_ relationship: RelationshipDescription, _ id: ManagedObjectID?) {
        guard let slot = entity.slotIndex(of: relationship.name) else { return }
        setSlot(slot, to: id.map(StoreValue.object) ?? .null)
    }

    func primitiveAdd(_ relationship: RelationshipDescription, _ id: ManagedObjectID) {
        if relationship.isOrdered { _ = toManyMembers(relationship) }
        toMany[relationship.name, default: ToManyState()].add(id)
        managedObjectContext?.objectDidChange(self)
    }

    func primitiveRemove(_ relationship: RelationshipDescription, _ id: ManagedObjectID) {
        toMany[relationship.name, default: ToManyState()].remove(id)
        managedObjectContext?.objectDidChange(self)
    }

    func setOrder(_ relationship: RelationshipDescription, _ order: [ManagedObjectID]) {
        toMany[relationship.name, default: ToManyState()].order = order
        managedObjectContext?.objectDidChange(self)
    }
}
