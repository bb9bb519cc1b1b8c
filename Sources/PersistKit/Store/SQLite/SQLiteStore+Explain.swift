import Foundation

extension SQLiteStore {
    /// The `SELECT` a fetch would run and the values it would bind, without running it.
    ///
    /// ```swift
    /// let (sql, arguments) = try store.explainFetch(StoreFetchRequest(entity: beer, predicate: p))
    /// ```
    ///
    /// - Throws: ``PersistenceError`` when the predicate or sort uses something the SQLite
    ///   store cannot compile.
    public func explainFetch(_ request: StoreFetchRequest) throws -> (sql: String, arguments: [StoreValue]) {
        var (table, from, whereClause, orderBy, arguments) = try compileFetch(request)
        let limit = limitClause(request, &arguments)
        return ("SELECT \(selectList(table)) FROM \(from)\(whereClause)\(orderBy)\(limit)", arguments)
    }

    /// The `SELECT` a fetch from a store of `model` would run, compiled against an empty store
    /// created in a temporary directory (and removed), so no store file is needed.
    public static func explainFetch(_ request: StoreFetchRequest, model: ManagedObjectModel) throws -> (sql: String, arguments: [StoreValue]) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("persist-explain-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(model: model, configurationName: nil, url: directory.appendingPathComponent("explain.sqlite"),
                                    options: StoreOptions())
        defer { try? store.close() }
        return try store.explainFetch(request)
    }
}
