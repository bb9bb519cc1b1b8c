import Foundation

/// What a context asks a store for when it fetches dictionaries: the columns to compute, how
/// rows are grouped, which groups are kept, and whether duplicates are removed.
///
/// The store-level part of a ``FetchRequest`` with ``FetchRequestResultType/dictionaryResultType``.
/// A SQL store turns it into one `SELECT [DISTINCT] … GROUP BY … HAVING … ORDER BY … LIMIT`;
/// other stores use the default implementation of
/// ``PersistentStore/fetchDictionaries(_:)``, which computes the same results in memory.
public struct StoreDictionaryRequest: Sendable {
    /// One value of each result dictionary.
    public enum Column: Sendable, Hashable {
        /// An attribute or to-one key path (`name`, `brewery`, `brewery.name`), keyed by the path.
        /// A to-one relationship gives the destination's ``StoreValue/object(_:)``.
        case keyPath(String)
        /// A computed value, keyed by `name`, converted to `resultType`.
        case expression(name: String, expression: FetchExpression, resultType: AttributeType)

        /// The key of the column's value in a result dictionary.
        public var name: String {
            switch self {
            case .keyPath(let path): return path
            case .expression(let name, _, _): return name
            }
        }

        /// Whether the column is an aggregate (`count:`, `sum:`, `average:`, `min:`, `max:`).
        public var isAggregate: Bool {
            guard case .expression(_, .function(let function, _), _) = self else { return false }
            return ExpressionDescription.aggregateFunctions.contains(function)
        }
    }

    /// The entity, predicate, sort descriptors, limit and offset. Sort descriptors order the
    /// resulting dictionaries (or groups) and should name fetched or grouped key paths.
    public var fetch: StoreFetchRequest
    /// The values of each dictionary, in order.
    public var columns: [Column]
    /// The columns rows are grouped by; empty for no grouping (unless a column is an
    /// aggregate, in which case all rows form one group).
    public var groupBy: [Column]
    /// The condition a group must meet; key paths name grouped key paths or columns by name.
    public var having: FetchPredicate?
    /// Whether duplicate dictionaries are removed.
    public var distinct: Bool

    /// Creates a dictionary request.
    public init(fetch: StoreFetchRequest, columns: [Column], groupBy: [Column] = [], having: FetchPredicate? = nil,
                distinct: Bool = false) {
        self.fetch = fetch
        self.columns = columns
        self.groupBy = groupBy
        self.having = having
        self.distinct = distinct
    }

    /// Whether the results are groups rather than rows: something is grouped or aggregated.
    public var isGrouped: Bool { !groupBy.isEmpty || columns.contains { $0.isAggregate } }

    /// Checks that every non-aggregate column is grouped when the request is grouped.
    func validate() throws {
        guard isGrouped else { return }
        let grouped = Set(groupBy.map(\.name))
        for column in columns where !column.isAggregate && !grouped.contains(column.name) {
            throw PersistenceError(.persistentStoreOperation,
                                   "\(column.name) is fetched with aggregates or grouping but is not in propertiesToGroupBy")
        }
    }
}

/// Converts a computed value to an expression's result type, so every store answers with the
/// same ``StoreValue`` case: integers for integer types, doubles for floating point, dates
/// from seconds since 2001, and so on.
enum StoreValueCoercion {
    static func coerce(_ value: StoreValue, to type: AttributeType) -> StoreValue {
        switch (type, value) {
        case (_, .null): return .null
        case (.integer16, .double(let d)), (.integer32, .double(let d)), (.integer64, .double(let d)):
            return d.isFinite && abs(d) < 9.2e18 ? .integer(Int64(d)) : .null
        case (.integer16, .decimal(let d)), (.integer32, .decimal(let d)), (.integer64, .decimal(let d)):
            return .integer(Int64(truncating: d as NSDecimalNumber))
        case (.double, .integer(let i)), (.float, .integer(let i)): return .double(Double(i))
        case (.double, .decimal(let d)), (.float, .decimal(let d)): return .double(Double(truncating: d as NSDecimalNumber))
        case (.decimal, .integer(let i)): return .decimal(Decimal(i))
        case (.decimal, .double(let d)): return .decimal(Decimal(d))
        case (.date, .double(let d)): return .date(Date(timeIntervalSinceReferenceDate: d))
        case (.date, .integer(let i)): return .date(Date(timeIntervalSinceReferenceDate: Double(i)))
        case (.boolean, .integer(let i)): return .bool(i != 0)
        default: return value
        }
    }
}
