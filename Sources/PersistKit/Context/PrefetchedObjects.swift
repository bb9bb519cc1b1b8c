/// The objects one prefetch hop reached, each once, in the order first reached: the sources
/// of the next hop.
struct PrefetchedObjects {
    /// The objects, in the order first added.
    var objects: [ManagedObject] = []
    /// The identities of the objects added with ``add(_:)``.
    private var seen: Set<ObjectIdentifier> = []

    /// Adds `object` unless ``add(_:)`` added it before. (Objects appended to ``objects``
    /// directly are known to be new and are not recorded.)
    mutating func add(_ object: ManagedObject) {
        if seen.insert(ObjectIdentifier(object)).inserted { objects.append(object) }
    }
}
