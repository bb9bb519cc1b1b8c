import Foundation
import Testing
@testable import PersistKit

/// Several connections opening one new store file at the same moment: one creates Core
/// Data's tables, the others open what it created — nobody fails with "table already exists".
@Suite("creating one store from several connections at once", .timeLimit(.minutes(1)))
struct StoreCreationRaceTests {
    typealias M = ContextTestModel

    @Test("8 coordinators open a new store file at once, 5 rounds")
    func simultaneousCreation() throws {
        let model = M.make()
        for round in 0..<5 {
            let directory = try M.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("new-\(round).sqlite")
            let opened = Locked<[Int: Result<PersistentStoreCoordinator, any Error>]>([:])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for index in 0..<8 {
                DispatchQueue.global().async(group: group) {
                    start.wait()
                    let result = Result { try M.coordinator(type: .sqlite, at: url, model: model) }
                    opened.withLock { $0[index] = result }
                }
            }
            for _ in 0..<8 { start.signal() }
            group.wait()
            var identifiers: Set<String> = []
            for (index, result) in opened.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
                switch result {
                case .success(let coordinator):
                    identifiers.formUnion(coordinator.persistentStores.map(\.identifier))
                    // Each can write, and sees the others' rows.
                    let context = M.context(coordinator)
                    try context.performAndWait {
                        _ = M.insert("Tag", into: context, ["name": "from \(index)"])
                        try context.save()
                    }
                case .failure(let error):
                    Issue.record("round \(round), coordinator \(index): \(error)")
                }
            }
            #expect(identifiers.count == 1, "one store, one UUID: \(identifiers)")
            let check = try M.coordinator(type: .sqlite, at: url, model: model)
            let context = M.context(check)
            let count = try context.performAndWait { try context.count(for: M.request("Tag")) }
            #expect(count == 8)
            let connection = try SQLiteConnection(path: url.path, flags: [.readOnly])
            #expect(try connection.strings("PRAGMA integrity_check") == ["ok"])
            #expect(try connection.strings("SELECT COUNT(*) FROM Z_METADATA") == ["1"])
            #expect(try connection.strings("SELECT COUNT(*) FROM Z_PRIMARYKEY") == ["\(model.entities.count)"])
            try connection.close()
        }
    }
}
