import Testing
@testable import PersistServer

/// The per-connection event queue: its limit, the overflow event, and resuming.
@Suite("event queue")
struct EventQueueTests {
    static func event(_ subscription: String, _ number: Int) -> SubscriptionEvent {
        SubscriptionEvent(subscription: subscription, line: Array("e\(number)\n".utf8), previousToken: "S:\(number - 1)")
    }

    @Test("events wait in order up to the limit")
    func order() {
        var queue = EventQueue(limit: 3)
        for number in 1...3 { queue.append(Self.event("s1", number), subscriptions: ["s1"]) }
        #expect(queue.count == 3)
        #expect(!queue.isOverflowing)
        let lines = (1...3).compactMap { _ in queue.next(isLive: { _ in true }) }.map { String(decoding: $0, as: UTF8.self) }
        #expect(lines == ["e1\n", "e2\n", "e3\n"])
        #expect(queue.next(isLive: { _ in true }) == nil)
    }

    @Test("past the limit: one overflow event with the token before the first dropped event; drops until drained")
    func overflow() throws {
        var queue = EventQueue(limit: 2)
        for number in 1...3 { queue.append(Self.event("s1", number), subscriptions: ["s1", "s2"]) }
        #expect(queue.isOverflowing)
        #expect(queue.count == 1)
        queue.append(Self.event("s1", 4), subscriptions: ["s1"])
        let next = queue.next(isLive: { _ in false })
        let line = try #require(next, "the overflow event is written even with no live subscription")
        #expect(try JSONParser.parse(line) == ["event": "overflow", "subscriptions": ["s1", "s2"], "token": "S:0", "dropped": 3,
                                                "message": "more than the connection's event limit waited unread; 3 events were dropped; read history since token to resynchronise"])
        #expect(queue.droppedCount == 4)
        // Still overflowing until the output has drained after the overflow event was taken.
        queue.append(Self.event("s1", 5), subscriptions: ["s1"])
        #expect(queue.count == 0)
        queue.outputDrained()
        #expect(!queue.isOverflowing)
        queue.append(Self.event("s1", 6), subscriptions: ["s1"])
        #expect(queue.next(isLive: { _ in true }) == Array("e6\n".utf8))
    }

    @Test("events of ended subscriptions are skipped")
    func skipsEnded() {
        var queue = EventQueue(limit: 10)
        queue.append(Self.event("s1", 1), subscriptions: [])
        queue.append(Self.event("s2", 2), subscriptions: [])
        #expect(queue.next(isLive: { $0 == "s2" }) == Array("e2\n".utf8))
        #expect(queue.count == 0)
    }
}
