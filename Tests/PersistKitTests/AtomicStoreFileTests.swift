import Foundation
import Testing
@testable import PersistKit

@Suite("AtomicStoreFiles")
struct AtomicStoreFileTests {
    /// Every attribute type with awkward values: nil, unicode, control characters, extremes, binary.
    static func awkwardBeers(_ f: BrewingModel) -> [[String: StoreValue]] {
        [
            ["name": .string("Crème Brûlée 🍺 日本 \u{0} tab\tcr\r\nend "), "abv": .double(.greatestFiniteMagnitude),
             "ibu": .integer(Int64(Int16.min)), "brewedOn": .date(Date(timeIntervalSinceReferenceDate: 0.1 + 1e-9)),
             "price": .decimal(Decimal(string: "-12345678901234567890.123456789")!),
             "code": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
             "label": .data(Data((0...255).map(UInt8.init))), "homepage": .url(URL(string: "https://example.com/a%20b?q=1&r=<2>")!),
             "isSour": .bool(true), "serial": .integer(Int64.min)],
            ["name": .string(""), "abv": .double(-0.0), "ibu": .integer(Int64(Int16.max)), "serial": .integer(Int64.max),
             "brewedOn": .date(Date(timeIntervalSinceReferenceDate: -1e12)), "label": .data(Data()), "isSour": .bool(false),
             "price": .decimal(0)],
            ["name": .string("   "), "abv": .double(.infinity), "serial": .integer(0)],
            ["abv": .double(.leastNonzeroMagnitude), "name": .string("<&>\"' ]]>")],
            [:],
        ]
    }

    /// Fills a store with breweries, beers, tags and memberships; returns nothing, the contents are compared whole.
    static func populate(_ factory: AtomicStoreFactory, _ store: any AtomicStoreBacked) throws {
        let f = factory.fixture
        let breweries = try factory.insert(store, f.brewery, [["name": .string("Moortgat")], ["name": .null]])
        var beers = awkwardBeers(f)
        beers[0]["brewery"] = .object(breweries[0])
        let beerIDs = try factory.insert(store, f.beer, beers)
        let tags = try factory.insert(store, f.tag, [["name": .string("a")], ["name": .string("b")]])
        _ = try factory.insert(store, f.bottle, [["volume": .double(0.33), "color": .string("brown")]])
        _ = try factory.insert(store, f.can, [["volume": .double(0.5), "isTall": .bool(true)]])
        var request = StoreSaveRequest()
        request.toManyChanges = [
            .init(relationship: f.brewery.relationshipsByName["beers"]!, source: breweries[0], added: [beerIDs[0]], removed: []),
            .init(relationship: f.brewery.relationshipsByName["lineup"]!, source: breweries[1], added: beerIDs,
                  removed: [], order: [beerIDs[3], beerIDs[0], beerIDs[4], beerIDs[1]]),
            .init(relationship: f.beer.relationshipsByName["tags"]!, source: beerIDs[1], added: tags, removed: []),
        ]
        request.updated = [f.row(beerIDs[2], version: 1, ["name": .string("updated")])]
        try store.save(request)
        _ = try store.allocatePrimaryKeys(for: f.beer, count: 3)
        try store.save(StoreSaveRequest())
    }

    @Test(arguments: AtomicStoreFactory.fileTypes)
    func reopenGivesEqualContents(type: StoreType) throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let store = try factory.open(type)
        try Self.populate(factory, store)
        let before = try store.atomicStore.snapshot()
        try store.close()

