import Foundation
import PersistKit

/// `persistctl predicate 'FORMAT' [--arg VALUE]... [--model PATH --entity NAME]`: parses a
/// predicate offline and prints its canonical form and tree; with a model, type-checks it
/// against the entity and prints the SQL the SQLite store would run.
///
/// Output, one labelled line each:
///
/// ```text
/// format: name BEGINSWITH[c] "d" AND abv > 8
/// tree: {"type":"and","subpredicates":[…]}
/// sql: SELECT … FROM "ZBEER" AS "t0" WHERE …          (with --model)
/// arguments: [{"valueType":"string","value":"d*"},…]   (with --model)
/// ```
///
/// Exit status 0 on success; 1 for a syntax error (message with offset, the format and a caret
/// on standard error), a type error, or a predicate the SQLite store cannot compile; 2 for a
/// usage error.
public enum PredicateCommand {
    /// The subcommand's name.
    public static let name = "predicate"

    /// The usage text.
    public static let usage = """
    usage: persistctl predicate 'FORMAT' [--arg VALUE]... [--model PATH --entity NAME]
      --arg VALUE     a format argument, in order: a JSON literal (42, 1.5, "x", true, null, [1,2])
                      or a bare word, taken as a string; missing arguments stay placeholders
      --model PATH    a model (.json, .xcdatamodeld, .xcdatamodel) to type-check against
      --entity NAME   the entity fetched (with --model); prints the SQL and its bound values

    """

    /// The parsed command line.
    struct Options {
        var format: String
        var arguments: [StoreValue] = []
        var modelPath: String?
        var entityName: String?
    }

    /// Runs the command with the arguments after `predicate`.
    public static func run(_ arguments: [String]) -> CommandOutput {
        if arguments.contains("--help") || arguments.contains("-h") {
            return CommandOutput(exitCode: 0, standardOutput: usage)
        }
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            return CommandOutput(exitCode: 2, standardError: "persistctl predicate: \(error.message)\n" + usage)
        }
        let predicate: FetchPredicate
        do {
            predicate = try FetchPredicate(format: options.format, arguments: options.arguments)
        } catch let error as PredicateSyntaxError {
            return CommandOutput(exitCode: 1, standardError: "persistctl: \(error)\n" + caret(options.format, at: error.offset))
        } catch {
            return CommandOutput(exitCode: 1, standardError: "persistctl: \(error)\n")
        }
        var out = "format: \(predicate.predicateFormat)\ntree: \(PredicateTreeJSON.json(predicate))\n"
        guard let modelPath = options.modelPath, let entityName = options.entityName else {
            return CommandOutput(exitCode: 0, standardOutput: out)
        }
        do {
            let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: modelPath))
            try model.freeze()
            guard let entity = model.entitiesByName[entityName] else {
                return CommandOutput(exitCode: 1, standardOutput: out, standardError:
                    "persistctl: the model \(modelPath) has no entity \(entityName) (entities: \(model.entitiesByName.keys.sorted().joined(separator: ", ")))\n")
            }
            try predicate.typeCheck(against: entity)
            let (sql, bound) = try SQLiteStore.explainFetch(StoreFetchRequest(entity: entity, predicate: predicate), model: model)
            out += "sql: \(sql)\narguments: [\(bound.map(argumentJSON).joined(separator: ","))]\n"
            return CommandOutput(exitCode: 0, standardOutput: out)
        } catch {
            return CommandOutput(exitCode: 1, standardOutput: out, standardError: "persistctl: \(error)\n")
        }
    }

    /// A bound SQL argument as tree JSON's constant form.
    static func argumentJSON(_ value: StoreValue) -> String {
        PredicateTreeJSON.json(.constant(value)).replacingOccurrences(of: "{\"type\":\"constant\",", with: "{")
    }

    /// The format and a caret under `offset`, indented.
    static func caret(_ format: String, at offset: Int) -> String {
        let line = format.replacingOccurrences(of: "\n", with: " ")
        return "  \(line)\n  \(String(repeating: " ", count: max(0, offset)))^\n"
    }

    /// A usage error.
    struct UsageError: Error {
        var message: String
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var format: String?
        var options = Options(format: "")
        var index = 0
        func value(after flag: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(message: "\(flag) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--arg": options.arguments.append(parseValue(try value(after: argument)))
            case "--model": options.modelPath = try value(after: argument)
            case "--entity": options.entityName = try value(after: argument)
            default:
                if argument.hasPrefix("--") { throw UsageError(message: "unknown option \(argument)") }
                guard format == nil else { throw UsageError(message: "only one format string is taken; quote it") }
                format = argument
            }
            index += 1
        }
        guard let format else { throw UsageError(message: "a format string is needed") }
        if (options.modelPath == nil) != (options.entityName == nil) {
            throw UsageError(message: "--model and --entity go together")
        }
        options.format = format
        return options
    }

    /// A `--arg` value: a JSON literal, or else the text as a string.
    static func parseValue(_ text: String) -> StoreValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let value = try? JSONDecoder().decode(ArgumentValue.self, from: Data(trimmed.utf8)) {
            return value.storeValue
        }
        return .string(text)
    }

    /// A JSON literal decoded as a ``StoreValue``.
    struct ArgumentValue: Decodable {
        var storeValue: StoreValue

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { storeValue = .null }
            else if let b = try? container.decode(Bool.self) { storeValue = .bool(b) }
            else if let i = try? container.decode(Int64.self) { storeValue = .integer(i) }
            else if let d = try? container.decode(Double.self) { storeValue = .double(d) }
            else if let s = try? container.decode(String.self) { storeValue = .string(s) }
            else { storeValue = .array(try container.decode([ArgumentValue].self).map(\.storeValue)) }
        }
    }
}
