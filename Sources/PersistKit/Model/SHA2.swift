import Foundation

/// The SHA-2 hash computation (FIPS 180-4, sections 5.1 and 6), generic over the ``SHA2Variant``
/// that ``SHA256`` and ``SHA512`` are.
///
/// Full blocks are compressed where they lie in the message; only the last one or two, padded,
/// are copied. (A version that copied the message into an array grown a byte at a time and built
/// the digest from temporary arrays took about 15,000 instructions to hash a property's few
/// bytes with SHA-256, and a store's entity version hashes are computed at every open.)
enum SHA2<Variant: SHA2Variant> {
    typealias Word = Variant.Word

    /// The bytes of a word.
    private static var wordSize: Int { MemoryLayout<Word>.size }
    /// The bytes of a block: 16 words.
    private static var blockSize: Int { 16 * wordSize }

    /// The digest of `data`: the eight words of the final hash value, most significant byte first.
    static func hash(_ data: Data) -> Data {
        var h = Variant.initialHash
        data.withUnsafeBytes { (message: UnsafeRawBufferPointer) in
            h.withUnsafeMutableBufferPointer { h in
                withUnsafeTemporaryAllocation(of: Word.self, capacity: Variant.roundConstants.count) { w in
                    let fullBlocks = message.count / blockSize
                    for block in 0..<fullBlocks {
                        compress(UnsafeRawBufferPointer(rebasing: message[block * blockSize..<(block + 1) * blockSize]), into: h, schedule: w)
                    }
                    // The rest of the message, 0x80, zeros, and the length in bits in the last two
                    // words: one block, or two when the rest leaves no room for the marker and them.
                    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * blockSize) { tail in
                        let rest = message.count - fullBlocks * blockSize
                        let tailLength = rest + 1 + 2 * wordSize <= blockSize ? blockSize : 2 * blockSize
                        tail.initialize(repeating: 0)
                        for index in 0..<rest { tail[index] = message[fullBlocks * blockSize + index] }
                        tail[rest] = 0x80
                        // A length past 2^64 bits (2 EiB of message) does not occur: its high bytes stay 0.
                        let bitLength = UInt64(message.count) &* 8
                        for index in 0..<8 { tail[tailLength - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index))) }
                        let padded = UnsafeRawBufferPointer(tail)
                        for start in stride(from: 0, to: tailLength, by: blockSize) {
                            compress(UnsafeRawBufferPointer(rebasing: padded[start..<start + blockSize]), into: h, schedule: w)
                        }
                    }
                }
            }
        }
        var digest = Data(count: h.count * wordSize)
        digest.withUnsafeMutableBytes { bytes in
            for (index, word) in h.enumerated() { bytes.storeBytes(of: word.bigEndian, toByteOffset: wordSize * index, as: Word.self) }
        }
        return digest
    }

    /// Compresses `block` (16 words) into the hash value `h`, with `w` (a word per round) as
    /// the message schedule's storage.
    @inline(__always)
    private static func compress(_ block: UnsafeRawBufferPointer, into h: UnsafeMutableBufferPointer<Word>,
                                 schedule w: UnsafeMutableBufferPointer<Word>) {
        Variant.roundConstants.withUnsafeBufferPointer { k in
            for i in 0..<16 { w[i] = Word(bigEndian: block.loadUnaligned(fromByteOffset: i * wordSize, as: Word.self)) }
            for i in 16..<k.count {
                w[i] = w[i - 16] &+ Variant.smallSigma0(w[i - 15]) &+ w[i - 7] &+ Variant.smallSigma1(w[i - 2])
            }
            var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
            for i in 0..<k.count {
                let ch = (e & f) ^ (~e & g)
                let t1 = hh &+ Variant.bigSigma1(e) &+ ch &+ k[i] &+ w[i]
                let maj = (a & b) ^ (a & c) ^ (b & c)
                let t2 = Variant.bigSigma0(a) &+ maj
                (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e; h[5] &+= f; h[6] &+= g; h[7] &+= hh
        }
    }
}
