/// A seeded generator (SplitMix64) the randomized tests share, so a failure can be replayed
/// from its seed.
public struct SplitMix64: RandomSource {
    /// The generator's state: the seed, then advanced by every draw.
    public var state: UInt64

    /// Creates a generator starting from `state`.
    public init(state: UInt64) {
        self.state = state
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
