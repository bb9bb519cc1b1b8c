import Foundation
import Testing

/// A whole session against `persistd` as installed: linked with `--static-swift-stdlib`.
///
/// `make test-static` builds that binary and runs this suite with `PERSIST_BIN_DIR` pointing at
/// it and `PERSIST_EXPECT_STATIC=1`; in the ordinary test run the same session runs against the
/// debug binary, and the check that no Swift runtime library is mapped is left out. A static
/// executable lacks the members of `libFoundation.a` it does not reference (see
/// `SQLiteMetadata.bridgedArray`): the session writes and reads back the store metadata's
/// binary property list, which once failed there with "Not A Type".
@Suite("statically linked persistd", .timeLimit(.minutes(1)))
struct StaticLinkTests {
    /// Whether the binary under test must be the statically linked one.
    static var expectsStatic: Bool { ProcessInfo.processInfo.environment["PERSIST_EXPECT_STATIC"] == "1" }

    /// The shared libraries mapped into process `pid` (paths from `/proc/PID/maps`).
    static func mappedLibraries(_ pid: Int32) throws -> Set<String> {
        // A /proc file reports size 0: read it to the end rather than by its size.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var result = Set<String>()
        for line in maps.split(separator: "\n") {
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last, path.hasPrefix("/"),
                  path.contains(".so") else { continue }
            result.insert(String(path))
        }
        return result
    }

    /// MagicalRecord's Recipes store from `../shared/corpus`, written by Core Data, and its model
    /// (Xcode 3 binary archives, read by the legacy model reader), or `nil` when it is absent.
    static var recipesCorpus: URL? {
        let directory = DaemonHarness.packageRoot.deletingLastPathComponent()
            .appendingPathComponent("shared/corpus/stores/magicalpanda__MagicalRecord")
        return FileManager.default.fileExists(atPath: directory.path) ? directory : nil
    }

