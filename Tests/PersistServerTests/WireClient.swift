import Foundation
@testable import PersistServer

/// The test client: persistctl's blocking client, with helpers that throw on the unexpected.
typealias WireClient = ControlClient

extension ControlClient {
    /// Connects to `path`, reads bounded by 10 s.
    convenience init(path: String) throws {
        try self.init(path: path, timeout: 10)
    }

    /// Sends `request` and returns its `result`; throws if the reply is an error.
    func result(_ request: JSON) throws -> JSON {
        let reply = try self.request(request)
        guard reply["ok"] == .bool(true), let result = reply["result"] else { throw HarnessError("error reply: \(reply.encoded)") }
        return result
    }

    /// Sends `request` and returns its error object; throws if the reply is a success.
    func error(_ request: JSON) throws -> JSON {
        let reply = try self.request(request)
        guard reply["ok"] == .bool(false), let error = reply["error"] else { throw HarnessError("success reply: \(reply.encoded)") }
        return error
    }
}

extension JSON {
    /// The string at `key`, or `""`.
    func string(_ key: String) -> String { self[key]?.stringValue ?? "" }
}
