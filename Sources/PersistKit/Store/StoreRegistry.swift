/// The store implementations PersistKit ships, by type.
enum StoreRegistry {
    /// Every built-in store type and its class.
    static let builtIn: [StoreType: any PersistentStore.Type] = [
        .inMemory: InMemoryStore.self,
    ]
}
