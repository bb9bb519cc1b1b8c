import Foundation
@testable import PersistKit
import Testing

/// The row decoder reads an entity's slot columns through ``SQLiteRowColumns``: pointers into
/// memory of its own, which must say what the layout's slot columns say.
@Suite("SQLite row columns")
struct SQLiteRowColumnsTests {
    @Test func theViewHoldsEachSlotAndTheStatementColumnOfEachIntegerAttribute() throws {
        let owner = EntityDescription(name: "Owner", properties: [AttributeDescription(name: "name", type: .string)])
        let scratch = AttributeDescription(name: "scratch", type: .integer32)
        scratch.isTransient = true
        let item = EntityDescription(name: "Item", properties: [
            AttributeDescription(name: "count", type: .integer64),
            AttributeDescription(name: "label", type: .string),
            scratch,
            AttributeDescription(name: "small", type: .integer16),
            AttributeDescription(name: "flag", type: .boolean),
            RelationshipDescription(name: "owner", destination: "Owner", inverse: "items"),
        ])
        owner.properties.append(RelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: "owner"))
        let model = ManagedObjectModel(entities: [owner, item])
        try model.freeze()
        let schema = SQLiteSchema(entities: model.entities, existingNumbers: [:])
        let layout = try #require(schema.entities["Item"])
        let view = layout.rowColumns
        #expect(view.slots.count == layout.slotColumns.count)
        #expect(view.integerColumns.count == layout.slotColumns.count)
        for (index, slot) in layout.slotColumns.enumerated() {
            switch (slot, view.slots[index]) {
            case (.none, .none): break
            case let (.attribute(column, type), .attribute(viewColumn, viewType)):
                #expect(column == viewColumn && type == viewType)
                // Integer attributes (not Booleans) are read on the decoder's short path.
                #expect(view.integerColumns[index] == (type.isInteger ? Int32(column + 3) : -1))
                continue
            case let (.toOne(column, entityColumn, relationship), .toOne(viewColumn, viewEntityColumn, viewRelationship)):
                #expect(column == viewColumn && entityColumn == viewEntityColumn)
                let ownerRelationship = item.relationshipsByName["owner"]
                #expect(relationship.isIdentical(to: ownerRelationship) && viewRelationship.isIdentical(to: ownerRelationship))
            default:
                Issue.record("slot \(index): the view holds \(view.slots[index]), the layout \(slot)")
            }
            #expect(view.integerColumns[index] == -1)
        }
        // Two integer attributes, a string, a transient, a Boolean and a to-one.
        #expect(view.integerColumns.filter { $0 >= 0 }.count == 2)
    }

    @Test func aCopyOfTheLayoutKeepsTheColumnsAfterTheSchemaIsGone() throws {
        let entity = EntityDescription(name: "Item", properties: [AttributeDescription(name: "count", type: .integer64)])
        let model = ManagedObjectModel(entities: [entity])
        try model.freeze()
        var layout: SQLiteSchema.EntityLayout?
        do {
            let schema = SQLiteSchema(entities: model.entities, existingNumbers: [:])
            layout = schema.entities["Item"]
        }
        let kept = try #require(layout)
        #expect(kept.rowColumns.integerColumns.map { $0 } == [3])
    }

    @Test func anUnretainedRelationshipKnowsItselfAndItsDestinationWithoutAReference() throws {
        let owner = EntityDescription(name: "Owner", properties: [AttributeDescription(name: "name", type: .string)])
        let item = EntityDescription(name: "Item", properties: [
            RelationshipDescription(name: "owner", destination: "Owner", inverse: "items"),
            RelationshipDescription(name: "previousOwner", destination: "Owner"),
        ])
        owner.properties.append(RelationshipDescription(name: "items", destination: "Item", toMany: true, inverse: "owner"))
        let model = ManagedObjectModel(entities: [owner, item])
        try model.freeze()
        let relationship = try #require(item.relationshipsByName["owner"])
        let other = try #require(item.relationshipsByName["previousOwner"])
        let unretained = SQLiteSchema.UnretainedRelationship(relationship: relationship)
        #expect(unretained.isIdentical(to: relationship))
        #expect(!unretained.isIdentical(to: other))
        #expect(!unretained.isIdentical(to: nil))
        #expect(unretained.destinationEntity === owner)
    }
}
