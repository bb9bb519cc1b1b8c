import Foundation

extension PersistentStore {
    /// Dictionary results computed in memory from ``fetch(_:)``'s rows: the default for stores
    /// that hold rows in memory, and the reference the SQL stores' results must equal.
    ///
    /// Without grouping each matching row gives one dictionary. With grouping (or an aggregate
    /// column) rows with equal grouped values form one group (all rows one group when nothing
    /// is grouped, even none), aggregates skip `nil` values as SQL does, and `HAVING` filters
    /// groups. Results are ordered by the sort descriptors — a key naming a fetched column or
    /// expression sorts by its value, another key path by its value on the first row — else
    /// groups by their grouped values. `DISTINCT`, then offset and limit, apply last.
    public func fetchDictionaries(_ request: StoreDictionaryRequest) throws -> [[String: StoreValue]] {
        try request.validate()
        var fetch = request.fetch
        fetch.fetchLimit = 0
        fetch.fetchOffset = 0
        fetch.sortDescriptors = []
        let rows = try self.fetch(fetch)
        let evaluator = PredicateEvaluator(resolver: StoreRowResolver(store: self, rows: rows))

        func value(of column: StoreDictionaryRequest.Column, on id: ManagedObjectID) throws -> StoreValue {
            switch column {
            case .keyPath(let path):
                return try evaluator.value(at: path, from: .object(id))
            case .expression(_, let expression, let type):
                return StoreValueCoercion.coerce(try evaluator.value(of: expression, self: .object(id), variables: [:]), to: type)
            }
        }

        // Each entry is a result dictionary (with nil values) and the rows it stands for.
        var entries: [(dictionary: [String: StoreValue], members: [ManagedObjectID])] = []
        if !request.isGrouped {
            for row in rows {
                var dictionary: [String: StoreValue] = [:]
                for column in request.columns { dictionary[column.name] = try value(of: column, on: row.objectID) }
                entries.append((dictionary, [row.objectID]))
            }
        } else {
            var order: [[StoreValue]] = []
            var groups: [[StoreValue]: [ManagedObjectID]] = [:]
            for row in rows {
                let key = try request.groupBy.map { try value(of: $0, on: row.objectID) }
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(row.objectID)
            }
            if request.groupBy.isEmpty && order.isEmpty {
                order = [[]]
                groups[[]] = []
            }
            for key in order {
                let members = groups[key] ?? []
                var dictionary: [String: StoreValue] = [:]
                for (column, value) in zip(request.groupBy, key) { dictionary[column.name] = value }
                for column in request.columns where column.isAggregate {
                    guard case .expression(let name, .function(let function, let arguments), let type) = column else { continue }
                    dictionary[name] = StoreValueCoercion.coerce(
                        try aggregate(function, arguments, over: members, evaluator: evaluator), to: type)
                }
                if let having = request.having {
                    let bound = having.replacingKeyPaths { name in dictionary[name].map(FetchExpression.constant) }
                    guard try evaluator.evaluate(bound, self: .null, variables: [:]) else { continue }
                }
                entries.append((dictionary, members))
            }
        }

        // Order: by the sort descriptors (a column's value, or the key path on the first row),
        // else grouped values; ties keep the store's primary key order.
        let descriptors = request.fetch.sortDescriptors
        let names = Set(request.columns.map(\.name) + request.groupBy.map(\.name))
        let keyed = try entries.map { entry in
            try descriptors.map { descriptor -> StoreValue in
                if names.contains(descriptor.key) { return entry.dictionary[descriptor.key] ?? .null }
                guard let first = entry.members.first else { return .null }
                return try evaluator.value(at: descriptor.key, from: .object(first))
            }
        }
        let indices = entries.indices.sorted { a, b in
            for (i, descriptor) in descriptors.enumerated() {
                let result = StoreValueComparison.compare(keyed[a][i], keyed[b][i], using: descriptor.comparison)
                if result != .orderedSame { return (result == .orderedAscending) == descriptor.ascending }
            }
            if descriptors.isEmpty {
                for column in request.groupBy {
                    let result = StoreValueComparison.compare(entries[a].dictionary[column.name] ?? .null,
                                                              entries[b].dictionary[column.name] ?? .null)
                    if result != .orderedSame { return result == .orderedAscending }
                }
            }
            return a < b
        }
        var results = indices.map { entries[$0].dictionary }

        // Only the requested columns, without nil values (Core Data leaves nil keys out).
        let columnNames = request.columns.map(\.name)
        results = results.map { dictionary in
            var kept: [String: StoreValue] = [:]
            for name in columnNames { if let value = dictionary[name], !value.isNull { kept[name] = value } }
            return kept
        }
        if request.distinct {
            var seen: Set<[String: StoreValue]> = []
            results = results.filter { seen.insert($0).inserted }
        }
        let start = min(max(request.fetch.fetchOffset, 0), results.count)
        let end = request.fetch.fetchLimit > 0 ? min(start + request.fetch.fetchLimit, results.count) : results.count
        return Array(results[start..<end])
    }

    /// `count:`, `sum:`, `average:`, `min:` or `max:` of the argument over `members`, `nil`
    /// values skipped; `count:` of `SELF` counts the members.
    private func aggregate(_ function: String, _ arguments: [FetchExpression], over members: [ManagedObjectID],
                           evaluator: PredicateEvaluator<StoreRowResolver>) throws -> StoreValue {
        guard arguments.count == 1 else {
            throw PersistenceError(.persistentStoreOperation, "the aggregate \(function) needs one argument, not \(arguments.count)")
        }
        let argument = arguments[0]
        if function == "count:", argument == .evaluatedObject || argument == .keyPath("self") || argument == .keyPath("SELF") {
            return .integer(Int64(members.count))
        }
        var values: [StoreValue] = []
        for id in members {
            let value = try evaluator.value(of: argument, self: .object(id), variables: [:])
            if !value.isNull { values.append(value) }
        }
        switch function {
        case "count:": return .integer(Int64(values.count))
        case "sum:": return values.isEmpty ? .null : try PredicateFunctions.collectionOperator("@sum", on: .array(values))
        case "average:": return try PredicateFunctions.collectionOperator("@avg", on: .array(values))
        case "min:": return try PredicateFunctions.collectionOperator("@min", on: .array(values))
        case "max:": return try PredicateFunctions.collectionOperator("@max", on: .array(values))
        default: throw PersistenceError(.persistentStoreOperation, "\(function) is not an aggregate function")
        }
    }
}
