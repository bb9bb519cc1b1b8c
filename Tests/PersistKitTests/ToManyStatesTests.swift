import Foundation
import Testing
@testable import PersistKit

/// An object's to-many states, the first held in place and the others in a table, behave as
/// the dictionary by name they replace: every state is found, changed in place and removed
/// by its name, whichever of the two holds it.
@Suite("To-many states by name", .timeLimit(.minutes(1)))
struct ToManyStatesTests {
    /// A state whose relationship has the unsaved additions `added`.
    private func state(adding added: [Int64]) -> ToManyState {
        var state = ToManyState()
        for key in added { state.add(Self.id(key)) }
        return state
    }

    private static let entity = EntityDescription(name: "Thing", properties: [])

    private static func id(_ key: Int64) -> ManagedObjectID {
        ManagedObjectID(entity: entity, storeIdentifier: "S", primaryKey: key)
    }

    /// The additions of each state, by name: what the states hold, read through iteration.
    private func additions(_ states: ToManyStates) -> [String: [Int64]] {
        var result: [String: [Int64]] = [:]
        for (name, state) in states {
            #expect(result[name] == nil, "\(name) iterated twice")
            result[name] = state.added.map(\.primaryKey)
        }
        return result
    }

    @Test func everyStateIsFoundChangedAndRemovedByName() {
        var states = ToManyStates()
        #expect(states.isEmpty && states.count == 0 && states.keys.isEmpty && !states.hasChanges)
        #expect(states["beers"] == nil)

        // The first through the defaulting subscript, two more through assignment.
        states["beers", default: ToManyState()].add(Self.id(1))
        states["tags"] = state(adding: [2])
        states["styles"] = state(adding: [3, 4])
        #expect(states.count == 3 && !states.isEmpty)
        #expect(Set(states.keys) == ["beers", "tags", "styles"])
        #expect(additions(states) == ["beers": [1], "tags": [2], "styles": [3, 4]])

        // Changed in place through the optional subscript, the first and another.
        states["beers"]?.add(Self.id(5))
        states["styles"]?.remove(Self.id(3))
        states["tags", default: ToManyState()].add(Self.id(6))
        #expect(additions(states) == ["beers": [1, 5], "tags": [2, 6], "styles": [4]])

        // Removing the first moves another into its place; nothing is lost or repeated.
        states["beers"] = nil
        #expect(states["beers"] == nil && states.count == 2)
        #expect(additions(states) == ["tags": [2, 6], "styles": [4]])
        states["styles"]?.add(Self.id(7))
        #expect(additions(states) == ["tags": [2, 6], "styles": [4, 7]])

        // Set to nil through the optional subscript's change too.
        states["tags"]? = ToManyState()
        #expect(states["tags"]?.added.isEmpty == true)
        states["tags"] = nil
        states["styles"] = nil
        #expect(states.isEmpty && states.count == 0 && additions(states).isEmpty)

        // Empty again, the next state is the first.
        states["orders"] = state(adding: [8])
        #expect(additions(states) == ["orders": [8]])
    }

    @Test func changesAreSeenInEveryState() {
        var states: ToManyStates = ["beers": ToManyState(), "tags": ToManyState()]
        #expect(!states.hasChanges && states.namesWithChanges.isEmpty)
        // A change in whichever state is not the one held in place.
        let other = states.keys.first { $0 != states.keys[0] } ?? ""
        states[other]?.add(Self.id(1))
        #expect(states.hasChanges && states.namesWithChanges == [other])
        states[states.keys[0]]?.add(Self.id(2))
        #expect(Set(states.namesWithChanges) == ["beers", "tags"])
        #expect(states.mapValues { $0.added.count } == ["beers": 1, "tags": 1])

        // Changed in place by each: committed, both have no changes left.
        states.forEachState { $0.commit() }
        #expect(!states.hasChanges && states.namesWithChanges.isEmpty && states.count == 2)
    }

    @Test func recordedMembersAreFoundInEitherPlace() throws {
        let context = ContextTestModel.context(try ContextTestModel.coordinator())
        let members = context.performAndWait { (0..<2).map { ContextTestModel.insert("Beer", into: context, ["name": "B\($0)"]) } }
        var states = ToManyStates()
        states["beers", default: ToManyState()].setCommitted(objects: [members[0]], generation: 7)
        states["tags", default: ToManyState()].setCommitted(objects: [members[1]], generation: 7)
        #expect(states.recordedMembers(named: "beers", generation: 7).map { $0.map(ObjectIdentifier.init) } == [ObjectIdentifier(members[0])])
        #expect(states.recordedMembers(named: "tags", generation: 7).map { $0.map(ObjectIdentifier.init) } == [ObjectIdentifier(members[1])])
        // Another generation, or a name without a state: none.
        #expect(states.recordedMembers(named: "beers", generation: 8) == nil)
        #expect(states.recordedMembers(named: "styles", generation: 7) == nil)
        withExtendedLifetime(context) {}
    }
}
