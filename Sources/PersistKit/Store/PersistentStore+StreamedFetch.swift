extension PersistentStore {
    /// ``fetch(_:)``'s rows handed over one by one: the default for stores that answer with
    /// every row at once.
    public func fetch(_ request: StoreFetchRequest, each body: (_ row: consuming RowSnapshot) throws -> Void) throws {
        var rows = try fetch(request)
        // Moved out row by row (reversed, then popped from the end): no copy of a row's values.
        rows.reverse()
        while let row = rows.popLast() { try body(row) }
    }
}

extension PersistentStore {
    /// ``fetch(_:each:)``'s rows taken apart: the default for stores that make whole rows.
    public func fetch(_ request: StoreFetchRequest, eachRowParts body: RowPartsHandler) throws {
        try fetch(request) { (row: consuming RowSnapshot) in
            var values = row.values
            try body(row.key, row.entity, row.objectIDIfMade, row.version, &values)
        }
    }

    /// ``fetch(_:eachRowParts:)``, with no estimate of the row count: the default for stores
    /// that do not know it before their rows are read.
    public func fetch(_ request: StoreFetchRequest, expect: (_ rowCount: Int) -> Void, eachRowParts body: RowPartsHandler) throws {
        try fetch(request, eachRowParts: body)
    }
}
