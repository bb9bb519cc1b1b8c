#if canImport(Glibc)
import Glibc
#endif

/// User and group names to IDs, through NSS (`/etc/passwd`, `/etc/group`, systemd-userdb, …).
///
/// The corresponding C functions are `getpwnam_r` and `getgrnam_r`.
enum AccountDirectory {
    /// The user ID of `name`, or of a decimal ID as is; `nil` if no such user.
    static func userID(_ name: String) -> UInt32? {
        if let id = UInt32(name) { return id }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.pw_uid
    }

    /// The group ID of `name`, or of a decimal ID as is; `nil` if no such group.
    static func groupID(_ name: String) -> UInt32? {
        if let id = UInt32(name) { return id }
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 64 * 1024)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}
