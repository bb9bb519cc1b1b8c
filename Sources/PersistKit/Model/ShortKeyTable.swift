/// The index of a short property name (at most 7 UTF-8 bytes) among an entity's property
/// names, found from its ``EntityDescription/shortKey(_:)`` with a multiplication and, most of
/// the time, one comparison.
///
/// An open-addressing table of at least twice as many buckets as there are short names
/// (linear probing): a key's first bucket is the top bits of the key times a fixed odd
/// multiplier. A linear search of the eight-byte keys cost about 25 instructions a read of
/// `i5` in an entity of ten attributes; this costs about 8.
struct ShortKeyTable: Sendable {
    /// One bucket: the key of a short name and its index among the names; key 0 when empty
    /// (no short key is 0).
    private struct Bucket: Sendable {
        var key: UInt64
        var index: Int
    }

    private let buckets: [Bucket]
    /// The number of buckets minus one (a power of two minus one).
    private let mask: Int
    /// 64 minus log2 of the number of buckets: a product shifted right by it is a bucket.
    private let shift: UInt64
    /// Knuth's multiplicative-hashing constant (2^64 divided by the golden ratio, made odd).
    private static let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The table of `keys`, the short keys of an entity's property names in order (0 for a
    /// longer name); `nil` when there is no short name. (A valid model has no repeated name; a
    /// repeated key would keep its last index.)
    init?(keys: [UInt64]) {
        let shortCount = keys.lazy.filter { $0 != 0 }.count
        guard shortCount > 0 else { return nil }
        var bits: UInt64 = 3
        while (1 << bits) < 2 * shortCount { bits += 1 }
        let count = 1 << bits
        var buckets = [Bucket](repeating: Bucket(key: 0, index: 0), count: count)
        for (index, key) in keys.enumerated() where key != 0 {
            var bucket = Int(truncatingIfNeeded: (key &* Self.multiplier) &>> (64 - bits))
            // Half the buckets at most are full, so the probe ends at an empty one or the key.
            while buckets[bucket].key != 0 && buckets[bucket].key != key { bucket = (bucket + 1) & (count - 1) }
            buckets[bucket] = Bucket(key: key, index: index)
        }
        self.buckets = buckets
        self.mask = count - 1
        self.shift = 64 - bits
    }

    /// The index of the name whose short key is `key`, or `nil` if no name has it.
    @inline(__always) func index(of key: UInt64) -> Int? {
        var bucket = Int(truncatingIfNeeded: (key &* Self.multiplier) &>> shift)
        return buckets.withUnsafeBufferPointer { buckets in
            // Each bucket is below the count (the shift leaves log2(count) bits, the mask as
            // many), and at least half of them are empty, so the loop ends.
            while true {
                let entry = buckets[bucket]
                if entry.key == key { return entry.index }
                if entry.key == 0 { return nil }
                bucket = (bucket + 1) & mask
            }
        }
    }
}
