import Foundation

/// One committed save, as recorded in a store's persistent history.
///
/// The corresponding Core Data class is `NSPersistentHistoryTransaction`.
public struct PersistentHistoryTransaction: Sendable, Hashable {
    /// The transaction's number in its store (`ATRANSACTION.Z_PK`), increasing in commit order.
    public var transactionNumber: Int64
    /// The store that recorded it (`NSStoreUUID`).
    public var storeIdentifier: String
    /// When it was committed.
    public var timestamp: Date
    /// The saving context's ``ManagedObjectContext/transactionAuthor``.
    public var author: String?
    /// The saving context's ``ManagedObjectContext/name``.
    public var contextName: String?
    /// The name of the program that saved (Core Data: `bundleID`).
    public var bundleID: String?
    /// The saving process's ID, as text (Core Data: `processID`).
    public var processID: String?
    /// The objects it inserted, updated and deleted, in the order written.
    public var changes: [PersistentHistoryChange]

    /// The token that points just after this transaction.
    public var token: PersistentHistoryToken {
        PersistentHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: transactionNumber)
    }

    /// The IDs of the objects it changed, in the form `mergeChanges(fromRemoteContextSave:into:)`
    /// takes (Core Data's `objectIDNotification()` user info).
    public var objectIDChanges: [String: [ManagedObjectID]] {
        var result: [String: [ManagedObjectID]] = [
            ManagedObjectContext.insertedObjectIDsKey: [],
            ManagedObjectContext.updatedObjectIDsKey: [],
            ManagedObjectContext.deletedObjectIDsKey: [],
        ]
        for change in changes {
            let key: String
            switch change.changeType {
            case .insert: key = ManagedObjectContext.insertedObjectIDsKey
            case .update: key = ManagedObjectContext.updatedObjectIDsKey
            case .delete: key = ManagedObjectContext.deletedObjectIDsKey
            }
            result[key, default: []].append(change.changedObjectID)
        }
        return result
    }

    /// Creates a transaction record.
    public init(transactionNumber: Int64, storeIdentifier: String, timestamp: Date, author: String?, contextName: String?,
                bundleID: String?, processID: String?, changes: [PersistentHistoryChange]) {
        self.transactionNumber = transactionNumber
        self.storeIdentifier = storeIdentifier
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.bundleID = bundleID
        self.processID = processID
        self.changes = changes
    }
}

/// One object's change in a ``PersistentHistoryTransaction``.
///
/// The corresponding Core Data class is `NSPersistentHistoryChange`.
public struct PersistentHistoryChange: Sendable, Hashable {
    /// What happened to the object (`NSPersistentHistoryChangeType`, same raw values).
    public enum ChangeType: Int, Sendable, Hashable, Codable {
        /// The object was inserted.
        case insert = 0
        /// The object was updated.
        case update = 1
        /// The object was deleted.
        case delete = 2
    }

    /// The change's number in the store (`ACHANGE.Z_PK`).
    public var changeNumber: Int64
    /// The object changed.
    public var changedObjectID: ManagedObjectID
    /// What happened to it.
    public var changeType: ChangeType
    /// For an update, the names of the properties it changed (`updatedProperties`, by name).
    public var updatedProperties: Set<String>
    /// For a delete, the values of the attributes the model marks
    /// ``AttributeDescription/preservesValueInHistoryOnDeletion`` (`tombstone`).
    public var tombstone: [String: StoreValue]

    /// Creates a change record.
    public init(changeNumber: Int64, changedObjectID: ManagedObjectID, changeType: ChangeType,
                updatedProperties: Set<String> = [], tombstone: [String: StoreValue] = [:]) {
        self.changeNumber = changeNumber
        self.changedObjectID = changedObjectID
        self.changeType = changeType
        self.updatedProperties = updatedProperties
        self.tombstone = tombstone
    }
}
