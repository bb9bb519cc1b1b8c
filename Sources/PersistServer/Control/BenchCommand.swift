import Foundation

/// `persistctl bench`: a load generator for persistd (and for anything that answers one line
/// per line, with `--echo`), as `redis-benchmark` is for Redis.
///
/// ```text
/// persistctl bench --op get --clients 16 --pipeline 16 --seconds 2 --entity Item
/// get clients=16 pipeline=16: 61234 req/s, p50 3.912 ms, p99 6.120 ms, 0 errors (122468 in 2.00 s)
/// ```
///
/// Ops: `get` (one object by ID per request, over `--objects` objects inserted and saved
/// first), `insert` (an `insert` of `--values` then a `save`: one unit, counted once), `ping`.
/// With `--json` the report is one JSON object: `op`, `clients`, `pipeline`, `units`, `seconds`,
/// `units_per_second`, `p50_ms`, `p99_ms`, `errors`. Exit status 0, 1 when the run failed
/// (or any reply was an error), 2 for a usage error.
public enum BenchCommand {
    /// The subcommand's name.
    public static let name = "bench"

    /// The usage text.
    public static let usage = """
    usage: persistctl bench [--socket PATH] [--op get|insert|ping] [--clients N] [--pipeline DEPTH]
                            [--seconds S] [--warm-up S] [--entity NAME] [--values JSON] [--objects N]
                            [--echo] [--json]
      --op          get (by object ID), insert (insert + save), ping; default get
      --clients     connections, all served by one thread (default 1)
      --pipeline    units in flight per connection (default 1: request, wait, repeat)
      --seconds     measured time (default 2), after --warm-up (default 0.2)
      --entity      the entity inserted and read (default: the first of hello's entities)
      --values      the insert's values, a JSON object (default {})
      --objects     objects inserted and saved before a get run (default 1000)
      --echo        the server echoes lines (a baseline): no setup, any reply counts
      --json        one JSON object instead of a line of text
    The socket is --socket, else $PERSISTD_SOCKET, else ./.persistd/persistd.sock.

    """

    /// The parsed command line.
    struct Options: Equatable {
        var socketPath = ProcessInfo.processInfo.environment["PERSISTD_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
            ?? DaemonConfiguration.defaultSocketPath
        var op = "get"
        var clients = 1
        var pipeline = 1
        var seconds = 2.0
        var warmUp = 0.2
        var entity: String?
        var values: JSON = .object([])
        var objects = 1000
        var echo = false
        var json = false
    }

    /// Runs the command with the arguments after `bench`.
    public static func run(_ arguments: [String]) -> CommandOutput {
        if arguments.contains("--help") || arguments.contains("-h") { return CommandOutput(exitCode: 0, standardOutput: usage) }
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            return CommandOutput(exitCode: 2, standardError: "persistctl bench: \(error.message)\n" + usage)
        }
        do {
            let workload = try prepare(options)
            let report = try LoadGenerator.run(workload, LoadGenerator.Settings(
                socketPath: options.socketPath, clients: options.clients, pipeline: options.pipeline,
                seconds: options.seconds, warmUp: options.warmUp))
            return CommandOutput(exitCode: report.errors == 0 && report.units > 0 ? 0 : 1,
                                 standardOutput: format(report, options) + "\n")
        } catch {
            return CommandOutput(exitCode: 1, standardError: "persistctl bench: \(error)\n")
        }
    }

