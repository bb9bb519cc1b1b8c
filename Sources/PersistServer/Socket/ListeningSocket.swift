import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's listening Unix socket: created with the configured mode, replacing a stale
/// socket file but never one a live daemon answers on.
///
/// Owns its descriptor: ``close()`` closes it and removes the socket file (if it created
/// it), once. A socket systemd passed (socket activation) is adopted: its file belongs to the
/// socket unit and stays.
final class ListeningSocket {
    /// The listening descriptor (non-blocking).
    let descriptor: Int32
    /// The socket file's path.
    let path: String
    /// Whether ``close()`` removes the file: only for sockets this process bound.
    private let removesFile: Bool
    private var isClosed = false

    /// Adopts an already listening `descriptor` (from systemd); ``close()`` leaves its file alone.
    init(adopting descriptor: Int32, path: String) {
        makeNonBlocking(descriptor)
        self.descriptor = descriptor
        self.path = path
        self.removesFile = false
    }

    /// Binds and listens on `path` with permission bits `mode`.
    ///
    /// - Throws: ``SocketError`` when a live server answers on `path`, when `path` exists and is
    ///   not a socket, or when a call fails.
    init(path: String, mode: UInt32, backlog: Int32 = 128) throws(SocketError) {
        let address = try UnixSocketAddress(path: path)
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        try Self.removeStaleSocket(at: path, address: address)

        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SocketError("socket", errno: errno) }
        // Create the file with no permissions for others at all, then set the configured mode:
        // no moment where the socket is more open than asked.
        let oldMask = umask(0o177)
        let bound = address.withSockAddr { bind(descriptor, $0, $1) }
        let bindErrno = errno
        umask(oldMask)
        guard bound == 0 else {
            Glibc.close(descriptor)
            throw SocketError("bind \(path)", errno: bindErrno)
        }
        guard chmod(path, mode_t(mode)) == 0, listen(descriptor, backlog) == 0 else {
            let failure = errno
            Glibc.close(descriptor)
            unlink(path)
            throw SocketError("listen \(path)", errno: failure)
        }
        makeNonBlocking(descriptor)
        self.descriptor = descriptor
        self.path = path
        self.removesFile = true
    }

    deinit {
        assert(isClosed, "ListeningSocket: deinit before close()")
    }

    /// Closes the descriptor and removes the socket file if this process created it.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(descriptor)
        if removesFile { unlink(path) }
    }

    /// Removes `path` if it is a socket nobody answers on; throws if someone does, or if it is not a socket.
    private static func removeStaleSocket(at path: String, address: UnixSocketAddress) throws(SocketError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw SocketError("socket path \(path)", message: "the file exists and is not a socket; remove it or choose another path")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { throw SocketError("socket", errno: errno) }
        defer { Glibc.close(probe) }
        let connected = retryingOnInterrupt { address.withSockAddr { connect(probe, $0, $1) } }
        if connected == 0 {
            throw SocketError("socket path \(path)", message: "another server is listening on it (a live persistd?); not replacing it")
        }
        guard connected == -ECONNREFUSED else {
            throw SocketError("socket path \(path)", message: "cannot tell whether a server listens on it (connect: \(String(cString: strerror(-connected)))); not replacing it")
        }
        // ECONNREFUSED: a socket file nobody listens on, left by a daemon that died. Replace it.
        guard unlink(path) == 0 || errno == ENOENT else { throw SocketError("unlink stale socket \(path)", errno: errno) }
    }
}
