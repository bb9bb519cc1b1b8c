import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// `subscribe`, `unsubscribe` and the `changes` events, on one daemon over real sockets.
@Suite("subscriptions", .timeLimit(.minutes(1)))
struct DaemonSubscriptionTests {
    @Test("membership follows the predicate: start matching is inserted, stop matching is deleted")
    func membership() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let writer = try daemon.connect(), watcher = try daemon.connect()
        let strong = try writer.insertBeer("Strong", abv: 9.0)
        let weak = try writer.insertBeer("Weak", abv: 4.0)
        try writer.save()

        let subscribed = try watcher.result(["op": "subscribe", "entity": "Beer", "predicate": "abv > %@", "arguments": [8.0],
                                             "sort": ["name"], "properties": ["name", "abv"]])
        let id = subscribed.string("subscription")
        #expect(subscribed["objects"] == [["id": .string(strong), "entity": "Beer", "version": 1, "values": ["name": "Strong", "abv": 9.0]]])
        var lastToken = subscribed["token"]?.transactionNumber ?? -1
        #expect(lastToken >= 1)

        func expectNext(inserted: [String] = [], updated: [String] = [], deleted: [String] = [],
                        sourceLocation: SourceLocation = #_sourceLocation) throws {
            let event = try watcher.nextEvent()
            #expect(event.string("event") == "changes", sourceLocation: sourceLocation)
            #expect(event.string("subscription") == id, sourceLocation: sourceLocation)
            #expect(event["token"]?.transactionNumber ?? -1 > lastToken, "tokens grow", sourceLocation: sourceLocation)
            lastToken = event["token"]?.transactionNumber ?? -1
            #expect(event.ids("inserted") == inserted, sourceLocation: sourceLocation)
            #expect(event.ids("updated") == updated, sourceLocation: sourceLocation)
            #expect(event.ids("deleted") == deleted, sourceLocation: sourceLocation)
        }

        // Weak starts matching: inserted, with the subscription's properties only.
        _ = try writer.result(["op": "update", "object": .string(weak), "values": ["abv": 8.5]])
        try writer.save()
        try expectNext(inserted: [weak])
        // Strong still matches: updated.
        _ = try writer.result(["op": "update", "object": .string(strong), "values": ["abv": 10.0]])
        try writer.save()
        try expectNext(updated: [strong])
        // A change to a property the subscription does not send: no event. Then Strong stops
        // matching: deleted (the next event is that one, so the first made none).
        _ = try writer.result(["op": "update", "object": .string(strong), "values": ["style": "Imperial"]])
        try writer.save()
        _ = try writer.result(["op": "update", "object": .string(strong), "values": ["abv": 5.0]])
        try writer.save()
        try expectNext(deleted: [strong])
        // Changes to a non-matching object: no event; deleting a match: deleted.
        _ = try writer.result(["op": "update", "object": .string(strong), "values": ["abv": 6.0]])
        try writer.save()
        _ = try writer.result(["op": "delete", "object": .string(weak)])
        try writer.save()
        try expectNext(deleted: [weak])
        // Two inserts in one save, one matching: one event, sorted by name, values restricted.
        let b = try writer.insertBeer("B", abv: 12.0)
        _ = try writer.insertBeer("Light", abv: 2.0)
        let a = try writer.insertBeer("A", abv: 11.0)
        try writer.save()
        let event = try watcher.nextEvent()
        #expect(event.ids("inserted") == [a, b])
        #expect(event["inserted"]?.arrayValue?.first?["values"] == ["name": "A", "abv": 11.0])
        // A batch update moves both out: deleted, in one event.
        #expect(try writer.result(["op": "update", "entity": "Beer", "predicate": "abv > 10", "values": ["abv": 1.0]])["updated"] == 2)
        let batch = try watcher.nextEvent()
        #expect(Set(batch.ids("deleted")) == [a, b])

