/// An order for fetched objects: a key path, a direction and a way of comparing.
///
/// The corresponding Core Data class is `NSSortDescriptor`; named `FetchSortDescriptor` so it
/// does not collide with Foundation's `SortDescriptor` and `NSSortDescriptor`.
public struct FetchSortDescriptor: Sendable, Hashable {
    /// How two values of the key are compared.
    public enum Comparison: String, Sendable, Hashable {
        /// The type's natural order (`compare:`); strings by Unicode code points.
        case compare
        /// Strings ignoring case (`caseInsensitiveCompare:`).
        case caseInsensitiveCompare
        /// Strings as a person reading them expects (`localizedStandardCompare:`):
        /// case- and diacritic-insensitive, digits compared as numbers.
        case localizedStandardCompare
    }

    /// The key path sorted on; may go through to-one relationships (`brewery.name`).
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// How values are compared.
    public var comparison: Comparison

    /// Creates a sort descriptor, as `NSSortDescriptor(key:ascending:)` does.
    public init(key: String, ascending: Bool = true, comparison: Comparison = .compare) {
        self.key = key
        self.ascending = ascending
        self.comparison = comparison
    }
}
