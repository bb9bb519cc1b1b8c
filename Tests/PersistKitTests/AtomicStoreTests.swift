import Foundation
import Testing
@testable import PersistKit

/// Makes atomic stores of each type in a fresh temporary directory.
struct AtomicStoreFactory {
    let fixture: BrewingModel
    let directory: URL

    init() throws {
        fixture = try BrewingModel()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    static let fileTypes: [StoreType] = [.xml, .binary]
    static let allTypes: [StoreType] = [.inMemory] + fileTypes

    func url(for type: StoreType) -> URL {
        directory.appendingPathComponent("store." + type.rawValue.lowercased())
    }

    func open(_ type: StoreType, options: StoreOptions = StoreOptions(), url: URL? = nil) throws -> any AtomicStoreBacked {
        let url = url ?? self.url(for: type)
        switch type {
        case .inMemory: return try InMemoryStore(model: fixture.model, configurationName: nil, url: nil, options: options)
        case .xml: return try XMLStore(model: fixture.model, configurationName: nil, url: url, options: options)
        default: return try BinaryStore(model: fixture.model, configurationName: nil, url: url, options: options)
        }
    }

    /// Inserts objects with fresh primary keys; returns their IDs.
    func insert(_ store: any PersistentStore, _ entity: EntityDescription, _ values: [[String: StoreValue]],
                toMany: [StoreSaveRequest.ToManyChange] = []) throws -> [ManagedObjectID] {
        let keys = try store.allocatePrimaryKeys(for: entity, count: values.count)
        let ids = keys.map { ManagedObjectID(entity: entity, storeIdentifier: store.identifier, primaryKey: $0) }
        var request = StoreSaveRequest()
        request.inserted = zip(ids, values).map { fixture.row($0, $1) }
        request.toManyChanges = toMany
        try store.save(request)
        return ids
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite("AtomicStore")
struct AtomicStoreTests {
    @Test(arguments: AtomicStoreFactory.allTypes)
    func fetchWithPredicateSortLimitOffset(type: StoreType) throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let f = factory.fixture
        let store = try factory.open(type)
        let breweries = try factory.insert(store, f.brewery, [["name": .string("Moortgat")], ["name": .string("Achel")]])
        let beers = try factory.insert(store, f.beer, [
            ["name": .string("Duvel"), "abv": .double(8.5), "brewery": .object(breweries[0])],
            ["name": .string("Orval"), "abv": .double(6.2)],
            ["name": .string("achel blond"), "abv": .double(8), "brewery": .object(breweries[1])],
            ["name": .null, "abv": .double(5)],
        ])
        #expect(store.type == type)
        #expect(try store.count(StoreFetchRequest(entity: f.beer)) == 4)
        let strong = try store.fetch(StoreFetchRequest(entity: f.beer, predicate: .comparison(.keyPath("abv"), .greaterThanOrEqualTo, .constant(.integer(8)))))
        #expect(strong.map(\.objectID) == [beers[0], beers[2]])
        #expect(strong[0].version == 1)

        let byName = try store.fetch(StoreFetchRequest(entity: f.beer, sortDescriptors: [FetchSortDescriptor(key: "name")]))
        #expect(byName.map(\.objectID) == [beers[3], beers[0], beers[1], beers[2]], "nil first, then code point order")
        let byNameCI = try store.fetch(StoreFetchRequest(entity: f.beer, sortDescriptors: [FetchSortDescriptor(key: "name", ascending: false, comparison: .caseInsensitiveCompare)]))
        #expect(byNameCI.map(\.objectID) == [beers[1], beers[0], beers[2], beers[3]])
        let byBrewery = try store.fetch(StoreFetchRequest(entity: f.beer, sortDescriptors: [FetchSortDescriptor(key: "brewery.name"), FetchSortDescriptor(key: "abv", ascending: false)]))
        #expect(byBrewery.map(\.objectID) == [beers[1], beers[3], beers[2], beers[0]])
        let page = try store.fetch(StoreFetchRequest(entity: f.beer, sortDescriptors: [FetchSortDescriptor(key: "abv")], fetchLimit: 2, fetchOffset: 1))
        #expect(page.map(\.objectID) == [beers[1], beers[2]])
        #expect(try store.count(StoreFetchRequest(entity: f.beer, fetchLimit: 2, fetchOffset: 3)) == 1)
        #expect(try store.fetch(StoreFetchRequest(entity: f.beer, fetchOffset: 10)).isEmpty)
        let viaBrewery = try store.fetch(StoreFetchRequest(entity: f.beer, predicate: .comparison(.keyPath("brewery.name"), .beginsWith, .constant(.string("moor")), options: .caseInsensitive)))
        #expect(viaBrewery.map(\.objectID) == [beers[0]])
        #expect(try store.rows(for: [beers[1], breweries[0]]).map(\.objectID) == [beers[1], breweries[0]])
        #expect(store.metadata()["NSStoreType"] as? String == type.rawValue)
        #expect(store.metadata()["NSStoreUUID"] as? String == store.identifier)
    }

    @Test(arguments: AtomicStoreFactory.allTypes)
    func subentitiesAndPrimaryKeys(type: StoreType) throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let f = factory.fixture
        let store = try factory.open(type)
        #expect(try store.allocatePrimaryKeys(for: f.bottle, count: 2) == [1, 2])
        #expect(try store.allocatePrimaryKeys(for: f.can, count: 1) == [3], "sub-entities share the root's key space")
        #expect(try store.allocatePrimaryKeys(for: f.beer, count: 3) == [1, 2, 3])
        #expect(try store.allocatePrimaryKeys(for: f.beer, count: 0) == [])
        let bottles = try factory.insert(store, f.bottle, [["volume": .double(0.33), "color": .string("brown")]])
        let cans = try factory.insert(store, f.can, [["volume": .double(0.5), "isTall": .bool(true)]])
        #expect(bottles[0].primaryKey == 4 && cans[0].primaryKey == 5)
        #expect(try store.fetch(StoreFetchRequest(entity: f.container)).map(\.objectID) == [bottles[0], cans[0]])
        #expect(try store.fetch(StoreFetchRequest(entity: f.container, includesSubentities: false)).isEmpty)
        #expect(try store.count(StoreFetchRequest(entity: f.container, predicate: .comparison(.keyPath("volume"), .greaterThan, .constant(.double(0.4))))) == 1)

        // An abstract entity cannot have rows of its own.
        var request = StoreSaveRequest()
        request.inserted = [f.row(ManagedObjectID(entity: f.container, storeIdentifier: store.identifier, primaryKey: 99), [:])]
        #expect(throws: PersistenceError.self) { try store.save(request) }
        // Nor can an object of another store.
        request.inserted = [f.row(ManagedObjectID(entity: f.beer, storeIdentifier: "other", primaryKey: 99), [:])]
        #expect(throws: PersistenceError.self) { try store.save(request) }
        // Nor a value of the wrong type.
        request.inserted = [f.row(ManagedObjectID(entity: f.beer, storeIdentifier: store.identifier, primaryKey: 99), ["ibu": .integer(40_000)])]
        let error = try #require(throws: PersistenceError.self) { try store.save(request) }
        #expect(error.key == "ibu")
        #expect(try store.count(StoreFetchRequest(entity: f.beer)) == 0)
    }

    @Test(arguments: AtomicStoreFactory.allTypes)
    func toManyMemberships(type: StoreType) throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let f = factory.fixture
        let store = try factory.open(type)
        let beers = try factory.insert(store, f.beer, [["name": .string("A")], ["name": .string("B")], ["name": .string("C")]])
        let tags = try factory.insert(store, f.tag, [["name": .string("x")], ["name": .string("y")]])
        let tagsRel = try #require(f.beer.relationshipsByName["tags"])
        let beersOfTag = try #require(f.tag.relationshipsByName["beers"])
        let lineup = try #require(f.brewery.relationshipsByName["lineup"])

        // Both sides sent, as contexts do; applied idempotently.
        var request = StoreSaveRequest()
        request.toManyChanges = [
            .init(relationship: tagsRel, source: beers[0], added: [tags[0], tags[1]], removed: []),
            .init(relationship: beersOfTag, source: tags[0], added: [beers[0]], removed: []),
            .init(relationship: beersOfTag, source: tags[1], added: [beers[0]], removed: []),
            .init(relationship: beersOfTag, source: tags[1], added: [beers[1]], removed: []),
        ]
        try store.save(request)
        #expect(Set(try store.destinations(of: beers[0], relationship: tagsRel)) == Set(tags))
        #expect(try store.destinations(of: tags[1], relationship: beersOfTag) == [beers[0], beers[1]])
        #expect(try store.destinations(of: beers[1], relationship: tagsRel) == [tags[1]], "one side only is mirrored")
        let anyY = FetchPredicate.comparison(.keyPath("tags.name"), .equalTo, .constant(.string("y")), modifier: .any)
        #expect(try store.fetch(StoreFetchRequest(entity: f.beer, predicate: anyY)).map(\.objectID) == [beers[0], beers[1]])
        let noTags = FetchPredicate.comparison(.keyPath("tags.@count"), .equalTo, .constant(.integer(0)))
        #expect(try store.fetch(StoreFetchRequest(entity: f.beer, predicate: noTags)).map(\.objectID) == [beers[2]])

        // Ordered: the order is the full new order.
        let brewery = try factory.insert(store, f.brewery, [["name": .string("Z")]], toMany: [])[0]
        request = StoreSaveRequest()
        request.toManyChanges = [.init(relationship: lineup, source: brewery, added: beers, removed: [], order: [beers[2], beers[0], beers[1]])]
        try store.save(request)
        #expect(try store.destinations(of: brewery, relationship: lineup) == [beers[2], beers[0], beers[1]])
        request.toManyChanges = [.init(relationship: lineup, source: brewery, added: [], removed: [beers[0]], order: [beers[1], beers[2]])]
        try store.save(request)
        #expect(try store.destinations(of: brewery, relationship: lineup) == [beers[1], beers[2]])

        // Deleting an object removes it from every membership.
        let row = try #require(try store.row(for: beers[1]))
        request = StoreSaveRequest()
        request.deleted = [row]
        try store.save(request)
        #expect(try store.row(for: beers[1]) == nil)
        #expect(try store.destinations(of: brewery, relationship: lineup) == [beers[2]])
        #expect(try store.destinations(of: tags[1], relationship: beersOfTag) == [beers[0]])
        #expect(try store.destinations(of: beers[1], relationship: tagsRel) == [])
    }

