#if canImport(Glibc)
import Glibc
#endif

/// A Unix domain socket path as a `sockaddr_un`, its length checked.
struct UnixSocketAddress {
    /// The path.
    let path: String
    private var storage = sockaddr_un()

    /// The address of `path`.
    /// - Throws: ``SocketError`` when the path is empty or too long for `sun_path` (107 bytes on Linux).
    init(path: String) throws(SocketError) {
        self.path = path
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        guard !bytes.isEmpty else { throw SocketError("socket path", message: "the socket path is empty") }
        guard bytes.count < capacity else {
            throw SocketError("socket path \(path)", message: "\(bytes.count) bytes is longer than the \(capacity - 1) a Unix socket path may have")
        }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
            buffer[bytes.count] = 0
        }
    }

    /// Calls `body` with the address as a `sockaddr` and its length.
    func withSockAddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var copy = storage
        return withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
