/// Bytes written into a fixed buffer and appended to an array in one call: a reply's many small
/// pieces (member names, digits, punctuation) then cost one `Array.append` instead of one each.
///
/// The buffer is the caller's (a temporary allocation around the writing); what does not fit
/// makes the stage flush into the array first. Whoever writes into the array directly flushes
/// the stage before, so bytes stay in order.
struct ByteStage {
    private let base: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    /// Bytes staged, not yet in the array.
    private(set) var count = 0

    /// A stage over `buffer`, which holds at least 64 bytes and outlives the stage.
    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        // The force-unwrap cannot fail: a buffer of 64 bytes or more has a base address.
        precondition(buffer.count >= 64, "ByteStage: the buffer holds fewer than 64 bytes")
        base = buffer.baseAddress!
        capacity = buffer.count
    }

    /// Makes room for `needed` bytes (at most the capacity), flushing into `output` if it must.
    @inline(__always) private mutating func reserve(_ needed: Int, spill output: inout [UInt8]) {
        if count + needed > capacity { flush(into: &output) }
    }

    /// Appends `bytes` (straight into `output`, after what is staged, when they could never fit).
    @inline(__always) mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, spill output: inout [UInt8]) {
        guard let source = bytes.baseAddress else { return }
        if bytes.count > capacity {
            flush(into: &output)
            return output.append(contentsOf: bytes)
        }
        reserve(bytes.count, spill: &output)
        let target = base + count
        if bytes.count <= 16 {
            // A short run (punctuation, a member's name) byte by byte: cheaper than a `memcpy` call.
            for index in 0..<bytes.count { target[index] = source[index] }
        } else {
            target.update(from: source, count: bytes.count)
        }
        count &+= bytes.count
    }

    /// Appends `bytes`.
    @inline(__always) mutating func append(_ bytes: [UInt8], spill output: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0, spill: &output) }
    }

    /// Appends `text`'s UTF-8 bytes.
    @inline(__always) mutating func append(_ text: StaticString, spill output: inout [UInt8]) {
        text.withUTF8Buffer { append($0, spill: &output) }
    }

    /// Appends `byte`.
    mutating func append(_ byte: UInt8, spill output: inout [UInt8]) {
        reserve(1, spill: &output)
        base[count] = byte
        count += 1
    }

    /// Appends the decimal digits of `value`, as ``JSON/writeInteger(_:to:)`` writes them.
    mutating func writeInteger(_ value: Int64, spill output: inout [UInt8]) {
        reserve(JSON.maximumIntegerBytes, spill: &output)
        putInteger(value)
    }

    /// Appends the `byteCount` bytes at `bytes` (a short run, such as a member's `"name":`),
    /// then the decimal digits of `value`, making room once and copying the run byte by byte
    /// (cheaper than a `memcpy` call for a few bytes).
    mutating func append(_ bytes: UnsafePointer<UInt8>, count byteCount: Int, thenInteger value: Int64,
                         spill output: inout [UInt8]) {
        guard byteCount <= 32 else {
            append(UnsafeBufferPointer(start: bytes, count: byteCount), spill: &output)
            return writeInteger(value, spill: &output)
        }
        reserve(byteCount &+ JSON.maximumIntegerBytes, spill: &output)
        let target = base + count
        for index in 0..<byteCount { target[index] = bytes[index] }
        count &+= byteCount
        putInteger(value)
    }

    /// Appends the `byteCount` bytes at `bytes` (at most 16, such as a member's `"name":`), then
    /// the decimal digits of `value`, copying the run as two 8-byte words: 16 bytes are read
    /// at `bytes` and written at the end of the stage, and only `byteCount` of them are kept.
    ///
    /// - Precondition: `byteCount <= 16`, and 16 bytes at `bytes` are readable (a padded run,
    ///   see ``WireValuePlan/namePadding``).
    @inline(__always) mutating func append(padded bytes: UnsafePointer<UInt8>, count byteCount: Int, thenInteger value: Int64,
                                           spill output: inout [UInt8]) {
        reserve(16 &+ JSON.maximumIntegerBytes, spill: &output)
        let source = UnsafeRawPointer(bytes)
        let target = UnsafeMutableRawPointer(base + count)
        target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
        target.storeBytes(of: source.loadUnaligned(fromByteOffset: 8, as: UInt64.self), toByteOffset: 8, as: UInt64.self)
        count &+= byteCount
        putInteger(value)
    }

    /// Writes the digits of `value` where there is room for them (a digit 0–9 inline).
    @inline(__always) private mutating func putInteger(_ value: Int64) {
        if value >= 0 && value < 10 {
            base[count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value)
            count &+= 1
        } else {
            count &+= JSON.writeInteger(value, at: base + count)
        }
    }

    /// Moves what is staged to the end of `output`.
    mutating func flush(into output: inout [UInt8]) {
        guard count > 0 else { return }
        output.append(contentsOf: UnsafeBufferPointer(start: base, count: count))
        count = 0
    }

    /// Drops what is staged.
    mutating func discard() {
        count = 0
    }
}
