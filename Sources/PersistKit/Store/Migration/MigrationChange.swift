import Foundation

/// One difference between two model versions, as lightweight migration sees it: what changes
/// in the store, or why the change cannot be inferred.
///
/// The corresponding Core Data notion is one entity or property mapping of an inferred
/// `NSMappingModel`.
public struct MigrationChange: Sendable, Hashable, CustomStringConvertible {
    /// What kind of change it is.
    public enum Kind: String, Sendable, Hashable {
        /// An entity that is new in the destination model (its table or rows start empty).
        case entityAdded
        /// An entity of the source model with no counterpart: its objects are deleted.
        case entityRemoved
        /// An entity renamed through its `renamingIdentifier`.
        case entityRenamed
        /// An entity whose superentity changed (moved in or out of an inheritance tree).
        case entityHierarchyChanged
        /// An attribute that is new: existing objects get its default value (or `nil`).
        case attributeAdded
        /// An attribute removed: its values are dropped.
        case attributeRemoved
        /// An attribute renamed through its `renamingIdentifier`.
        case attributeRenamed
        /// An attribute whose type changed between types Core Data stores alike.
        case attributeTypeChanged
        /// An attribute that became required: `nil` values get the default value.
        case attributeMadeRequired
        /// An attribute that became optional.
        case attributeMadeOptional
        /// A relationship that is new: empty for existing objects.
        case relationshipAdded
        /// A relationship removed: its links are dropped.
        case relationshipRemoved
        /// A relationship renamed through its `renamingIdentifier`.
        case relationshipRenamed
        /// A relationship that changed between to-one and to-many, or became (un)ordered.
        case relationshipCardinalityChanged
        /// A change that lightweight migration cannot infer; see ``MigrationChange/reason``.
        case blocking
    }

    /// What kind of change it is.
    public var kind: Kind
    /// The destination entity's name (the source entity's for removals).
    public var entity: String
    /// The property's name, if the change is about a property.
    public var property: String?
    /// What happens to the store, in a sentence.
    public var detail: String

    /// Creates a change.
    public init(_ kind: Kind, entity: String, property: String? = nil, _ detail: String) {
        self.kind = kind
        self.entity = entity
        self.property = property
        self.detail = detail
    }

    /// Whether the change stops an inferred migration.
    public var isBlocking: Bool { kind == .blocking }

    /// For a blocking change, why it cannot be inferred (the ``detail``).
    public var reason: String? { isBlocking ? detail : nil }

    /// `Entity.property: detail`.
    public var description: String {
        "\(entity)\(property.map { ".\($0)" } ?? ""): \(detail)"
    }
}
