import Foundation
import PersistKit

/// How one fetch came out in the two stores.
public enum DifferentialOutcome {
    /// Both stores returned the same objects (in the same order when there are sort descriptors);
    /// `selective` when they are some but not all of the entity's objects.
    case agree(selective: Bool)
    /// Both stores threw.
    case bothFailed
    /// The stores disagree: the primary keys each returned, or the error it threw.
    case mismatch(sqlite: Result<[Int64], any Error>, memory: Result<[Int64], any Error>)
}

extension DifferentialStores {
    /// Fetches `predicate` sorted by `sort` from both stores and compares the results.
    public func compare(entity entityName: String, predicate: FetchPredicate, sort: [FetchSortDescriptor]) -> DifferentialOutcome {
        guard let entity = model.entitiesByName[entityName] else { return .bothFailed }
        let sqlRequest = StoreFetchRequest(entity: entity, predicate: predicate, sortDescriptors: sort)
        let memoryRequest = StoreFetchRequest(entity: entity, predicate: Self.rebind(predicate, to: memory.identifier), sortDescriptors: sort)
        let sql: Result<[Int64], any Error> = Result { try sqlite.fetch(sqlRequest).map(\.objectID.primaryKey) }
        let inMemory: Result<[Int64], any Error> = Result { try memory.fetch(memoryRequest).map(\.objectID.primaryKey) }
        switch (sql, inMemory) {
        case (.success(let a), .success(let b)):
            guard sort.isEmpty ? a.sorted() == b.sorted() : a == b else { return .mismatch(sqlite: sql, memory: inMemory) }
            return .agree(selective: !a.isEmpty && a.count < counts[entityName, default: 0])
        case (.failure, .failure):
            return .bothFailed
        default:
            return .mismatch(sqlite: sql, memory: inMemory)
        }
    }

    // MARK: - Rebinding objects to the in-memory store

    /// `predicate` with its object constants naming the objects of store `store` (the generator
    /// names the SQLite store's).
    public static func rebind(_ predicate: FetchPredicate, to store: String) -> FetchPredicate {
        switch predicate {
        case .alwaysTrue, .alwaysFalse: return predicate
        case .compound(var c):
            c.subpredicates = c.subpredicates.map { rebind($0, to: store) }
            return .compound(c)
        case .comparison(var c):
            c.left = rebind(c.left, to: store)
            c.right = rebind(c.right, to: store)
            return .comparison(c)
        }
    }

    /// `expression` with its object constants naming the objects of store `store`.
    public static func rebind(_ expression: FetchExpression, to store: String) -> FetchExpression {
        switch expression {
        case .constant(let value): return .constant(rebind(value, to: store))
        case .member(let base, let key): return .member(rebind(base, to: store), key)
        case .function(let name, let arguments): return .function(name, arguments.map { rebind($0, to: store) })
        case .aggregate(let elements): return .aggregate(elements.map { rebind($0, to: store) })
        case .subquery(let collection, let variable, let predicate):
            return .subquery(collection: rebind(collection, to: store), variable: variable, predicate: rebind(predicate, to: store))
        case .conditional(let p, let a, let b): return .conditional(rebind(p, to: store), rebind(a, to: store), rebind(b, to: store))
        default: return expression
        }
    }

    /// `value`, or the objects it names, naming the objects of store `store`.
    public static func rebind(_ value: StoreValue, to store: String) -> StoreValue {
        switch value {
        case .object(let id): return .object(ManagedObjectID(entity: id.entity, storeIdentifier: store, primaryKey: id.primaryKey))
        case .array(let values): return .array(values.map { rebind($0, to: store) })
        default: return value
        }
    }
}
