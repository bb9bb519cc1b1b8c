import Foundation
import Testing
@testable import PersistKit

/// A SQLite save binds each run of new rows of one entity to one prepared `INSERT`, keeping
/// the entity number and version bound across the run and binding every other column again
/// per row: a value of one row never leaks into the next, whatever its type or nullness, and
/// runs of other entities and the updates of the same save get their own bindings.
@Suite("Save insert bindings", .timeLimit(.minutes(1)))
struct SaveInsertBindingTests {
    typealias M = ContextTestModel

    @Test func rowsOfARunKeepNoValueOfTheRowBefore() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("bindings.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            // Runs of Person rows, broken by Brewery rows; integers, strings and nulls alternate.
            for index in 0..<6 {
                _ = M.insert("Person", into: context, ["name": index % 2 == 0 ? "P\(index)" : nil,
                                                   "age": index % 3 == 0 ? nil : Int16(20 + index)])
                if index % 3 == 2 { _ = M.insert("Brewery", into: context, ["name": "B\(index)"]) }
            }
            try context.save()
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let people = try reader.fetch(M.request("Person", sort: [FetchSortDescriptor(key: "age")]))
            let rows = Set(people.map { "\($0.value(forKey: "name") as? String ?? "-")/\(($0.value(forKey: "age") as? Int16).map(String.init) ?? "-")" })
            #expect(rows == ["P0/-", "-/21", "P2/22", "-/-", "P4/24", "-/25"])
            #expect(Set(M.names(try reader.fetch(M.request("Brewery")))) == ["B2", "B5"])
            // Every row of the run has its own version and entity.
            let stored = try reader.fetch(M.request("Person"))
            #expect(stored.allSatisfy { $0.storeVersion == 1 && $0.entity.name == "Person" })
        }
    }

    @Test func insertsAndUpdatesOfOneEntityInOneSaveBindTheirOwnValues() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("bindings.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        try context.performAndWait {
            let first = M.insert("Person", into: context, ["name": "Ann", "age": Int16(30)])
            try context.save()
            first.setValue(Int16(31), forKey: "age")
            _ = M.insert("Person", into: context, ["name": "Bob", "age": Int16(40)])
            _ = M.insert("Person", into: context, ["name": "Cid"])
            try context.save()
            first.setValue(nil, forKey: "age")
            try context.save()
            #expect(first.storeVersion == 3)
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let people = try reader.fetch(M.request("Person", sort: [FetchSortDescriptor(key: "name")]))
            #expect(M.names(people) == ["Ann", "Bob", "Cid"])
            #expect(people.map { $0.value(forKey: "age") as? Int16 } == [nil, 40, nil])
            #expect(people.map(\.storeVersion) == [3, 1, 1])
        }
    }
}
