import Foundation
import PersistKit
import PredicateDifferential

/// The differential fuzz target: libFuzzer's bytes choose the data set, the entity, a predicate
/// and sort descriptors (through the randomized test's ``PredicateGenerator``); the fetch runs as
/// SQL in a ``SQLiteStore`` and through the evaluator in an ``InMemoryStore``, and the two results
/// must be identical (the same objects, in the same order when sorted), or both stores must throw.
enum PredicateDifferentialFuzzer {
    /// Four data sets (the randomized test's seed and the next three), built once per process.
    static let stores: [DifferentialStores] = (0..<4).map { index in
        do {
            return try DifferentialStores(seed: 20_261_129 + UInt64(index))
        } catch {
            fatalError("cannot create the differential stores: \(error)")
        }
    }

    static func run(_ input: [UInt8]) {
        guard let first = input.first else { return }
        let stores = stores[Int(first) % stores.count]
        var generator = PredicateGenerator(random: FuzzerBytes(input.dropFirst()), stores: stores)
        let entityName = generator.random.pick(["Person", "Person", "Person", "Person", "Team", "Tag"])
        let predicate = generator.predicate(entityName)
        let sort = generator.sortDescriptors(entityName)
        if case .mismatch(let sql, let memory) = stores.compare(entity: entityName, predicate: predicate, sort: sort) {
            preconditionFailure("""
                SQL and the in-memory evaluator disagree: \(entityName) where \(PredicateDescription.describe(predicate))
                  sort: \(sort.map { "\($0.key) \($0.ascending ? "asc" : "desc") \($0.comparison)" })
                  sqlite: \(sql)
                  memory: \(memory)
                """)
        }
    }
}
