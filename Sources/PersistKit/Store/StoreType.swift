/// The kind of a persistent store.
///
/// The corresponding Core Data type is `NSPersistentStore.StoreType`; the raw values are
/// Core Data's (`NSSQLiteStoreType` is `"SQLite"`, and so on), as written in store metadata.
public struct StoreType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The store type's name.
    public let rawValue: String
    /// Creates a store type from its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A SQLite database file in Core Data's layout.
    public static let sqlite = StoreType(rawValue: "SQLite")
    /// A store that lives only in memory.
    public static let inMemory = StoreType(rawValue: "InMemory")
    /// An XML file, written whole and atomically at each save.
    public static let xml = StoreType(rawValue: "XML")
    /// A binary file, written whole and atomically at each save.
    public static let binary = StoreType(rawValue: "Binary")

    /// The store type's name.
    public var description: String { rawValue }

    /// The type named `name` in any case (`sqlite`, `SQLite`, `memory`, `InMemory`, …), or `nil`.
    public init?(name: String) {
        switch name.lowercased() {
        case "sqlite": self = .sqlite
        case "inmemory", "memory", "in-memory": self = .inMemory
        case "xml": self = .xml
        case "binary": self = .binary
        default: return nil
        }
    }
}
