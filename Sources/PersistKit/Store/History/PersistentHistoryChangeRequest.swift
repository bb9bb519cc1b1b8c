import Foundation

/// A request to read or purge persistent history, run with
/// ``ManagedObjectContext/execute(_:)-(PersistentHistoryChangeRequest)``.
///
/// The corresponding Core Data class is `NSPersistentHistoryChangeRequest`:
///
/// ```swift
/// let result = try context.execute(.fetchHistory(after: lastToken))
/// for transaction in result.transactions { … }
/// lastToken = result.token ?? lastToken
/// ```
public struct PersistentHistoryChangeRequest: Sendable, Hashable {
    /// What the request does.
    public enum Operation: Sendable, Hashable {
        /// Read the transactions after a token (`nil`: from the start).
        case fetchAfterToken(PersistentHistoryToken?)
        /// Read the transactions committed after a date.
        case fetchAfterDate(Date)
        /// Purge the transactions up to and including a token.
        case deleteBeforeToken(PersistentHistoryToken?)
        /// Purge the transactions committed before a date.
        case deleteBeforeDate(Date)
    }

    /// What the request does.
    public var operation: Operation
    /// For fetches, the largest number of transactions to return (`fetchRequest.fetchLimit`);
    /// `nil` for all. The result's token then points after the last one returned.
    public var fetchLimit: Int?

    /// Creates a request.
    public init(operation: Operation, fetchLimit: Int? = nil) {
        self.operation = operation
        self.fetchLimit = fetchLimit
    }

    /// The transactions after `token`, oldest first (`fetchHistory(after:)`).
    public static func fetchHistory(after token: PersistentHistoryToken?, limit: Int? = nil) -> Self {
        Self(operation: .fetchAfterToken(token), fetchLimit: limit)
    }

    /// The transactions committed after `date`, oldest first (`fetchHistory(after:)`).
    public static func fetchHistory(after date: Date, limit: Int? = nil) -> Self {
        Self(operation: .fetchAfterDate(date), fetchLimit: limit)
    }

    /// Purges the transactions up to and including `token` (`deleteHistory(before:)`).
    public static func deleteHistory(before token: PersistentHistoryToken?) -> Self {
        Self(operation: .deleteBeforeToken(token))
    }

    /// Purges the transactions committed before `date` (`deleteHistory(before:)`).
    public static func deleteHistory(before date: Date) -> Self {
        Self(operation: .deleteBeforeDate(date))
    }
}

/// The result of a ``PersistentHistoryChangeRequest`` (Core Data's `NSPersistentHistoryResult`).
public struct PersistentHistoryResult: Sendable, Hashable {
    /// For a fetch, the transactions, oldest first.
    public var transactions: [PersistentHistoryTransaction]
    /// For a purge, the number of transactions removed.
    public var deletedCount: Int
    /// For a fetch, the token after the last transaction returned, or the request's token when
    /// none was; for a purge, the store's current token.
    public var token: PersistentHistoryToken?

    /// Creates a result.
    public init(transactions: [PersistentHistoryTransaction] = [], deletedCount: Int = 0, token: PersistentHistoryToken?) {
        self.transactions = transactions
        self.deletedCount = deletedCount
        self.token = token
    }
}

/// A store that keeps persistent history. ``SQLiteStore`` is one when opened with
/// ``StoreOptions/persistentHistoryTracking``; the atomic stores are not (see
/// `docs/sharing.md`).
public protocol PersistentHistoryStore: PersistentStore {
    /// Whether this store records history (it was opened with tracking on).
    var isHistoryTracked: Bool { get }
    /// Runs a history request against this store.
    func executeHistory(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult
    /// The token of the last transaction committed to the store, by any process
    /// (Core Data's `currentPersistentHistoryToken(fromStores:)`).
    func currentHistoryToken() throws -> PersistentHistoryToken
}

extension ManagedObjectContext {
    /// Runs a persistent history request on the stores of the context's coordinator that
    /// track history (Core Data's `execute(_:)` with an `NSPersistentHistoryChangeRequest`).
    ///
    /// Throws ``PersistenceError/Code/persistentStoreOperation`` when no store tracks history
    /// (atomic stores never do; SQLite stores need ``StoreOptions/persistentHistoryTracking``),
    /// and ``PersistenceError/Code/persistentHistoryTokenExpired`` when a fetch's token points
    /// before purged history. A token of one store applies to that store only.
    public func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        guard let coordinator = persistentStoreCoordinator else {
            throw PersistenceError(.persistentStoreOperation, "the context has no coordinator")
        }
        return try coordinator.execute(request)
    }
}

extension PersistentStoreCoordinator {
    /// Runs a persistent history request on the stores that track history; see
    /// ``ManagedObjectContext/execute(_:)-(PersistentHistoryChangeRequest)``.
    public func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        var stores = persistentStores.compactMap { $0 as? any PersistentHistoryStore }.filter(\.isHistoryTracked)
        let tokenStore: String? = switch request.operation {
        case .fetchAfterToken(let token), .deleteBeforeToken(let token): token?.storeIdentifier
        default: nil
        }
        if let tokenStore { stores = stores.filter { $0.identifier == tokenStore } }
        guard !stores.isEmpty else {
            throw PersistenceError(.persistentStoreOperation, tokenStore.map { "no open store with identifier \($0) tracks persistent history" }
                                   ?? "no store of the coordinator tracks persistent history (set StoreOptions.persistentHistoryTracking on a SQLite store)")
        }
        var combined = PersistentHistoryResult(token: nil)
        for store in stores {
            let result = try store.executeHistory(request)
            combined.transactions += result.transactions
            combined.deletedCount += result.deletedCount
            combined.token = result.token
        }
        if stores.count > 1 { combined.transactions.sort { ($0.timestamp, $0.transactionNumber) < ($1.timestamp, $1.transactionNumber) } }
        return combined
    }

    /// The current history token of each store that tracks history, by store identifier.
    public func currentPersistentHistoryTokens() throws -> [String: PersistentHistoryToken] {
        var tokens: [String: PersistentHistoryToken] = [:]
        for case let store as any PersistentHistoryStore in persistentStores where store.isHistoryTracked {
            tokens[store.identifier] = try store.currentHistoryToken()
        }
        return tokens
    }
}
