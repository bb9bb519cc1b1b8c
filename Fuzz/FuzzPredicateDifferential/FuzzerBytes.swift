import PredicateDifferential

/// A ``RandomSource`` reading libFuzzer's input: two bytes per draw, so a mutation of the input
/// changes one choice of the generator. When the bytes run out, the draws continue from a
/// ``SplitMix64`` seeded with a hash of the input, so a short input still makes a whole predicate.
struct FuzzerBytes: RandomSource {
    private var bytes: ArraySlice<UInt8>
    private var fallback: SplitMix64

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        // FNV-1a of the input.
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        fallback = SplitMix64(state: hash)
    }

    mutating func next() -> UInt64 {
        guard let low = bytes.popFirst() else { return fallback.next() }
        let high = bytes.popFirst() ?? 0
        return UInt64(low) | UInt64(high) << 8
    }
}
