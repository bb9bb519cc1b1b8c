import Foundation
@testable import PersistKit
import Testing

/// A new object starts from its attributes' defaults, in storage of its own, whatever the
/// entity's width: copied byte by byte when no default holds a reference, value by value
/// otherwise.
@Suite("New objects' values")
struct NewObjectValuesTests {
    /// An entity of `width` attributes: integers, strings and data in turn, each with a
    /// default naming its position, so a value in the wrong slot shows.
    static func entity(width: Int, referenceDefaults: Bool) -> EntityDescription {
        EntityDescription(name: "Wide\(width)", properties: (0..<width).map { index -> PropertyDescription in
            guard referenceDefaults else {
                return AttributeDescription(name: "a\(index)", type: .integer64, defaultValue: .integer(Int64(index * 7)))
            }
            switch index % 3 {
            case 0: return AttributeDescription(name: "a\(index)", type: .integer64, defaultValue: .integer(Int64(index * 7)))
            case 1: return AttributeDescription(name: "a\(index)", type: .string, defaultValue: .string("default \(index)"))
            default: return AttributeDescription(name: "a\(index)", type: .binaryData, defaultValue: .data(Data([UInt8(index), 1, 2])))
            }
        })
    }

    static func expectedDefault(_ index: Int, referenceDefaults: Bool) -> StoreValue {
        guard referenceDefaults else { return .integer(Int64(index * 7)) }
        switch index % 3 {
        case 0: return .integer(Int64(index * 7))
        case 1: return .string("default \(index)")
        default: return .data(Data([UInt8(index), 1, 2]))
        }
    }

    /// A value of slot `index`'s type other than its default, and how the slot stores it.
    static func written(_ index: Int, referenceDefaults: Bool) -> (value: Any, stored: StoreValue) {
        guard referenceDefaults, index % 3 != 0 else { return (Int64(-1 - index), .integer(Int64(-1 - index))) }
        if index % 3 == 1 { return ("written \(index)", .string("written \(index)")) }
        return (Data([9, UInt8(index)]), .data(Data([9, UInt8(index)])))
    }

    @Test("every slot holds its default, and writing one object changes no other",
          arguments: [1, 2, 5, 11, 12, 13, 30], [false, true])
    func defaultsAreOwnedPerObject(width: Int, referenceDefaults: Bool) throws {
        let entity = Self.entity(width: width, referenceDefaults: referenceDefaults)
        let model = ManagedObjectModel(entities: [entity])
        try model.freeze()
        let first = ManagedObject(entity: entity, insertInto: nil)
        let second = ManagedObject(entity: entity, insertInto: nil)
        #expect(first.values.count == width)
        for index in 0..<width {
            #expect(first.values[index] == Self.expectedDefault(index, referenceDefaults: referenceDefaults), "slot \(index) of \(width)")
        }
        for index in 0..<width { first.setValue(Self.written(index, referenceDefaults: referenceDefaults).value, forKey: "a\(index)") }
        let third = ManagedObject(entity: entity, insertInto: nil)
        for index in 0..<width {
            #expect(first.values[index] == Self.written(index, referenceDefaults: referenceDefaults).stored)
            #expect(second.values[index] == Self.expectedDefault(index, referenceDefaults: referenceDefaults))
            #expect(third.values[index] == Self.expectedDefault(index, referenceDefaults: referenceDefaults))
        }
        #expect(EntityRules.of(entity).defaultSlots.enumerated().allSatisfy { $0.element == Self.expectedDefault($0.offset, referenceDefaults: referenceDefaults) })
    }

    /// UUID and decimal defaults hold no reference either: they are copied as bytes, and each
    /// object's copy is its own.
    @Test func uuidAndDecimalDefaultsAreCopiedPerObject() throws {
        let id = UUID()
        let entity = EntityDescription(name: "Plain", properties: [
            AttributeDescription(name: "key", type: .uuid, defaultValue: .uuid(id)),
            AttributeDescription(name: "amount", type: .decimal, defaultValue: .decimal(Decimal(string: "12.50")!)),
            AttributeDescription(name: "count", type: .integer64, defaultValue: .integer(3)),
        ])
        try ManagedObjectModel(entities: [entity]).freeze()
        #expect(EntityRules.of(entity).defaultsAreBitwise)
        let first = ManagedObject(entity: entity, insertInto: nil)
        let second = ManagedObject(entity: entity, insertInto: nil)
        #expect(Array(first.values) == [.uuid(id), .decimal(Decimal(string: "12.50")!), .integer(3)])
        first.setValue(UUID(), forKey: "key")
        first.setValue(Decimal(1), forKey: "amount")
        #expect(Array(second.values) == [.uuid(id), .decimal(Decimal(string: "12.50")!), .integer(3)])
        #expect(first.values[0] != .uuid(id) && first.values[1] == .decimal(1))
    }
}
