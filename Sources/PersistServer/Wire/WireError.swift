/// An error reply: a code from protocol v1's fixed set, a message for people, and details.
///
/// `{"code":"not_found","message":"no object x-coredata://…/Beer/p9","object":"x-coredata://…"}`.
/// Details are extra members of the error object (``details``), documented per code in
/// `protocol/README.md`.
public struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An error code, `snake_case` on the wire.
    public struct Code: RawRepresentable, Sendable, Hashable {
        /// The code as written on the wire.
        public let rawValue: String
        /// Creates a code.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The request is malformed: not JSON, not an object, a field missing or of the wrong type.
        public static let badRequest = Code(rawValue: "bad_request")
        /// The `op` is not one the server knows.
        public static let unknownOp = Code(rawValue: "unknown_op")
        /// No entity of that name in the model.
        public static let unknownEntity = Code(rawValue: "unknown_entity")
        /// The entity has no property of that name.
        public static let unknownProperty = Code(rawValue: "unknown_property")
        /// A value does not fit its attribute or relationship.
        public static let typeMismatch = Code(rawValue: "type_mismatch")
        /// A predicate format string does not parse; details hold `offset`.
        public static let predicateSyntax = Code(rawValue: "predicate_syntax")
        /// An object ID names no object.
        public static let notFound = Code(rawValue: "not_found")
        /// A save failed validation; details list each object and key in `errors`.
        public static let validationFailed = Code(rawValue: "validation_failed")
        /// A save would break a uniqueness constraint.
        public static let constraintViolation = Code(rawValue: "constraint_violation")
        /// Another connection saved an object this save changes.
        public static let mergeConflict = Code(rawValue: "merge_conflict")
        /// A `deny` delete rule refused a delete.
        public static let deleteDenied = Code(rawValue: "delete_denied")
        /// A line is longer than the server accepts; the connection is closed.
        public static let lineTooLong = Code(rawValue: "line_too_long")
        /// The peer may not perform the operation.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// Something failed inside the server.
        public static let `internal` = Code(rawValue: "internal")
        /// The server has as many connections as it accepts; the connection is closed.
        public static let tooManyConnections = Code(rawValue: "too_many_connections")
        /// A fetch or count ran longer than the server's query time limit and was stopped.
        public static let queryTimeout = Code(rawValue: "query_timeout")
        /// A predicate is nested too deep or has too many terms to be run.
        public static let predicateTooComplex = Code(rawValue: "predicate_too_complex")
        /// The connection has as many requests queued as the server accepts.
        public static let tooManyRequests = Code(rawValue: "too_many_requests")
    }

    /// The code.
    public var code: Code
    /// What went wrong, for people.
    public var message: String
    /// More members of the error object, after `code` and `message`.
    public var details: [JSON.Member]

    /// Creates an error.
    public init(_ code: Code, _ message: String, details: [JSON.Member] = []) {
        self.code = code
        self.message = message
        self.details = details
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }

    /// The error object: `{"code":…,"message":…,…details}`.
    public var json: JSON {
        .object([JSON.Member("code", .string(code.rawValue)), JSON.Member("message", .string(message))] + details)
    }
}
