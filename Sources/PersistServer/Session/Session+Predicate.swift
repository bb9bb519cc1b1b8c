import PersistKit

extension Session {
    /// The predicate `"predicate"` holds, with `"arguments"` filled in: an array for
    /// `%@`/`%K`, an object for `$VARIABLES`.
    func predicate(_ fields: RequestFields, entity: EntityDescription) throws(WireError) -> FetchPredicate? {
        guard try fields.string("predicate") != nil else {
            if fields.has("arguments") { throw WireError(.badRequest, "\(fields.op): \"arguments\" without \"predicate\"") }
            return nil
        }
        throw WireError(.badRequest, "\(fields.op): predicates are not available yet (the format-string parser has not landed)")
    }
}