    @Test("a Core Data store from the corpus: its legacy model loads, its metadata and objects read",
          .enabled(if: recipesCorpus != nil, "../shared/corpus is absent"))
    func coreDataStore() throws {
        let corpus = try #require(Self.recipesCorpus)
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: corpus.appendingPathComponent("Recipes.sqlite"),
                                         to: directory.appendingPathComponent("store.sqlite"))
        let daemon = try DaemonHarness.start(model: corpus.appendingPathComponent("Recipes.xcdatamodeld").path,
                                             directory: directory)
        defer { daemon.stop() }
        let client = try daemon.connect()
        // Z_UUID and row counts as recorded in Recipes.facts.json.
        #expect(try client.result(["op": "hello"])["store"]?.string("uuid") == "124B4E21-BB5D-4A2F-9882-EC2E73F3A0F4")
        #expect(try client.result(["op": "count", "entity": "Recipe"]) == ["count": 7])
        #expect(try client.result(["op": "count", "entity": "RecipeType"]) == ["count": 5])
    }

    /// The function symbols `persistd` defines, by name: their addresses (`nm --defined-only`).
    static func functionAddresses(_ binary: String) throws -> [Substring: UInt64] {
        let listing = try SystemdProcess.run("/usr/bin/nm", ["--defined-only", binary], timeout: 60)
        #expect(listing.status == 0, "nm: \(listing.err)")
        var addresses: [Substring: UInt64] = [:]
        for line in listing.out.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, "tTwW".contains(fields[1]), let address = UInt64(fields[0], radix: 16) else { continue }
            addresses[fields[2]] = address
        }
        return addresses
    }

    @Test("linked as installed: packed relative relocations, no exported symbols, and the functions of Build/hot-functions.txt first",
          .enabled(if: expectsStatic, "only the release build links with lld and the function order"))
    func releaseLayout() throws {
        let binary = BuiltBinary.url("persistd").path
        let dynamic = try SystemdProcess.run("/usr/bin/readelf", ["--dynamic", binary])
        #expect(dynamic.out.contains("(RELR)"), "no DT_RELR: the relative relocations are not packed")
        let exported = try SystemdProcess.run("/usr/bin/nm", ["--dynamic", "--defined-only", binary])
        #expect(exported.status == 0, "nm: \(exported.err)")
        let exportedCount = exported.out.split(separator: "\n").count
        #expect(exportedCount == 0, "persistd exports \(exportedCount) symbols: linked with -export-dynamic")

        let list = try String(contentsOf: BuiltBinary.packageRoot.appendingPathComponent("Build/hot-functions.txt"), encoding: .utf8)
        let hot = list.split(separator: "\n").filter { !$0.hasPrefix("#") }
        let addresses = try Self.functionAddresses(binary)
        let textStart = try #require(addresses.values.min())
        let placed = hot.compactMap { addresses[$0] }
        #expect(placed.count * 2 > hot.count,
                "only \(placed.count) of \(hot.count) listed functions are in the binary: the list is stale, run make hot-functions")
        // The linker lays the listed functions out in their order from the start of .text
        // (bringing along what shares a section with them). Without the order the first ones
        // lie anywhere in the 17 MiB of code.
        let first = placed.prefix(100)
        let far = first.filter { $0 - textStart >= 1 << 20 }
        #expect(first.count == 100 && far.isEmpty, "\(far.count) of the first \(first.count) listed functions lie past 1 MiB of .text")
    }

    /// The library the dynamic linker bound each use of `symbol` to, by the file using it, from
    /// the `LD_DEBUG=bindings` report `bindings` (one line per binding it made).
    static func boundLibraries(of symbol: String, in bindings: String) -> [(user: Substring, library: Substring)] {
        bindings.split(separator: "\n").compactMap { line in
            // "  PID:\tbinding file USER [0] to LIBRARY [0]: normal symbol `malloc' [GLIBC_2.2.5]"
            guard line.contains("normal symbol `\(symbol)'"), let file = line.range(of: "binding file "),
                  let to = line.range(of: " to ", range: file.upperBound..<line.endIndex) else { return nil }
            let user = line[file.upperBound..<to.lowerBound].split(separator: " ").first ?? ""
            let library = line[to.upperBound...].split(separator: " ").first ?? ""
            return (user, library)
        }
    }

    @Test("malloc and its family resolve to jemalloc, for persistd and for every library it loads")
    func jemallocServesTheProcess() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The report goes to a file (REPORT.PID): thousands of lines, more than a pipe holds.
        let report = directory.appendingPathComponent("bindings")
        let run = try BuiltBinary.run("persistd", ["--help"], environment: ["LD_DEBUG": "bindings", "LD_DEBUG_OUTPUT": report.path])
        #expect(run.status == 0, "persistd --help: \(run.err.suffix(500))")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("bindings.") }
        let bindings = try files.map { try String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8) }.joined()
        for symbol in ["malloc", "free"] {
            #expect(!Self.boundLibraries(of: symbol, in: bindings).isEmpty, "no binding of \(symbol) reported (\(files))")
        }
        // A library whose malloc_usable_size or realloc were glibc's while its malloc was
        // jemalloc's would hand one allocator the other's memory.
        for symbol in ["malloc", "free", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign", "malloc_usable_size"] {
            let elsewhere = Self.boundLibraries(of: symbol, in: bindings).filter { !$0.library.contains("libjemalloc.so") }
            #expect(elsewhere.isEmpty, "\(symbol) bound outside jemalloc: \(elsewhere.map { "\($0.user) -> \($0.library)" })")
        }
    }

    @Test("new store with metadata, insert, save, fetch; restart on the same store: metadata and objects read back")
    func sessionAcrossRestart() throws {
        let directory = try DaemonHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }

        let first = try DaemonHarness.start(directory: directory)
        let libraries = try Self.mappedLibraries(first.process.processIdentifier)
        #expect(libraries.contains { $0.contains("libsqlite3") }, "maps read: \(libraries.sorted())")
        #expect(libraries.contains { $0.contains("libjemalloc") }, "persistd runs without jemalloc: \(libraries.sorted())")
        let swiftLibraries = libraries.filter {
            $0.contains("libswift") || $0.contains("libFoundation") || $0.contains("libdispatch")
        }
        if Self.expectsStatic {
            #expect(swiftLibraries.isEmpty, "persistd maps Swift runtime libraries: \(swiftLibraries.sorted())")
        }
        let client = try first.connect()
        let storeUUID = try client.result(["op": "hello"])["store"]?.string("uuid") ?? ""
        #expect(!storeUUID.isEmpty)
        let id = try client.result(["op": "insert", "entity": "Beer", "values": [
            "name": "Pliny the Elder", "abv": 8.0, "price": "4.25", "uuid": "5D0C2B56-1C1B-4E0E-9B2A-6F0A4C1D2E01",
        ]])["object"]?.string("id") ?? ""
        #expect(id == "x-coredata://\(storeUUID)/Beer/p1")
        #expect(try client.result(["op": "save"]) == ["inserted": 1, "updated": 0, "deleted": 0])
        #expect(try client.result(["op": "get", "ids": [.string(id)], "properties": ["name"]])["objects"]?
            .arrayValue?.first?["values"]?["name"] == "Pliny the Elder")
        client.close()
        #expect(first.stop() == 0)

        // The second start reads the metadata the first wrote (UUID, model version hashes).
        let second = try DaemonHarness.start(directory: directory)
        defer { second.stop() }
        let again = try second.connect()
        #expect(try again.result(["op": "hello"])["store"]?.string("uuid") == storeUUID)
        #expect(try again.result(["op": "count", "entity": "Beer"]) == ["count": 1])
        #expect(try again.result(["op": "get", "ids": [.string(id)]])["objects"]?
            .arrayValue?.first?["values"]?["price"] == "4.25")
        let next = try again.result(["op": "insert", "entity": "Beer", "values": [
            "name": "Heady Topper", "uuid": "5D0C2B56-1C1B-4E0E-9B2A-6F0A4C1D2E02",
        ]])["object"]?.string("id")
        #expect(next == "x-coredata://\(storeUUID)/Beer/p2")
        #expect(try again.result(["op": "save"]) == ["inserted": 1, "updated": 0, "deleted": 0])
    }
}
