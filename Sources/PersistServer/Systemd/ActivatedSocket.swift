/// A listening socket systemd handed over (`LISTEN_FDS`), with the name its unit gave it
/// (`FileDescriptorName=`, else the socket unit's name).
public struct ActivatedSocket: Sendable, Equatable {
    /// The descriptor: 3, 4, … (`SD_LISTEN_FDS_START` onwards).
    public var descriptor: Int32
    /// The name from `LISTEN_FDNAMES`.
    public var name: String
    /// The socket's path as bound, for logs (`getsockname`); empty for an abstract or unnamed socket.
    public var path: String
}
