import Foundation
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// Logging: journal entries with structured fields when stderr is the `JOURNAL_STREAM`,
/// stderr lines otherwise.
@Suite("systemd journal logging", .timeLimit(.minutes(1)))
struct SystemdJournalTests {
    /// Whether this machine lets the test give persistd a private `/run` (a mount namespace),
    /// where a datagram socket of the test's stands in for journald's.
    static let canMountPrivateRun: Bool = {
        (try? SystemdProcess.run("/usr/bin/unshare", ["-m", "sh", "-c", "mount -t tmpfs none /run"]).status) == 0
    }()

    /// The fields of one native-protocol datagram (`NAME=value` lines; persistd sends no binary fields).
    static func fields(_ datagram: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for line in String(decoding: datagram, as: UTF8.self).split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return fields
    }

    @Test("under JOURNAL_STREAM: entries with PRIORITY, CODE_FILE, and per request REQUEST_ID, OP, PEER_UID",
          .enabled(if: canMountPrivateRun, "needs unshare -m and mount (CAP_SYS_ADMIN)"))
    func journalEntries() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: run.appendingPathComponent("systemd/journal"), withIntermediateDirectories: true)
        let journal = try DatagramListener(path: run.appendingPathComponent("systemd/journal/socket").path)
        // stderr is a file; JOURNAL_STREAM names it, as systemd names the stream it connects.
        let errorPath = directory.appendingPathComponent("stderr").path
        #expect(FileManager.default.createFile(atPath: errorPath, contents: nil))
        let errorFile = try #require(FileHandle(forWritingAtPath: errorPath))
        var info = stat()
        #expect(fstat(errorFile.fileDescriptor, &info) == 0)
        let socket = directory.appendingPathComponent("p.sock").path
        let process = try SystemdProcess.start("/usr/bin/unshare", ["-m", "sh", "-c", "mount --bind \"$0\" /run && exec \"$@\"", run.path,
            ModelCheckTests.binary.path, "--model", DaemonHarness.modelPath, "--store", directory.appendingPathComponent("s.sqlite").path,
            "--socket", socket, "--log-level", "debug"],
            environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"], standardError: errorFile)
        defer { SystemdProcess.stop(process, signal: SIGKILL) }
        var entries: [[String: String]] = []
        while let datagram = journal.receive(timeout: 10) {
            entries.append(Self.fields(datagram))
            if entries.last?["MESSAGE"]?.hasPrefix("serving") == true { break }
        }
        let serving = try #require(entries.last)
        #expect(serving["MESSAGE"] == "serving SQLite store \(directory.path)/s.sqlite on \(socket)")
        #expect(serving["PRIORITY"] == "5")
        #expect(serving["SYSLOG_IDENTIFIER"] == "persistd")
        #expect(serving["CODE_FILE"] == "PersistServer/Daemon.swift")
        #expect(serving["CODE_FUNC"] == "run(_:environment:)")
        #expect(Int(serving["CODE_LINE"] ?? "") != nil)

        let client = try WireClient(path: socket)
        #expect(try client.result(["id": 7, "op": "ping"]) == ["pong": true])
        var request: [String: String]?
        while let datagram = journal.receive(timeout: 5) {
            let fields = Self.fields(datagram)
            if fields["MESSAGE"] == "request" { request = fields; break }
        }
        let entry = try #require(request)
        #expect(entry["PRIORITY"] == "7")
        #expect(entry["REQUEST_ID"] == "7")
        #expect(entry["OP"] == "ping")
        #expect(entry["PEER_UID"] == String(getuid()))
        #expect(entry["PEER_PID"] == String(getpid()))
        #expect(entry["CODE_FILE"] == "PersistServer/Session.swift")
        client.close()
        #expect(SystemdProcess.stop(process) == 0)
        // Everything went to the journal; nothing to stderr.
        #expect(try String(contentsOfFile: errorPath, encoding: .utf8) == "")
    }

    @Test("JOURNAL_STREAM naming another file means stderr lines")
    func mismatchedStream() {
        #expect(LogDestination.detect(environment: ["JOURNAL_STREAM": "1:1"]) == .standardError)
        #expect(LogDestination.detect(environment: ["JOURNAL_STREAM": "garbage"]) == .standardError)
        #expect(LogDestination.detect(environment: [:]) == .standardError)
    }

    @Test("stderr lines and journal fields of one message")
    func formats() {
        let fields = [LogField.requestID("\"a\""), .op("fetch")] + LogField.peer(PeerCredentials(processID: 9, userID: 1000, groupID: 100))
        #expect(Logger.standardErrorLine("request", fields) == "persistd: request request_id=\"a\" op=fetch peer_uid=1000 peer_gid=100 peer_pid=9\n")
        #expect(Logger.journalFields(.debug, "request", fields, file: "PersistServer/Session.swift", line: 3, function: "handle(_:completion:)") == [
            "MESSAGE=request", "PRIORITY=7", "SYSLOG_IDENTIFIER=persistd", "CODE_FILE=PersistServer/Session.swift", "CODE_LINE=3",
            "CODE_FUNC=handle(_:completion:)", "REQUEST_ID=\"a\"", "OP=fetch", "PEER_UID=1000", "PEER_GID=100", "PEER_PID=9",
        ])
        #expect(LogLevel(name: "DEBUG") == .debug)
        #expect(LogLevel(name: "verbose") == nil)
        #expect(LogLevel.error < LogLevel.info)
    }
}
