import Foundation
import Testing
@testable import PersistServer

/// `persistctl`, run as the real binary against a live daemon.
@Suite("persistctl", .timeLimit(.minutes(1)))
struct PersistctlTests {
    static var binary: URL { BuiltBinary.url("persistctl") }

    /// Runs persistctl with `arguments`, `stdin`, and `PERSISTD_SOCKET` set to `socket`.
    static func run(_ arguments: [String], socket: String?, stdin: String = "") throws -> (status: Int32, out: String, err: String) {
        try BuiltBinary.run("persistctl", arguments, stdin: stdin, environment: ["PERSISTD_SOCKET": socket])
    }

    @Test("insert --save, fetch --where, get, update, count, delete: JSON when not a terminal")
    func commands() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let socket = daemon.socketPath
        let inserted = try Self.run(["insert", "Beer", "name=90 Minute IPA", "abv=9.0", "ibu=90", "isFavorite=true",
                                     "uuid=6F9619FF-8B86-D011-B42D-00C04FC964FF", "--save"], socket: socket)
        #expect(inserted.status == 0)
        let lines = inserted.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        let object = try JSONParser.parse(lines.first ?? "")["object"]
        let id = object?.string("id") ?? ""
        #expect(object?["values"]?["abv"] == 9.0)
        #expect(object?["values"]?["ibu"] == 90)
        #expect(object?["values"]?["isFavorite"] == true)
        #expect(lines.last == #"{"inserted":1,"updated":0,"deleted":0}"#)