        let reopened = try factory.open(type)
        #expect(reopened.identifier == store.identifier)
        let after = try reopened.atomicStore.snapshot()
        #expect(after.rows == before.rows)
        #expect(after.memberships == before.memberships)
        #expect(after.lastPrimaryKeys == before.lastPrimaryKeys)
        #expect(after.lastPrimaryKeys["Beer"] == 8)
        #expect(after.lastPrimaryKeys["Container"] == 2)
        #expect(after == before)
        // Bitwise checks where == is lenient.
        let beer = factory.fixture.beer
        let rows = after.rows["Beer"]!.values.sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
        let abv = beer.slotIndex(of: "abv")!
        if case .double(let zero) = rows[1].values[abv] { #expect(zero.sign == .minus) } else { Issue.record("abv") }
        #expect(rows[0].values[beer.slotIndex(of: "brewedOn")!] == .date(Date(timeIntervalSinceReferenceDate: 0.1 + 1e-9)))
        #expect(try reopened.allocatePrimaryKeys(for: beer, count: 1) == [9])
        let lineup = factory.fixture.brewery.relationshipsByName["lineup"]!
        #expect(try reopened.destinations(of: ManagedObjectID(entity: factory.fixture.brewery, storeIdentifier: store.identifier, primaryKey: 2),
                                          relationship: lineup).map(\.primaryKey) == [4, 1, 5, 2])
        let strong = try reopened.fetch(StoreFetchRequest(entity: beer, predicate: .comparison(.keyPath("brewery.name"), .equalTo, .constant(.string("Moortgat")))))
        #expect(strong.map(\.objectID.primaryKey) == [1])
    }

    @Test(arguments: AtomicStoreFactory.fileTypes)
    func missingFileIsEmptyAndReadOnlyRefusesSaves(type: StoreType) throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let store = try factory.open(type)
        #expect(try store.count(StoreFetchRequest(entity: factory.fixture.beer)) == 0)
        #expect(!FileManager.default.fileExists(atPath: factory.url(for: type).path))
        _ = try factory.insert(store, factory.fixture.beer, [["name": .string("A")]])
        let readOnly = try factory.open(type, options: StoreOptions(readOnly: true))
        #expect(try readOnly.count(StoreFetchRequest(entity: factory.fixture.beer)) == 1)
        #expect(throws: PersistenceError.self) { try factory.insert(readOnly, factory.fixture.beer, [["name": .string("B")]]) }
    }

    @Test(arguments: AtomicStoreFactory.fileTypes)
    func failedSaveChangesNothing(type: StoreType) throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let f = factory.fixture
        let store = try factory.open(type)
        let ids = try factory.insert(store, f.beer, [["name": .string("A")]])
        let url = factory.url(for: type)
        let fileBefore = try Data(contentsOf: url)
        let memoryBefore = try store.atomicStore.snapshot()

        // An injected failure after the temporary file is durable, before the rename.
        struct Injected: Error {}
        store.atomicStore.beforeRename.withLock { $0 = { _ in throw Injected() } }
        var request = StoreSaveRequest()
        request.updated = [f.row(ids[0], version: 1, ["name": .string("B")])]
        #expect(throws: Injected.self) { try store.save(request) }
        #expect(try Data(contentsOf: url) == fileBefore)
        #expect(try store.atomicStore.snapshot() == memoryBefore)
        #expect(try FileManager.default.contentsOfDirectory(atPath: factory.directory.path) == [url.lastPathComponent], "temporary file removed")
        store.atomicStore.beforeRename.withLock { $0 = nil }

        // A directory we cannot write to (skipped when running as root, who can).
        if geteuid() != 0 {
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: factory.directory.path)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: factory.directory.path) }
            let error = try #require(throws: PersistenceError.self) { try store.save(request) }
            #expect(error.code == .persistentStoreSave)
            #expect(try Data(contentsOf: url) == fileBefore)
            #expect(try store.atomicStore.snapshot() == memoryBefore)
        }

        // A directory that is gone: the temporary file cannot be created (works as root too).
        let moved = factory.directory.deletingLastPathComponent().appendingPathComponent("moved-\(UUID().uuidString)")
        try FileManager.default.moveItem(at: factory.directory, to: moved)
        let gone = try #require(throws: PersistenceError.self) { try store.save(request) }
        #expect(gone.code == .persistentStoreSave)
        #expect(gone.underlying?.isEmpty == false)
        #expect(try store.atomicStore.snapshot() == memoryBefore)
        try FileManager.default.moveItem(at: moved, to: factory.directory)

        // And the same save works afterwards.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: factory.directory.path)
        try store.save(request)
        #expect(try factory.open(type).row(for: ids[0])?.version == 2)
    }

    @Test func corruptBinaryFilesGiveClearErrors() throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let store = try factory.open(.binary)
        try Self.populate(factory, store)
        let url = factory.url(for: .binary)
        let good = try Data(contentsOf: url)

        func openError(_ data: Data) throws -> PersistenceError {
            try data.write(to: url)
            return try #require(throws: PersistenceError.self) { try factory.open(.binary) }
        }
        var error = try openError(good.prefix(good.count - 5))
        #expect(error.code == .persistentStoreOpen)
        #expect(error.path == url.path)
        #expect(error.message.contains("truncated"))
        error = try openError(Data("<store/>".utf8))
        #expect(error.message.contains("magic"))
        var flipped = good
        flipped[flipped.count - 3] ^= 0xFF
        error = try openError(flipped)
        #expect(error.message.contains("checksum"))
        var version = good
        version[8] = 9
        error = try openError(version)
        #expect(error.message.contains("version 9"))
    }

    @Test func corruptXMLFilesGiveClearErrors() throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let store = try factory.open(.xml)
        try Self.populate(factory, store)
        let url = factory.url(for: .xml)
        let good = try String(contentsOf: url, encoding: .utf8)

        func openError(_ text: String) throws -> PersistenceError {
            try Data(text.utf8).write(to: url)
            return try #require(throws: PersistenceError.self) { try factory.open(.xml) }
        }
        var error = try openError(String(good.prefix(good.count / 2)))
        #expect(error.code == .persistentStoreOpen && error.path == url.path)
        #expect(error.message.contains("well-formed"))
        error = try openError("<other/>")
        #expect(error.message.contains("root element"))
        error = try openError(good.replacingOccurrences(of: "entity=\"Tag\"", with: "entity=\"Ale\""))
        #expect(error.message.contains("Ale"))
        error = try openError(good.replacingOccurrences(of: "type=\"double\">0.33", with: "type=\"double\">zero"))
        #expect(error.code == .persistentStoreOpen)
        error = try openError(good.replacingOccurrences(of: "name=\"color\"", with: "name=\"colour\""))
        #expect(error.message.contains("colour"))
        error = try openError(good.replacingOccurrences(of: "version=\"1\" type=\"XML\"", with: "version=\"2\" type=\"XML\""))
        #expect(error.message.contains("version 2"))
        error = try openError(good.replacingOccurrences(of: "name=\"volume\" type=\"double\"", with: "name=\"volume\" type=\"string\""))
        #expect(error.message.contains("wrong type"))
    }

    @Test func xmlFileIsReadable() throws {
        let factory = try AtomicStoreFactory()
        defer { factory.cleanUp() }
        let store = try factory.open(.xml)
        _ = try factory.insert(store, factory.fixture.beer, [["name": .string("Duvel"), "abv": .double(8.5)]])
        let text = try String(contentsOf: factory.url(for: .xml), encoding: .utf8)
        #expect(text.contains("<store format=\"persistd-xml\" version=\"1\" type=\"XML\" uuid=\"\(store.identifier)\">"))
        #expect(text.contains("<object entity=\"Beer\" pk=\"1\" version=\"1\">"))
        #expect(text.contains("<value name=\"name\" type=\"string\">Duvel</value>"))
        #expect(text.contains("<value name=\"abv\" type=\"double\">8.5</value>"))
    }

    @Test func crcMatchesZlib() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }
}
