/// What every row of a batch insert of one entity starts from: each stored attribute's
/// default (null for the other slots), and the slots a row must not leave null (see
/// `ManagedObjectContext.execute(_:)`, which makes one per `BatchInsertRequest`).
struct BatchRowTemplate: Sendable {
    /// The row of an object given no value.
    let defaults: [StoreValue]
    /// The slots of the non-optional stored attributes.
    let mandatorySlots: [Int]

    /// The template of the rows of `entity`.
    init(_ entity: EntityDescription) {
        var defaults: [StoreValue] = []
        var mandatorySlots: [Int] = []
        for (slot, property) in entity.slots.enumerated() {
            guard let attribute = property as? AttributeDescription, !attribute.isTransient else {
                defaults.append(.null)
                continue
            }
            defaults.append(attribute.defaultValue ?? .null)
            if !attribute.isOptional { mandatorySlots.append(slot) }
        }
        self.defaults = defaults
        self.mandatorySlots = mandatorySlots
    }
}
