import Foundation
import PersistKit
import Testing
@testable import PersistServer

/// Two persistd instances on one store file: remote changes reach subscribers, history
/// sees both, and merge policies resolve real conflicts over the wire.
@Suite("sharing between daemons", .timeLimit(.minutes(1)))
struct DaemonSharingTests {
    /// Daemon A, then daemon B on the same store with another socket, each started once the
    /// one before answers (so the tests begin with both serving).
    static func pair(_ extra: [String] = []) throws -> (DaemonHarness, DaemonHarness) {
        let a = try DaemonHarness.start(extra)
        _ = try a.connect().result(["op": "ping"])
        let b = try DaemonHarness.start(extra, directory: a.directory, socketName: "b.sock")
        _ = try b.connect().result(["op": "ping"])
        return (a, b)
    }

    @Test("a subscriber on A sees each save on B within 1 s, exactly once, in commit order")
    func remoteChangesReachSubscribers() throws {
        let (a, b) = try Self.pair()
        defer { b.stop(); a.stop() }
        let watcher = try a.connect(), writer = try b.connect()
        _ = try watcher.result(["op": "subscribe", "entity": "Beer", "predicate": "abv >= 5", "properties": ["name"]])
        // Each save's latency, from the save's request to its event: over 1 s, the bound is
        // measured again with another save (three at most), so a moment without CPU on a loaded
        // machine fails one measurement and a change that does not arrive in time fails all three.
        var latencies: [Double] = []
        var tokens: [Int64] = []
        for index in 0..<10 {
            var best = Double.infinity
            for attempt in 0..<3 where best >= 1.0 {
                let name = attempt == 0 ? "remote \(index)" : "remote \(index), again \(attempt)"
                _ = try writer.insertBeer(name, abv: 6.0)
                let start = Date()
                try writer.save()
                let event = try watcher.nextEvent()
                best = min(best, Date().timeIntervalSince(start))
                #expect(event.names("inserted") == [name])
                tokens.append(event["token"]?.transactionNumber ?? -1)
            }
            latencies.append(best)
        }
        #expect(tokens == tokens.sorted() && Set(tokens).count == tokens.count)
        let worst = latencies.max() ?? 99
        #expect(worst < 1.0, "a remote change took \(worst) s or more at each of three tries")
        print("remote change latency, save on B → event on A: median \(latencies.sorted()[latencies.count / 2] * 1000) ms, max \(worst * 1000) ms")

        // Saves on A and B interleaved: the events come in commit order, each once.
        let local = try a.connect()
        _ = try local.insertBeer("on A", abv: 7.0)
        try local.save()
        _ = try writer.insertBeer("on B", abv: 7.0)
        try writer.save()
        _ = try local.insertBeer("marker", abv: 7.0)
        try local.save()
        var names: [String] = []
        while names.last != "marker" { names += try watcher.nextEvent().names("inserted") }
        #expect(names == ["on A", "on B", "marker"])

        // Stop matching on B: deleted on A.
        let id = try writer.result(["op": "fetch", "entity": "Beer", "predicate": "name == 'on B'", "resultType": "ids"])["ids"]?.arrayValue?.first ?? .null
        _ = try writer.result(["op": "update", "object": id, "values": ["abv": 1.0]])
        try writer.save()
        #expect(try watcher.nextEvent()["deleted"] == [id])

        // history on A lists B's transactions too, with B's process ID.
        let history = try watcher.result(["op": "history"])
        let processes = Set((history["transactions"]?.arrayValue ?? []).map { $0.string("processID") })
        #expect(processes == [String(a.process.processIdentifier), String(b.process.processIdentifier)])
    }

    /// Beer `name`/`abv` changed by "theirs" on A while "ours" on B changed abv from the same
    /// original; returns B's save reply and the stored row.
    static func conflict(policy: String?, perSave: Bool = false) throws -> (reply: JSON, row: JSON, id: String) {
        let (a, b) = try pair()
        defer { b.stop(); a.stop() }
        let theirs = try a.connect(), ours = try b.connect()
        let id = try theirs.insertBeer("Original", abv: 5.0)
        try theirs.save()
        if let policy, !perSave {
            #expect(try ours.result(["op": "configure", "mergePolicy": .string(policy)]) == ["mergePolicy": .string(policy)])
        }
        // B reads the object (its transaction starts) and changes abv…
        _ = try ours.result(["op": "update", "object": .string(id), "values": ["abv": 6.0]])
        // …then A saves other values for it.
        _ = try theirs.result(["op": "update", "object": .string(id), "values": ["name": "Theirs", "abv": 7.0]])
        try theirs.save()
        var save: JSON = ["op": "save"]
        if let policy, perSave { save = ["op": "save", "mergePolicy": .string(policy)] }
        let reply = try ours.request(save)
        let rows = try a.connect().result(["op": "fetch", "entity": "Beer", "resultType": "dictionaries", "properties": ["name", "abv"]])
        return (reply, rows["rows"]?.arrayValue?.first ?? .null, id)
    }

