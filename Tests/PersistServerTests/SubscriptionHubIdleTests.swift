import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// With no subscription, saves do not make the hub read the history (it is not kicked); a
/// subscription made afterwards starts from the token current when it is made, and gets an
/// event for each later transaction, exactly once, and none for the ones before it.
@Suite("subscriptions after saves with nobody subscribed", .timeLimit(.minutes(1)))
struct SubscriptionHubIdleTests {
    @Test("saves made while nobody subscribes are not reported; later saves are, once each, in order")
    func subscribeAfterIdleSaves() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let writer = try daemon.connect(), watcher = try daemon.connect()

        // A subscription that ends, then saves with nobody subscribed.
        let first = try watcher.result(["op": "subscribe", "entity": "Beer"]).string("subscription")
        _ = try watcher.result(["op": "unsubscribe", "subscription": .string(first)])
        for index in 0..<5 {
            _ = try writer.insertBeer("before \(index)", abv: 5.0)
            try writer.save()
        }

        let subscribed = try watcher.result(["op": "subscribe", "entity": "Beer"])
        let id = subscribed.string("subscription")
        #expect(subscribed["objects"]?.arrayValue?.count == 5, "the initial objects include every earlier save")
        var last = subscribed["token"]?.transactionNumber ?? -1
        for index in 0..<3 {
            _ = try writer.insertBeer("after \(index)", abv: 5.0)
            try writer.save()
        }
        for index in 0..<3 {
            let event = try watcher.nextEvent()
            #expect(event.string("subscription") == id)
            #expect(event.names("inserted") == ["after \(index)"])
            let token = event["token"]?.transactionNumber ?? -1
            #expect(token > last)
            last = token
        }
        // Nothing else is pending: a ping's reply is the next line.
        let ping = try watcher.send(["op": "ping"])
        let next = try #require(try watcher.readLine())
        #expect(next["id"] == ping, "no further event: \(next.encoded)")
        #expect(next["ok"] == .bool(true))
    }
}
