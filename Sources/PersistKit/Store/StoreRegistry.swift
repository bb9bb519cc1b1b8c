/// The store implementations PersistKit ships, by type.
enum StoreRegistry {
    /// Every built-in store type and its class.
    static let builtIn: [StoreType: any PersistentStore.Type] = [
        .sqlite: SQLiteStore.self,
        .inMemory: InMemoryStore.self,
        .xml: XMLStore.self,
        .binary: BinaryStore.self,
    ]
}
