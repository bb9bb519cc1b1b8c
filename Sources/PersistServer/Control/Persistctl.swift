import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `persistctl`: the command-line client of persistd, one subcommand per op.
///
/// ```
/// persistctl insert Beer name='90 Minute IPA' abv=9.0 uuid=$(uuidgen) --save
/// persistctl fetch Beer --where 'name BEGINSWITH[c] "9"' --sort name --limit 10
/// persistctl get x-coredata://…/Beer/p1
/// persistctl raw < requests.ndjson
/// ```
public enum Persistctl {
    /// The usage text.
    public static let usage = """
        usage: persistctl [--socket PATH] [--json|--table] <command> [arguments]

        commands:
          hello | model | ping | stats | save | rollback
          insert ENTITY key=value… [--save]
          get ID… [--properties a,b]
          fetch ENTITY [--where PREDICATE] [--arg VALUE]… [--var NAME=VALUE]… [--sort KEY[:desc][:ci]]…
                       [--limit N] [--offset N] [--properties a,b] [--ids|--count|--dictionaries]
                       [--distinct] [--group-by a,b] [--having PREDICATE] [--prefetch KEYPATH]…
          count ENTITY [--where PREDICATE] [--arg VALUE]…
          update ID key=value… [--if-version N] [--save]   (--if-version: only if the stored object
                                                              is still at version N, else merge_conflict)
          update ENTITY --where PREDICATE key=value…        (batch update, saved at once)
          delete ID… [--save]      delete ID --if-version N [--save]
          delete ENTITY --where PREDICATE                    (batch delete, saved at once)
          history [--since TOKEN] [--limit N]                (persistent history, oldest first)
          watch ENTITY [--where PREDICATE] [--arg VALUE]… [--sort KEY]… [--properties a,b] [--events N]
                                                             (subscribe; print changes live until ^C)
          raw                                                (NDJSON requests on stdin, replies on stdout)
          predicate …                                        (offline: parse and print a predicate; see
                                                              persistctl predicate --help)
          bench [--op get|insert|ping] [--clients N] [--pipeline D] …   (load generator; see
                                                              persistctl bench --help)

        key=value is typed by the model (abv=9.0 a number, isFavorite=true a boolean,
        tags=ID1,ID2 a list, style= null); key:=JSON passes JSON as is. --arg VALUE is JSON
        if it parses as JSON, else a string.

        The socket is --socket, else $PERSISTD_SOCKET, else ./.persistd/persistd.sock.
        Output is a table on a terminal and JSON (one value per result) otherwise; --json and
        --table choose. Errors go to stderr as `persistctl: <code>: <message>`, exit status 1
        (2 for usage errors, 69 when the daemon cannot be reached).

        """

    /// The commands that talk to the daemon.
    static let commands: Set<String> = ["hello", "model", "ping", "stats", "save", "rollback", "insert", "get", "fetch", "count",
                                        "update", "delete", "raw", "history", "watch"]

    /// Runs `persistctl` with `arguments` (after the program name); returns the exit status.
    public static func run(_ arguments: [String], environment: [String: String],
                           output: (String) -> Void, errorOutput: (String) -> Void, isTerminal: Bool) -> Int32 {
        do {
            let parsed = try ControlArguments.parse(arguments)
            if parsed.flags.contains("help") || parsed.command.isEmpty || parsed.command == "help" {
                output(usage)
                return parsed.command.isEmpty && !parsed.flags.contains("help") ? 2 : 0
            }
            guard commands.contains(parsed.command) else {
                throw ControlError.usage("unknown command \"\(parsed.command)\"; see persistctl --help")
            }
            let path = parsed.socketPath ?? environment["PERSISTD_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? DaemonConfiguration.defaultSocketPath
            let client: ControlClient
            do {
                client = try ControlClient(path: path)
            } catch {
                throw ControlError.connection("cannot reach persistd at \(path): \(error)")
            }
            if parsed.command == "raw" { return raw(client, output: output) }
            let json = parsed.json ?? !isTerminal
            if parsed.command == "watch" { return try WatchCommand.run(parsed, client: client, json: json, output: output) }
            for result in try execute(parsed, client: client) {
                output((json ? result.encoded : TableFormatter.format(result)) + "\n")
            }
            return 0
        } catch let error as ControlError {
            errorOutput(error.message + "\n")
            return error.exitCode
        } catch {
            errorOutput("persistctl: \(error)\n")
            return 1
        }
    }

    /// The requests for a command, sent in order; returns each result.
    static func execute(_ arguments: ControlArguments, client: ControlClient) throws -> [JSON] {
        var requests = try ControlRequests.build(arguments) {
            try result(of: ["op": "model"], client: client)
        }
        if arguments.flags.contains("save") { requests.append(["op": "save"]) }
        // One change and its save go together, in one write: the daemon runs them as one batch
        // (an insert then shares the save's transaction), and the connection is new, so a
        // change that fails leaves its save nothing to write, as when the save is not sent.
        // Several changes go one by one: the first that fails stops the rest, save included.
        if requests.count == 2, requests[1]["op"] == .string("save") {
            let replies: [JSON]
            do {
                replies = try client.requests(requests)
            } catch {
                throw ControlError.connection("\(error)")
            }
            return try replies.map(result(of:))
        }
        return try requests.map { try result(of: $0, client: client) }
    }

    static func result(of request: JSON, client: ControlClient) throws -> JSON {
        let reply: JSON
        do {
            reply = try client.request(request)
        } catch {
            throw ControlError.connection("\(error)")
        }
        return try result(of: reply)
    }

    /// The result of `reply`, or the server's error it carries.
    static func result(of reply: JSON) throws -> JSON {
        if reply["ok"] == .bool(true) { return reply["result"] ?? .null }
        let error = reply["error"] ?? .null
        throw ControlError.server(code: error.stringValueOf("code"), message: error.stringValueOf("message"))
    }

    /// `persistctl raw`: stdin to the daemon line by line, every line from it to stdout.
    static func raw(_ client: ControlClient, output: (String) -> Void) -> Int32 {
        // Send on another thread, so a daemon answering faster than stdin is read never blocks.
        let sent = DispatchSemaphore(value: 0)
        let sender = RawSender(client: client)
        Thread.detachNewThread {
            sender.sendStandardInput()
            sent.signal()
        }
        while let line = try? client.readRawLine() {
            output(String(decoding: line, as: UTF8.self) + "\n")
        }
        sent.wait()
        return sender.failed ? 1 : 0
    }
}
