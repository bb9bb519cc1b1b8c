import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// A session keeps its peer's access between requests and decides it again only when a reload
/// replaced the configuration: every reload is in force for the very next request of a session
/// already open, whichever way that request is answered (alone, in a batch of reads, as a run of
/// simple `get`s, as a write).
@Suite("a reloaded access policy applies to the next request of sessions already open", .timeLimit(.minutes(1)))
struct AccessPolicyReloadTests {
    /// A peer that is neither root nor the daemon's own user: the policy alone decides for it.
    static let peer = PeerCredentials(processID: 1, userID: 4242, groupID: 4242)

    /// Reloads `state` with its configuration's access policy changed by `adjust`, from a
    /// policy that names no one.
    static func reload(_ state: ServerState, _ adjust: (inout AccessPolicy) -> Void = { _ in }) {
        var configuration = state.configuration
        var policy = AccessPolicy(serviceUserID: configuration.accessPolicy.serviceUserID)
        adjust(&policy)
        configuration.accessPolicy = policy
        state.reload(configuration)
    }

    /// The `error.code` of each reply line in `output` (`nil` for a success).
    static func codes(_ output: [UInt8]) throws -> [String?] {
        try output.split(separator: UInt8(ascii: "\n")).map { line in
            let reply = try JSONParser.parse(Array(line))
            return reply["ok"] == .bool(true) ? nil : reply["error"]?.string("code")
        }
    }

    /// The `error.code` of each reply to `requests` sent as one batch.
    static func codes(_ session: Session, _ requests: [WireRequest]) throws -> [String?] {
        try InsertSaveGroupCommitTests.ask(session, requests).map { $0["ok"] == .bool(true) ? nil : $0["error"]?.string("code") }
    }

    /// The replies' error codes of `count` simple `get`s of `id`, answered as one run.
    static func simpleGetCodes(_ session: Session, id: String, count: Int) throws -> [String?] {
        let prefix = try #require(session.idPrefix.withLock { $0 }, "no ID prefix yet")
        var gets: [SimpleGet] = []
        for number in 1...count {
            let line = Array(#"{"id":\#(number),"op":"get","ids":["\#(id)"]}"#.utf8)
            guard case .get(let get) = line.withUnsafeBufferPointer({ SimpleGet.parse($0, prefix: prefix) }) else {
                Issue.record("not a simple get: \(String(decoding: line, as: UTF8.self))")
                return []
            }
            gets.append(get)
        }
        var output: [UInt8] = []
        #expect(session.answerSimpleGetsNow(gets, into: &output))
        return try codes(output)
    }

    @Test("full, read-only, refused, full again: each reload decides the next request of every kind")
    func reloadsReachAnOpenSession() throws {
        try InsertSaveGroupCommitTests.withState { state, _ in
            Self.reload(state) { $0.users = [Self.peer.userID] }
            let session = Session(state: state, peer: Self.peer, name: "reload")
            #expect(session.access() == .full)
            let inserted = try InProcessServerState.result(session, "insert", ["entity": "Person", "values": ["name": "p0"]])
            let id = try #require(inserted["object"]?.string("id"))
            _ = try InProcessServerState.result(session, "save")
            let get = WireRequest(id: 1, op: "get", body: ["ids": [.string(id)]])
            // A general `get` alone: it also leaves the session's ID prefix for simple gets.
            #expect(try Self.codes(session, [get]) == [nil])
            #expect(try Self.simpleGetCodes(session, id: id, count: 3) == [nil, nil, nil])

            // Read-only: reads go on, writes are refused, on the same session.
            Self.reload(state) {
                $0.users = [Self.peer.userID]
                $0.readOnlyUsers = [Self.peer.userID]
            }
            #expect(session.access() == .readOnly)
            #expect(try Self.simpleGetCodes(session, id: id, count: 2) == [nil, nil])
            #expect(try Self.codes(session, [get, get]) == [nil, nil])
            #expect(try Self.codes(session, [WireRequest(id: 2, op: "insert", body: ["entity": "Person", "values": ["name": "p1"]])])
                    == ["unauthorized"])
            #expect(try Self.codes(session, InsertSaveGroupCommitTests.requests([
                ("insert", ["entity": "Person", "values": ["name": "p1"]]), ("save", [:]),
            ])) == ["unauthorized", "unauthorized"])

            // Refused: every op, however it is answered.
            Self.reload(state)
            #expect(session.access() == .refused)
            #expect(try Self.simpleGetCodes(session, id: id, count: 4) == Array(repeating: "unauthorized", count: 4))
            #expect(try Self.codes(session, [get]) == ["unauthorized"])
            #expect(try Self.codes(session, [get, get, get]) == ["unauthorized", "unauthorized", "unauthorized"])
            var output: [UInt8] = []
            #expect(session.answerGetsNow([get, get], into: &output))
            #expect(try Self.codes(output) == ["unauthorized", "unauthorized"])
            #expect(try Self.codes(session, [WireRequest(id: 3, op: "ping", body: [:])]) == ["unauthorized"])

            // Full again, by group this time.
            Self.reload(state) { $0.groups = [Self.peer.groupID] }
            #expect(session.access() == .full)
            #expect(try Self.simpleGetCodes(session, id: id, count: 1) == [nil])
            #expect(try Self.codes(session, InsertSaveGroupCommitTests.requests([
                ("insert", ["entity": "Person", "values": ["name": "p2"]]), ("save", [:]),
            ])) == [nil, nil])
        }
    }

    @Test("a session decides once per reload: the generation moves with each reload, and the decision with it")
    func generationMovesWithEachReload() throws {
        try InsertSaveGroupCommitTests.withState { state, _ in
            let session = Session(state: state, peer: Self.peer, name: "generation")
            let start = state.policyGeneration.load(ordering: .acquiring)
            #expect(session.access() == .refused)
            Self.reload(state) { $0.allowsEveryUser = true }
            #expect(state.policyGeneration.load(ordering: .acquiring) == start + 1)
            #expect(session.access() == .full)
            #expect(session.access() == .full)
            Self.reload(state) { $0.everyUserMayRead = true }
            #expect(state.policyGeneration.load(ordering: .acquiring) == start + 2)
            #expect(session.access() == .readOnly)
            // Another session of the same state decides for its own peer.
            let root = Session(state: state, peer: InsertSaveGroupCommitTests.root, name: "root")
            #expect(root.access() == .full)
            #expect(Session(state: state, peer: nil, name: "unknown").access() == .refused)
        }
    }

    @Test("the read ops compared by name are exactly the policy's set of read ops")
    func readOperationsAgree() {
        let ops = ["get", "fetch", "count", "insert", "update", "delete", "save", "rollback", "configure", "history",
                   "hello", "model", "ping", "stats", "subscribe", "unsubscribe", "", "Get", "gets", "nope"]
        for op in ops {
            #expect(AccessPolicy.isReadOperation(op) == AccessPolicy.readOperations.contains(op), "\(op)")
            #expect(PeerAccess.readOnly.allows(op) == AccessPolicy.readOperations.contains(op), "\(op)")
            #expect(PeerAccess.full.allows(op))
            #expect(!PeerAccess.refused.allows(op))
        }
        for op in AccessPolicy.readOperations { #expect(AccessPolicy.isReadOperation(op), "\(op)") }
    }
}
