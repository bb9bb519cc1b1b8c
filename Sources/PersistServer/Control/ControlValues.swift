/// Turns `key=value` words into a request's `values`, typed by the model.
///
/// `abv=9.0` becomes a number because `abv` is a double; `name=90 Minute IPA` a string;
/// `brewery=x-coredata://…` an object ID; `tags=ID1,ID2` a list; `style=` with nothing, `null`.
/// `key:=JSON` passes raw JSON (`tags:=[]`, `abv:=9`).
struct ControlValues {
    /// Attribute types and relationship kinds by entity and property, from the `model` reply.
    let types: [String: [String: String]]

    init(model: JSON) {
        var types: [String: [String: String]] = [:]
        for entity in model["entities"]?.arrayValue ?? [] {
            let name = entity.stringValueOf("name")
            var properties: [String: String] = [:]
            for attribute in entity["attributes"]?.arrayValue ?? [] {
                properties[attribute.stringValueOf("name")] = attribute.stringValueOf("type")
            }
            for relationship in entity["relationships"]?.arrayValue ?? [] {
                properties[relationship.stringValueOf("name")] = relationship["toMany"] == .bool(true) ? "toMany" : "toOne"
            }
            types[name] = properties
        }
        self.types = types
    }

    /// The `values` object for `words` of `entity` (`nil` when the entity is not known: values are then strings or raw JSON).
    func values(_ words: [String], entity: String?) throws(ControlError) -> JSON {
        var members: [JSON.Member] = []
        for word in words {
            guard let equals = word.firstIndex(of: "=") else {
                throw ControlError.usage("expected key=value, not \"\(word)\"")
            }
            var key = String(word[..<equals])
            let text = String(word[word.index(after: equals)...])
            if key.hasSuffix(":") {
                key.removeLast()
                do {
                    members.append(JSON.Member(key, try JSONParser.parse(text)))
                } catch {
                    throw ControlError.usage("\(key):= needs JSON: \(error)")
                }
                continue
            }
            let type = entity.flatMap { types[$0]?[key] }
            members.append(JSON.Member(key, try value(text, type: type, key: key)))
        }
        return .object(members)
    }

    private func value(_ text: String, type: String?, key: String) throws(ControlError) -> JSON {
        if text.isEmpty && type != "string" { return .null }
        switch type {
        case "integer16", "integer32", "integer64":
            guard let number = Int64(text) else { throw ControlError.usage("\(key) takes an integer, not \"\(text)\"") }
            return .integer(number)
        case "double", "float":
            guard let number = Double(text) else { throw ControlError.usage("\(key) takes a number, not \"\(text)\"") }
            return .double(number)
        case "boolean":
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw ControlError.usage("\(key) takes true or false, not \"\(text)\"")
            }
        case "toMany":
            return .array(text.split(separator: ",").map { .string(String($0)) })
        default:
            return .string(text)
        }
    }
}

extension JSON {
    /// The string at `key`, or `""`.
    func stringValueOf(_ key: String) -> String { self[key]?.stringValue ?? "" }
}
