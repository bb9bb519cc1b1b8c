import Foundation

/// A small SHA-256 (FIPS 180-4), for entity version hashes.
///
/// Foundation on Linux has no CryptoKit and persistd takes no outside packages; this is the
/// plain specification, checked against the NIST test vectors in the tests.
///
/// ```swift
/// let digest = SHA256.hash(Data("abc".utf8)) // 32 bytes: ba7816bf…
/// ```
public enum SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The initial hash value (FIPS 180-4, 5.3.3).
    private static let initial: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]

    /// The 32-byte SHA-256 digest of `data`.
    ///
    /// Full blocks are compressed where they lie in `data`; only the last one or two, padded,
    /// are copied. (A version that copied the message into an array grown a byte at a time and
    /// built the digest from eight temporary arrays took about 15,000 instructions to hash a
    /// property's few bytes, and a store's entity version hashes are computed at every open.)
    public static func hash(_ data: Data) -> Data {
        var h = initial
        data.withUnsafeBytes { (message: UnsafeRawBufferPointer) in
            h.withUnsafeMutableBufferPointer { h in
                withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                    let fullBlocks = message.count / 64
                    for block in 0..<fullBlocks {
                        compress(UnsafeRawBufferPointer(rebasing: message[block * 64..<block * 64 + 64]), into: h, schedule: w)
                    }
                    // The rest of the message, 0x80, zeros, and the length in bits: one block, or
                    // two when the rest leaves fewer than 9 bytes for the marker and the length.
                    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
                        let rest = message.count - fullBlocks * 64
                        let tailLength = rest < 56 ? 64 : 128
                        tail.initialize(repeating: 0)
                        for index in 0..<rest { tail[index] = message[fullBlocks * 64 + index] }
                        tail[rest] = 0x80
                        let bitLength = UInt64(message.count) &* 8
                        for index in 0..<8 { tail[tailLength - 1 - index] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index))) }
                        let padded = UnsafeRawBufferPointer(tail)
                        for start in stride(from: 0, to: tailLength, by: 64) {
                            compress(UnsafeRawBufferPointer(rebasing: padded[start..<start + 64]), into: h, schedule: w)
                        }
                    }
                }
            }
        }
        var digest = Data(count: 32)
        digest.withUnsafeMutableBytes { bytes in
            for (index, word) in h.enumerated() { bytes.storeBytes(of: word.bigEndian, toByteOffset: 4 * index, as: UInt32.self) }
        }
        return digest
    }

    /// Compresses the 64-byte `block` into the hash value `h`, with `w` (64 words) as the
    /// message schedule's storage.
    @inline(__always)
    private static func compress(_ block: UnsafeRawBufferPointer, into h: UnsafeMutableBufferPointer<UInt32>,
                                 schedule w: UnsafeMutableBufferPointer<UInt32>) {
        for i in 0..<16 { w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)) }
        for i in 16..<64 {
            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
        k.withUnsafeBufferPointer { k in
            for i in 0..<64 {
                let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
                let ch = (e & f) ^ (~e & g)
                let t1 = hh &+ s1 &+ ch &+ k[i] &+ w[i]
                let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
                let maj = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ maj
                (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
        }
        h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e; h[5] &+= f; h[6] &+= g; h[7] &+= hh
    }

    @inline(__always) private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
}
