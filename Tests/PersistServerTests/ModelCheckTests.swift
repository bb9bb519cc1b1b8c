import Foundation
import Testing
@testable import PersistServer

/// `persistd --model PATH --check`, run as the real built binary.
@Suite("persistd --check")
struct ModelCheckTests {
    static var packageRoot: URL { BuiltBinary.packageRoot }

    /// The `persistd` binary.
    static var binary: URL { BuiltBinary.url("persistd") }

    /// Runs `persistd` with `arguments`; returns its exit status, stdout and stderr.
    static func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try BuiltBinary.run("persistd", arguments)
    }

    @Test("a valid model prints its normalized JSON and exits 0")
    func validModel() throws {
        let path = Self.packageRoot.appendingPathComponent("Examples/Beers.model.json").path
        let result = try Self.run(["--model", path, "--check"])
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(result.out == ModelCheck.run(modelPath: path).standardOutput)
        #expect(result.out.hasPrefix("{\n  \"configurations\": {\n    \"Beers\": [\n      \"Beer\",\n"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
        let names = (json["entities"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["Beer", "Bison", "Brewery", "Person", "Student", "Tag"])
        // Deterministic: the same bytes on a second run.
        #expect(try Self.run(["--check", "--model=\(path)"]).out == result.out)
    }

    @Test("an Xcode bundle is checked through its current version")
    func xcodeBundle() throws {
        let path = Self.packageRoot.appendingPathComponent("Tests/PersistKitTests/Fixtures/Beers.xcdatamodeld").path
        let result = try Self.run(["--model", path, "--check"])
        #expect(result.status == 0)
        #expect(result.out.contains("\"name\": \"Lemonade\""))
    }

    @Test("an invalid model prints one error line naming file, entity and property, and exits 1")
    func invalidModel() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persistd-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("bad.json")
        try Data(#"{ "entities": [{ "name": "Beer", "attributes": [{ "name": "ibu", "type": "integer16", "default": 99999 }] }] }"#.utf8).write(to: file)
        let result = try Self.run(["--model", file.path, "--check"])
        #expect(result.status == 1)
        #expect(result.out == "")
        #expect(result.err == "persistd: \(file.path): entity Beer, property ibu: default value 99999 is not a valid integer16\n")

        let missing = directory.appendingPathComponent("missing.json")
        let second = try Self.run(["--model", missing.path, "--check"])
        #expect(second.status == 1)
        #expect(second.err == "persistd: \(missing.path): no such file\n")
    }

    @Test("--help prints usage and exits 0; unknown flags exit 2")
    func usage() throws {
        let help = try Self.run(["--help"])
        #expect(help.status == 0)
        #expect(help.out == DaemonArguments.usage)
        let unknown = try Self.run(["--model", "x.json", "--frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.err == "persistd: unknown option --frobnicate\n" + DaemonArguments.usage)
        let badDelay = try Self.run(["--model", "x.json", "--commit-delay", "1000000"])
        #expect(badDelay.status == 2)
        #expect(badDelay.err == "persistd: commit-delay must be a number of microseconds from 0 to 100000, not \"1000000\"\n" + DaemonArguments.usage)
        let noModel = try Self.run(["--check"])
        #expect(noModel.status == 2)
        #expect(noModel.err.hasPrefix("persistd: --check needs --model PATH\n"))
    }
}

/// Parsing the `persistd` command line.
@Suite("persistd arguments")
struct DaemonArgumentsTests {
    @Test("valid command lines")
    func valid() throws {
        var expected = DaemonArguments()
        expected.mode = .checkModel
        expected.modelPath = "m.json"
        #expect(try DaemonArguments.parse(["--model", "m.json", "--check"]) == expected)
        #expect(try DaemonArguments.parse(["--check", "--model=m.json"]) == expected)
        #expect(try DaemonArguments.parse(["--model", "m.json", "-h"]).mode == .help)
        #expect(try DaemonArguments.parse(["-h"]).mode == .help)
        #expect(try DaemonArguments.parse(["--model", "m.json"]).mode == .serve)
        #expect(try DaemonArguments.parse([]) == DaemonArguments())
    }

    @Test("usage errors", arguments: [
        (["--frobnicate"], "unknown option --frobnicate"),
        (["stray"], "unexpected argument stray"),
        (["--model"], "option --model needs a path"),
        (["--model="], "option --model needs a path"),
        (["--check"], "--check needs --model PATH"),
    ])
    func errors(arguments: [String], message: String) {
        #expect(throws: DaemonArguments.UsageError(message)) { try DaemonArguments.parse(arguments) }
    }
}
