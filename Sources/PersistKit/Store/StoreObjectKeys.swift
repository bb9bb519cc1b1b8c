/// The IDs of a fetch's results, kept compact: one primary key (8 bytes) per object, and an
/// entity number per object only when the results mix entities. A million IDs take 8 MB,
/// where a million ``ManagedObjectID``s take about 70 MB.
struct StoreObjectKeys: Sendable {
    /// The store holding the objects.
    let store: StoreToken
    /// The entities of the results; `entityIndexes` picks one per object when there are several.
    private(set) var entities: [EntityDescription] = []
    /// The primary keys, in fetch order.
    private(set) var primaryKeys: [Int64] = []
    /// For each object, its entity's index in `entities`; empty while every object is of `entities[0]`.
    private var entityIndexes: [UInt16] = []

    init(store: StoreToken) {
        self.store = store
    }

    /// The number of objects.
    var count: Int { primaryKeys.count }

    /// Appends the object `primaryKey` of `entity`.
    mutating func append(_ entity: EntityDescription, _ primaryKey: Int64) {
        var index = 0
        if entities.isEmpty {
            entities.append(entity)
        } else if entities[0] !== entity || !entityIndexes.isEmpty {
            if let known = entities.firstIndex(where: { $0 === entity }) {
                index = known
            } else {
                entities.append(entity)
                index = entities.count - 1
            }
            // The first object of another entity: every object before it was of entities[0].
            if entityIndexes.isEmpty { entityIndexes = [UInt16](repeating: 0, count: primaryKeys.count) }
        }
        if !entityIndexes.isEmpty { entityIndexes.append(UInt16(truncatingIfNeeded: index)) }
        primaryKeys.append(primaryKey)
    }

    /// The ID of the object at `position`.
    func objectID(at position: Int) -> ManagedObjectID {
        let entity = entityIndexes.isEmpty ? entities[0] : entities[Int(entityIndexes[position])]
        return ManagedObjectID(entity: entity, store: store, primaryKey: primaryKeys[position])
    }
}