    struct UsageError: Error { var message: String }

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws(UsageError) -> String {
            guard let value = iterator.next() else { throw UsageError(message: "\(flag) needs a value") }
            return value
        }
        func number(_ flag: String, minimum: Double) throws(UsageError) -> Double {
            let text = try value(flag)
            guard let number = Double(text), number >= minimum, number.isFinite else {
                throw UsageError(message: "\(flag) needs a number of at least \(minimum), not \"\(text)\"")
            }
            return number
        }
        while let argument = iterator.next() {
            switch argument {
            case "--socket": options.socketPath = try value(argument)
            case "--op":
                options.op = try value(argument)
                guard ["get", "insert", "ping"].contains(options.op) else { throw UsageError(message: "unknown op \"\(options.op)\"") }
            case "--clients": options.clients = Int(try number(argument, minimum: 1))
            case "--pipeline": options.pipeline = Int(try number(argument, minimum: 1))
            case "--seconds": options.seconds = try number(argument, minimum: 0.01)
            case "--warm-up": options.warmUp = try number(argument, minimum: 0)
            case "--entity": options.entity = try value(argument)
            case "--values":
                let text = try value(argument)
                guard let json = try? JSONParser.parse(text), json.members != nil else {
                    throw UsageError(message: "--values needs a JSON object, not \(text)")
                }
                options.values = json
            case "--objects": options.objects = Int(try number(argument, minimum: 1))
            case "--echo": options.echo = true
            case "--json": options.json = true
            default: throw UsageError(message: "unknown argument \"\(argument)\"")
            }
        }
        return options
    }

    /// The request lines of the run (after `{"id":N,`), inserting and saving the objects a
    /// `get` run reads first.
    static func prepare(_ options: Options) throws -> LoadGenerator.Workload {
        func body(_ members: [JSON.Member]) -> [UInt8] {
            // `{"op":…}` without its opening brace: the generator writes `{"id":N,` before it.
            Array(JSON.object(members).encodedBytes.dropFirst())
        }
        if options.echo || options.op == "ping" {
            return LoadGenerator.Workload(units: [[body([JSON.Member("op", "ping")])]], checksReplies: !options.echo)
        }
        let client = try ControlClient(path: options.socketPath, timeout: 30)
        defer { client.close() }
        let entity: String
        if let name = options.entity {
            entity = name
        } else {
            guard let first = try client.request(["op": "hello"])["result"]?["entities"]?.arrayValue?.first?.stringValue else {
                throw SocketError("bench", message: "the daemon's hello lists no entity")
            }
            entity = first
        }
        let insert = [JSON.Member("op", "insert"), JSON.Member("entity", .string(entity)), JSON.Member("values", options.values)]
        if options.op == "insert" {
            return LoadGenerator.Workload(units: [[body(insert), body([JSON.Member("op", "save")])]], checksReplies: true)
        }
        // get: insert the objects (64 requests in flight, below the daemon's queue limit), save, keep their IDs.
        var ids: [String] = []
        var sent = 0
        var pending = 0
        while ids.count < options.objects {
            while sent < options.objects && pending < 64 {
                try client.send(.object(insert))
                sent += 1
                pending += 1
            }
            guard let reply = try client.readLine() else { throw SocketError("bench", message: "the daemon closed the connection") }
            pending -= 1
            guard reply["ok"] == .bool(true), let id = reply["result"]?["object"]?["id"]?.stringValue else {
                throw SocketError("bench", message: "inserting a \(entity) failed: \(failure(of: reply))")
            }
            ids.append(id)
        }
        let saved = try client.request(["op": "save"])
        guard saved["ok"] == .bool(true) else {
            throw SocketError("bench", message: "saving the \(options.objects) \(entity) objects to read failed: \(failure(of: saved))")
        }
        return LoadGenerator.Workload(units: ids.map { [body([JSON.Member("op", "get"), JSON.Member("ids", .array([.string($0)]))])] },
                                      checksReplies: true)
    }

    /// A failed setup reply in one short line: its code and message, the first of the errors it
    /// lists (a save of many objects lists one per object and key) and how many more, and, for a
    /// validation failure, the options that supply the values the entity requires.
    static func failure(of reply: JSON) -> String {
        guard let error = reply["error"], let code = error["code"]?.stringValue else { return reply.encoded }
        var text = code + ": " + (error["message"]?.stringValue ?? "")
        if let listed = error["errors"]?.arrayValue, let first = listed.first {
            let detail = first["message"]?.stringValue ?? first.encoded
            text += listed.count > 1 ? " (first: \(detail); \(listed.count - 1) more)" : " (\(detail))"
        }
        if code == "validation_failed" { text += "; give the values the entity requires with --values, or another entity with --entity" }
        return text
    }

    static func format(_ report: LoadGenerator.Report, _ options: Options) -> String {
        let op = options.echo ? "echo" : options.op
        if options.json {
            return JSON.object([
                JSON.Member("op", .string(op)), JSON.Member("clients", .integer(Int64(options.clients))),
                JSON.Member("pipeline", .integer(Int64(options.pipeline))), JSON.Member("units", .integer(Int64(report.units))),
                JSON.Member("seconds", .double(report.seconds)), JSON.Member("units_per_second", .double(report.unitsPerSecond.rounded())),
                JSON.Member("p50_ms", .double(rounded(report.latencyMilliseconds(0.5)))),
                JSON.Member("p99_ms", .double(rounded(report.latencyMilliseconds(0.99)))),
                JSON.Member("errors", .integer(Int64(report.errors))),
            ]).encoded
        }
        return "\(op) clients=\(options.clients) pipeline=\(options.pipeline): \(Int(report.unitsPerSecond.rounded())) req/s, "
            + "p50 \(rounded(report.latencyMilliseconds(0.5))) ms, p99 \(rounded(report.latencyMilliseconds(0.99))) ms, "
            + "\(report.errors) errors (\(report.units) in \(report.seconds) s)"
    }

    private static func rounded(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}
