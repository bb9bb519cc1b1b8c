import Foundation
import PersistKit
@testable import PersistServer

extension ControlClient {
    /// The next line, which must be an event (not a reply).
    func nextEvent() throws -> JSON {
        guard let line = try readLine() else { throw HarnessError("the server closed the connection instead of sending an event") }
        guard line["event"] != nil, line["id"] == nil else { throw HarnessError("a reply instead of an event: \(line.encoded)") }
        return line
    }

    /// Inserts a Beer named `name` with `abv` and returns its ID (unsaved).
    func insertBeer(_ name: String, abv: Double) throws -> String {
        let result = try self.result(["op": "insert", "entity": "Beer",
                                      "values": ["name": .string(name), "abv": .double(abv), "uuid": .string(UUID().uuidString)]])
        return result["object"]?.string("id") ?? ""
    }

    /// Saves; throws on an error reply.
    func save() throws { _ = try result(["op": "save"]) }
}

extension JSON {
    /// The transaction number of a history token string (`<UUID>:<n>`).
    var transactionNumber: Int64 {
        guard let text = stringValue, let token = PersistentHistoryToken(string: text) else { return -1 }
        return token.transactionNumber
    }

    /// The value as an integer, if it is one.
    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The object IDs of an event's list `key` (objects or IDs).
    func ids(_ key: String) -> [String] {
        (self[key]?.arrayValue ?? []).map { $0.stringValue ?? $0.string("id") }
    }

    /// The `name` values of an event's object list `key`.
    func names(_ key: String) -> [String] {
        (self[key]?.arrayValue ?? []).map { $0["values"]?.string("name") ?? "" }
    }
}
