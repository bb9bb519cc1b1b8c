import Foundation

/// The whole Core Data stack in one object: a model, a coordinator, its stores, a view
/// context and background contexts.
///
/// The corresponding Core Data class is `NSPersistentContainer`:
///
/// ```swift
/// let container = PersistentContainer(name: "Beers", managedObjectModel: model)
/// container.loadPersistentStores { description, error in
///     if let error { fatalError("\(description): \(error)") }
/// }
/// let beer = ManagedObject(entity: beerEntity, insertInto: container.viewContext)
/// try container.viewContext.save()
/// ```
public final class PersistentContainer: Sendable {
    /// The container's name; the default store file is `<name>.sqlite`.
    public let name: String
    /// The model of every store.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator the container's contexts save through.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The main context (``ManagedObjectContext/ConcurrencyType/mainQueue``); see
    /// ``ManagedObjectContext`` for what the main queue means on Linux.
    public let viewContext: ManagedObjectContext

    private let descriptions: Locked<[PersistentStoreDescription]>

    /// Creates a container for `model`. Its one store description points at
    /// `<defaultDirectoryURL>/<name>.sqlite` until changed.
    public init(name: String, managedObjectModel: ManagedObjectModel) {
        self.name = name
        self.managedObjectModel = managedObjectModel
        self.persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: managedObjectModel)
        self.viewContext = ManagedObjectContext(concurrencyType: .mainQueue)
        let url = Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite")
        self.descriptions = Locked([PersistentStoreDescription(url: url)])
        viewContext.persistentStoreCoordinator = persistentStoreCoordinator
        viewContext.name = "viewContext"
        viewContext.receivesRemoteChanges = true
    }

    /// Where stores go by default: `$XDG_DATA_HOME`, or `~/.local/share`, as Linux programs keep
    /// their data (Core Data uses Application Support on Apple platforms).
    public static func defaultDirectoryURL() -> URL {
        if let data = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data, isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
    }

    /// The stores the container opens in ``loadPersistentStores(completionHandler:)``.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        get { descriptions.withLock { $0 } }
        set { descriptions.withLock { $0 = newValue } }
    }

    /// Opens every described store, creating directories as needed, and calls
    /// `completionHandler` once per store, with the error if it failed to open. Stores are
    /// opened synchronously, before this returns.
    public func loadPersistentStores(completionHandler: (PersistentStoreDescription, (any Error)?) -> Void) {
        for description in persistentStoreDescriptions {
            do {
                if let directory = description.url?.deletingLastPathComponent(), description.type != .inMemory {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                }
                try persistentStoreCoordinator.addPersistentStore(type: description.type, configuration: description.configuration,
                                                                  at: description.url, options: description.options)
                completionHandler(description, nil)
            } catch {
                completionHandler(description, error)
            }
        }
    }

    /// A new private-queue context on the container's coordinator.
    public func newBackgroundContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` on a new private-queue context's queue, asynchronously.
    public func performBackgroundTask(_ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new private-queue context's queue and returns its result.
    public func performBackgroundTask<T: Sendable>(_ block: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        let context = newBackgroundContext()
        return try await context.perform { try block(context) }
    }
}
