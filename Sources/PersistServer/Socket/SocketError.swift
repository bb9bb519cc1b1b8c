#if canImport(Glibc)
import Glibc
#endif

/// A failed socket call: what was being done, on which path, and `errno`.
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed, in words (`bind /run/persistd.sock`).
    public var operation: String
    /// The `errno` value, or 0 when the failure is not a system call's.
    public var errno: Int32
    /// A message for people, when the failure is not a system call's.
    public var message: String?

    /// A failure of a system call.
    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
        self.message = nil
    }

    /// A failure explained in words.
    public init(_ operation: String, message: String) {
        self.operation = operation
        self.errno = 0
        self.message = message
    }

    /// `bind /path: Address already in use`.
    public var description: String {
        if let message { return "\(operation): \(message)" }
        return "\(operation): \(String(cString: strerror(errno)))"
    }
}
