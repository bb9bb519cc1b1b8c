#if canImport(Glibc)
import Glibc
#endif

/// Who is at the other end of a Unix socket connection, from `SO_PEERCRED` and `SO_PEERGROUPS`.
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The peer's process ID.
    public var processID: Int32
    /// The peer's user ID.
    public var userID: UInt32
    /// The peer's group ID.
    public var groupID: UInt32
    /// The peer's supplementary groups when it connected (`SO_PEERGROUPS`, Linux 4.13).
    public var supplementaryGroupIDs: [UInt32]

    /// Creates credentials.
    public init(processID: Int32, userID: UInt32, groupID: UInt32, supplementaryGroupIDs: [UInt32] = []) {
        self.processID = processID
        self.userID = userID
        self.groupID = groupID
        self.supplementaryGroupIDs = supplementaryGroupIDs
    }

    /// The credentials of the peer of the connected socket `descriptor`, or `nil` if the
    /// kernel does not say. The corresponding C call is `getsockopt(fd, SOL_SOCKET, SO_PEERCRED, …)`.
    public static func of(socket descriptor: Int32) -> PeerCredentials? {
        // `struct ucred { pid_t pid; uid_t uid; gid_t gid; }` needs _GNU_SOURCE, which Glibc's
        // module is not built with; the same three 32-bit fields, in order, are read here.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        let status = withUnsafeMutableBytes(of: &credentials) { buffer in
            getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, buffer.baseAddress, &length)
        }
        guard status == 0, length == 12 else { return nil }
        return PeerCredentials(processID: credentials.pid, userID: credentials.uid, groupID: credentials.gid,
                               supplementaryGroupIDs: supplementaryGroups(of: descriptor))
    }

    /// `SO_PEERGROUPS`: the peer's supplementary groups as they were at `connect`; empty if the
    /// kernel does not support it. Asks again with the size the kernel reports on `ERANGE`.
    private static func supplementaryGroups(of descriptor: Int32) -> [UInt32] {
        let peerGroups: Int32 = 59 // SO_PEERGROUPS in <asm-generic/socket.h>; not exported by Glibc's module.
        var groups = [UInt32](repeating: 0, count: 64)
        var length = socklen_t(groups.count * MemoryLayout<UInt32>.size)
        var status = groups.withUnsafeMutableBytes { getsockopt(descriptor, SOL_SOCKET, peerGroups, $0.baseAddress, &length) }
        if status != 0 && errno == ERANGE {
            groups = [UInt32](repeating: 0, count: Int(length) / MemoryLayout<UInt32>.size)
            status = groups.withUnsafeMutableBytes { getsockopt(descriptor, SOL_SOCKET, peerGroups, $0.baseAddress, &length) }
        }
        guard status == 0 else { return [] }
        return Array(groups.prefix(Int(length) / MemoryLayout<UInt32>.size))
    }

    /// `pid=… uid=… gid=…`.
    public var description: String { "pid=\(processID) uid=\(userID) gid=\(groupID)" }
}
