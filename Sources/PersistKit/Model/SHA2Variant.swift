/// What tells one SHA-2 function from another (FIPS 180-4, sections 4.1.2, 4.1.3, 4.2.2,
/// 4.2.3, 5.3.3, 5.3.5): the word, the round constants, the initial hash value and the four
/// functions of a word. ``SHA2`` does the rest, the same for every variant.
protocol SHA2Variant {
    /// The word: `UInt32` for SHA-256, `UInt64` for SHA-512. A block is 16 words, the message
    /// schedule one word per round.
    associatedtype Word: FixedWidthInteger & UnsignedInteger

    /// The round constants K, one per round (64 for SHA-256, 80 for SHA-512).
    static var roundConstants: [Word] { get }
    /// The initial hash value H(0), eight words.
    static var initialHash: [Word] { get }

    /// Σ0, applied to the working variable `a` each round.
    static func bigSigma0(_ x: Word) -> Word
    /// Σ1, applied to the working variable `e` each round.
    static func bigSigma1(_ x: Word) -> Word
    /// σ0, of the message schedule.
    static func smallSigma0(_ x: Word) -> Word
    /// σ1, of the message schedule.
    static func smallSigma1(_ x: Word) -> Word
}

extension SHA2Variant {
    /// `x` rotated right by `n` bits.
    @inline(__always) static func rotr(_ x: Word, _ n: Word) -> Word {
        (x &>> n) | (x &<< (Word(Word.bitWidth) &- n))
    }
}
