import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// The view context, which answers the reads of every clean connection, keeps its memory
/// bounded: past `Session.viewContextObjectLimit` registered objects after a read, it lets go
/// of the objects nothing holds, and later reads still answer from the store.
@Suite("The view context lets go of objects after large reads", .timeLimit(.minutes(1)))
struct ViewContextReleaseTests {
    @Test("a fetch of more objects than the limit leaves the view context with none; a get of a few keeps them")
    func largeReadsLeaveTheViewContextBounded() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persistd-view-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = try InProcessServerState.make(directory: directory)
        let count = Session.viewContextObjectLimit + 1
        let loader = state.container.newBackgroundContext()
        try loader.performAndWait {
            _ = try loader.execute(BatchInsertRequest(entityName: "Tag", objects: (0..<count).map { ["name": "tag \($0)"] }))
        }
        let viewContext = state.container.viewContext
        let session = Session(state: state, peer: PeerCredentials(processID: getpid(), userID: 0, groupID: 0), name: "reader")

        // A get of a few objects: they stay registered, to answer the next reads from memory.
        let few = try InProcessServerState.result(session, "fetch", ["entity": "Tag", "limit": 3, "resultType": "ids"])
        let ids = try #require(few["ids"]?.arrayValue)
        #expect(ids.count == 3)
        let got = try InProcessServerState.result(session, "get", ["ids": .array(ids)])
        #expect(got["objects"]?.arrayValue?.count == 3)
        let afterGet = viewContext.performAndWait { viewContext.registeredObjects.count }
        #expect(afterGet >= 3 && afterGet <= Session.viewContextObjectLimit)

        // A fetch of every object registers more than the limit; the view context then lets go of them.
        let all = try InProcessServerState.result(session, "fetch", ["entity": "Tag"])
        #expect(all["objects"]?.arrayValue?.count == count)
        let afterFetch = viewContext.performAndWait { viewContext.registeredObjects.count }
        #expect(afterFetch == 0)

        // Reads go on from the store.
        let again = try InProcessServerState.result(session, "get", ["ids": .array(ids)])
        #expect(again["objects"]?.arrayValue?.compactMap { $0["values"]?["name"]?.stringValue }.count == 3)
        #expect(try InProcessServerState.result(session, "count", ["entity": "Tag"]) == ["count": .integer(Int64(count))])
    }
}
