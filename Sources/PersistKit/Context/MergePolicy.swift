/// How a save resolves conflicts between this context's changes and changes saved by others.
///
/// The corresponding Core Data class is `NSMergePolicy`; the cases are its predefined policies.
public enum MergePolicy: String, Sendable, Hashable, CaseIterable {
    /// Fail the save with a merge error listing each conflict (`NSErrorMergePolicy`, the default).
    case error
    /// Keep the store's value for each property changed by both (`NSMergeByPropertyStoreTrumpMergePolicy`).
    case mergeByPropertyStoreTrump
    /// Keep this context's value for each property changed by both (`NSMergeByPropertyObjectTrumpMergePolicy`).
    case mergeByPropertyObjectTrump
    /// Write this context's whole objects over the store's (`NSOverwriteMergePolicy`).
    case overwrite
    /// Drop this context's changes to conflicting objects (`NSRollbackMergePolicy`).
    case rollback
}
