import Foundation

/// An object of the graph: an instance of an entity, owned by one context.
///
/// The corresponding Core Data class is `NSManagedObject`.
open class ManagedObject {
    /// The object's entity.
    public let entity: EntityDescription

    /// Creates an object of `entity`.
    public required init(entity: EntityDescription) {
        self.entity = entity
    }
}
