import Foundation
import PersistKit
#if canImport(Glibc)
import Glibc
#endif

/// Workloads 7 (over the socket, against Redis and an echo server) and 8 (memory).
@MainActor
struct SocketWorkloads {
    let directory: URL
    let runs: Int
    /// Measured seconds of each load run.
    let seconds: Double
    let quick: Bool
    let wanted: @MainActor (String) -> Bool
    let report: @MainActor (BenchmarkRow) -> Void

    func run() throws {
        SocketBench.raiseDescriptorLimit()
        let modelURL = directory.appendingPathComponent("bench.model.json")
        try Data(SocketBench.modelJSON.utf8).write(to: modelURL)
        if wanted("7") { try load(modelURL) }
        if wanted("8") { try memory(modelURL) }
    }

    /// Starts persistd on a fresh store; the caller stops it.
    func startDaemon(_ modelURL: URL, name: String) throws -> (SocketBench.Child, String) {
        let socket = directory.appendingPathComponent("\(name).sock").path
        let store = directory.appendingPathComponent("\(name).sqlite")
        Bench.remove(store)
        let daemon = try SocketBench.Child(SocketBench.sibling("persistd"), [
            "--model", modelURL.path, "--store", store.path, "--socket", socket,
            // Every client of the bench is one user: the per-user limit (64) would refuse a
            // run's clients while the connections of the run before are still closing.
            "--max-connections", "2000", "--max-connections-per-user", "2000", "--max-queued", "1024", "--idle-timeout", "0",
        ], captureOutput: false)
        try SocketBench.waitForSocket(socket)
        return (daemon, socket)
    }

    // MARK: - 7

    func load(_ modelURL: URL) throws {
        let (daemon, socket) = try startDaemon(modelURL, name: "persistd")
        defer { daemon.stop() }
        let echo = try EchoServer(path: directory.appendingPathComponent("echo.sock").path)
        defer { echo.stop() }
        var redis: SocketBench.Child?
        let redisSocket = directory.appendingPathComponent("redis.sock").path
        let redisBenchmark = SocketBench.which("redis-benchmark")
        if let server = SocketBench.which("redis-server"), redisBenchmark != nil {
            redis = try SocketBench.Child(server, ["--port", "0", "--unixsocket", redisSocket, "--unixsocketperm", "700",
                                                  "--save", "", "--appendonly", "no"], captureOutput: false)
            try SocketBench.waitForSocket(redisSocket)
        } else {
            print("redis-server or redis-benchmark is missing (apt-get install redis-server redis-tools): no Redis baseline")
        }
        defer { redis?.stop() }

        // insert+save's baseline: raw SQLite's one-row commits per second (WAL, synchronous=NORMAL).
        let rawURL = directory.appendingPathComponent("commits-raw.sqlite")
        Bench.remove(rawURL)
        let raw = RawSQLite(path: rawURL.path)
        raw.createItemTable()
        var nextKey: Int64 = 1
        let commits = 2_000
        /// Raw one-row commits per second, measured once per round beside the saves it is compared with.
        func commitsPerSecond() -> Double {
            let start = ContinuousClock.now
            raw.singleRowTransactions(commits, firstKey: nextKey)
            nextKey += Int64(commits)
            let elapsed = ContinuousClock.now - start
            return Double(commits) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }

        let item = ["--entity", "Item", "--values", SocketBench.itemValues]
        for pipeline in [1, 16] {
            for clients in [1, 16, 64] {
                let shape = ["--clients", String(clients), "--pipeline", String(pipeline)]
                var ours: [SocketBench.Load] = [], echoes: [SocketBench.Load] = [], gets: [SocketBench.Load] = []
                var inserts: [SocketBench.Load] = [], sets: [SocketBench.Load] = [], rawCommits: [Double] = []
                // One warm-up of each, then `runs` measured, interleaved so drifts in load hit all alike.
                for run in 0...runs {
                    let get = try SocketBench.persistctlBench(["--socket", socket, "--op", "get", "--objects", "1000"] + item + shape,
                                                              seconds: seconds)
                    let echoed = try SocketBench.persistctlBench(["--socket", echo.path, "--echo"] + shape, seconds: seconds)
                    let insert = try SocketBench.persistctlBench(["--socket", socket, "--op", "insert"] + item + shape, seconds: seconds)
                    let committed = commitsPerSecond()
                    var redisGet: SocketBench.Load?, redisSet: SocketBench.Load?
                    if let redisBenchmark, redis != nil {
                        let estimate = pipeline == 1 ? (clients == 1 ? 20_000.0 : 60_000.0) : 300_000.0
                        let requests = max(2_000, Int(estimate * seconds))
                        redisGet = try SocketBench.redisBenchmark(redisBenchmark, socket: redisSocket, test: "get", clients: clients,
                                                                  pipeline: pipeline, requests: requests)
                        redisSet = try SocketBench.redisBenchmark(redisBenchmark, socket: redisSocket, test: "set", clients: clients,
                                                                  pipeline: pipeline, requests: requests)
                    }
                    guard run > 0 else { continue }
                    ours.append(get)
                    echoes.append(echoed)
                    inserts.append(insert)
                    rawCommits.append(committed)
                    if let redisGet, let redisSet {
                        gets.append(redisGet)
                        sets.append(redisSet)
                    }
                }
                let label = "\(clients) client\(clients == 1 ? "" : "s"), depth \(pipeline)"
                report(Measure.row("7 get, \(label)", target: 1.0, ours: ours.map(\.perSecond), baseline: gets.map(\.perSecond),
                                   unit: "req/s", better: "higher", baselineName: "redis GET", paired: true, details: [
                                       "p50_ms": Measure.median(ours.map(\.p50)), "p99_ms": Measure.median(ours.map(\.p99)),
                                       "redis_p50_ms": Measure.median(gets.map(\.p50)), "redis_p99_ms": Measure.median(gets.map(\.p99)),
                                       "echo_req_s": Measure.median(echoes.map(\.perSecond)),
                                       "echo_p99_ms": Measure.median(echoes.map(\.p99)),
                                   ]))
                report(Measure.row("7 insert+save, \(label)", target: 1.0, ours: inserts.map(\.perSecond), baseline: rawCommits,
                                   unit: "saves/s", better: "higher", baselineName: "raw 1-row commits", paired: true, details: [
                                       "p50_ms": Measure.median(inserts.map(\.p50)), "p99_ms": Measure.median(inserts.map(\.p99)),
                                       "redis_set_req_s": Measure.median(sets.map(\.perSecond)),
                                       // The same shape's echo rate: at depth 1 a unit waits for
                                       // one round trip, so no server exceeds it.
                                       "echo_req_s": Measure.median(echoes.map(\.perSecond)),
                                   ]))
            }
        }
    }

