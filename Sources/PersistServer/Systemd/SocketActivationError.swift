/// Socket activation that cannot be served: the daemon exits 1 with this one line.
public struct SocketActivationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
