import Foundation
import Testing
@testable import PersistKit

@Suite("Fetch and batch SQL")
struct FetchSQLTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// The SQL the store runs while `body` runs.
    private func sql(_ store: SQLiteStore, _ body: () throws -> Void) rethrows -> [String] {
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        defer { store.setStatementObserver(nil) }
        try body()
        return seen.withLock { $0 }
    }

    @Test func groupedDictionaryFetchIsOneSelect() throws {
        let coordinator = try S.coordinator(.sqlite)
        try S.seedBreweries(coordinator)
        let store = try #require(S.sqlite(coordinator))
        let context = M.context(coordinator)
        let request = FetchRequest<[String: Any]>(entityName: "Beer")
        request.resultType = .dictionaryResultType
        request.propertiesToFetch = ["brewery.name", ExpressionDescription(name: "n", expression: .function("count:", [.keyPath("abv")]), resultType: .integer64)]
        request.propertiesToGroupBy = ["brewery.name"]
        request.predicate = .comparison(.keyPath("abv"), .greaterThan, .constant(.double(5)))
        request.havingPredicate = .comparison(.keyPath("n"), .greaterThanOrEqualTo, .constant(.integer(2)))
        request.sortDescriptors = [FetchSortDescriptor(key: "n", ascending: false)]
        request.fetchLimit = 3
        let statements = try sql(store) { _ = try context.fetch(request) }
        #expect(statements == [
            "SELECT \"t1\".\"ZNAME\" AS \"brewery.name\", COUNT(\"t0\".\"ZABV\") AS \"n\" FROM \"ZBEER\" AS \"t0\" LEFT JOIN \"ZBREWERY\" AS \"t1\" ON \"t1\".\"Z_PK\" = \"t0\".\"ZBREWERY\" WHERE \"t0\".\"ZABV\" > ? GROUP BY \"t1\".\"ZNAME\" HAVING COUNT(\"t0\".\"ZABV\") >= ? ORDER BY \"n\" DESC LIMIT ?",
        ])
    }

    @Test func batchUpdateIsOneTransaction() throws {
        let coordinator = try S.coordinator(.sqlite)
        try S.seedBreweries(coordinator)
        let store = try #require(S.sqlite(coordinator))
        let context = M.context(coordinator)
        let request = BatchUpdateRequest(entityName: "Beer")
        request.predicate = .equal("name", .string("Orval"))
        request.propertiesToUpdate = ["abv": .function("add:to:", [.keyPath("abv"), .constant(.integer(1))])]
        let statements = try sql(store) { _ = try context.execute(request) }
        #expect(statements == [
            "BEGIN IMMEDIATE TRANSACTION",
            "SELECT \"t0\".\"Z_PK\", \"t0\".\"Z_ENT\" FROM \"ZBEER\" AS \"t0\" WHERE \"t0\".\"ZNAME\" = ?",
            "UPDATE \"ZBEER\" AS \"t0\" SET \"ZABV\" = (\"t0\".\"ZABV\" + ?), \"Z_OPT\" = \"Z_OPT\" + 1 WHERE \"t0\".\"Z_PK\" IN (SELECT \"t0\".\"Z_PK\" FROM \"ZBEER\" AS \"t0\" WHERE \"t0\".\"ZNAME\" = ?)",
            "COMMIT TRANSACTION",
        ])
    }
}
