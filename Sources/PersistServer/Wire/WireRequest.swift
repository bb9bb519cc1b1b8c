/// One request line, decoded: its `id`, its `op` and the whole object for the op's fields.
///
/// `{"id": 7, "op": "get", "ids": ["x-coredata://…/Beer/p1"]}`. The `id` is a string, an
/// integer or absent (``id`` is then `.null`), and is echoed in the reply.
public struct WireRequest: Sendable, Equatable {
    /// The request's `id`: `.string`, `.integer` or `.null`.
    public var id: JSON
    /// The operation's name.
    public var op: String
    /// The request object, for the op's own fields.
    public var body: JSON

    /// Creates a request.
    public init(id: JSON, op: String, body: JSON) {
        self.id = id
        self.op = op
        self.body = body
    }

    /// What a line that is not a usable request gives: the error and the `id` to reply with
    /// (the line's `id` when it could be read, else `null`).
    public struct DecodingFailure: Error, Sendable, Equatable {
        /// The `id` the error reply carries.
        public var id: JSON
        /// The error.
        public var error: WireError
    }

    /// Decodes a line (without its terminator).
    ///
    /// - Throws: ``DecodingFailure`` with `bad_request` for a line that is not UTF-8 JSON, not an
    ///   object, has an `id` that is neither a string nor an integer, or has no string `op`.
    public static func decode(_ line: [UInt8]) throws(DecodingFailure) -> WireRequest {
        // The common flat shape is read straight from the bytes; anything else (and every
        // malformed line, for its specific error) goes through the general parser.
        let json: JSON
        if let simple = SimpleRequestParser.parse(line) {
            json = simple
        } else {
            do {
                json = try JSONParser.parse(line)
            } catch {
                throw DecodingFailure(id: .null, error: WireError(.badRequest, "the line is not valid JSON: \(error)"))
            }
        }
        guard case .object = json else {
            throw DecodingFailure(id: .null, error: WireError(.badRequest, "a request must be a JSON object, not \(json.typeName)"))
        }
        let id = json["id"] ?? .null
        switch id {
        case .string, .integer, .null: break
        default:
            throw DecodingFailure(id: .null, error: WireError(.badRequest, "the request's id must be a string or an integer, not \(id.typeName)"))
        }
        guard let opValue = json["op"] else {
            throw DecodingFailure(id: id, error: WireError(.badRequest, "the request has no \"op\""))
        }
        guard case .string(let op) = opValue else {
            throw DecodingFailure(id: id, error: WireError(.badRequest, "the request's op must be a string, not \(opValue.typeName)"))
        }
        return WireRequest(id: id, op: op, body: json)
    }
}