    // MARK: - 8

    func memory(_ modelURL: URL) throws {
        // Peak RSS of a batched fetch of 1,000,000 objects, each touched, in a process of its own.
        let count = quick ? 100_000 : 1_000_000
        let url = directory.appendingPathComponent("million.sqlite")
        Bench.remove(url)
        do {
            let context = try Bench.open(url) // creates the schema
            _ = try context.count(for: FetchRequest<ManagedObject>(entityName: "Item"))
        }
        RawSQLite(path: url.path).insertItems(count)
        func peak(_ mode: String) throws -> Double {
            let child = try SocketBench.Child(SocketBench.sibling("persistd-bench"), ["--memory-child", mode, url.path])
            let text = child.wait(seconds: 300)
            guard let value = text.split(separator: " ").first.flatMap({ Double($0) }) else {
                throw BenchError("the memory child (\(mode)) printed \(text)")
            }
            return value
        }
        let ours = try peak("ours"), array = try peak("array"), raw = try peak("raw")
        report(Measure.row("8 peak RSS, fetch \(count) objects, batches of 1000", target: 1.0, ours: [ours], baseline: [64],
                           unit: "MiB", baselineName: "goal", details: ["raw_sqlite_peak_mib": raw]))
        report(Measure.row("8 peak RSS, fetch \(count) objects, batches of 1000, as one array (fetch)", target: 1.0, ours: [array],
                           baseline: [64], unit: "MiB", baselineName: "goal", details: ["raw_sqlite_peak_mib": raw]))
        try? FileManager.default.removeItem(at: url)

        // persistd idle, then with 1,000 idle connections.
        let (daemon, socketPath) = try startDaemon(modelURL, name: "idle")
        defer { daemon.stop() }
        usleep(500_000)
        let idle = SocketBench.residentKiB(of: daemon.pid)
        var descriptors: [Int32] = []
        defer { for descriptor in descriptors { close(descriptor) } }
        let connections = 1_000
        for _ in 0..<connections {
            let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw BenchError("socket: errno \(errno)") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in socketPath.utf8.enumerated() where index < buffer.count - 1 { buffer[index] = byte }
            }
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard status == 0 else { close(descriptor); throw BenchError("connect: errno \(errno)") }
            descriptors.append(descriptor)
        }
        // Every connection sends one ping, so each has been accepted and has read once.
        let ping = Array("{\"op\":\"ping\"}\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 256)
        for descriptor in descriptors {
            _ = ping.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            _ = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        }
        usleep(500_000)
        let loaded = SocketBench.residentKiB(of: daemon.pid)
        report(Measure.row("8 persistd RSS, idle", target: 1.0, ours: [idle / 1024], baseline: [24], unit: "MiB", baselineName: "goal"))
        report(Measure.row("8 persistd RSS per idle connection (\(connections))", target: 1.0,
                           ours: [(loaded - idle) / Double(connections)], baseline: [32], unit: "KiB", baselineName: "goal",
                           details: ["rss_mib_with_connections": loaded / 1024]))
    }
}
