import Foundation
import Testing
@testable import PersistKit

/// Concurrency tests; `make test` also runs this suite under the thread sanitizer.
@Suite("Concurrency of contexts")
struct ContextConcurrencyTests {
    typealias M = ContextTestModel

    @Test func concurrentBackgroundSavesLoseNothing() throws {
        let model = M.make()
        let container = PersistentContainer(name: "Concurrency", managedObjectModel: model)
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: nil, type: .inMemory)]
        nonisolated(unsafe) var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        #expect(loadError == nil)
        let workers = 4, perWorker = 50
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let context = container.newBackgroundContext()
            context.performAndWait {
                for index in 0..<perWorker {
                    _ = M.insert("Beer", into: context, ["name": "w\(worker)-\(index)"])
                    if index % 10 == 9 {
                        do { try context.save() } catch { failures.withLock { $0 += 1 } }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try container.viewContext.count(for: M.request("Beer")) == workers * perWorker)
    }

    @Test func backgroundSaveMergesIntoViewContext() throws {
        let container = PersistentContainer(name: "Merge", managedObjectModel: M.make())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: nil, type: .inMemory)]
        container.loadPersistentStores { _, error in #expect(error == nil) }
        let view = container.viewContext
        view.automaticallyMergesChangesFromParent = true
        let beer = M.insert("Beer", into: view, ["name": "Shared", "abv": 5.0])
        try view.save()

        let merged = DispatchSemaphore(value: 0)
        let observer = NotificationCenter.default.addObserver(
            forName: ManagedObjectContext.didChangeObjectsNotification, object: view, queue: nil) { _ in merged.signal() }
        defer { NotificationCenter.default.removeObserver(observer) }
        let id = beer.objectID
        let background = container.newBackgroundContext()
        try background.performAndWait {
            background.object(with: id).setValue(6.5, forKey: "abv")
            try background.save()
        }
        #expect(merged.wait(timeout: .now() + 5) == .success)
        #expect(view.performAndWait { beer.value(forKey: "abv") as? Double } == 6.5)
    }

    @Test func performBackgroundTaskAsync() async throws {
        let container = PersistentContainer(name: "Async", managedObjectModel: M.make())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: nil, type: .inMemory)]
        container.loadPersistentStores { _, error in #expect(error == nil) }
        let count = try await container.performBackgroundTask { context in
            _ = M.insert("Beer", into: context, ["name": "Async"])
            try context.save()
            return try context.count(for: M.request("Beer"))
        }
        #expect(count == 1)
        let viewCount = try await container.viewContext.perform { try container.viewContext.count(for: M.request("Beer")) }
        #expect(viewCount == 1)
    }

    @Test func mainQueueContextWorksWithoutDispatchMain() throws {
        let context = M.context(try M.coordinator(), .mainQueue)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            context.performAndWait { _ = M.insert("Beer", into: context, ["name": "Main"]) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        try context.save()
        #expect(try context.count(for: M.request("Beer")) == 1)
    }
}
