import Foundation

/// An attribute of an entity: a named, typed value.
///
/// The corresponding Core Data class is `NSAttributeDescription`.
public final class AttributeDescription: PropertyDescription, @unchecked Sendable {
    // @unchecked Sendable: read-only once the model is frozen; see PropertyDescription.

    /// The type of the attribute's values.
    public var attributeType: AttributeType
    /// The value a newly inserted object starts with, or `nil` for none.
    public var defaultValue: StoreValue?
    /// The smallest value (numbers, dates) or length (strings, binary data) allowed at save.
    public var minValue: StoreValue?
    /// The largest value (numbers, dates) or length (strings, binary data) allowed at save.
    public var maxValue: StoreValue?
    /// A regular expression (ICU syntax) a string value must match in whole at save.
    public var regularExpression: String?
    /// Whether large binary values may be stored outside the store file.
    public var allowsExternalBinaryDataStorage: Bool = false
    /// The name of the ``AttributeValueTransformer`` used by a transformable attribute;
    /// `nil` means the default JSON transformer.
    public var valueTransformerName: String?
    /// The class name Xcode records for a transformable attribute's values, kept for round trips.
    public var attributeValueClassName: String?
    /// Whether generated accessors use scalar types (`Int64` rather than `NSNumber?`).
    public var usesScalarValueType: Bool = false
    /// Whether the store should keep the value of this attribute in a deleted object's tombstone.
    public var preservesValueInHistoryOnDeletion: Bool = false

    /// Creates an attribute with a name and a type.
    public init(name: String, type: AttributeType, isOptional: Bool = true, defaultValue: StoreValue? = nil) {
        self.attributeType = type
        self.defaultValue = defaultValue
        super.init(name: name)
        self.isOptional = isOptional
    }
}
