import Dispatch
import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// A `get` of many IDs (its objects loaded with one store call): every object in the order
/// asked, each once per mention, and `not_found` for an ID that names nothing, as one by one.
@Suite("get of many IDs", .timeLimit(.minutes(1)))
struct GetManyObjectsTests {
    @Test("a get of many IDs answers them in order, repeats included; one missing ID fails the get")
    func getMany() throws {
        try InsertSaveGroupCommitTests.withState { state, _ in
            let writer = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "writer")
            let reader = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "reader")
            var ids: [String] = []
            for index in 0..<12 {
                let replies = try InsertSaveGroupCommitTests.ask(writer, InsertSaveGroupCommitTests.requests([
                    InsertSaveGroupCommitTests.insertBeer("Beer \(index)"), ("save", [:]),
                ]))
                ids.append(try #require(InsertSaveGroupCommitTests.objectID(replies[0])))
            }
            let asked = ids.reversed() + [ids[3], ids[3]]
            let read = try InsertSaveGroupCommitTests.ask(reader, InsertSaveGroupCommitTests.requests([
                ("get", .object([JSON.Member("ids", .array(asked.map { .string($0) }))])),
            ]))
            let objects = read[0]["result"]?["objects"]?.arrayValue ?? []
            #expect(objects.map { $0["id"]?.stringValue ?? "" } == Array(asked))
            #expect(objects.last?["values"]?["name"] == .string("Beer 3"))

            // Another connection deletes one; the next get of all of them is not_found.
            let deleted = try InsertSaveGroupCommitTests.ask(writer, InsertSaveGroupCommitTests.requests([
                ("delete", .object([JSON.Member("object", .string(ids[5]))])), ("save", [:]),
            ]))
            #expect(deleted[1]["ok"] == .bool(true))
            let missing = try InsertSaveGroupCommitTests.ask(reader, InsertSaveGroupCommitTests.requests([
                ("get", .object([JSON.Member("ids", .array(ids.map { .string($0) }))])),
            ]))
            #expect(missing[0]["error"]?["code"] == .string("not_found"))
        }
    }
}
