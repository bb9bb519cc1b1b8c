import Foundation

extension EntityDescription {
    /// A copy of this entity and its own properties, unlinked: the copy names its
    /// superentity, destinations and inverses, and a model's `resolve()` links them again.
    ///
    /// Used by ``ManagedObjectModel/mergedModel(from:)`` so that merging never changes (or
    /// shares descriptions with) the models merged, which may be frozen.
    func unlinkedCopy() -> EntityDescription {
        let copy = EntityDescription(name: name, properties: properties.map { $0.unlinkedCopy() }, managedObjectClass: managedObjectClass)
        copy.managedObjectClassName = managedObjectClassName
        copy.isAbstract = isAbstract
        copy.uniquenessConstraints = uniquenessConstraints
        copy.indexes = indexes
        copy.userInfo = userInfo
        copy.versionHashModifier = versionHashModifier
        copy.renamingIdentifier = renamingIdentifier
        copy.superentityName = superentity?.name ?? superentityName
        return copy
    }
}

extension PropertyDescription {
    /// A copy of this property, without links to its entity, destination or inverse.
    func unlinkedCopy() -> PropertyDescription {
        let copy: PropertyDescription
        if let attribute = self as? AttributeDescription {
            let a = AttributeDescription(name: name, type: attribute.attributeType, isOptional: isOptional, defaultValue: attribute.defaultValue)
            a.minValue = attribute.minValue
            a.maxValue = attribute.maxValue
            a.regularExpression = attribute.regularExpression
            a.allowsExternalBinaryDataStorage = attribute.allowsExternalBinaryDataStorage
            a.valueTransformerName = attribute.valueTransformerName
            a.attributeValueClassName = attribute.attributeValueClassName
            a.usesScalarValueType = attribute.usesScalarValueType
            a.preservesValueInHistoryOnDeletion = attribute.preservesValueInHistoryOnDeletion
            copy = a
        } else if let relationship = self as? RelationshipDescription {
            let r = RelationshipDescription(
                name: name, destination: relationship.destinationEntityName, inverse: relationship.inverseName,
                deleteRule: relationship.deleteRule, isOptional: isOptional, isOrdered: relationship.isOrdered)
            r.minCount = relationship.minCount
            r.maxCount = relationship.maxCount
            copy = r
        } else {
            copy = PropertyDescription(name: name)
        }
        copy.isOptional = isOptional
        copy.isTransient = isTransient
        copy.userInfo = userInfo
        copy.renamingIdentifier = renamingIdentifier
        copy.versionHashModifier = versionHashModifier
        copy.isIndexed = isIndexed
        return copy
    }
}