        // After unsubscribe, nothing more: the next line is the reply to a later ping.
        #expect(try watcher.result(["op": "unsubscribe", "subscription": .string(id)]) == [:])
        _ = try writer.insertBeer("After", abv: 20.0)
        try writer.save()
        usleep(300_000)
        #expect(try watcher.request(["id": 99, "op": "ping"])["id"] == 99)
        let again = try watcher.error(["op": "unsubscribe", "subscription": .string(id)])
        #expect(again.string("code") == "not_found")
        #expect(again["subscription"] == .string(id))
    }

    @Test("every transaction once, in commit order; the save's reply comes before its own event")
    func orderAndExactlyOnce() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let writer = try daemon.connect(), watcher = try daemon.connect()
        let subscribed = try watcher.result(["op": "subscribe", "entity": "Beer"])
        #expect(subscribed["objects"] == [])
        let count = 25
        for index in 0..<count {
            _ = try writer.insertBeer("n\(index)", abv: 5.0)
            try writer.save()
        }
        var tokens: [Int64] = []
        var names: [String] = []
        for _ in 0..<count {
            let event = try watcher.nextEvent()
            tokens.append(event["token"]?.transactionNumber ?? -1)
            names += event.names("inserted")
        }
        #expect(names == (0..<count).map { "n\($0)" })
        #expect(tokens == tokens.sorted() && Set(tokens).count == count)
        // Exactly once: the next event is the marker's, nothing repeated before it.
        _ = try writer.insertBeer("marker", abv: 5.0)
        try writer.save()
        #expect(try watcher.nextEvent().names("inserted") == ["marker"])

        // A subscriber's own save: the reply, then the event.
        _ = try watcher.insertBeer("own", abv: 5.0)
        let reply = try #require(try { () throws -> JSON? in try watcher.send(["id": 7, "op": "save"]); return try watcher.readLine() }())
        #expect(reply["id"] == 7)
        #expect(try watcher.nextEvent().names("inserted") == ["own"])
    }

    @Test("subscribe errors: unknown entity, bad predicate, unknown property; history off is unsupported")
    func errors() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        #expect(try client.error(["op": "subscribe", "entity": "Nope"]).string("code") == "unknown_entity")
        #expect(try client.error(["op": "subscribe", "entity": "Beer", "predicate": "abv >"]).string("code") == "predicate_syntax")
        #expect(try client.error(["op": "subscribe", "entity": "Beer", "properties": ["nope"]]).string("code") == "unknown_property")
        #expect(try client.error(["op": "unsubscribe"]).string("code") == "bad_request")

        let off = try DaemonHarness.start(["--history", "off"])
        defer { off.stop() }
        let plain = try off.connect()
        #expect(try plain.error(["op": "subscribe", "entity": "Beer"]).string("code") == "unsupported")
        #expect(try plain.error(["op": "history"]).string("code") == "unsupported")
    }

    @Test("a connection with a live subscription is not closed as idle; one without is")
    func idleSubscriberStaysOpen() throws {
        let daemon = try DaemonHarness.start(["--idle-timeout", "0.3"])
        defer { daemon.stop() }
        let watcher = try daemon.connect(), idle = try daemon.connect()
        _ = try watcher.result(["op": "subscribe", "entity": "Beer"])
        #expect(try idle.nextEvent()["reason"] == "idle_timeout")
        usleep(400_000)
        let writer = try daemon.connect()
        _ = try writer.insertBeer("late", abv: 5.0)
        try writer.save()
        #expect(try watcher.nextEvent().names("inserted") == ["late"])
    }

    @Test("a subscriber that never reads gets one overflow, then recovers with history")
    func overflow() throws {
        let daemon = try DaemonHarness.start(["--max-events", "4"])
        defer { daemon.stop() }
        let writer = try daemon.connect(), watcher = try daemon.connect()
        // 300 objects with long names: each batch update is one event of about 80 KB.
        let longName = String(repeating: "x", count: 190)
        for index in 0..<300 { _ = try writer.insertBeer("\(index) \(longName)", abv: 5.0) }
        try writer.save()
        let subscribed = try watcher.result(["op": "subscribe", "entity": "Beer"])
        let start = subscribed.string("token")
        // A second subscriber, made after the watcher, that reads: the hub hands each event to
        // subscriptions in the order they were made, so once this one has all 20 events, the
        // watcher's were handed over too, however slowly the daemon built them.
        let pacer = try daemon.connect()
        _ = try pacer.result(["op": "subscribe", "entity": "Beer"])
        // The watcher reads nothing while 20 transactions are committed: about 3 MB of events,
        // more than the socket, 64 KiB of output and 4 queued events hold.
        for round in 0..<20 {
            _ = try writer.result(["op": "update", "entity": "Beer", "predicate": "TRUEPREDICATE", "values": ["abv": .double(Double(round))]])
        }
        for _ in 0..<20 { _ = try pacer.nextEvent() }
        usleep(200_000)
        var events: [JSON] = []
        var overflow: JSON?
        while overflow == nil {
            let event = try watcher.nextEvent()
            if event.string("event") == "overflow" { overflow = event } else { events.append(event) }
        }
        let found = try #require(overflow)
        #expect(events.count < 20)
        #expect(found["subscriptions"] == [.string(subscribed.string("subscription"))])
        #expect((found["dropped"]?.integer ?? 0) >= 1)
        // The overflow token is the last transaction the client has fully seen.
        let resume = found["token"]?.transactionNumber ?? -1
        let seen = events.last?["token"]?.transactionNumber ?? (PersistentHistoryToken(string: start)?.transactionNumber ?? -1)
        #expect(resume >= seen)
        // history since the overflow token covers every transaction after it.
        let history = try watcher.result(["op": "history", "since": found["token"] ?? .null])
        let numbers = (history["transactions"]?.arrayValue ?? []).map { $0["token"]?.transactionNumber ?? -1 }
        let last = history["token"]?.transactionNumber ?? -1
        #expect(numbers == Array(stride(from: resume + 1, through: last, by: 1)))
        #expect(events.count + numbers.count >= 20)
        // Events flow again once the client has read up: the next one is after history's token
        // or covered by it; a new transaction arrives.
        _ = try writer.insertBeer("fresh", abv: 5.0)
        try writer.save()
        var fresh: JSON?
        while fresh == nil {
            let event = try watcher.nextEvent()
            if event.names("inserted") == ["fresh"] { fresh = event } else { #expect(event["token"]?.transactionNumber ?? .max <= last) }
        }
        #expect(fresh?["token"]?.transactionNumber ?? -1 > last)
    }
}
