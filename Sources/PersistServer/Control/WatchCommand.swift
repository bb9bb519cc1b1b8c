/// `persistctl watch ENTITY [--where PREDICATE] [--arg VALUE]… [--sort KEY]… [--properties a,b] [--events N]`:
/// subscribes and prints the matching objects, then every `changes` and `overflow` event as
/// it arrives, until interrupted (or after `--events N` events).
///
/// On a terminal: the objects as a table, then one line per changed object,
/// `inserted|updated|deleted  <id>  key=value …`. Otherwise JSON lines: the `subscribe`
/// result, then each event exactly as the daemon sent it.
enum WatchCommand {
    /// The `subscribe` request for `arguments`.
    static func request(_ arguments: ControlArguments) throws(ControlError) -> JSON {
        guard let entity = arguments.words.first else { throw ControlError.usage("watch needs an entity") }
        var members: [JSON.Member] = [JSON.Member("op", "subscribe"), JSON.Member("entity", .string(entity))]
        members += try ControlRequests.predicateMembers(arguments)
        members += try ControlRequests.fetchMembers(arguments).filter { $0.key == "sort" || $0.key == "properties" }
        return .object(members)
    }

    /// Runs the watch on `client`; returns the exit status.
    static func run(_ arguments: ControlArguments, client: ControlClient, json: Bool, output: (String) -> Void) throws -> Int32 {
        var limit: Int?
        if let text = arguments.value("events") {
            guard let number = Int(text), number > 0 else { throw ControlError.usage("--events needs a positive integer") }
            limit = number
        }
        let result = try Persistctl.result(of: request(arguments), client: client)
        if json {
            output(result.encoded + "\n")
        } else {
            output(TableFormatter.format(["objects": result["objects"] ?? .array([])]) + "\n")
            output("watching \(result["subscription"].flatMap(\.stringValue) ?? "?") from \(result["token"].flatMap(\.stringValue) ?? "?"); ^C to stop\n")
        }
        var seen = 0
        while limit.map({ seen < $0 }) ?? true {
            let line: [UInt8]
            do {
                guard let next = try client.readRawLine() else { return 0 }
                line = next
            } catch where error.message != nil {
                continue // the client's read timeout: nothing happened; keep waiting
            } catch {
                throw ControlError.connection(error.description)
            }
            guard let event = try? JSONParser.parse(line), let name = event["event"]?.stringValue else { continue }
            if name == "changes" || name == "overflow" { seen += 1 }
            output((json ? String(decoding: line, as: UTF8.self) : describe(event)) + "\n")
            if name == "closing" { return 0 }
        }
        return 0
    }

    /// An event as lines for people.
    static func describe(_ event: JSON) -> String {
        switch event["event"]?.stringValue {
        case "changes":
            var lines: [String] = []
            for (kind, key) in [("inserted", "inserted"), ("updated", "updated")] {
                for object in event[key]?.arrayValue ?? [] {
                    let values = (object["values"]?.members ?? []).map { "\($0.key)=\(TableFormatter.cell($0.value))" }
                    lines.append(([kind, TableFormatter.cell(object["id"] ?? .null)] + values).joined(separator: "  "))
                }
            }
            for id in event["deleted"]?.arrayValue ?? [] { lines.append("deleted  " + TableFormatter.cell(id)) }
            return lines.joined(separator: "\n")
        case "overflow":
            return "overflow: \(event["dropped"]?.encoded ?? "?") events dropped; resynchronise with: persistctl history --since \(event["token"]?.stringValue ?? "?")"
        default:
            return event.encoded
        }
    }
}
