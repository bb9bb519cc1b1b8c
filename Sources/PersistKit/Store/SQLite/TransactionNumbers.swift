/// A set of history transaction numbers, kept as a sorted array: what a store remembers of
/// the transactions its own connection committed (``HistoryState/ownTransactions``).
///
/// A connection's transactions are numbered in increasing order, so a number noted is almost
/// always past the last one and is appended; the numbers up to one read are let go of from
/// the front. A `Set<Int64>` hashed every number noted (about 600 instructions a save on the
/// thread completing it, with a table to grow now and then).
struct TransactionNumbers: Equatable {
    /// The numbers, in increasing order, none twice.
    private(set) var numbers: [Int64] = []

    /// Whether `number` is in the set.
    func contains(_ number: Int64) -> Bool {
        guard let last = numbers.last, number <= last else { return false }
        let index = prefixCount { $0 < number }
        return index < numbers.count && numbers[index] == number
    }

    /// Adds `number` (appended when past the last, as it nearly always is).
    mutating func insert(_ number: Int64) {
        guard let last = numbers.last, number <= last else { return numbers.append(number) }
        let index = prefixCount { $0 < number }
        if index < numbers.count && numbers[index] == number { return }
        numbers.insert(number, at: index)
    }

    /// Removes every number up to `bound`, `bound` included.
    mutating func removeAll(through bound: Int64) {
        guard let first = numbers.first, first <= bound else { return }
        numbers.removeFirst(prefixCount { $0 <= bound })
    }

    /// How many numbers, from the first, `isBefore` holds for (it holds for a prefix of the
    /// sorted numbers): the index of the first it does not hold for, found by halves.
    private func prefixCount(_ isBefore: (Int64) -> Bool) -> Int {
        var low = 0
        var high = numbers.count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(numbers[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
