import Foundation
import Testing
@testable import PersistKit

/// Many contexts saving at once into one SQLite file (issue 9, item 14), sized so the thread
/// sanitizer (`make test-tsan`, which runs every suite named "…Concurrency…") sees real
/// interleavings: 8 private-queue contexts — 6 of one container, 2 of a second container on
/// the same file — each saving `PERSIST_TSAN_SAVES` times (default 1,000), every save merged
/// into the first container's view context.
@Suite("Concurrency stress: 8 contexts x 1,000 saves", .timeLimit(.minutes(5)))
struct ContextConcurrencyStressTests {
    typealias M = ContextTestModel

    /// Saves per context (`PERSIST_TSAN_SAVES`).
    static var savesPerContext: Int {
        ProcessInfo.processInfo.environment["PERSIST_TSAN_SAVES"].flatMap(Int.init) ?? 1000
    }

    static func container(_ url: URL, model: ManagedObjectModel) throws -> PersistentContainer {
        let container = PersistentContainer(name: "Stress", managedObjectModel: model)
        var description = PersistentStoreDescription(url: url, type: .sqlite)
        description.options.busyTimeout = 30
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        return container
    }

    @Test("8 contexts x N saves on one file: every insert stored, every update merged into the view context")
    func eightContextsSaving() throws {
        let directory = try M.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("stress.sqlite")
        let model = M.make()
        let first = try Self.container(url, model: model)
        let second = try Self.container(url, model: model)
        let view = first.viewContext
        view.automaticallyMergesChangesFromParent = true

        // One counter object per context; each context sets its own counter's ibu at every save.
        let contexts = 8, saves = Self.savesPerContext
        let counterIDs: [ManagedObjectID] = try view.performAndWait {
            let counters = (0..<contexts).map { M.insert("Beer", into: view, ["name": "counter-\($0)", "ibu": Int16(0)]) }
            try view.save()
            return counters.map(\.objectID)
        }
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: contexts) { worker in
            let context = worker < 6 ? first.newBackgroundContext() : second.newBackgroundContext()
            context.performAndWait {
                let counter = context.object(with: counterIDs[worker])
                for index in 0..<saves {
                    _ = M.insert("Beer", into: context, ["name": "w\(worker)-\(index)"])
                    counter.setValue(Int16(index + 1), forKey: "ibu")
                    do {
                        try context.save()
                    } catch {
                        failures.withLock { $0.append("context \(worker), save \(index): \(error)") }
                        context.rollback()
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])

        // Merges are queued on the view context: this runs after all of them.
        let merged: [Int16] = view.performAndWait {
            counterIDs.map { view.object(with: $0).value(forKey: "ibu") as? Int16 ?? -1 }
        }
        // The first container's contexts merged into its view context; the second container's
        // saves are another coordinator's, seen once the view context refreshes from the store.
        #expect(Array(merged.prefix(6)) == Array(repeating: Int16(saves), count: 6))
        let stored: [Int16] = view.performAndWait {
            counterIDs.map { id in
                let object = view.object(with: id)
                view.refresh(object, mergeChanges: false)
                return object.value(forKey: "ibu") as? Int16 ?? -1
            }
        }
        #expect(stored == Array(repeating: Int16(saves), count: contexts))
        let total = try view.performAndWait { try view.count(for: M.request("Beer")) }
        #expect(total == contexts + contexts * saves)
        let fromSecond = try second.viewContext.performAndWait { try second.viewContext.count(for: M.request("Beer")) }
        #expect(fromSecond == total)
    }
}
