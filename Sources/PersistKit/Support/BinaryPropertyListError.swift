/// Why a binary property list could not be written or read: what, and where.
struct BinaryPropertyListError: Error, CustomStringConvertible {
    /// Where: a byte offset in the list read, or the key path of the value written.
    let location: String
    /// What was wrong there.
    let reason: String

    /// An error about the bytes at `offset` of the list being read.
    static func malformed(at offset: Int, _ reason: String) -> BinaryPropertyListError {
        BinaryPropertyListError(location: "byte \(offset)", reason: reason)
    }

    /// An error about the value at `path` of the value being written.
    static func unsupported(at path: String, _ reason: String) -> BinaryPropertyListError {
        BinaryPropertyListError(location: path.isEmpty ? "the top value" : path, reason: reason)
    }

    var description: String { "binary property list, \(location): \(reason)" }
}
