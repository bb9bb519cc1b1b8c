extension PropertyDescription {
    /// Names a property may not have, because a managed object already answers to them.
    ///
    /// Core Data refuses a property that overrides an `NSObject` or `NSManagedObject` method
    /// without parameters (its documentation gives `description` as the example). This list
    /// holds those names that are properties or parameterless methods of `NSObject`,
    /// `NSManagedObject` and our ``ManagedObject``. Names Core Data lets through in practice
    /// (`deleted`, `inserted`, `updated`: the Objective-C getters are `isDeleted`…) are
    /// allowed, since real models use them.
    public static let reservedNames: Set<String> = [
        // NSObject
        "class", "debugDescription", "description", "hash", "hashValue", "self", "superclass",
        // NSManagedObject and ManagedObject
        "awakeFromFetch", "awakeFromInsert", "changedValues", "changedValuesForCurrentEvent",
        "didSave", "didTurnIntoFault", "entity", "faultingState", "hasChanges",
        "hasPersistentChangedValues", "isDeleted", "isFault", "isInserted", "isUpdated",
        "managedObjectContext", "objectID", "prepareForDeletion", "validateForDelete",
        "validateForInsert", "validateForUpdate", "willSave", "willTurnIntoFault",
    ]
}
