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

    /// An array of `count` values, element `index` being `element(index)`, evaluated in order,
    /// with one copy of `element`'s code however many values there are.
    ///
    /// ``row(count:_:)`` copies `element` into every element of its literals (78 copies), which
    /// suits a small `element`; a row decoder is bigger, and its copies made each single-object
    /// read run through more code than the instruction cache holds. Here the literal holds
    /// placeholders (`.integer(placeholder)`; a runtime value, so that the literal is not folded
    /// into a static array the first write would copy), and one loop writes the elements over
    /// them. A placeholder holds no reference, so writing over it without destroying it first
    /// loses nothing.
    @inline(__always)
    static func filledRow(count: Int, placeholder: Int64, _ element: (Int) -> StoreValue) -> [StoreValue] {
        let p = StoreValue.integer(placeholder)
        var values: [StoreValue]
        switch count {
        case 0: return []
        case 1: values = [p]
        case 2: values = [p, p]
        case 3: values = [p, p, p]
        case 4: values = [p, p, p, p]
        case 5: values = [p, p, p, p, p]
        case 6: values = [p, p, p, p, p, p]
        case 7: values = [p, p, p, p, p, p, p]
        case 8: values = [p, p, p, p, p, p, p, p]
        case 9: values = [p, p, p, p, p, p, p, p, p]
        case 10: values = [p, p, p, p, p, p, p, p, p, p]
        case 11: values = [p, p, p, p, p, p, p, p, p, p, p]
        case 12: values = [p, p, p, p, p, p, p, p, p, p, p, p]
        default:
            values = []
            values.reserveCapacity(count)
            for index in 0..<count { values.append(element(index)) }
            return values
        }
        values.withUnsafeMutableBufferPointer { buffer in
            // Force-unwrap: the buffer holds 1 to 12 elements, so it has a base address.
            let base = buffer.baseAddress.unsafelyUnwrapped
            for index in 0..<count { (base + index).initialize(to: element(index)) }
        }
        return values
    }
}
