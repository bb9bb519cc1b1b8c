/// A store index over one or more properties of an entity.
///
/// The corresponding Core Data class is `NSFetchIndexDescription`.
public struct FetchIndexDescription: Sendable, Hashable {
    /// One property of an index, with its order.
    public struct Element: Sendable, Hashable {
        /// The name of the indexed property.
        public var propertyName: String
        /// Whether the index sorts this property ascending.
        public var isAscending: Bool

        /// Creates an index element.
        public init(propertyName: String, isAscending: Bool = true) {
            self.propertyName = propertyName
            self.isAscending = isAscending
        }
    }

    /// The index's name, unique within the entity.
    public var name: String
    /// The indexed properties, most significant first.
    public var elements: [Element]

    /// Creates a fetch index.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
