import Foundation
import PredicateDifferential
import Testing
import PersistKit

/// The same random predicates and sorts run against a ``SQLiteStore`` and an ``InMemoryStore``
/// holding the same rows (``DifferentialStores``, in `Tests/Support/PredicateDifferential`, which
/// the `FuzzPredicateDifferential` fuzz target shares): the compiled SQL and the in-memory
/// evaluator must agree exactly.
@Suite("PredicateDifferential")
struct PredicateDifferentialTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["PERSIST_DIFF_SEED"].flatMap(UInt64.init) ?? 20_261_129
    static let predicateCount = ProcessInfo.processInfo.environment["PERSIST_DIFF_COUNT"].flatMap(Int.init) ?? 2_500

    @Test func sqliteAndInMemoryAgreeOnRandomPredicatesAndSorts() throws {
        let seed = Self.seed
        let stores = try DifferentialStores(seed: seed)
        defer { stores.close() }
        var generator = PredicateGenerator(random: SplitMix64(state: seed ^ 0xD1FF), stores: stores)
        var mismatches: [String] = []
        var (bothFailed, selective) = (0, 0)
        let started = Date()
        for index in 0..<Self.predicateCount {
            let entityName = generator.random.pick(["Person", "Person", "Person", "Person", "Team", "Tag"])
            let predicate = generator.predicate(entityName)
            let sort = generator.sortDescriptors(entityName)
            switch stores.compare(entity: entityName, predicate: predicate, sort: sort) {
            case .agree(let isSelective):
                if isSelective { selective += 1 }
            case .bothFailed:
                bothFailed += 1
            case .mismatch(let sql, let memory):
                mismatches.append("seed \(seed) #\(index) \(entityName) predicate: \(PredicateDescription.describe(predicate))\n  sort: \(sort.map { "\($0.key) \($0.ascending ? "asc" : "desc") \($0.comparison)" })\n  sqlite: \(sql)\n  memory: \(memory)")
            }
        }
        let elapsed = Date().timeIntervalSince(started)
        print("PredicateDifferential: \(Self.predicateCount) predicates, seed \(seed), \(mismatches.count) mismatches, \(selective) selecting some but not all objects, \(bothFailed) failing in both stores, \(String(format: "%.1f", elapsed)) s")
        for mismatch in mismatches.prefix(15) { print(mismatch) }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(Self.predicateCount) predicates disagree (seed \(seed)); first: \(mismatches.first ?? "")")
        #expect(bothFailed < Self.predicateCount / 50, "too many predicates fail in both stores: \(bothFailed)")
        #expect(selective > Self.predicateCount / 3, "too few predicates select some but not all objects: \(selective)")
    }
}
