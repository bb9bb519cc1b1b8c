extension PersistenceError {
    /// An error for a predicate that cannot be evaluated: an unknown key, an unbound variable,
    /// a value of the wrong kind (code ``Code/persistentStoreOperation``).
    public static func predicate(_ message: String, key: String? = nil) -> PersistenceError {
        PersistenceError(.persistentStoreOperation, "Cannot evaluate predicate: " + message, key: key)
    }
}
