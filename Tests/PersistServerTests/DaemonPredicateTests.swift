import Foundation
import Testing
@testable import PersistServer

/// Predicates, grouped fetches and batch requests against a live `persistd`.
@Suite("persistd predicates and batches", .timeLimit(.minutes(1)))
struct DaemonPredicateTests {
    /// Inserts four beers and saves; returns the client.
    static func seeded(_ daemon: DaemonHarness) throws -> WireClient {
        let client = try daemon.connect()
        for (name, abv, style) in [("90 Minute IPA", 9.0, "IPA"), ("60 Minute IPA", 6.0, "IPA"), ("Orval", 6.2, "Trappist"),
                                   ("Westmalle Tripel", 9.5, "Trappist")] {
            _ = try client.result(["op": "insert", "entity": "Beer", "values": [
                "name": .string(name), "abv": .double(abv), "style": .string(style), "uuid": .string(UUID().uuidString),
                "brewedOn": "2026-01-31T12:00:00.000Z"]])
        }
        _ = try client.result(["op": "save"])
        return client
    }

    static func names(_ result: JSON) -> [String] {
        result["objects"]?.arrayValue?.map { $0["values"]?.string("name") ?? "" } ?? []
    }

    @Test("fetch and count with a predicate: %@ and %K arguments, $VARIABLES, typed arguments")
    func predicates() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try Self.seeded(daemon)
        #expect(Self.names(try client.result(["op": "fetch", "entity": "Beer", "predicate": #"name BEGINSWITH[c] "9""#, "sort": ["name"]]))
            == ["90 Minute IPA"])
        #expect(Self.names(try client.result(["op": "fetch", "entity": "Beer", "predicate": "%K > %@", "arguments": ["abv", 7],
                                              "sort": [["key": "abv", "ascending": false]]])) == ["Westmalle Tripel", "90 Minute IPA"])
        #expect(try client.result(["op": "count", "entity": "Beer", "predicate": "style == $style AND abv < $max",
                                   "arguments": ["style": "Trappist", "max": 7]]) == ["count": 1])
        #expect(try client.result(["op": "count", "entity": "Beer", "predicate": "brewedOn == %@",
                                   "arguments": [["date": "2026-01-31T12:00:00.000Z"]]]) == ["count": 4])
        #expect(try client.result(["op": "fetch", "entity": "Beer", "predicate": "style IN %@", "arguments": [["Trappist"]],
                                   "resultType": "count"]) == ["count": 2])
    }

    @Test("predicate errors: predicate_syntax with the offset; unknown keys; wrong types; missing arguments")
    func predicateErrors() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        let syntax = try client.error(["op": "fetch", "entity": "Beer", "predicate": "abv > "])
        #expect(syntax["code"] == "predicate_syntax")
        #expect(syntax["offset"] == 6)
        #expect(syntax["predicate"] == "abv > ")
        let unknown = try client.error(["op": "count", "entity": "Beer", "predicate": #"nmae == "x""#])
        #expect(unknown["code"] == "unknown_property")
        #expect(unknown["key"] == "nmae")
        #expect(try client.error(["op": "count", "entity": "Beer", "predicate": #"abv == "strong""#])["code"] == "type_mismatch")
        #expect(try client.error(["op": "count", "entity": "Beer", "predicate": "abv > %@"])["code"] == "bad_request")
        #expect(try client.error(["op": "count", "entity": "Beer", "predicate": "abv > $min", "arguments": [:]])["code"] == "bad_request")
        #expect(try client.error(["op": "count", "entity": "Beer", "predicate": "abv > %@", "arguments": "7"])["code"] == "bad_request")
    }

    @Test("grouped dictionary fetches with aggregates and having")
    func grouped() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try Self.seeded(daemon)
        let rows = try client.result(["op": "fetch", "entity": "Beer", "resultType": "dictionaries",
                                      "properties": ["style", ["name": "beers", "function": "count", "key": "name"],
                                                     ["name": "strongest", "function": "max", "key": "abv"]],
                                      "groupBy": ["style"], "having": "strongest > 9.2", "sort": ["style"]])
        #expect(rows == ["rows": [["style": "Trappist", "beers": 2, "strongest": 9.5]]])
    }

    @Test("batch update and delete: applied in the store at once, seen by every connection")
    func batches() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try Self.seeded(daemon)
        let other = try daemon.connect()
        // Load the objects into the view context first: the batch must be merged there.
        #expect(try other.result(["op": "count", "entity": "Beer", "predicate": "isFavorite == YES"]) == ["count": 0])
        _ = try other.result(["op": "fetch", "entity": "Beer"])
        #expect(try client.result(["op": "update", "entity": "Beer", "predicate": "style == %@", "arguments": ["IPA"],
                                   "values": ["isFavorite": true]]) == ["updated": 2])
        let favorites = try other.result(["op": "fetch", "entity": "Beer", "predicate": "isFavorite == YES", "sort": ["name"]])
        #expect(Self.names(favorites) == ["60 Minute IPA", "90 Minute IPA"])
        #expect(favorites["objects"]?.arrayValue?.allSatisfy { $0["values"]?["isFavorite"] == true } == true)
        #expect(try client.result(["op": "delete", "entity": "Beer", "predicate": "abv < 7"]) == ["deleted": 2])
        #expect(try other.result(["op": "count", "entity": "Beer"]) == ["count": 2])
        #expect(try client.error(["op": "delete", "entity": "Beer"])["code"] == "bad_request")
        #expect(try client.error(["op": "update", "entity": "Beer", "predicate": "TRUEPREDICATE", "values": ["brewery": nil]])["code"]
            == "bad_request")
        #expect(try other.result(["op": "stats"])["saves"] == 3)
    }
}
