/// One line the server sends: a reply to a request, or an event.
///
/// - `{"id":…,"ok":true,"result":{…}}`
/// - `{"id":…,"ok":false,"error":{"code":…,"message":…,…}}`
/// - `{"event":"<name>",…}` (no `id`)
public enum WireReply: Sendable, Equatable {
    /// A successful reply.
    case success(id: JSON, result: JSON)
    /// An error reply.
    case failure(id: JSON, error: WireError)
    /// A server-pushed event with its members after `event`.
    case event(name: String, members: [JSON.Member])
    /// A successful reply whose `result` is already compact JSON text (as ``JSON/encodedBytes``
    /// would write it): `get` writes its objects straight into bytes. The same line as
    /// ``success(id:result:)`` with that result parsed.
    case encodedSuccess(id: JSON, result: [UInt8])

    /// The reply as JSON.
    public var json: JSON {
        switch self {
        case .success(let id, let result):
            return .object(["id": id, "ok": .bool(true), "result": result])
        case .failure(let id, let error):
            return .object(["id": id, "ok": .bool(false), "error": error.json])
        case .event(let name, let members):
            return .object([JSON.Member("event", .string(name))] + members)
        case .encodedSuccess(let id, let result):
            // The text was written by the server's own writer; it parses (`null` if it did not).
            return .object(["id": id, "ok": .bool(true), "result": (try? JSONParser.parse(result)) ?? .null])
        }
    }

    /// The reply as one line of UTF-8, with its `\n`.
    public var line: [UInt8] {
        var bytes: [UInt8] = []
        write(to: &bytes)
        return bytes
    }

    /// Appends ``line`` to `bytes` without building the envelope as a ``JSON`` value first.
    func write(to bytes: inout [UInt8]) {
        switch self {
        case .success(let id, let result):
            Self.writeSuccessStart(id: id, to: &bytes)
            result.write(to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        case .failure(let id, let error):
            JSON.append("{\"id\":", to: &bytes)
            id.write(to: &bytes)
            JSON.append(",\"ok\":false,\"error\":", to: &bytes)
            error.json.write(to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        case .encodedSuccess(let id, let result):
            Self.writeSuccessStart(id: id, to: &bytes)
            bytes.append(contentsOf: result)
            bytes.append(UInt8(ascii: "}"))
        case .event:
            json.write(to: &bytes)
        }
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Appends a success line's start, `{"id":<id>,"ok":true,"result":`; the result, `}` and
    /// `\n` follow (what ``write(to:)`` writes for ``success(id:result:)``).
    static func writeSuccessStart(id: JSON, to bytes: inout [UInt8]) {
        JSON.append("{\"id\":", to: &bytes)
        id.write(to: &bytes)
        JSON.append(",\"ok\":true,\"result\":", to: &bytes)
    }
}
