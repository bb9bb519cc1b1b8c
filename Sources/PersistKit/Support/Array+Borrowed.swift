extension Array where Element: AnyObject {
    /// Calls `body` with the element at `index` borrowed from the array: the element is not
    /// retained for the call, and references `body` reads from its stored `let` properties
    /// (an object's entity) need not be either.
    ///
    /// A loop over a save's objects reads each one several times; each read through a plain
    /// local (or an `unowned(unsafe)` one) made the compiler retain and release the object and
    /// the references it loads, which are atomic operations and cost more in time than their
    /// instruction counts suggest (see `BENCHMARKS.md`). The array must not be changed while
    /// `body` runs: it keeps the element alive.
    @inline(__always)
    func withBorrowedElement<Result>(at index: Int, _ body: (Element) throws -> Result) rethrows -> Result {
        try Unmanaged.passUnretained(self[index])._withUnsafeGuaranteedRef(body)
    }
}
