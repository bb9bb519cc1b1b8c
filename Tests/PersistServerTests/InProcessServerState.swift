import Foundation
import PersistKit
@testable import PersistServer

/// A `ServerState` like persistd's, served in process: the example model, history tracking,
/// remote change notifications, the view context merging every save, on a new store in a
/// directory. Tests that drive `Session`s directly (no socket) read the store's internals
/// through it.
enum InProcessServerState {
    /// The state on `directory/store.sqlite`; `adjust` changes the store's options first.
    static func make(directory: URL, adjust: (inout StoreOptions) -> Void = { _ in }) throws -> ServerState {
        let (model, loaded) = try StoreMigration.load(modelPath: DaemonHarness.modelPath)
        let container = PersistentContainer(name: "Beers", managedObjectModel: model)
        var description = PersistentStoreDescription(url: directory.appendingPathComponent("store.sqlite"))
        description.options = loaded
        description.options.persistentHistoryTracking = true
        description.options.remoteChangeNotificationPost = true
        adjust(&description.options)
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        container.viewContext.automaticallyMergesChangesFromParent = true
        let configuration = ServerConfiguration(modelPath: DaemonHarness.modelPath,
                                                storePath: directory.appendingPathComponent("store.sqlite").path,
                                                socketPath: directory.appendingPathComponent("unused.sock").path)
        return try ServerState(container: container, configuration: configuration)
    }
}
