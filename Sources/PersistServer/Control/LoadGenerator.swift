import Foundation
import PersistKit
#if canImport(Glibc)
import Glibc
#endif

/// The load of `persistctl bench`: `clients` connections served by one thread waiting on all
/// of them with epoll (as `redis-benchmark` does), each connection keeping `pipeline` units of
/// work in flight for a fixed time.
///
/// A unit is one or more request lines whose replies end it (a `get`; an `insert` then a
/// `save`). Lines are prebuilt bytes with only the `id` written per request, so the client
/// spends as little of the shared CPU as it can, as `redis-benchmark` does: one thread, one
/// `recv` per readable connection and one `send` of the units that refill it, and no thread
/// per connection (a blocked thread per connection cost a thread wake-up per reply, and
/// made each reply's reader wake it twice). Latency is from the moment a unit's lines are
/// handed to the kernel to the moment its last reply is read.
struct LoadGenerator {
    /// What to send.
    struct Workload: Sendable {
        /// Each unit's request lines, without `id` and `\n`: the text after `{"id":N,`.
        /// Client `c` sends unit `u` as `units[(c + u) % units.count]`.
        var units: [[[UInt8]]]
        /// Whether a reply must say `"ok":true` to count as a success (not for an echo server).
        var checksReplies: Bool
    }

    /// How hard and how long.
    struct Settings: Sendable {
        var socketPath: String
        var clients: Int
        var pipeline: Int
        var seconds: Double
        /// Time at the start whose units are not counted.
        var warmUp: Double
    }

    /// The measured result.
    struct Report: Sendable, Equatable {
        var units: Int
        var errors: Int
        var seconds: Double
        /// Latencies of counted units, in nanoseconds, sorted.
        var latencies: [UInt64]

        var unitsPerSecond: Double { seconds > 0 ? Double(units) / seconds : 0 }

        /// The `fraction` quantile of latency, in milliseconds.
        func latencyMilliseconds(_ fraction: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let index = min(latencies.count - 1, Int((Double(latencies.count) * fraction).rounded(.up)) - 1)
            return Double(latencies[max(0, index)]) / 1e6
        }
    }

