import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// Pipelined `get`s of one ID wait on their connection as runs (one entry for many `get`s) and
/// are answered in batches of at most `Connection.maximumBatch`; whatever surrounds them, each
/// line gets the very reply it gets when sent alone. The plan and prefix the batch writes
/// with: each property's step mirrors the plan's names, slots and types, and a prefix's store
/// is the store's own identifier.
@Suite("runs of pipelined simple gets: batches of any length, mixed with other lines, the replies of lines sent alone",
       .timeLimit(.minutes(1)))
struct SimpleGetRunTests {
    @Test("runs longer than a batch, between general reads, pings, writes of nothing and malformed lines, answer as lines sent alone")
    func runsAnswerAsLinesSentAlone() throws {
        let daemon = try DaemonHarness.start(["--max-queued", "1000"])
        defer { daemon.stop() }
        let client = try daemon.connect()
        let ids = try PipelinedBatchTests.people(4, client: client)
        let prefix = String(ids[0][..<(ids[0].range(of: "/p", options: .backwards)?.lowerBound ?? ids[0].endIndex)])
        var lines: [String] = []
        var next = 0
        /// A run of `count` simple gets: the people in turn, every seventh a missing key, every
        /// fifth with a string `id`.
        func run(_ count: Int) {
            for index in 0..<count {
                next += 1
                let id = index % 5 == 4 ? #""g\#(next)""# : String(next)
                let object = index % 7 == 6 ? "\(prefix)/p\(900_000 + index)" : ids[index % ids.count]
                lines.append(#"{"id":\#(id),"op":"get","ids":["\#(object)"]}"#)
            }
        }
        run(150)                                                    // three batches: 64, 64, 22
        lines.append(#"{"id":"c1","op":"count","entity":"Person"}"#) // a general read, then gets join its batch
        run(70)
        lines.append(#"{"id":"p1","op":"ping"}"#)
        run(1)
        lines.append(#"{"id":"r1","op":"get","ids":["\#(ids[1])"],"properties":["name"]}"#)
        run(63)
        lines.append(#"{"id":"bad","op":"get","ids":["#)                  // malformed
        run(64)
        lines.append(#"{"id":"w1","op":"rollback"}"#)               // a write (nothing to undo)
        run(65)
        // One by one: each line alone on the connection.
        var alone: [[UInt8]] = []
        for line in lines {
            try client.send(line: line)
            alone.append(try #require(try client.readRawLine(), "no reply to \(line)"))
        }
        // All at once, twice (the second time every object is loaded already).
        for round in 0..<2 {
            try client.send(raw: Array((lines.joined(separator: "\n") + "\n").utf8))
            for (index, expected) in alone.enumerated() {
                let reply = try #require(try client.readRawLine(), "round \(round): reply \(index) of \(lines.count) is missing")
                #expect(reply == expected, "round \(round), line \(lines[index]): \(String(decoding: reply, as: UTF8.self))")
            }
        }
        // The runs' replies are objects and not-found errors as sent, each with its own id.
        let first = try JSONParser.parse(alone[0])
        #expect(first["id"] == .integer(1))
        guard case .array(let objects)? = first["result"]?["objects"] else {
            Issue.record("no objects: \(String(decoding: alone[0], as: UTF8.self))")
            return
        }
        #expect(objects.map { $0["values"]?["name"] } == [.string("p0")])
        #expect(try JSONParser.parse(alone[4])["id"] == .string("g5"))
        #expect(try JSONParser.parse(alone[6])["error"]?.string("code") == "not_found")
    }

    @Test("a plan's steps: each property's name bytes, slot and integer writing as the plan lists them, for every entity")
    func planStepsMirrorThePlan() throws {
        try InsertSaveGroupCommitTests.withState { state, _ in
            for entity in state.coordinator.managedObjectModel.entities {
                let plan = WireValuePlan(entity)
                #expect(plan.steps.count == plan.count, "\(entity.name)")
                // The names end where the last one ends, then the padding that lets a name be
                // read as two 8-byte words (`ByteStage.append(padded:count:thenInteger:spill:)`).
                #expect(Array(plan.names[plan.nameStarts[plan.count]...]) == Array(repeating: 0, count: WireValuePlan.namePadding),
                        "\(entity.name)")
                for (index, step) in plan.steps.enumerated() {
                    let start = Int(step.nameStart), end = start + Int(step.nameCount)
                    #expect(start == plan.nameStarts[index] && end == plan.nameStarts[index + 1], "\(entity.name).\(plan.properties[index].name)")
                    var expectedName: [UInt8] = index == 0 ? [] : [UInt8(ascii: ",")]
                    JSON.writeString(plan.properties[index].name, to: &expectedName)
                    expectedName.append(UInt8(ascii: ":"))
                    #expect(Array(plan.names[start..<end]) == expectedName, "\(entity.name).\(plan.properties[index].name)")
                    #expect(Int(step.slot) == plan.slots[index])
                    let type = plan.types[index]
                    #expect(step.writesIntegers == !(type == .boolean || type == .double || type == .float),
                            "\(entity.name).\(plan.properties[index].name): \(type)")
                }
            }
        }
    }

    @Test("a prefix keeps the store's own identifier, so the IDs made from it share its storage")
    func prefixSharesTheStoresIdentifier() throws {
        try InsertSaveGroupCommitTests.withState { state, store in
            let coordinator = state.coordinator
            let entity = try #require(coordinator.managedObjectModel.entities.first)
            // The identifier's text made anew, in storage of its own.
            let text = "x-coredata://" + String(decoding: Array(store.identifier.utf8), as: UTF8.self) + "/\(entity.name)/p7"
            let prefix = Locked<WireObjectIDPrefix?>(nil)
            let id = try WireObjectID.parse(.string(text), coordinator: coordinator, what: "ids", prefix: prefix)
            #expect(id.primaryKey == 7 && id.entity === entity)
            let kept = try #require(prefix.withLock { $0 })
            #expect(kept.store == store.identifier)
            // The same string storage (the same two words), not only equal text.
            #expect(unsafeBitCast(kept.store, to: (UInt64, UInt64).self) == unsafeBitCast(store.identifier, to: (UInt64, UInt64).self))
            // Its token is the store's, so a loaded object is found by the token and the key.
            #expect(kept.storeToken === store.storeToken)
            // IDs read through the prefix name the same object.
            let again = try WireObjectID.parse(.string(text), coordinator: coordinator, what: "ids", prefix: prefix)
            #expect(again == id)
        }
    }
}
