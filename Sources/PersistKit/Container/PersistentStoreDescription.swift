import Foundation

/// How a container opens one store: its type, file, configuration and options.
///
/// The corresponding Core Data class is `NSPersistentStoreDescription`; here it is a value.
public struct PersistentStoreDescription: Sendable, Hashable, CustomStringConvertible {
    /// The store's type; SQLite by default.
    public var type: StoreType = .sqlite
    /// The store's file; `nil` only for in-memory stores.
    public var url: URL?
    /// The model configuration the store holds; `nil` for all entities.
    public var configuration: String?
    /// The options the store is opened with.
    public var options = StoreOptions()

    /// Creates a description of a store at `url`.
    public init(url: URL?, type: StoreType = .sqlite) {
        self.url = url
        self.type = type
    }

    /// Whether an older store is migrated when opened (`shouldMigrateStoreAutomatically`).
    public var shouldMigrateStoreAutomatically: Bool {
        get { options.migratePersistentStoresAutomatically }
        set { options.migratePersistentStoresAutomatically = newValue }
    }

    /// Whether the migration mapping is inferred (`shouldInferMappingModelAutomatically`).
    public var shouldInferMappingModelAutomatically: Bool {
        get { options.inferMappingModelAutomatically }
        set { options.inferMappingModelAutomatically = newValue }
    }

    /// Whether the store is opened read-only (`isReadOnly`).
    public var isReadOnly: Bool {
        get { options.readOnly }
        set { options.readOnly = newValue }
    }

    /// `<type> store at <path>`.
    public var description: String {
        "\(type.rawValue) store at \(url?.path ?? "(memory)")"
    }
}