    @Test(arguments: AtomicStoreFactory.allTypes)
    func conflictsAndVersions(type: StoreType) throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let f = factory.fixture
        let store = try factory.open(type)
        let beer = try factory.insert(store, f.beer, [["name": .string("A")]])[0]
        var request = StoreSaveRequest()
        request.updated = [f.row(beer, version: 1, ["name": .string("B")])]
        try store.save(request)
        #expect(try store.row(for: beer)?.version == 2)
        #expect(try store.row(for: beer)?.values[0] == .string("B"))

        // A stale update (read at version 1) conflicts and changes nothing.
        request.updated = [f.row(beer, version: 1, ["name": .string("C")])]
        let error = try #require(throws: PersistenceError.self) { try store.save(request) }
        #expect(error.code == .managedObjectMerge)
        #expect(error.objectID == beer)
        #expect(try store.row(for: beer)?.values[0] == .string("B"))

        // A stale delete conflicts too; a delete at the right version works; then an update conflicts.
        request = StoreSaveRequest()
        request.deleted = [f.row(beer, version: 1, [:])]
        #expect(throws: PersistenceError.self) { try store.save(request) }
        request.deleted = [f.row(beer, version: 2, [:])]
        try store.save(request)
        request = StoreSaveRequest()
        request.updated = [f.row(beer, version: 2, ["name": .string("D")])]
        let gone = try #require(throws: PersistenceError.self) { try store.save(request) }
        #expect(gone.code == .managedObjectMerge)
    }

    @Test(arguments: [StoreType.inMemory, .binary])
    func concurrentSavesAndFetches(type: StoreType) async throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let store = try factory.open(type)
        let beer = factory.fixture.beer
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<10 {
                        _ = try factory.insert(store, beer, [["name": .string("w\(worker)-\(i)")]])
                        _ = try store.fetch(StoreFetchRequest(entity: beer, predicate: .comparison(.keyPath("name"), .beginsWith, .constant(.string("w\(worker)")))))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.count(StoreFetchRequest(entity: beer)) == 80)
        #expect(Set(try store.fetch(StoreFetchRequest(entity: beer)).map(\.objectID.primaryKey)) == Set(1...80))
    }

    @Test func readOnlyAndClosedStores() throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let store = try factory.open(.inMemory, options: StoreOptions(readOnly: true))
        var request = StoreSaveRequest()
        request.inserted = [factory.fixture.row(ManagedObjectID(entity: factory.fixture.beer, storeIdentifier: store.identifier, primaryKey: 1), [:])]
        let error = try #require(throws: PersistenceError.self) { try store.save(request) }
        #expect(error.code == .persistentStoreSave)
        try store.close()
        #expect(throws: PersistenceError.self) { try store.fetch(StoreFetchRequest(entity: factory.fixture.beer)) }
    }
}
