/// Where a randomized test or fuzz target draws its choices from: ``SplitMix64`` for a seeded
/// test, the fuzzer's input bytes for a fuzz target.
public protocol RandomSource {
    /// The next 64 bits.
    mutating func next() -> UInt64
}

extension RandomSource {
    /// A number in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    /// A number in `range`, which must not be empty.
    public mutating func int(_ range: Range<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    /// `true` with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double(next() % 10_000) / 10_000 < p }
    /// One of `values`, which must not be empty.
    public mutating func pick<T>(_ values: [T]) -> T { values[int(0..<values.count)] }
}
