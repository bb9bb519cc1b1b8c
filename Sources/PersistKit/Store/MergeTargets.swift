/// The contexts a coordinator merges each save into (root contexts with
/// ``ManagedObjectContext/automaticallyMergesChangesFromParent``), worked out once and kept
/// until a context registers or changes its parent or that setting.
///
/// Without it, every save looked at every context of the coordinator (a daemon has one per
/// connection): a weak load, a copy into an array and two lock round trips each, about 1 K
/// instructions per context per save, for usually one context that merges (the view context).
struct MergeTargets {
    /// The ``generation`` the list was made at; `nil` before the first save.
    var madeAt: UInt64?
    /// The contexts that merged saves when the list was made.
    var contexts: [WeakContext] = []

    /// Bumped whenever a context registers with a coordinator, or changes its parent or
    /// whether it merges automatically: a list made at an older value is made again.
    /// Read before the contexts' settings are, so a change during the making is never missed.
    static let generation = Locked<UInt64>(0)

    /// Notes that some context's settings changed (see ``generation``).
    static func contextSettingsChanged() {
        generation.withLock { $0 &+= 1 }
    }
}
