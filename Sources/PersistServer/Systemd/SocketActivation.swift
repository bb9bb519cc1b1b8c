import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// Socket activation: the listening sockets systemd passed (`LISTEN_PID`, `LISTEN_FDS`,
/// `LISTEN_FDNAMES`; see sd_listen_fds(3)).
///
/// When persistd is socket-activated it serves exactly the sockets it was handed and creates
/// none: the socket unit owns the path, its mode and its group, and keeps it across restarts,
/// so clients connecting while the service restarts wait in the backlog instead of failing.
public enum SocketActivation {
    /// The sockets handed to this process, or `nil` if it was not socket-activated.
    ///
    /// Unsets `LISTEN_*` (so children do not inherit them) and marks the descriptors
    /// close-on-exec. The corresponding C function is `sd_listen_fds_with_names`.
    /// - Throws: ``SocketActivationError`` when a passed descriptor is not a listening
    ///   `AF_UNIX` stream socket (the socket unit is wrong: `ListenStream=` with a path is right).
    public static func listeningSockets() throws(SocketActivationError) -> [ActivatedSocket]? {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        defer {
            if let names {
                var index = 0
                while let name = names[index] { free(name); index += 1 }
                free(names)
            }
        }
        guard count > 0 else {
            if count < 0 { throw SocketActivationError("socket activation: \(String(cString: strerror(-count)))") }
            return nil
        }
        var sockets: [ActivatedSocket] = []
        for offset in 0..<Int(count) {
            let descriptor = SD_LISTEN_FDS_START + Int32(offset)
            let name = names?[offset].map { String(cString: $0) } ?? "unknown"
            guard sd_is_socket_unix(descriptor, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
                throw SocketActivationError("socket activation: descriptor \(descriptor) (\(name)) is not a listening Unix stream socket; use ListenStream=/path in the socket unit")
            }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            sockets.append(ActivatedSocket(descriptor: descriptor, name: name, path: boundPath(descriptor)))
        }
        return sockets
    }

    /// The path `descriptor` is bound to, from `getsockname`; `@name` for an abstract socket.
    static func boundPath(_ descriptor: Int32) -> String {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let pathLength = Int(length) - MemoryLayout<sa_family_t>.size
        guard status == 0, pathLength > 0 else { return "" }
        let bytes = withUnsafeBytes(of: address.sun_path) { Array($0.prefix(pathLength)) }
        if bytes.first == 0 { return "@" + String(decoding: bytes.dropFirst(), as: UTF8.self) }
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }
}
