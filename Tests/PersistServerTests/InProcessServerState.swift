import Dispatch
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
        container.viewContext.postsNotifications = false
        let configuration = ServerConfiguration(modelPath: DaemonHarness.modelPath,
                                                storePath: directory.appendingPathComponent("store.sqlite").path,
                                                socketPath: directory.appendingPathComponent("unused.sock").path)
        return try ServerState(container: container, configuration: configuration)
    }

    /// Sends one request to `session` and waits for its reply.
    static func ask(_ session: Session, _ op: String, _ body: JSON = [:]) -> JSON {
        let reply = Locked<JSON?>(nil)
        let done = DispatchSemaphore(value: 0)
        session.handle(WireRequest(id: 1, op: op, body: body)) { answer in
            reply.withLock { $0 = answer.json }
            done.signal()
        }
        done.wait()
        return reply.withLock { $0 } ?? nil
    }

    /// Sends one request to `session` and returns its `result`; throws on an error reply.
    static func result(_ session: Session, _ op: String, _ body: JSON = [:]) throws -> JSON {
        let reply = ask(session, op, body)
        guard reply["ok"] == .bool(true), let result = reply["result"] else { throw HarnessError("\(op): error reply \(reply.encoded)") }
        return result
    }
}
