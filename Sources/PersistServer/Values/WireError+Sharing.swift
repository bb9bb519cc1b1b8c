import PersistKit

extension WireError.Code {
    /// Another process held the store's write lock past the busy timeout; nothing was written.
    public static let busy = WireError.Code(rawValue: "busy")
    /// A history token names another store, or history after it was purged.
    public static let historyExpired = WireError.Code(rawValue: "history_expired")
    /// The daemon cannot do this: history and subscriptions need a store that keeps history.
    public static let unsupported = WireError.Code(rawValue: "unsupported")
}

extension WireError {
    /// The `conflicts` detail of a `merge_conflict`: one entry per object and property that
    /// differ, `{"object","key","ours","theirs","original"}`, or `{"object","deletedInStore":true}`
    /// / `{"object","deletedByUs":true}` for an object one side deleted.
    static func conflictList(_ conflicts: [MergeConflict]) -> JSON {
        var list: [JSON] = []
        for conflict in conflicts {
            let object = JSON.Member("object", .string(WireObjectID.format(conflict.objectID)))
            if conflict.deletedInStore {
                list.append(.object([object, JSON.Member("deletedInStore", .bool(true))]))
                continue
            }
            if conflict.deletedByUs {
                list.append(.object([object, JSON.Member("deletedByUs", .bool(true))]))
                continue
            }
            let attributes = conflict.objectID.entity.attributesByName
            for property in conflict.properties {
                let type = attributes[property.key]?.attributeType
                list.append(.object([
                    object,
                    JSON.Member("key", .string(property.key)),
                    JSON.Member("ours", WireValueCoder.encode(property.ours, type: type)),
                    JSON.Member("theirs", WireValueCoder.encode(property.theirs, type: type)),
                    JSON.Member("original", WireValueCoder.encode(property.original, type: type)),
                ]))
            }
        }
        return .array(list)
    }
}
