import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// Object IDs parsed through a session's prefix cache (`WireObjectIDPrefix`) are the IDs the
/// uncached parse gives, and IDs it refuses fail with the same error, whatever came before.
@Suite("object ID prefix cache: the same IDs and the same errors as parsing afresh", .timeLimit(.minutes(1)))
struct WireObjectIDPrefixTests {
    /// What a parse gave, comparable: the ID's parts or the error's code and message.
    enum Outcome: Equatable {
        case id(entity: String, store: String?, key: Int64)
        case error(code: String, message: String)
    }

    static func outcome(_ body: () throws(WireError) -> ManagedObjectID) -> Outcome {
        do throws(WireError) {
            let id = try body()
            return .id(entity: id.entity.name, store: id.storeIdentifier, key: id.primaryKey)
        } catch {
            return .error(code: error.json.string("code"), message: error.json.string("message"))
        }
    }

    @Test("a run of IDs: same entity, another entity, another store, unknown entity, malformed keys, overflow, non-strings")
    func cachedParseMatchesFreshParse() throws {
        try InsertSaveGroupCommitTests.withState { state, store in
            let coordinator = state.coordinator
            let entities = coordinator.managedObjectModel.entities.map(\.name)
            #expect(entities.count >= 2)
            let storeID = try #require(coordinator.persistentStores.first?.identifier)
            let base = "x-coredata://\(storeID)/"
            var texts: [JSON] = []
            for (index, entity) in entities.prefix(3).enumerated() {
                texts += [
                    .string(base + entity + "/p1"),
                    .string(base + entity + "/p\(index + 42)"),
                    .string(base + entity + "/p"),
                    .string(base + entity + "/p12x"),
                    .string(base + entity + "/p-3"),
                    .string(base + entity + "/p99999999999999999999"),
                    .string(base + entity + "/p9223372036854775807"),
                    .string(base + entity + "/q5"),
                    .string(base + entity + "p5"),
                    .string(base + entity + "/p7/"),
                    .string("x-coredata://00000000-0000-0000-0000-000000000000/\(entity)/p1"),
                    .string(base + "Nobody/p1"),
                    .string(base + entity + "x/p1"),
                    .string(base + entity + "/p3"),
                    .integer(3),
                    .string(base + entity + "/p8"),
                ]
            }
            let prefix = Locked<WireObjectIDPrefix?>(nil)
            for text in texts + texts.reversed() {
                let fresh = Self.outcome { () throws(WireError) in try WireObjectID.parse(text, coordinator: coordinator, what: "ids") }
                let cached = Self.outcome { () throws(WireError) in
                    try WireObjectID.parse(text, coordinator: coordinator, what: "ids", prefix: prefix)
                }
                #expect(cached == fresh, "\(text.encoded)")
            }
            // After a valid ID the cache holds its store and entity; an unknown one left it alone.
            _ = try WireObjectID.parse(.string(base + entities[0] + "/p5"), coordinator: coordinator, what: "ids", prefix: prefix)
            #expect(prefix.withLock { $0?.entity.name } == entities[0])
            _ = try? WireObjectID.parse(.string(base + "Nobody/p5"), coordinator: coordinator, what: "ids", prefix: prefix)
            #expect(prefix.withLock { $0?.entity.name } == entities[0])
            _ = store
        }
    }
}
