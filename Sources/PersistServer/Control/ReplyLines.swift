#if canImport(Glibc)
import Glibc
#endif

/// The reply lines in what one connection of ``LoadGenerator`` reads, a read at a time: each
/// complete line is reported with whether it says `"ok":true`, and the start of a line whose
/// end has not arrived yet is kept for the next read.
///
/// Lines and the success mark are found with `memchr` (and `memcmp`), through the read's own
/// buffer: the client's work per reply is small beside the server's, as `redis-benchmark`'s is.
/// (Stepping through an `ArraySlice` byte by byte took about 2,300 instructions a `get` reply,
/// and the client 3,967 in all, more than the 3,109 persistd took to serve it: the client
/// capped what the bench could measure.)
struct ReplyLines {
    /// The start of a line whose end has not arrived yet.
    private var carried: [UInt8] = []

    /// What the daemon writes right after a successful reply's `id`.
    private static let okTrue = Array(#""ok":true"#.utf8)
    /// How far into a line the success mark is looked for (it follows the `id`).
    private static let window = 48

    /// Bytes of a line kept for the next read.
    var carriedCount: Int { carried.count }

    /// Calls `line` for each line `bytes` ends (the first one possibly begun by an earlier
    /// read), in order, with whether it says `"ok":true` (always `true` when `checksReplies` is
    /// false); keeps what follows the last newline.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, checksReplies: Bool, _ line: (_ isSuccess: Bool) -> Void) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let newline = Int32(UInt8(ascii: "\n"))
        var start = 0
        if !carried.isEmpty {
            guard let found = memchr(base, newline, bytes.count) else {
                carried.append(contentsOf: bytes)
                return
            }
            let end = UnsafeRawPointer(found) - base
            carried.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
            line(!checksReplies || carried.withUnsafeBytes { Self.isSuccess($0) })
            carried.removeAll(keepingCapacity: true)
            start = end + 1
        }
        while start < bytes.count {
            guard let found = memchr(base + start, newline, bytes.count - start) else {
                carried.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
                return
            }
            let end = UnsafeRawPointer(found) - base
            line(!checksReplies || Self.isSuccess(UnsafeRawBufferPointer(rebasing: bytes[start..<end])))
            start = end + 1
        }
    }

    /// Whether `line` says `"ok":true` within its first ``window`` bytes: each `"` found
    /// there by `memchr` is compared with the mark by `memcmp`.
    static func isSuccess(_ line: UnsafeRawBufferPointer) -> Bool {
        guard let base = line.baseAddress else { return false }
        let end = min(line.count, window)
        return okTrue.withUnsafeBytes { mark in
            // The mark is a nonempty constant: its buffer has an address.
            guard let markBase = mark.baseAddress else { return false }
            let quote = Int32(UInt8(ascii: "\""))
            var start = 0
            while end - start >= mark.count, let found = memchr(base + start, quote, end - start - mark.count + 1) {
                if memcmp(found, markBase, mark.count) == 0 { return true }
                start = UnsafeRawPointer(found) - base + 1
            }
            return false
        }
    }
}
