import Foundation
import Testing
@testable import PersistServer

/// Object IDs in requests: the URI form is read without Foundation's URL when it is simple;
/// anything else gets the same answer as before, `bad_request` for a malformed ID and
/// `not_found` for a well-formed one naming nothing.
@Suite("object IDs in requests", .timeLimit(.minutes(1)))
struct WireObjectIDParseTests {
    @Test("well-formed, malformed and unknown object IDs in get")
    func objectIDs() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        let id = try client.result(["op": "insert", "entity": "Person", "values": ["name": "a"]])["object"]?.string("id") ?? ""
        _ = try client.result(["op": "save"])
        let base = String(id[..<(id.range(of: "/Person/", options: .backwards)?.lowerBound ?? id.endIndex)])
        let store = String(base.dropFirst("x-coredata://".count))
        #expect(!store.isEmpty)
        let found = try client.result(["op": "get", "ids": .array([.string(id)])])
        if case .array(let objects)? = found["objects"] { #expect(objects.first?["id"] == .string(id)) } else {
            Issue.record("no objects: \(found.encoded)")
        }
        let cases: [(JSON, String)] = [
            (.string(base + "/Person/p999999"), "not_found"),
            (.string(base + "/Nope/p1"), "not_found"),
            (.string("x-coredata://0000-1111/Person/p1"), "not_found"),
            (.string(base + "/Person/p"), "bad_request"),
            (.string(base + "/Person/1"), "bad_request"),
            (.string(base + "/Person/p99999999999999999999"), "bad_request"),
            (.string(base + "/Person/p1/x"), "bad_request"),
            (.string(base + "/Person"), "bad_request"),
            (.string("x-coredata:///Person/p1"), "bad_request"),
            (.string("http://" + store + "/Person/p1"), "bad_request"),
            (.string(""), "bad_request"),
            (.integer(42), "bad_request"),
        ]
        for (value, code) in cases {
            let error = try client.error(["op": "get", "ids": .array([value])])
            #expect(error.string("code") == code, "\(value.encoded): \(error.encoded)")
        }
    }
}
