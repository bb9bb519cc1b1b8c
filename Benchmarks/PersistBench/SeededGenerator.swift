/// A random number generator that gives the same sequence in every run (SplitMix64), so the
/// "random" keys of workload 4 are the same from run to run and from version to version: the
/// share of keys looked up twice, and with it the work, no longer varies between runs.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
