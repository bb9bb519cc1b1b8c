import Foundation
import Testing
@testable import PersistServer

/// `persistctl bench`, run for a fraction of a second against a live daemon: the report is
/// well formed. (A benchmark is not a test: nothing here depends on a time.)
@Suite("persistctl bench", .timeLimit(.minutes(1)))
struct BenchCommandTests {
    @Test("get and insert runs print one JSON report with no errors")
    func reports() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        for op in ["get", "insert"] {
            let run = try PersistctlTests.run(["bench", "--op", op, "--entity", "Person", "--values", #"{"name":"Ada","age":36}"#,
                                               "--objects", "20", "--clients", "2", "--pipeline", "4", "--seconds", "0.2",
                                               "--warm-up", "0.1", "--json"], socket: daemon.socketPath)
            #expect(run.status == 0, "\(run.out)\(run.err)")
            let lines = run.out.split(separator: "\n")
            #expect(lines.count == 1)
            let report = try JSONParser.parse(String(lines.first ?? ""))
            #expect(report.members?.map(\.key) == ["op", "clients", "pipeline", "units", "seconds", "units_per_second", "p50_ms", "p99_ms", "errors"])
            #expect(report["op"] == .string(op))
            #expect(report["clients"] == 2 && report["pipeline"] == 4 && report["errors"] == 0)
            if case .integer(let units)? = report["units"] { #expect(units > 0) } else { Issue.record("no units in \(run.out)") }
        }
    }

    @Test("text report, and usage errors exit 2")
    func textAndUsage() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        // A run that completes no unit exits 1. A warm-up, and half a second: on a loaded
        // machine, a first ping to a daemon just started once took longer than a 0.1 s run.
        let run = try PersistctlTests.run(["bench", "--op", "ping", "--seconds", "0.5", "--warm-up", "0.2"], socket: daemon.socketPath)
        #expect(run.status == 0, "\(run.out)\(run.err)")
        #expect(run.out.hasPrefix("ping clients=1 pipeline=1: ") && run.out.hasSuffix(" in 0.5 s)\n"), "\(run.out)")
        #expect(BenchCommand.run(["--op", "fly"]).exitCode == 2)
        #expect(BenchCommand.run(["--clients", "0"]).exitCode == 2)
    }

    @Test("a setup the daemon refuses fails in one short line naming the error and the options to fix it")
    func refusedSetup() throws {
        let daemon = try DaemonHarness.start()
        defer { daemon.stop() }
        // Beer requires `name` and `uuid`: 30 inserts of no values fail their save with 60 errors.
        let run = try PersistctlTests.run(["bench", "--op", "get", "--entity", "Beer", "--objects", "30", "--seconds", "0.1",
                                           "--warm-up", "0"], socket: daemon.socketPath)
        #expect(run.status == 1)
        #expect(run.out.isEmpty)
        #expect(run.err.contains("saving the 30 Beer objects to read failed: validation_failed: "), "\(run.err)")
        #expect(run.err.contains("(first: Beer.") && run.err.contains("; 59 more)"), "\(run.err)")
        #expect(run.err.contains("--values"), "\(run.err)")
        #expect(run.err.split(separator: "\n").count == 1 && run.err.utf8.count < 400, "\(run.err)")
    }

    @Test("options parse")
    func options() throws {
        let options = try BenchCommand.parse(["--socket", "/tmp/x.sock", "--op", "insert", "--clients", "16", "--pipeline", "16",
                                              "--seconds", "1.5", "--entity", "Item", "--values", #"{"i0":1}"#, "--echo"])
        #expect(options.socketPath == "/tmp/x.sock" && options.op == "insert" && options.clients == 16 && options.pipeline == 16)
        #expect(options.seconds == 1.5 && options.entity == "Item" && options.values == .object([JSON.Member("i0", 1)]) && options.echo)
    }
}
