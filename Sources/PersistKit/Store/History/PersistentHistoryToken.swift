/// A position in a store's persistent history: the last transaction seen.
///
/// The corresponding Core Data class is `NSPersistentHistoryToken` (opaque there). Here it is
/// a value: the store's UUID and the number of a transaction (`ATRANSACTION.Z_PK`, which only
/// grows). Its string form, `<store UUID>:<transaction number>`, is what the daemon sends on
/// the wire and what a program may keep between runs; it is also its `Codable` form.
///
/// ```swift
/// let token = PersistentHistoryToken(string: "6F1C…:42")
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: token)
/// ```
public struct PersistentHistoryToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible,
    LosslessStringConvertible {
    /// The store the token belongs to (`NSStoreUUID`).
    public var storeIdentifier: String
    /// The number of the last transaction seen; 0 before the first.
    public var transactionNumber: Int64

    /// Creates a token for a store and transaction number.
    public init(storeIdentifier: String, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    /// Parses `<store UUID>:<transaction number>`; `nil` if malformed.
    public init?(string: String) {
        guard let colon = string.lastIndex(of: ":"), let number = Int64(string[string.index(after: colon)...]),
              number >= 0, colon != string.startIndex else { return nil }
        self.init(storeIdentifier: String(string[..<colon]), transactionNumber: number)
    }

    /// Parses the string form (`LosslessStringConvertible`).
    public init?(_ description: String) { self.init(string: description) }

    /// `<store UUID>:<transaction number>`.
    public var description: String { "\(storeIdentifier):\(transactionNumber)" }

    /// Orders tokens of one store by transaction number.
    public static func < (lhs: PersistentHistoryToken, rhs: PersistentHistoryToken) -> Bool {
        (lhs.storeIdentifier, lhs.transactionNumber) < (rhs.storeIdentifier, rhs.transactionNumber)
    }

    /// Decodes the string form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let token = PersistentHistoryToken(string: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a history token: \(text)")
        }
        self = token
    }

    /// Encodes the string form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
