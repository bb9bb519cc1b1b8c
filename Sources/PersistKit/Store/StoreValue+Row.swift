/// Rows of values, allocated the cheap way.
extension StoreValue {
    /// The most values ``row(count:_:)`` writes as an array literal; wider rows take the
    /// general (slower) path.
    static var literalRowLimit: Int { 12 }

    /// An array of `count` values, element `index` being `element(index)`, evaluated in order.
    ///
    /// Up to ``literalRowLimit`` values the array is written as a literal. Swift allocates a
    /// literal's buffer through a metadata accessor the caller caches and stores the elements
    /// in place, one allocation and nothing else. Every general way of making an array of a
    /// given size (`reserveCapacity` and `append`, `Array(repeating:count:)`,
    /// `init(unsafeUninitializedCapacity:)`) looks the array's storage class up on each call:
    /// under callgrind about 420 instructions more per array, 665 against 245.
    ///
    /// The elements must not be constants: a literal of constants is folded into a static
    /// array, which the first write then copies.
    @inline(__always)
    static func row(count: Int, _ element: (Int) -> StoreValue) -> [StoreValue] {
        switch count {
        case 0: return []
        case 1: return [element(0)]
        case 2: return [element(0), element(1)]
        case 3: return [element(0), element(1), element(2)]
        case 4: return [element(0), element(1), element(2), element(3)]
        case 5: return [element(0), element(1), element(2), element(3), element(4)]
        case 6: return [element(0), element(1), element(2), element(3), element(4), element(5)]
        case 7: return [element(0), element(1), element(2), element(3), element(4), element(5), element(6)]
        case 8: return [element(0), element(1), element(2), element(3), element(4), element(5), element(6), element(7)]
        case 9:
            return [element(0), element(1), element(2), element(3), element(4), element(5), element(6), element(7), element(8)]
        case 10:
            return [element(0), element(1), element(2), element(3), element(4), element(5), element(6), element(7), element(8),
                    element(9)]
        case 11:
            return [element(0), element(1), element(2), element(3), element(4), element(5), element(6), element(7), element(8),
                    element(9), element(10)]
        case 12:
            return [element(0), element(1), element(2), element(3), element(4), element(5), element(6), element(7), element(8),
                    element(9), element(10), element(11)]
        default:
            var values: [StoreValue] = []
            values.reserveCapacity(count)
            for index in 0..<count { values.append(element(index)) }
            return values
        }
    }
}
