/// Builds the requests of a `persistctl` command.
enum ControlRequests {
    /// The requests for `arguments`; `model` fetches the model when values must be typed.
    static func build(_ arguments: ControlArguments, model: () throws -> JSON) throws -> [JSON] {
        let words = arguments.words
        func entityWord() throws(ControlError) -> String {
            guard let entity = words.first else { throw ControlError.usage("\(arguments.command) needs an entity") }
            return entity
        }
        func isObjectID(_ word: String) -> Bool { word.hasPrefix("x-coredata:") }
        switch arguments.command {
        case "hello", "model", "ping", "stats", "save", "rollback":
            return [["op": .string(arguments.command)]]
        case "insert":
            let entity = try entityWord()
            let values = try ControlValues(model: model()).values(Array(words.dropFirst()), entity: entity)
            return [["op": "insert", "entity": .string(entity), "values": values]]
        case "get":
            guard !words.isEmpty else { throw ControlError.usage("get needs object IDs") }
            var request: [JSON.Member] = [JSON.Member("op", "get"), JSON.Member("ids", .array(words.map(JSON.string)))]
            if let properties = arguments.value("properties") { request.append(JSON.Member("properties", list(properties))) }
            return [.object(request)]
        case "fetch", "count":
            let entity = try entityWord()
            var request: [JSON.Member] = [JSON.Member("op", .string(arguments.command)), JSON.Member("entity", .string(entity))]
            request += try predicateMembers(arguments)
            if arguments.command == "fetch" { request += try fetchMembers(arguments) }
            return [.object(request)]
        case "update":
            guard let first = words.first else { throw ControlError.usage("update needs an object ID, or an entity and --where") }
            if isObjectID(first) {
                let entity = first.split(separator: "/").dropLast().last.map(String.init)
                let values = try ControlValues(model: model()).values(Array(words.dropFirst()), entity: entity)
                var request: [JSON.Member] = [JSON.Member("op", "update"), JSON.Member("object", .string(first))]
                if let version = try ifVersion(arguments) { request.append(JSON.Member("version", .integer(version))) }
                return [.object(request + [JSON.Member("values", values)])]
            }
            guard arguments.value("where") != nil else { throw ControlError.usage("a batch update needs --where PREDICATE") }
            let values = try ControlValues(model: model()).values(Array(words.dropFirst()), entity: first)
            return [.object([JSON.Member("op", "update"), JSON.Member("entity", .string(first))] + (try predicateMembers(arguments))
                            + [JSON.Member("values", values)])]
        case "delete":
            guard let first = words.first else { throw ControlError.usage("delete needs object IDs, or an entity and --where") }
            if isObjectID(first) {
                if let version = try ifVersion(arguments) {
                    guard words.count == 1 else { throw ControlError.usage("--if-version applies to one object ID") }
                    return [["op": "delete", "object": .string(first), "version": .integer(version)]]
                }
                return [["op": "delete", "ids": .array(words.map(JSON.string))]]
            }
            guard arguments.value("where") != nil else { throw ControlError.usage("a batch delete needs --where PREDICATE") }
            return [.object([JSON.Member("op", "delete"), JSON.Member("entity", .string(first))] + (try predicateMembers(arguments)))]
        case "history":
            var request: [JSON.Member] = [JSON.Member("op", "history")]
            if let since = arguments.value("since") { request.append(JSON.Member("since", .string(since))) }
            if let text = arguments.value("limit") {
                guard let limit = Int64(text), limit > 0 else { throw ControlError.usage("--limit needs a positive integer") }
                request.append(JSON.Member("limit", .integer(limit)))
            }
            return [.object(request)]
        default:
            throw ControlError.usage("unknown command \"\(arguments.command)\"; see persistctl --help")
        }
    }

    /// `--if-version N`: the version the change is based on (`update`/`delete` with `version`).
    static func ifVersion(_ arguments: ControlArguments) throws(ControlError) -> Int64? {
        guard let text = arguments.value("if-version") else { return nil }
        guard let version = Int64(text), version >= 0 else { throw ControlError.usage("--if-version needs a non-negative integer") }
        return version
    }

    static func list(_ text: String) -> JSON {
        .array(text.split(separator: ",").map { .string(String($0)) })
    }

    /// A `--arg` value: JSON if it parses, else a string.
    static func argument(_ text: String) -> JSON {
        (try? JSONParser.parse(text)) ?? .string(text)
    }

    static func predicateMembers(_ arguments: ControlArguments) throws(ControlError) -> [JSON.Member] {
        var members: [JSON.Member] = []
        if let predicate = arguments.value("where") { members.append(JSON.Member("predicate", .string(predicate))) }
        let positional = arguments.values("arg")
        let variables = arguments.values("var")
        if !positional.isEmpty && !variables.isEmpty { throw ControlError.usage("use --arg or --var, not both") }
        if !positional.isEmpty { members.append(JSON.Member("arguments", .array(positional.map(argument)))) }
        if !variables.isEmpty {
            var object: [JSON.Member] = []
            for variable in variables {
                guard let equals = variable.firstIndex(of: "=") else { throw ControlError.usage("--var needs NAME=VALUE, not \"\(variable)\"") }
                object.append(JSON.Member(String(variable[..<equals]), argument(String(variable[variable.index(after: equals)...]))))
            }
            members.append(JSON.Member("arguments", .object(object)))
        }
        return members
    }

    static func fetchMembers(_ arguments: ControlArguments) throws(ControlError) -> [JSON.Member] {
        var members: [JSON.Member] = []
        let sorts = arguments.values("sort")
        if !sorts.isEmpty {
            members.append(JSON.Member("sort", .array(sorts.map { text in
                let parts = text.split(separator: ":").map(String.init)
                var sort: [JSON.Member] = [JSON.Member("key", .string(parts.first ?? ""))]
                if parts.contains("desc") { sort.append(JSON.Member("ascending", false)) }
                if parts.contains("ci") { sort.append(JSON.Member("caseInsensitive", true)) }
                return .object(sort)
            })))
        }
        for name in ["limit", "offset"] {
            guard let text = arguments.value(name) else { continue }
            guard let number = Int64(text), number >= 0 else { throw ControlError.usage("--\(name) needs a non-negative integer") }
            members.append(JSON.Member(name, .integer(number)))
        }
        if let properties = arguments.value("properties") { members.append(JSON.Member("properties", list(properties))) }
        if arguments.flags.contains("ids") { members.append(JSON.Member("resultType", "ids")) }
        if arguments.flags.contains("count") { members.append(JSON.Member("resultType", "count")) }
        if arguments.flags.contains("dictionaries") { members.append(JSON.Member("resultType", "dictionaries")) }
        if arguments.flags.contains("distinct") { members.append(JSON.Member("distinct", true)) }
        if let groupBy = arguments.value("group-by") { members.append(JSON.Member("groupBy", list(groupBy))) }
        if let having = arguments.value("having") { members.append(JSON.Member("having", .string(having))) }
        let prefetch = arguments.values("prefetch")
        if !prefetch.isEmpty { members.append(JSON.Member("prefetch", .array(prefetch.map(JSON.string)))) }
        return members
    }
}