        let fetched = try Self.run(["fetch", "Beer", "--where", #"name BEGINSWITH[c] "9""#, "--sort", "name", "--limit", "10",
                                    "--properties", "name"], socket: socket)
        #expect(fetched.out == #"{"objects":[{"id":"\#(id)","entity":"Beer","version":1,"values":{"name":"90 Minute IPA"}}]}"# + "\n")
        #expect(try Self.run(["--socket", socket, "count", "Beer"], socket: nil).out == "{\"count\":1}\n")
        let updated = try Self.run(["update", id, "abv=9.5", "--if-version", "1", "--save"], socket: socket)
        #expect(updated.status == 0)
        #expect(updated.out.hasSuffix(#"{"inserted":0,"updated":1,"deleted":0}"# + "\n"))
        #expect(try Self.run(["get", id, "--properties", "abv"], socket: socket).out
            == #"{"objects":[{"id":"\#(id)","entity":"Beer","version":2,"values":{"abv":9.5}}]}"# + "\n")
        let stale = try Self.run(["update", id, "abv=1.0", "--if-version", "1"], socket: socket)
        #expect(stale.status == 1)
        #expect(stale.err.hasPrefix("persistctl: merge_conflict: object \(id) is at version 2, not 1"), "\(stale.err)")
        #expect(try Self.run(["delete", id, "--if-version", "2", "--save"], socket: socket).out == "{\"deleted\":1}\n{\"inserted\":0,\"updated\":0,\"deleted\":1}\n")
        #expect(try Self.run(["count", "Beer"], socket: socket).out == "{\"count\":0}\n")
    }

    @Test("tables for people with --table")
    func table() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        _ = try Self.run(["insert", "Person", "name=Ada", "age=36", "--save"], socket: daemon.socketPath)
        _ = try Self.run(["insert", "Person", "name=Grace", "age=85", "--save"], socket: daemon.socketPath)
        let table = try Self.run(["--table", "fetch", "Person", "--dictionaries", "--properties", "name,age", "--sort", "age:desc"],
                                 socket: daemon.socketPath)
        #expect(table.out == "name   age\n-----  ---\nGrace  85\nAda    36\n")
        #expect(try Self.run(["--table", "count", "Person"], socket: daemon.socketPath).out == "2\n")
    }

    @Test("errors go to stderr with the server's code and message, and a non-zero status")
    func errors() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let unknown = try Self.run(["count", "Wine"], socket: daemon.socketPath)
        #expect(unknown.status == 1)
        #expect(unknown.out == "")
        #expect(unknown.err == "persistctl: unknown_entity: the model has no entity \"Wine\"\n")
        let syntax = try Self.run(["fetch", "Beer", "--where", "abv >"], socket: daemon.socketPath)
        #expect(syntax.status == 1)
        #expect(syntax.err.hasPrefix("persistctl: predicate_syntax: "))
        let usage = try Self.run(["insert", "Beer", "abv"], socket: daemon.socketPath)
        #expect(usage.status == 2)
        let nobody = try Self.run(["ping"], socket: daemon.directory.appendingPathComponent("nobody.sock").path)
        #expect(nobody.status == 69)
        #expect(nobody.err.hasPrefix("persistctl: cannot reach persistd at "))
    }

    /// `insert --save` sends the insert and its save in one write: the daemon runs them as one
    /// unit, one transaction each time, where sent one by one the insert would reserve its key
    /// in a transaction of its own (six writes in six transactions for three commands). A
    /// save that fails (a `Beer` without its required `uuid`) fails as before: its error,
    /// status 1, nothing printed, nothing saved.
    @Test("insert --save is one write and one transaction; a failing save saves nothing")
    func insertAndSaveTogether() throws {
        let daemon = try DaemonHarness.start()
        for name in ["Ada", "Grace", "Barbara"] {
            let inserted = try Self.run(["insert", "Person", "name=\(name)", "--save"], socket: daemon.socketPath)
            #expect(inserted.status == 0, "\(inserted.err)")
            let lines = inserted.out.split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            let id = try JSONParser.parse(lines.first ?? "")["object"]?.string("id") ?? ""
            #expect(id.contains("/Person/p"), "the insert's reply has the permanent ID: \(id)")
            #expect(lines.last == #"{"inserted":1,"updated":0,"deleted":0}"#)
        }
        let failing = try Self.run(["insert", "Beer", "name=Nameless", "--save"], socket: daemon.socketPath)
        #expect(failing.status == 1)
        #expect(failing.out == "")
        #expect(failing.err.hasPrefix("persistctl: validation_failed: "), "\(failing.err)")
        #expect(try Self.run(["count", "Person"], socket: daemon.socketPath).out == "{\"count\":3}\n")
        #expect(try Self.run(["count", "Beer"], socket: daemon.socketPath).out == "{\"count\":0}\n")

        #expect(daemon.stop() == 0)
        let line = daemon.standardError.split(separator: "\n").first { $0.contains("group commit: ") }
        let numbers = (line ?? "").split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        // "group commit: N writes in M transactions (largest L, F failed, K committed on the saving thread)"
        #expect(numbers.count == 5, "\(daemon.standardError)")
        if numbers.count == 5 {
            // The three units, and the key the failed save's insert then took alone.
            #expect(numbers[0] == 4 && numbers[1] == 4, "\(line ?? "")")
        }
    }

    @Test("raw passes NDJSON through, replies in order")
    func raw() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        let result = try Self.run(["raw"], socket: daemon.socketPath,
                                  stdin: "{\"id\":1,\"op\":\"ping\"}\nnot json\n{\"id\":2,\"op\":\"count\",\"entity\":\"Tag\"}\n")
        #expect(result.status == 0)
        #expect(result.out == """
            {"id":1,"ok":true,"result":{"pong":true}}
            {"id":null,"ok":false,"error":{"code":"bad_request","message":"the line is not valid JSON: unexpected character at byte 0"}}
            {"id":2,"ok":true,"result":{"count":0}}

            """)
    }
}

/// Resolving persistd's configuration from flags, environment and config file.
@Suite("persistd configuration")
struct DaemonConfigurationTests {
    @Test("flags win over the environment, which wins over the config file; defaults fill the rest")
    func precedence() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("persistd.conf")
        try Data("""
            # persistd settings
            model = /etc/model.json
            store = "/var/lib/store.sqlite"   # quoted
            socket = /run/file.sock
            idle-timeout = 60
            max-connections = 10
            """.utf8).write(to: file)
        let arguments = try DaemonArguments.parse(["--config", file.path, "--socket=/run/flag.sock"])
        let configuration = try DaemonConfiguration.resolve(arguments, environment: [
            "PERSISTD_SOCKET": "/run/env.sock", "PERSISTD_STORE_TYPE": "xml", "PERSISTD_MAX_CONNECTIONS": "20",
            "PERSISTD_SOCKET_MODE": "0600", "PERSISTD_ALLOW_UIDS": "1000, 1001",
        ])
        var expected = ServerConfiguration(modelPath: "/etc/model.json", storePath: "/var/lib/store.sqlite", socketPath: "/run/flag.sock")
        expected.storeType = .xml
        expected.maximumConnections = 20
        expected.idleTimeout = 60
        expected.socketMode = 0o600
        expected.allowedUserIDs = [1000, 1001]
        #expect(configuration == expected)
        let defaults = try DaemonConfiguration.resolve(try DaemonArguments.parse(["--model", "m.json"]), environment: [:])
        #expect(defaults == ServerConfiguration(modelPath: "m.json", storePath: ".persistd/store.sqlite", socketPath: ".persistd/persistd.sock"))
        #expect(defaults.busyPoll == 50e-6)
        // Microseconds on the command line and in the environment; 0 turns polling off.
        let polled = try DaemonConfiguration.resolve(try DaemonArguments.parse(["--model", "m.json", "--busy-poll", "120"]), environment: [:])
        #expect(polled.busyPoll == 120e-6)
        let unpolled = try DaemonConfiguration.resolve(try DaemonArguments.parse(["--model", "m.json"]), environment: ["PERSISTD_BUSY_POLL": "0"])
        #expect(unpolled.busyPoll == 0)
        // The group commit does not wait for announced saves unless told to, in microseconds.
        #expect(defaults.commitDelay == 0)
        let delayed = try DaemonConfiguration.resolve(try DaemonArguments.parse(["--model", "m.json", "--commit-delay", "250"]), environment: [:])
        #expect(delayed.commitDelay == 250e-6)
        let delayedByEnvironment = try DaemonConfiguration.resolve(try DaemonArguments.parse(["--model", "m.json"]),
                                                                   environment: ["PERSISTD_COMMIT_DELAY": "100000"])
        #expect(delayedByEnvironment.commitDelay == 0.1)
    }

    @Test("bad settings are usage errors naming the setting", arguments: [
        (["--model", "m", "--store-type", "csv"], "store-type must be sqlite, xml, binary or memory, not \"csv\""),
        (["--model", "m", "--socket-mode", "999"], "socket-mode must be octal permissions such as 0660, not \"999\""),
        (["--model", "m", "--max-line", "0"], "max-line must be a positive integer, not \"0\""),
        (["--model", "m", "--idle-timeout", "soon"], "idle-timeout must be a number of seconds, not \"soon\""),
        (["--model", "m", "--busy-poll", "-1"], "busy-poll must be a number of microseconds from 0 to 1000000, not \"-1\""),
        (["--model", "m", "--busy-poll", "2000000"], "busy-poll must be a number of microseconds from 0 to 1000000, not \"2000000\""),
        (["--model", "m", "--commit-delay", "-1"], "commit-delay must be a number of microseconds from 0 to 100000, not \"-1\""),
        (["--model", "m", "--commit-delay", "100001"], "commit-delay must be a number of microseconds from 0 to 100000, not \"100001\""),
        (["--model", "m", "--commit-delay", "0.5"], "commit-delay must be a number of microseconds from 0 to 100000, not \"0.5\""),
        ([], "no model: give --model PATH (or PERSISTD_MODEL, or model in the config file)"),
    ])
    func errors(arguments: [String], message: String) throws {
        let parsed = try DaemonArguments.parse(arguments)
        #expect(throws: DaemonArguments.UsageError(message)) { try DaemonConfiguration.resolve(parsed, environment: [:]) }
    }

    @Test("a config file with an unknown setting or a line without = is refused with file and line")
    func fileErrors() {
        #expect(throws: DaemonArguments.UsageError("f.conf:2: unknown setting \"colour\"")) {
            try DaemonConfiguration.parseFile("model = m\ncolour = blue\n", path: "f.conf")
        }
        #expect(throws: DaemonArguments.UsageError("f.conf:1: expected `name = value`")) {
            try DaemonConfiguration.parseFile("model m\n", path: "f.conf")
        }
    }
}
