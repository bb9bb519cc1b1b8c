import Foundation
import Testing
@testable import PersistServer
#if canImport(Glibc)
import Glibc
#endif

/// The units in `systemd/`, installed by `make install-systemd` into a temporary prefix (so
/// `ExecStart=` names a real binary), checked by the real `systemd-analyze`.
@Suite("systemd units", .serialized, .timeLimit(.minutes(2)))
struct SystemdUnitTests {
    static let units = ["persistd.socket", "persistd.service", "persistd@.socket", "persistd@.service"]

    /// Installs into a new temporary prefix with the test build's `persistd` as `bin/persistd`.
    static func install() throws -> URL {
        let prefix = try DaemonHarness.temporaryDirectory()
        let make = try SystemdProcess.run("/usr/bin/make", ["-s", "-C", DaemonHarness.packageRoot.path, "install-systemd", "PREFIX=\(prefix.path)"])
        guard make.status == 0 else { throw HarnessError("make install-systemd: \(make.err)") }
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("bin"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: ModelCheckTests.binary, to: prefix.appendingPathComponent("bin/persistd"))
        return prefix
    }

    @Test("make install-systemd lays out units, snippets, config and docs")
    func layout() throws {
        let prefix = try Self.install()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let files = ["lib/systemd/system/persistd.socket", "lib/systemd/system/persistd.service", "lib/systemd/system/persistd@.socket",
                     "lib/systemd/system/persistd@.service", "lib/sysusers.d/persistd.conf", "lib/tmpfiles.d/persistd.conf",
                     "etc/persistd/persistd.conf", "share/doc/persistd/examples/persistd.conf", "share/doc/persistd/systemd.md",
                     "share/persistd/Beers.model.json"]
        for file in files { #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "\(file)") }
        let service = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/system/persistd.service"), encoding: .utf8)
        #expect(service.contains("ExecStart=\(prefix.path)/bin/persistd --config \(prefix.path)/etc/persistd/persistd.conf --store %S/persistd/store.sqlite\n"))
        for placeholder in ["@bindir@", "@sysconfdir@", "@docdir@"] { #expect(!service.contains(placeholder)) }
        // The example config is a valid config: persistd reads it (and the model it names).
        let config = prefix.appendingPathComponent("etc/persistd/persistd.conf").path
        let configuration = try DaemonConfiguration.resolve(try DaemonArguments.parse(["--config", config]), environment: [:])
        #expect(configuration.modelPath == prefix.appendingPathComponent("share/persistd/Beers.model.json").path)
        #expect(FileManager.default.fileExists(atPath: configuration.modelPath))
    }

    @Test("systemd-analyze verify passes on every unit")
    func verify() throws {
        let prefix = try Self.install()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let directory = prefix.appendingPathComponent("lib/systemd/system")
        let units = Self.units.map { directory.appendingPathComponent($0).path }
        let result = try SystemdProcess.run("/usr/bin/systemd-analyze", ["verify"] + units)
        #expect(result.status == 0)
        #expect(result.err == "")
        // And it is a real check: without the binary at ExecStart=, verify fails.
        try FileManager.default.removeItem(at: prefix.appendingPathComponent("bin/persistd"))
        let missing = try SystemdProcess.run("/usr/bin/systemd-analyze", ["verify", directory.appendingPathComponent("persistd.service").path])
        #expect(missing.status != 0)
        #expect(missing.err.contains("persistd"))
    }

    @Test("systemd-analyze security rates both services 0.4 SAFE (offline)", arguments: ["persistd.service", "persistd@.service"])
    func security(unit: String) throws {
        let prefix = try Self.install()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let path = prefix.appendingPathComponent("lib/systemd/system/\(unit)").path
        let result = try SystemdProcess.run("/usr/bin/systemd-analyze", ["security", "--offline=yes", "--threshold=4", "--no-pager", path])
        #expect(result.status == 0)
        let name = unit == "persistd@.service" ? "persistd@i.service" : unit
        #expect(result.out.contains("Overall exposure level for \(name): 0.4 SAFE"), "\(result.out.suffix(200))")
    }

    @Test("the config snippets parse: sysusers.d and tmpfiles.d")
    func snippets() throws {
        let root = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let sysusers = DaemonHarness.packageRoot.appendingPathComponent("systemd/persistd.sysusers").path
        try FileManager.default.createDirectory(at: root.appendingPathComponent("etc"), withIntermediateDirectories: true)
        // Into the temporary root: the user, then the directories it owns.
        let users = try SystemdProcess.run("/usr/bin/systemd-sysusers", ["--root=\(root.path)", sysusers])
        #expect(users.status == 0, "\(users.err)")
        let passwd = try String(contentsOf: root.appendingPathComponent("etc/passwd"), encoding: .utf8)
        let entry = try #require(passwd.split(separator: "\n").first { $0.hasPrefix("persistd:") }?.split(separator: ":", omittingEmptySubsequences: false))
        #expect(entry[4...6] == ["persistd store server", "/var/lib/persistd", "/usr/sbin/nologin"])
        let tmpfiles = DaemonHarness.packageRoot.appendingPathComponent("systemd/persistd.tmpfiles").path
        let created = try SystemdProcess.run("/usr/bin/systemd-tmpfiles", ["--root=\(root.path)", "--create", tmpfiles])
        #expect(created.status == 0, "\(created.err)")
        var info = stat()
        #expect(stat(root.appendingPathComponent("var/lib/persistd").path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o750)
        #expect(String(info.st_uid) == entry[2])
        #expect(stat(root.appendingPathComponent("run/persistd").path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o755)
    }
}