    /// Nanoseconds on the monotonic clock.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Runs the load; every client connects before any starts sending.
    static func run(_ workload: Workload, _ settings: Settings) throws -> Report {
        var clients: [ControlClient] = []
        for _ in 0..<settings.clients { clients.append(try ControlClient(path: settings.socketPath, timeout: 10)) }
        defer { for client in clients { client.close() } }
        let epoll = try Epoll(capacity: max(1, min(settings.clients, 1024)))
        var runners: [ClientRunner] = []
        for (index, client) in clients.enumerated() {
            let status = epoll.add(client.fileDescriptor, .readable, token: UInt64(index))
            guard status == 0 else { throw SocketError("epoll_ctl add", errno: -status) }
            runners.append(ClientRunner(client: client, index: index, workload: workload, pipeline: settings.pipeline))
        }
        let start = now() + 50_000_000
        let countFrom = start + UInt64(settings.warmUp * 1e9)
        let deadline = countFrom + UInt64(settings.seconds * 1e9)
        while now() < start {}
        for runner in runners { try runner.refill(now: now(), countFrom: countFrom, deadline: deadline) }
        var running = runners.count
        var input = [UInt8](repeating: 0, count: 64 << 10)
        while running > 0 {
            var failure: (any Error)?
            let events = epoll.wait(timeout: 10_000) { event in
                guard failure == nil, event.token != Epoll.wakeToken else { return }
                let runner = runners[Int(event.token)]
                do {
                    guard try runner.receive(into: &input, countFrom: countFrom, deadline: deadline) else { return }
                    // Done: nothing in flight after the deadline.
                    _ = epoll.remove(runner.client.fileDescriptor)
                    running -= 1
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            if events == 0 { throw SocketError("recv", message: "no reply within 10 s") }
        }
        var latencies = runners.flatMap(\.result.latencies)
        latencies.sort()
        return Report(units: latencies.count, errors: runners.reduce(0) { $0 + $1.result.errors }, seconds: settings.seconds,
                      latencies: latencies)
    }

    /// What one client measured.
    struct ClientResult: Sendable {
        var latencies: [UInt64] = []
        var errors = 0
    }
}

/// One client's state: keeps `pipeline` units in flight until the deadline, then drains.
/// Used by the one thread of ``LoadGenerator/run(_:_:)``.
final class ClientRunner {
    let client: ControlClient
    private let workload: LoadGenerator.Workload
    private let pipeline: Int
    // Exclusivity checks are off for the state below: a runner is used by the one thread of
    // LoadGenerator.run(_:_:), one call at a time, and the checks cost about a tenth of the
    // client's instructions a reply.

    /// What the client measured so far.
    @exclusivity(unchecked) private(set) var result = LoadGenerator.ClientResult()
    /// Units in flight, oldest first: when each was sent and how many replies it still awaits.
    @exclusivity(unchecked) private var sentAt: [UInt64]
    @exclusivity(unchecked) private var awaiting: [Int]
    @exclusivity(unchecked) private var head = 0, inFlight = 0, nextUnit: Int, nextID: Int64 = 1
    @exclusivity(unchecked) private var output: [UInt8] = []
    /// The reply lines read so far, and the start of one whose end has not arrived yet.
    @exclusivity(unchecked) private var replies = ReplyLines()

    init(client: ControlClient, index: Int, workload: LoadGenerator.Workload, pipeline: Int) {
        self.client = client
        self.workload = workload
        self.pipeline = max(1, pipeline)
        self.nextUnit = index
        self.sentAt = [UInt64](repeating: 0, count: max(1, pipeline))
        self.awaiting = [Int](repeating: 0, count: max(1, pipeline))
        result.latencies.reserveCapacity(1 << 16)
        output.reserveCapacity(4096)
    }

    /// Sends units until `pipeline` are in flight, unless the deadline has passed; all of them in one `send`.
    func refill(now time: UInt64, countFrom: UInt64, deadline: UInt64) throws(SocketError) {
        guard time < deadline else { return }
        output.removeAll(keepingCapacity: true)
        while inFlight < pipeline {
            let unit = workload.units[nextUnit % workload.units.count]
            nextUnit += 1
            for line in unit {
                output.append(contentsOf: Self.idPrefix)
                Self.appendDecimal(nextID, to: &output)
                nextID += 1
                output.append(UInt8(ascii: ","))
                output.append(contentsOf: line)
                output.append(UInt8(ascii: "\n"))
            }
            let slot = (head + inFlight) % pipeline
            sentAt[slot] = time
            awaiting[slot] = unit.count
            inFlight += 1
        }
        if !output.isEmpty { try client.send(raw: output) }
    }

    /// Reads the replies available, counts the units they end, and sends new units in their
    /// place; returns whether the client is done (the deadline passed and nothing is in flight).
    func receive(into input: inout [UInt8], countFrom: UInt64, deadline: UInt64) throws(SocketError) -> Bool {
        guard let count = try client.receiveAvailable(into: &input) else { return false }
        guard count > 0 else { throw SocketError("recv", message: "the server closed the connection") }
        let received = LoadGenerator.now()
        input.withUnsafeBytes { bytes in
            replies.scan(UnsafeRawBufferPointer(rebasing: bytes[0..<count]), checksReplies: workload.checksReplies) { isSuccess in
                if !isSuccess { result.errors += 1 }
                awaiting[head] -= 1
                if awaiting[head] == 0 {
                    if sentAt[head] >= countFrom && received <= deadline { result.latencies.append(received - sentAt[head]) }
                    head = (head + 1) % pipeline
                    inFlight -= 1
                }
            }
        }
        try refill(now: received, countFrom: countFrom, deadline: deadline)
        return received >= deadline && inFlight == 0
    }

    private static let idPrefix = Array(#"{"id":"#.utf8)

    private static func appendDecimal(_ value: Int64, to output: inout [UInt8]) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var remaining = value.magnitude, count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            } while remaining > 0
            output.append(contentsOf: buffer[(20 - count)...])
        }
    }
}
