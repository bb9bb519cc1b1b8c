/// One request line, decoded: its `id`, its `op` and the whole object for the op's fields.
///
/// `{"id": 7, "op": "get", "ids": ["x-coredata://…/Beer/p1"]}`. The `id` is a string, an
/// integer or absent (``id`` is then `.null`), and is echoed in the reply.
public struct WireRequest: Sendable, Equatable {
    /// The request's `id`: `.string`, `.integer` or `.null`.
    public var id: JSON {
        get { fields.id }
        set { fields = Fields(id: newValue, op: fields.op, storedBody: fields.storedBody, insert: fields.insert) }
    }
    /// The operation's name.
    public var op: String {
        get { fields.op }
        set { fields = Fields(id: fields.id, op: newValue, storedBody: fields.storedBody, insert: fields.insert) }
    }
    /// The request object, for the op's own fields.
    public var body: JSON {
        get { fields.insert?.body ?? fields.storedBody }
        set { fields = Fields(id: fields.id, op: fields.op, storedBody: newValue, insert: nil) }
    }

    /// The request as its line's bytes, when it is an `insert` of the shape ``SimpleInsert``
    /// reads: ``body`` is then made from the line only when asked for.
    var insert: SimpleInsert? { fields.insert }

    /// The fields, behind one reference, never changed in place (a setter makes new ones).
    ///
    /// A request is copied several times between its line and its reply (into the
    /// connection's queue, its batch, the session's closures): a copy of the fields themselves
    /// retained each reference they hold and switched over the cases of two `JSON`s, and its
    /// destruction did the same (about 1.5 K instructions a save on the event loop, with
    /// `insert`+`save`); a copy of this reference is one retain.
    private var fields: Fields

    /// The storage of ``WireRequest``: immutable, so shared between threads freely.
    private final class Fields: Sendable {
        let id: JSON
        let op: String
        /// ``body``, unless the request is an ``insert`` kept as its line.
        let storedBody: JSON
        let insert: SimpleInsert?

        init(id: JSON, op: String, storedBody: JSON, insert: SimpleInsert?) {
            self.id = id
            self.op = op
            self.storedBody = storedBody
            self.insert = insert
        }
    }

    /// Creates a request.
    public init(id: JSON, op: String, body: JSON) {
        fields = Fields(id: id, op: op, storedBody: body, insert: nil)
    }

    /// An `insert` kept as its line.
    init(id: JSON, insert: SimpleInsert) {
        fields = Fields(id: id, op: "insert", storedBody: .null, insert: insert)
    }

    /// Requests are equal when their `id`, `op` and ``body`` are, however they are kept.
    public static func == (lhs: WireRequest, rhs: WireRequest) -> Bool {
        lhs.id == rhs.id && lhs.op == rhs.op && lhs.body == rhs.body
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
        // An insert of plain values is kept as its bytes, and a line of just an integer `id`
        // and an `op` (a `save`) is matched whole.
        if let (id, insert) = SimpleInsert.parse(line) { return WireRequest(id: id, insert: insert) }
        if let bare = bareRequest(line) { return bare }
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

    /// `{"id":<integer>,"op":"<name>"}` exactly as written here (no whitespace, nothing else),
    /// as ``SimpleRequestParser`` would give it; `nil` for any other line.
    private static func bareRequest(_ line: [UInt8]) -> WireRequest? {
        line.withUnsafeBufferPointer { bytes -> WireRequest? in
            var cursor = ByteCursor(bytes: bytes)
            guard cursor.take(#"{"id":"#), let id = cursor.integer(), cursor.take(#","op":"#),
                  let op = cursor.plainString(), cursor.take(UInt8(ascii: "}")), cursor.atEnd else { return nil }
            return WireRequest(id: .integer(id), op: op, body: .object([JSON.Member("id", .integer(id)), JSON.Member("op", .string(op))]))
        }
    }
}
