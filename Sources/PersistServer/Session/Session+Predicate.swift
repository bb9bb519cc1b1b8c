import PersistKit

extension Session {
    /// The predicate `"predicate"` holds, with `"arguments"` filled in: an array for
    /// `%@`/`%K`, an object for `$VARIABLES`.
    func predicate(_ fields: RequestFields, entity: EntityDescription) throws(WireError) -> FetchPredicate? {
        guard let format = try fields.string("predicate") else {
            if fields.has("arguments") { throw WireError(.badRequest, "\(fields.op): \"arguments\" without \"predicate\"") }
            return nil
        }
        return try parsePredicate(format, arguments: fields.body["arguments"], op: fields.op)
    }

    /// Parses a predicate format string.
    func parsePredicate(_ format: String, arguments: JSON?, op: String) throws(WireError) -> FetchPredicate {
        throw WireError(.badRequest, "\(op): predicates are not available yet (the format-string parser has not landed)")
    }
}