    @Test("merge policy error: merge_conflict listing object, key, ours, theirs; nothing written")
    func errorPolicy() throws {
        let (reply, row, id) = try Self.conflict(policy: nil)
        let error = try #require(reply["error"])
        #expect(error.string("code") == "merge_conflict")
        let conflicts = error["conflicts"]?.arrayValue ?? []
        #expect(conflicts.contains(["object": .string(id), "key": "abv", "ours": 6.0, "theirs": 7.0, "original": 5.0]))
        #expect(conflicts.contains(["object": .string(id), "key": "name", "ours": "Original", "theirs": "Theirs", "original": "Original"]))
        #expect(row == ["name": "Theirs", "abv": 7.0])
    }

    @Test("merge policies over the wire, with configure and per save",
          arguments: [("mergeByPropertyObjectTrump", ["name": "Theirs", "abv": 6.0] as JSON),
                      ("mergeByPropertyStoreTrump", ["name": "Theirs", "abv": 7.0] as JSON),
                      ("overwrite", ["name": "Original", "abv": 6.0] as JSON),
                      ("rollback", ["name": "Theirs", "abv": 7.0] as JSON)])
    func policies(policy: String, expected: JSON) throws {
        for perSave in [false, true] {
            let (reply, row, _) = try Self.conflict(policy: policy, perSave: perSave)
            #expect(reply["ok"] == true, "\(policy): \(reply.encoded)")
            #expect(row == expected, "\(policy) (per save: \(perSave))")
        }
    }

    @Test("configure and history: replies and errors")
    func configureAndHistory() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let client = try daemon.connect()
        #expect(try client.result(["op": "configure"]) == ["mergePolicy": "error"])
        #expect(try client.error(["op": "configure", "mergePolicy": "nope"]).string("code") == "bad_request")
        #expect(try client.error(["op": "save", "mergePolicy": 3]).string("code") == "bad_request")
        let empty = try client.result(["op": "history"])
        #expect(empty["transactions"] == [])
        let store = try client.result(["op": "hello"])["store"]?.string("uuid") ?? ""
        #expect(empty["token"] == .string("\(store):0"))
        for index in 0..<3 {
            _ = try client.insertBeer("h\(index)", abv: 5.0)
            try client.save()
        }
        let first = try client.result(["op": "history", "limit": 2])
        #expect(first["transactions"]?.arrayValue?.count == 2)
        #expect(first["token"] == .string("\(store):2"))
        let rest = try client.result(["op": "history", "since": first["token"] ?? .null])
        let transactions = rest["transactions"]?.arrayValue ?? []
        #expect(transactions.count == 1)
        #expect(transactions.first?["changes"]?.arrayValue?.first?.string("type") == "insert")
        #expect(transactions.first?["changes"]?.arrayValue?.first?.string("entity") == "Beer")
        #expect(rest["token"] == .string("\(store):3"))
        #expect(try client.error(["op": "history", "since": "nope"]).string("code") == "bad_request")
        #expect(try client.error(["op": "history", "since": "OTHER-STORE:1"]).string("code") == "history_expired")
        #expect(try client.error(["op": "history", "limit": 0]).string("code") == "bad_request")
    }

    @Test("PersistKit errors map to busy, history_expired and merge_conflict's conflicts")
    func errorMapping() {
        let busy = WireError(persistenceError: PersistenceError(.persistentStoreTimeout, "the store stayed busy past busyTimeout"))
        #expect(busy.code == .busy)
        #expect(busy.details.isEmpty)
        let expired = WireError(persistenceError: PersistenceError(.persistentHistoryTokenExpired, "purged"))
        #expect(expired.code.rawValue == "history_expired")
    }
}

/// A Swift program (this test process, linking PersistKit) writing to a daemon's store file.
@Suite("sharing with a PersistKit program", .timeLimit(.minutes(1)))
struct DaemonProgramSharingTests {
    @Test("a save by a PersistKit program on the same store reaches the daemon's subscriber")
    func programSaveReachesSubscriber() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let watcher = try daemon.connect()
        _ = try watcher.result(["op": "subscribe", "entity": "Beer", "properties": ["name"]])

        let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: DaemonHarness.modelPath))
        let container = PersistentContainer(name: "program", managedObjectModel: model)
        var description = PersistentStoreDescription(url: URL(fileURLWithPath: daemon.storePath))
        description.options.persistentHistoryTracking = true
        container.persistentStoreDescriptions = [description]
        var loadError: (any Error)?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        defer { for store in container.persistentStoreCoordinator.persistentStores { try? container.persistentStoreCoordinator.remove(store) } }
        let context = container.newBackgroundContext()
        let start = Date()
        try context.performAndWait {
            let beer = ManagedObject(entity: model.entitiesByName["Beer"]!, insertInto: context) // the model has Beer
            beer.setValue("From Swift", forKey: "name")
            beer.setValue(UUID(), forKey: "uuid")
            try context.save()
        }
        let event = try watcher.nextEvent()
        #expect(event.names("inserted") == ["From Swift"])
        #expect(Date().timeIntervalSince(start) < 1)
        let history = try watcher.result(["op": "history"])
        #expect(history["transactions"]?.arrayValue?.last?.string("processID") == String(ProcessInfo.processInfo.processIdentifier))
    }
}
