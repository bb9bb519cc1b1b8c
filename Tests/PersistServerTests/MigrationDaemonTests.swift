import Foundation
import Testing
@testable import PersistServer

/// persistd migrates an older store before it serves it, and `persistctl migrate --dry-run`
/// shows the plan without touching the store; both as the real binaries.
@Suite("Store migration by persistd and persistctl", .timeLimit(.minutes(2)))
struct MigrationDaemonTests {
    static func writeModel(_ json: String, named name: String, in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(json.utf8).write(to: url)
        return url.path
    }

    static let v1 = """
        {"formatVersion": 1, "entities": [
          {"name": "Beer", "attributes": [{"name": "name", "type": "string", "optional": false}]}
        ]}
        """
    static let v2 = """
        {"formatVersion": 1, "entities": [
          {"name": "Beer", "attributes": [{"name": "name", "type": "string", "optional": false},
                                          {"name": "abv", "type": "double"}]},
          {"name": "Tag", "attributes": [{"name": "name", "type": "string"}]}
        ]}
        """
    static let blocked = """
        {"formatVersion": 1, "entities": [
          {"name": "Beer", "attributes": [{"name": "name", "type": "string", "optional": false},
                                          {"name": "ibu", "type": "integer16", "optional": false}]}
        ]}
        """

    /// Runs persistd on `model` in `directory` just long enough to save one Beer named "Old".
    static func saveOneBeer(model: String, in directory: URL) throws {
        let daemon = try DaemonHarness.start(model: model, directory: directory)
        let client = try daemon.connect()
        _ = try client.result(["op": "insert", "entity": "Beer", "values": ["name": "Old"]])
        _ = try client.result(["op": "save"])
        client.close()
        daemon.stop()
    }

    static func persistctl(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try PersistctlTests.run(arguments, socket: nil)
    }

    @Test func daemonMigratesAnOlderStoreBeforeServing() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let v1 = try Self.writeModel(Self.v1, named: "v1.json", in: directory)
        let v2 = try Self.writeModel(Self.v2, named: "v2.json", in: directory)
        let stuck = try Self.writeModel(Self.blocked, named: "blocked.json", in: directory)

        try Self.saveOneBeer(model: v1, in: directory)
        let store = directory.appendingPathComponent("store.sqlite")
        let before = try Data(contentsOf: store)

        let dryRun = try Self.persistctl(["migrate", "--model", v2, "--store", store.path, "--dry-run"])
        #expect(dryRun.status == 0)
        #expect(dryRun.out.contains("step 1: store -> current"))
        #expect(dryRun.out.contains("+ Beer.abv"))
        #expect(dryRun.out.contains("+ Tag"))
        #expect(try Data(contentsOf: store) == before, "a dry run changes nothing")

        let refused = try Self.persistctl(["migrate", "--model", stuck, "--store", store.path, "--dry-run"])
        #expect(refused.status == 1)
        #expect(refused.out.contains("BLOCKED"))
        #expect(refused.out.contains("! Beer.ibu"))

        let daemon = try DaemonHarness.start(model: v2, directory: directory)
        let client = try daemon.connect()
        let objects = try client.result(["op": "fetch", "entity": "Beer"])["objects"]?.arrayValue ?? []
        #expect(objects.count == 1)
        #expect(objects.first?["values"] == .object(["name": .string("Old"), "abv": .null]))
        #expect(try client.result(["op": "count", "entity": "Tag"]) == ["count": 0])
        client.close()
        daemon.stop()
        #expect(daemon.standardError.contains("migrated store.sqlite"))
        #expect(FileManager.default.fileExists(atPath: store.path + ".backup"), "the migration kept a backup")
    }

    @Test func daemonRefusesToStartOnABlockedMigration() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let v1 = try Self.writeModel(Self.v1, named: "v1.json", in: directory)
        let stuck = try Self.writeModel(Self.blocked, named: "blocked.json", in: directory)
        try Self.saveOneBeer(model: v1, in: directory)
        let store = directory.appendingPathComponent("store.sqlite")
        let before = try Data(contentsOf: store)
        // persistd binds its socket before it opens the store, so wait for its exit rather than
        // for a connection.
        let process = Process()
        process.executableURL = ModelCheckTests.binary
        process.arguments = ["--model", stuck, "--store", store.path, "--socket", directory.appendingPathComponent("p.sock").path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(message.contains("cannot open the store"))
        #expect(message.contains("Beer.ibu: new required attribute without a default value"))
        #expect(message.split(separator: "\n").count == 1, "one line, for systemctl status")
        #expect(try Data(contentsOf: store) == before, "a blocked migration leaves the store as it was")
    }
}
