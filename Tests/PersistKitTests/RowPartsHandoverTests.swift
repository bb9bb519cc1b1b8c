import Foundation
import Testing
@testable import PersistKit

/// Rows handed to a context in parts (``PersistentStore/fetch(_:eachRowParts:)`` and
/// ``PersistentStore/prefetchDestinations(of:relationship:expect:eachRowParts:)``): the same
/// rows, in the same order, as the whole-row requirements give, from the SQLite store's own
/// reader and from the defaults an atomic store uses; values a callee takes stay valid, values
/// it leaves are dropped by the store, and a context keeps an object's own values when a fetch
/// meets it again.
@Suite("Row parts handover: rows handed to a context as key, entity, version and values")
struct RowPartsHandoverTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// One row as parts, compared with the whole row the store gives for it.
    struct Parts: Equatable {
        var key: ObjectKey
        var entityName: String
        var objectID: ManagedObjectID?
        var version: Int64
        var values: [StoreValue]

        init(_ key: ObjectKey, _ entity: EntityDescription, _ objectID: ManagedObjectID?, _ version: Int64, _ values: SlotValues) {
            self.key = key
            entityName = entity.name
            self.objectID = objectID
            self.version = version
            self.values = Array(values)
        }

        init(_ row: borrowing RowSnapshot) {
            self.init(row.key, row.entity, row.objectIDIfMade, row.version, row.values)
        }
    }

    /// 30 breweries with 2 beers each, saved.
    private func seed(_ coordinator: PersistentStoreCoordinator) throws {
        let context = M.context(coordinator)
        try context.performAndWait {
            for index in 0..<30 {
                let brewery = M.insert("Brewery", into: context, ["name": String(format: "Brewery %02d", index)])
                for round in 0..<2 {
                    _ = M.insert("Beer", into: context, ["name": String(format: "Brewery %02d #%d", index, round), "brewery": brewery])
                }
            }
            try context.save()
        }
    }

    @Test(arguments: S.storeTypes)
    func thePartsAreTheFetchedRowsInOrder(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seed(coordinator)
        // Two beers saved again: their rows' version is 2, the others' 1.
        let context = M.context(coordinator)
        try context.performAndWait {
            let request = M.request("Beer", .comparison(.keyPath("name"), .greaterThan, .constant(.string("Brewery 25"))))
            for object in try context.fetch(request).prefix(2) {
                object.setValue("\(object.value(forKey: "name") as? String ?? "") again", forKey: "name")
            }
            try context.save()
        }
        let store = try #require(coordinator.persistentStores.first)
        let beer = try #require(coordinator.managedObjectModel.entitiesByName["Beer"])
        let requests = [
            StoreFetchRequest(entity: beer),
            StoreFetchRequest(entity: beer, predicate: .comparison(.keyPath("name"), .greaterThan, .constant(.string("Brewery 20"))),
                              sortDescriptors: [FetchSortDescriptor(key: "name", ascending: false)], fetchLimit: 7, fetchOffset: 2),
        ]
        for request in requests {
            let fetched = try store.fetch(request).map { Parts($0) }
            var handed: [Parts] = []
            try store.fetch(request, eachRowParts: { key, entity, id, version, values in
                handed.append(Parts(key, entity, id, version, values))
            })
            #expect(!fetched.isEmpty)
            #expect(handed == fetched, "\(type), limit \(request.fetchLimit)")
            #expect(Set(handed.map(\.version)) == [1, 2])
            if type == .sqlite {
                // The SQLite store reads rows by key: no ID is made for a row.
                #expect(handed.allSatisfy { $0.objectID == nil })
            }
        }
    }

    /// A fetch of more rows than `SQLiteStore.rowsBeforeCounting` without a predicate tells
    /// `expect` once how many rows it hands over (cut by its offset and limit), after that many
    /// rows; a smaller fetch, or one with a predicate, tells nothing. An atomic store's default
    /// never tells. The rows are the same either way.
    @Test(arguments: S.storeTypes)
    func aLargeFetchWithoutAPredicateTellsItsRowCountOnce(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        let breweries = SQLiteStore.rowsBeforeCounting + 476
        let context = M.context(coordinator)
        try context.performAndWait {
            for index in 0..<breweries { _ = M.insert("Brewery", into: context, ["name": String(format: "Brewery %05d", index)]) }
            try context.save()
        }
        let store = try #require(coordinator.persistentStores.first)
        let brewery = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        let byName = [FetchSortDescriptor(key: "name")]
        let everyName: FetchPredicate = .comparison(.keyPath("name"), .greaterThanOrEqualTo, .constant(.string("Brewery 00000")))
        // (request, the count told by the SQLite store, or nil for none)
        let cases: [(StoreFetchRequest, Int?)] = [
            (StoreFetchRequest(entity: brewery), breweries),
            (StoreFetchRequest(entity: brewery, sortDescriptors: byName, fetchOffset: 200), breweries - 200),
            (StoreFetchRequest(entity: brewery, sortDescriptors: byName, fetchLimit: 1_200, fetchOffset: 100), 1_200),
            (StoreFetchRequest(entity: brewery, fetchLimit: SQLiteStore.rowsBeforeCounting - 1), nil),
            (StoreFetchRequest(entity: brewery, fetchOffset: breweries - 500), nil),
            (StoreFetchRequest(entity: brewery, predicate: everyName), nil),
        ]
        for (request, told) in cases {
            let fetched = try store.fetch(request).map { Parts($0) }
            var handed: [Parts] = []
            var tellings: [(count: Int, after: Int)] = []
            try store.fetch(request, expect: { count in tellings.append((count, handed.count)) },
                            eachRowParts: { key, entity, id, version, values in handed.append(Parts(key, entity, id, version, values)) })
            #expect(handed == fetched, "\(type), offset \(request.fetchOffset), limit \(request.fetchLimit)")
            if type == .sqlite, let told {
                #expect(tellings.count == 1)
                #expect(tellings.first?.count == told && told == fetched.count, "offset \(request.fetchOffset), limit \(request.fetchLimit)")
                #expect(tellings.first?.after == SQLiteStore.rowsBeforeCounting)
            } else {
                #expect(tellings.isEmpty, "\(type), offset \(request.fetchOffset), limit \(request.fetchLimit), predicate \(request.predicate != nil)")
            }
        }
        // A context's fetch, told the count part way, gives and registers every object.
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let objects = try reader.fetch(M.request("Brewery", sort: byName))
            #expect(objects.count == breweries)
            #expect(objects.last?.value(forKey: "name") as? String == String(format: "Brewery %05d", breweries - 1))
            #expect(reader.registered.count == breweries)
        }
    }

    /// The count is made on the fetch's snapshot: rows another connection commits while the
    /// fetch is reading are neither handed over nor counted.
    @Test func theCountIsOfTheFetchsSnapshot() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("fetch.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let breweries = SQLiteStore.rowsBeforeCounting + 100
        let context = M.context(coordinator)
        try context.performAndWait {
            for index in 0..<breweries { _ = M.insert("Brewery", into: context, ["name": "Brewery \(index)"]) }
            try context.save()
        }
        // Another coordinator, so another connection, writes while the fetch reads.
        let writer = M.context(try M.coordinator(type: .sqlite, at: url))
        let store = try #require(coordinator.persistentStores.first)
        let brewery = try #require(coordinator.managedObjectModel.entitiesByName["Brewery"])
        var handed = 0
        var told: [Int] = []
        try store.fetch(StoreFetchRequest(entity: brewery), expect: { told.append($0) }, eachRowParts: { _, _, _, _, _ in
            handed += 1
            guard handed == 10 else { return }
            try writer.performAndWait {
                for index in 0..<50 { _ = M.insert("Brewery", into: writer, ["name": "Later \(index)"]) }
                try writer.save()
            }
        })
        #expect(handed == breweries)
        #expect(told == [breweries])
        // The rows were committed: a fetch made now sees them.
        #expect(try store.fetch(StoreFetchRequest(entity: brewery)).count == breweries + 50)
    }

    @Test(arguments: S.storeTypes)
    func valuesTakenStayValidAndValuesLeftAreDropped(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seed(coordinator)
        let store = try #require(coordinator.persistentStores.first)
        let beer = try #require(coordinator.managedObjectModel.entitiesByName["Beer"])
        let request = StoreFetchRequest(entity: beer, sortDescriptors: [FetchSortDescriptor(key: "name")])
        var taken: [SlotValues] = []
        var left = 0
        try store.fetch(request, eachRowParts: { _, _, _, _, values in
            // Every other row's values are taken, moved out as a context takes a fault's.
            if left > taken.count {
                taken.append(values)
                values = SlotValues()
            } else {
                left += 1
            }
        })
        let name = try #require(beer.slotIndex(of: "name"))
        let names = (0..<30).flatMap { index in (0..<2).map { String(format: "Brewery %02d #%d", index, $0) } }
        #expect(left == 30 && taken.count == 30)
        // The taken values outlive the fetch (and its slab's other rows) unchanged.
        #expect(taken.map { $0[name] } == stride(from: 1, to: 60, by: 2).map { .string(names[$0]) })
    }

    @Test(arguments: S.storeTypes, [30, 5])
    func prefetchedPartsGoToTheirSourcesIndexInOrder(_ type: StoreType, sourceCount: Int) throws {
        let coordinator = try S.coordinator(type)
        try seed(coordinator)
        let store = try #require(coordinator.persistentStores.first)
        // All breweries (the SQLite store scans the beers), or 5 (it reads them by key list).
        let (sources, beers) = try S.lastBreweries(sourceCount, of: coordinator)
        // The rows the dictionary form gives (another path: the destinations' keys, then their rows).
        let expected = try store.prefetchDestinations(of: sources, relationship: beers)
        var rows: [Int: [Parts]] = [:]
        for (index, source) in sources.enumerated() { rows[index] = expected[source]?.map { Parts($0) } }
        var parts: [Int: [Parts]] = [:]
        try store.prefetchDestinations(of: sources, relationship: beers, expect: { _ in },
                                       eachRowParts: { index, key, entity, id, version, values in
                                           parts[index, default: []].append(Parts(key, entity, id, version, values))
                                       })
        #expect(parts.count == sourceCount)
        #expect(parts == rows)
        #expect(parts.values.allSatisfy { $0.count == 2 })
    }

    @Test(arguments: S.storeTypes)
    func aFetchKeepsARealizedObjectsValuesAndGivesAFaultTheNewRow(_ type: StoreType) throws {
        let coordinator = try S.coordinator(type)
        try seed(coordinator)
        let context = M.context(coordinator)
        let first = try context.performAndWait {
            let objects = try context.fetch(M.request("Brewery", sort: [FetchSortDescriptor(key: "name")]))
            // The first brewery realized; the second left a fault holding its row.
            #expect(objects[0].value(forKey: "name") as? String == "Brewery 00")
            #expect(objects[1].isFault)
            return objects
        }
        // Another context renames both and saves; nothing is merged into the first.
        let other = M.context(coordinator)
        try other.performAndWait {
            for object in try other.fetch(M.request("Brewery", sort: [FetchSortDescriptor(key: "name")])).prefix(2) {
                object.setValue("\(object.value(forKey: "name") as? String ?? "") renamed", forKey: "name")
            }
            try other.save()
        }
        try context.performAndWait {
            #expect(!context.hasChanges, "the fetch below takes the rows as they are read")
            let again = try context.fetch(M.request("Brewery", .comparison(.keyPath("name"), .lessThan, .constant(.string("Brewery 02")))))
            #expect(again.count == 2)
            #expect(again.allSatisfy { object in first.prefix(2).contains { $0 === object } }, "the registered objects")
            // As Core Data: a fetch does not refresh a realized object, and a fault fires with the row read last.
            #expect(first[0].value(forKey: "name") as? String == "Brewery 00")
            #expect(first[1].value(forKey: "name") as? String == "Brewery 01 renamed")
        }
    }
}
