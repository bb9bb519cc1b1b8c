import Foundation
import Testing
@testable import PersistKit

/// A connection's statements cached under integer keys: the keys of every save (`BEGIN`,
/// `COMMIT`, an entity's `INSERT`) sit in an array by slot, the others in a dictionary; either
/// way one key finds one prepared statement, reset, with its bindings cleared unless asked to
/// keep them.
@Suite("Statement cache by key")
struct StatementCacheTests {
    @Test func directSlotsCoverTheSaveKeysAndNoOthers() {
        typealias Key = SQLiteWriteStatementKey
        #expect(Key.directSlot(Key.begin(.immediate)) == 1)
        #expect(Key.directSlot(Key.commit) == 8)
        #expect(Key.directSlot(Key.historyString) == 17)
        #expect(Key.directSlot(Key.insert(entityNumber: 1)) == 33)
        #expect(Key.directSlot(Key.insert(entityNumber: Key.directSlotCount - 33)) == Key.directSlotCount - 1)
        // Beyond the array, other kinds of statements, and the read path's keys: hashed.
        #expect(Key.directSlot(Key.insert(entityNumber: Key.directSlotCount - 32)) == nil)
        #expect(Key.directSlot(Key.update(entityNumber: 1)) == nil)
        #expect(Key.directSlot((1 << 41) + 32) == nil)
        #expect(Key.directSlot((1 << 40) + 5) == nil)
        #expect(Key.directSlot((1 << 41) - 1) == nil)
    }

    @Test func aKeyFindsItsStatementResetWithBindingsClearedUnlessKept() throws {
        let directory = try ContextTestModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try SQLiteConnection(path: directory.appendingPathComponent("cache.sqlite").path)
        defer { try? connection.close() }
        try connection.execute("CREATE TABLE t (a INTEGER, b TEXT)")
        let insertKey = SQLiteWriteStatementKey.insert(entityNumber: 7)
        let otherKey = SQLiteWriteStatementKey.update(entityNumber: 7)
        var built = 0
        func insert(keeping: Bool) throws -> SQLiteStatement {
            try connection.cachedStatement(key: insertKey, keepingBindings: keeping) {
                built += 1
                return "INSERT INTO t (a, b) VALUES (?, ?)"
            }
        }
        let first = try insert(keeping: false)
        try first.bind(.integer(1), at: 1)
        try first.bind(.string("one"), at: 2)
        while try first.step() {}
        // Kept: the same statement, stepped again with the values bound before.
        let again = try insert(keeping: true)
        #expect(again === first)
        while try again.step() {}
        // Not kept: the values are cleared, and the row is all nulls.
        let cleared = try insert(keeping: false)
        #expect(cleared === first)
        while try cleared.step() {}
        #expect(built == 1)
        let other = try connection.cachedStatement(key: otherKey) { "SELECT count(*) FROM t WHERE a IS NULL" }
        #expect(other !== first)
        #expect(try connection.cachedStatement(key: otherKey) { "unused" } === other)
        #expect(try connection.int64("SELECT count(*) FROM t WHERE a = 1 AND b = 'one'") == 2)
        #expect(try connection.int64("SELECT count(*) FROM t WHERE a IS NULL AND b IS NULL") == 1)
    }
}
