import Foundation
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// The access policy against real peers: `persistctl raw` run as `nobody` (`setpriv`) while the
/// tests and the daemon run as root.
@Suite("access by peer credentials", .timeLimit(.minutes(1)))
struct AccessTests {
    /// Starts persistd in a directory `nobody` can enter, its socket open to all (0666), so
    /// only the policy decides.
    static func start(_ policy: [String]) throws -> DaemonHarness {
        try DaemonHarness.start(["--socket-mode", "0666"] + policy, directory: try SystemdProcess.openDirectory(), removesDirectory: true)
    }

    /// Sends `requests` as `nobody:nogroup` (and `groups` as supplementary groups); the reply lines.
    static func asNobody(_ daemon: DaemonHarness, _ requests: [String], groups: String? = nil, refused: Bool = false) throws -> [JSON] {
        let identity = ["--reuid=nobody", "--regid=nogroup"] + (groups.map { ["--groups=\($0)"] } ?? ["--clear-groups"])
        let persistctl = SystemdProcess.binDirectory.appendingPathComponent("persistctl").path
        let result = try SystemdProcess.run("/usr/bin/setpriv", identity + [persistctl, "--socket", daemon.socketPath, "raw"],
                                            input: requests.joined(separator: "\n") + "\n")
        // A refused client may find the connection closed before it has sent everything.
        if !refused { #expect(result.err == "", "\(result.err)") }
        return try result.out.split(separator: "\n").map { try JSONParser.parse(Array($0.utf8)) }
    }

    static let read = #"{"id":1,"op":"count","entity":"Person"}"#
    static let write = #"{"id":2,"op":"insert","entity":"Person","values":{"name":"Ada"}}"#
    static let stats = #"{"id":3,"op":"stats"}"#

    @Test("an unlisted user is refused at once with one unauthorized line, and the daemon logs it")
    func refused() throws {
        let daemon = try Self.start([])
        let replies = try Self.asNobody(daemon, [Self.read, Self.write], refused: true)
        #expect(replies.count == 1)
        #expect(replies.first?["id"] == .null)
        #expect(replies.first?["error"]?["code"] == "unauthorized")
        #expect(replies.first?["error"]?.string("message") == "user 65534 may not connect to this server")
        // Root still may.
        #expect(try daemon.connect().result(["op": "ping"]) == ["pong": true])
        daemon.stop()
        let log = daemon.standardError
        #expect(log.contains("persistd: refused a peer: not allowed by the access policy connection="))
        #expect(log.contains(" peer_uid=65534 peer_gid=65534 peer_pid="))
    }

    @Test("a read-only user reads; writes and stats are unauthorized, and the connection stays open")
    func readOnly() throws {
        let daemon = try Self.start(["--read-only-users", "nobody"])
        defer { daemon.stop() }
        let replies = try Self.asNobody(daemon, [Self.read, Self.write, Self.stats, Self.read])
        #expect(replies.map { $0["ok"] } == [true, false, false, true])
        #expect(replies[1]["error"]?["code"] == "unauthorized")
        #expect(replies[1]["error"]?.string("message") == "user 65534 may only read; insert needs write access")
        #expect(replies[1]["error"]?["op"] == "insert")
        #expect(replies[2]["error"]?["code"] == "unauthorized")
        #expect(replies[3]["result"] == ["count": 0])
    }

    @Test("a listed user, or a member of a listed group, may write")
    func allowed() throws {
        let byUser = try Self.start(["--allow-users", "nobody"])
        defer { byUser.stop() }
        #expect(try Self.asNobody(byUser, [Self.write]).map { $0["ok"] } == [true])
        // A supplementary group counts (SO_PEERGROUPS); the primary group here is nogroup.
        let byGroup = try Self.start(["--allow-groups", "daemon"])
        defer { byGroup.stop() }
        #expect(try Self.asNobody(byGroup, [Self.write], groups: "daemon").map { $0["ok"] } == [true])
        #expect(try Self.asNobody(byGroup, [Self.write], refused: true).first?["error"]?["code"] == "unauthorized")
    }

    @Test("SIGHUP applies a new policy to connections already open")
    func reloadPolicy() throws {
        let directory = try SystemdProcess.openDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("persistd.conf")
        try Data("read-only-users = 1\n".utf8).write(to: config)
        let daemon = try DaemonHarness.start(["--socket-mode", "0666", "--config", config.path], directory: directory)
        defer { daemon.stop() }
        #expect(try Self.asNobody(daemon, [Self.read], refused: true).first?["error"]?["code"] == "unauthorized")
        try Data("read-only-users = nobody\n".utf8).write(to: config)
        kill(daemon.process.processIdentifier, SIGHUP)
        let deadline = Date().addingTimeInterval(5)
        var replies: [JSON] = []
        while Date() < deadline {
            replies = try Self.asNobody(daemon, [Self.read], refused: true)
            if replies.first?["ok"] == true { break }
            usleep(50_000)
        }
        #expect(replies.first?["result"] == ["count": 0])
    }
}
