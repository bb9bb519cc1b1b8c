import PersistKit

extension Session {
    /// `configure {mergePolicy?}` → `{"mergePolicy":"…"}`: sets how this connection's saves
    /// resolve conflicts; without `mergePolicy` reports the policy in force.
    func configure(_ body: JSON) throws(WireError) -> JSON {
        let fields = RequestFields(body, op: "configure")
        if let policy = try Self.mergePolicy(fields) { context.mergePolicy = policy }
        return .object(["mergePolicy": .string(context.mergePolicy.rawValue)])
    }

    /// The merge policy `"mergePolicy"` names, if present.
    /// - Throws: `bad_request` for a name that is not one of ``MergePolicy``'s.
    static func mergePolicy(_ fields: RequestFields) throws(WireError) -> MergePolicy? {
        guard let name = try fields.string("mergePolicy") else { return nil }
        guard let policy = MergePolicy(rawValue: name) else {
            let names = MergePolicy.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw WireError(.badRequest, "\(fields.op): mergePolicy must be one of \(names), not \"\(name)\"")
        }
        return policy
    }
}
