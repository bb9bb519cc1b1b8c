import PredicateDifferential
import Testing
@testable import PersistKit

/// The sorted array a store keeps its own transactions' numbers in answers as a set would,
/// whatever order numbers come in and however they are let go of.
@Suite("Transaction numbers")
struct TransactionNumbersTests {
    @Test func behavesAsASetOfNumbers() {
        var generator = SplitMix64(state: 0x5eed)
        for round in 0..<200 {
            var numbers = TransactionNumbers()
            var model = Set<Int64>()
            var next: Int64 = Int64(generator.next() % 5)
            for _ in 0..<60 {
                switch generator.next() % 10 {
                case 0..<6:
                    // Mostly increasing, as a connection numbers its transactions.
                    next += Int64(generator.next() % 3)
                    numbers.insert(next)
                    model.insert(next)
                case 6, 7:
                    let any = Int64(generator.next() % 200) - 20
                    numbers.insert(any)
                    model.insert(any)
                case 8:
                    let bound = Int64(generator.next() % 220) - 30
                    numbers.removeAll(through: bound)
                    model = model.filter { $0 > bound }
                default:
                    let probe = Int64(generator.next() % 220) - 30
                    #expect(numbers.contains(probe) == model.contains(probe), "round \(round), \(probe)")
                }
                #expect(numbers.numbers == model.sorted(), "round \(round)")
            }
        }
    }

    @Test func extremes() {
        var numbers = TransactionNumbers()
        for number in [Int64.max, .min, 0, .max, -1] { numbers.insert(number) }
        #expect(numbers.numbers == [.min, -1, 0, .max])
        #expect(numbers.contains(.max) && numbers.contains(.min) && !numbers.contains(1))
        numbers.removeAll(through: -1)
        #expect(numbers.numbers == [0, .max])
        numbers.removeAll(through: .max)
        #expect(numbers.numbers.isEmpty && !numbers.contains(0))
    }
}
