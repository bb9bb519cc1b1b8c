import PersistKit

extension WireError {
    /// The wire error for an error PersistKit threw.
    ///
    /// | PersistKit code | wire code |
    /// |---|---|
    /// | 1600 deny rule | `delete_denied` |
    /// | 1551, 133021 uniqueness | `constraint_violation` |
    /// | 133020 optimistic locking | `merge_conflict` (with `conflicts`) |
    /// | 134090 store busy past the timeout | `busy` |
    /// | 134301 history token expired | `history_expired` |
    /// | 1550–1680 other validation | `validation_failed` |
    /// | 134091 query time limit | `query_timeout` |
    /// | 134092 store file replaced or `-wal` deleted | `store_replaced` (also logged as an error) |
    /// | anything else | `internal` |
    ///
    /// Every failing object and key is listed in `errors`: `[{"object","key","code","message"}]`.
    public init(persistenceError error: any Error) {
        guard let error = error as? PersistenceError else {
            self.init(.internal, "\(error)")
            return
        }
        let all = error.code == .validationMultipleErrors ? error.detailedErrors : [error]
        let codes = Set(all.map { Self.wireCode(for: $0.code) })
        let code: Code
        if codes.count == 1, let only = codes.first {
            code = only
        } else if codes.contains(.internal) {
            code = .internal
        } else {
            code = .validationFailed
        }
        let list: [JSON] = all.map { detail in
            var members = [JSON.Member]()
            if let id = detail.objectID { members.append(JSON.Member("object", .string(WireObjectID.format(id)))) }
            if let key = detail.key { members.append(JSON.Member("key", .string(key))) }
            members.append(JSON.Member("code", .string(Self.wireCode(for: detail.code).rawValue)))
            members.append(JSON.Member("message", .string(detail.message)))
            return .object(members)
        }
        let message = all.count == 1 ? all[0].message : error.message
        var details = (code == .internal || code == .queryTimeout) && all.count == 1 ? [] : [JSON.Member("errors", .array(list))]
        if code == .busy || code == .historyExpired || code == .storeReplaced { details = [] }
        if code == .storeReplaced { Logger.daemon.log(.error, "refusing writes: \(message)") }
        let conflicts = error.conflicts.isEmpty ? all.flatMap(\.conflicts) : error.conflicts
        if !conflicts.isEmpty { details.append(JSON.Member("conflicts", Self.conflictList(conflicts))) }
        self.init(code, message, details: details)
    }

    static func wireCode(for code: PersistenceError.Code) -> Code {
        switch code.rawValue {
        case PersistenceError.Code.validationRelationshipDeniedDelete.rawValue: return .deleteDenied
        case PersistenceError.Code.managedObjectConstraintValidation.rawValue,
             PersistenceError.Code.managedObjectConstraintMerge.rawValue: return .constraintViolation
        case PersistenceError.Code.managedObjectMerge.rawValue: return .mergeConflict
        case PersistenceError.Code.queryTimeout.rawValue: return .queryTimeout
        case PersistenceError.Code.persistentStoreTimeout.rawValue: return .busy
        case PersistenceError.Code.persistentStoreReplaced.rawValue: return .storeReplaced
        case PersistenceError.Code.persistentHistoryTokenExpired.rawValue: return .historyExpired
        case 1550...1680: return .validationFailed
        default: return .internal
        }
    }
}
