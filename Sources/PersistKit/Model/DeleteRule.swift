/// What happens to the destination of a relationship when its source object is deleted.
///
/// The corresponding Core Data type is `NSDeleteRule`.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable, Codable {
    /// Do nothing to the destination objects; they may be left pointing at a deleted object.
    case noAction
    /// Remove the deleted object from the destinations' inverse relationship.
    case nullify
    /// Delete the destination objects as well.
    case cascade
    /// Refuse to delete the source while the relationship has any destination.
    case deny

    /// The name Xcode writes in a `.xcdatamodel` file's `deletionRule` attribute.
    public var xcodeName: String {
        switch self {
        case .noAction: return "No Action"
        case .nullify: return "Nullify"
        case .cascade: return "Cascade"
        case .deny: return "Deny"
        }
    }

    /// The delete rule Xcode names `name`, or `nil` if unknown.
    public init?(xcodeName name: String) {
        guard let rule = DeleteRule.allCases.first(where: { $0.xcodeName == name }) else { return nil }
        self = rule
    }
}
