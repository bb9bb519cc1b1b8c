#if canImport(Glibc)
import Glibc
#endif

/// Splits a byte stream into `\n`-terminated lines, with a maximum line length.
///
/// Bytes are appended as they arrive (``append(_:)``); ``nextLine()`` returns each complete line
/// without its `\n` (and without a `\r` before it). The framer remembers where its last scan
/// stopped, so a partial line is not rescanned when more bytes arrive (as swift-nio-extras'
/// `LineBasedFrameDecoder` does). A line longer than ``maximumLineLength`` bytes — counted
/// without the terminator — is reported as ``Frame/tooLong`` as soon as that is certain, even
/// before its `\n` arrives; the framer is then poisoned (the connection is to be closed).
///
/// ```swift
/// var framer = LineFramer(maximumLineLength: 1 << 20)
/// framer.append(Array("{\"op\":\"ping\"}\r\n{\"op\"".utf8))
/// framer.nextLine()   // .line(bytes of {"op":"ping"})
/// framer.nextLine()   // nil: the rest is a partial line
/// ```
public struct LineFramer: Sendable {
    /// One result of ``nextLine()``.
    public enum Frame: Sendable, Equatable {
        /// A complete line, without its terminator.
        case line([UInt8])
        /// A line over the limit; no more frames follow.
        case tooLong
    }

    /// The longest line accepted, in bytes, not counting `\n` or `\r\n`.
    public let maximumLineLength: Int
    private var buffer: [UInt8] = []
    /// Where the next line starts in `buffer`.
    private var start = 0
    /// Where the scan for `\n` resumes: everything in `start..<scanned` holds no `\n`.
    private var scanned = 0
    private var poisoned = false

    /// Creates a framer accepting lines of up to `maximumLineLength` bytes.
    public init(maximumLineLength: Int) {
        precondition(maximumLineLength > 0, "LineFramer: the maximum line length must be positive")
        self.maximumLineLength = maximumLineLength
    }

    /// The bytes received but not yet returned as a line: a partial line, reported at end of input.
    public var leftover: [UInt8] { Array(buffer[start...]) }

    /// The bytes received of a line whose `\n` has not arrived yet (after ``nextLine()`` returned `nil`).
    public var partialLineLength: Int { buffer.count - start }

    /// Whether an over-long line was seen.
    public var isPoisoned: Bool { poisoned }

    /// Adds received bytes.
    public mutating func append<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        guard !poisoned else { return }
        // Drop consumed bytes before growing, so the buffer holds at most one partial line and
        // whatever complete lines are still waiting.
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            scanned -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete line, ``Frame/tooLong``, or `nil` when more bytes are needed.
    public mutating func nextLine() -> Frame? {
        switch nextLineSpan() {
        case .line(let range)?: return .line(Array(buffer[range]))
        case .tooLong?: return .tooLong
        case nil: return nil
        }
    }

    /// Where ``nextLineSpan()`` found a line: its bytes' range in the framer's buffer (read them
    /// with ``withBytes(of:_:)`` before the next ``append(_:)``), or an over-long line.
    public enum Span: Sendable, Equatable {
        /// A complete line, without its terminator.
        case line(Range<Int>)
        /// A line over the limit; no more spans follow.
        case tooLong
    }

    /// ``nextLine()`` without copying the line out of the buffer: the range of its bytes.
    public mutating func nextLineSpan() -> Span? {
        if poisoned { return nil }
        // memchr finds the terminator many bytes a step, not one byte per loop turn.
        let from = scanned
        let newline: Int? = buffer.withUnsafeBufferPointer { bytes in
            guard from < bytes.count, let base = bytes.baseAddress,
                  let found = memchr(base + from, Int32(UInt8(ascii: "\n")), bytes.count - from) else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        guard let newline else {
            scanned = buffer.count
            // No terminator yet. One byte of slack: a `\r` ending the partial line may belong to `\r\n`.
            let pending = scanned - start
            if pending > maximumLineLength + 1 || (pending == maximumLineLength + 1 && buffer[scanned - 1] != UInt8(ascii: "\r")) {
                return poison()
            }
            return nil
        }
        var end = newline
        if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let range = start..<end
        scanned = newline + 1
        start = scanned
        if range.count > maximumLineLength { return poison() }
        return .line(range)
    }

    /// Calls `body` with the bytes of `range`, a line ``nextLineSpan()`` returned since the
    /// last ``append(_:)``.
    public func withBytes<Result>(of range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    private mutating func poison() -> Span {
        poisoned = true
        buffer = []
        start = 0
        scanned = 0
        return .tooLong
    }
}
