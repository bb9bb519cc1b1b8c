import Foundation
import Testing
import PersistKit

/// The classes the PersistKitCodegen plugin generates for this target from
/// `RoundTrip.model.json` (Sample, ScalarSample, Brewery, Drink/Beer/Lager, Label, Playlist,
/// Track, RoundTripClasses), used against an in-memory store: every attribute type and every
/// relationship shape is written through typed properties, saved, fetched in a new context and
/// read back through typed properties.
@Suite("Generated classes round trip")
struct GeneratedRoundTripTests {
    static let modelURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("RoundTrip.model.json")

    /// A coordinator with an in-memory store over the model, classes registered.
    static func coordinator() throws -> PersistentStoreCoordinator {
        let model = try ManagedObjectModel(contentsOf: modelURL)
        RoundTripClasses.register(in: model)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: nil)
        return coordinator
    }

    /// A new private-queue context on `coordinator`.
    static func context(_ coordinator: PersistentStoreCoordinator) -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    /// Runs `body` on a new context of `coordinator`, then saves it.
    static func write(_ coordinator: PersistentStoreCoordinator, _ body: (ManagedObjectContext) throws -> Void) throws {
        let context = Self.context(coordinator)
        try context.performAndWait {
            try body(context)
            try context.save()
        }
    }

    /// Runs `body` on a new context of `coordinator`.
    static func read(_ coordinator: PersistentStoreCoordinator, _ body: (ManagedObjectContext) throws -> Void) throws {
        let context = Self.context(coordinator)
        try context.performAndWait { try body(context) }
    }

    static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    static let date = Date(timeIntervalSinceReferenceDate: 123_456.5)
    static let url = URL(string: "https://example.com/beers?style=tripel#top")
    static let decimal = Decimal(string: "12345.6789")

    @Test("every attribute type, and keyword-named attributes, survive a save and a fetch")
    func attributes() throws {
        let coordinator = try Self.coordinator()
        try Self.write(coordinator) { context in
            let sample = Sample.insert(into: context)
            sample.int16 = .max
            sample.int32 = .min
            sample.int64 = .max
            sample.decimal = Self.decimal
            sample.double = 3.25
            sample.float = 1.5
            sample.string = "Zoë \"quoted\""
            sample.boolean = true
            sample.date = Self.date
            sample.data = Data([0, 1, 254, 255])
            sample.uuid = Self.uuid
            sample.url = Self.url
            sample.tags = ["hoppy", "dark"]
            sample.settings = ["glass": "tulip"]
            sample.anything = 42
            sample.default = "d"
            sample.protocol = 7
            sample.Type_ = "t"
            sample.init_ = "i"
            sample.entityName = "e"
            sample.Attributes_ = "a"
            let empty = Sample.insert(into: context)
            empty.string = "empty"
        }
        try Self.read(coordinator) { context in
            let request = Sample.fetchRequest()
            let samples = try context.fetch(request)
            #expect(samples.count == 2)
            let sample = try #require(samples.first { $0.string != "empty" })
            #expect(sample.int16 == Int16.max)
            #expect(sample.int32 == Int32.min)
            #expect(sample.int64 == Int64.max)
            #expect(sample.decimal == Self.decimal)
            #expect(sample.double == 3.25)
            #expect(sample.float == 1.5)
            #expect(sample.string == "Zoë \"quoted\"")
            #expect(sample.boolean == true)
            #expect(sample.date == Self.date)
            #expect(sample.data == Data([0, 1, 254, 255]))
            #expect(sample.uuid == Self.uuid)
            #expect(sample.url == Self.url)
            #expect(sample.tags == ["hoppy", "dark"])
            #expect(sample.settings as? [String: String] == ["glass": "tulip"])
            #expect(sample.anything as? Int == 42)
            #expect(sample.default == "d")
            #expect(sample.protocol == 7)
            #expect(sample.Type_ == "t")
            #expect(sample.init_ == "i")
            #expect(sample.entityName == "e")
            #expect(Sample.entityName == "Sample")
            #expect(sample.Attributes_ == "a")
            #expect(Sample.Attributes.Type_ == "Type")
            #expect(Sample.Attributes.default == "default")

            let empty = try #require(samples.first { $0.string == "empty" })
            #expect(empty.string == "empty")
            #expect(empty.int16 == nil && empty.int32 == nil && empty.int64 == nil && empty.decimal == nil)
            #expect(empty.double == nil && empty.float == nil && empty.boolean == nil && empty.date == nil)
            #expect(empty.data == nil && empty.uuid == nil && empty.url == nil && empty.tags == nil)
            #expect(empty.settings == nil && empty.anything == nil && empty.default == nil)
        }
    }

    @Test("a typed fetch finds objects of another class when the classes are not registered, and throws saying so")
    func typedFetchWithoutRegisteredClasses() throws {
        let model = try ManagedObjectModel(contentsOf: Self.modelURL)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory, at: nil)
        try Self.write(coordinator) { context in
            let brewery = ManagedObject(entity: try #require(model.entitiesByName["Brewery"]), insertInto: context)
            brewery.setValue("Westmalle", forKey: "name")
        }
        try Self.read(coordinator) { context in
            #expect(try context.fetch(FetchRequest<ManagedObject>(entityName: "Brewery")).count == 1)
            let error = try #require(throws: PersistenceError.self) { try context.fetch(Brewery.fetchRequest()) }
            #expect(error.description.contains("ManagedObject is not a Brewery"))
        }
    }

    @Test("scalar attributes are non-optional: nil reads as zero, defaults apply, values round-trip")
    func scalars() throws {
        let coordinator = try Self.coordinator()
        try Self.write(coordinator) { context in
            let fresh = ScalarSample.insert(into: context)
            #expect(fresh.int16 == 0 && fresh.int64 == 0 && fresh.decimal == 0 && fresh.boolean == false)
            #expect(fresh.count == 7)
            fresh.int16 = -3
            fresh.int32 = 70_000
            fresh.int64 = -(1 << 40)
            fresh.decimal = Decimal(string: "0.1") ?? 0
            fresh.double = -0.5
            fresh.float = 0.25
            fresh.boolean = true
            fresh.count += 1
        }
        try Self.read(coordinator) { context in
            let sample = try #require(try context.fetch(ScalarSample.fetchRequest()).first)
            #expect(sample.int16 == -3)
            #expect(sample.int32 == 70_000)
            #expect(sample.int64 == -(1 << 40))
            #expect(sample.decimal == Decimal(string: "0.1"))
            #expect(sample.double == -0.5)
            #expect(sample.float == 0.25)
            #expect(sample.boolean == true)
            #expect(sample.count == 8)
        }
    }

    @Test("final generated classes tell saves they use no save hooks; classes with sub-entity classes do not")
    func saveHooks() throws {
        // Final classes: no extension can override willSave() or didSave().
        #expect(!Brewery.usesSaveHooks && !Lager.usesSaveHooks && !Label.usesSaveHooks && !Sample.usesSaveHooks)
        // A class other classes inherit from keeps the default, for a subclass that overrides.
        #expect(Drink.usesSaveHooks && Beer.usesSaveHooks)
        let coordinator = try Self.coordinator()
        try Self.write(coordinator) { context in
            for index in 0..<3 { Brewery.insert(into: context).name = "b\(index)" }
            Lager.insert(into: context).name = "pils"
        }
        try Self.read(coordinator) { context in
            let breweries = try context.fetch(Brewery.fetchRequest())
            let lagers = try context.fetch(Lager.fetchRequest())
            #expect(breweries.compactMap(\.name).sorted() == ["b0", "b1", "b2"])
            #expect(lagers.map(\.name) == ["pils"])
        }
    }

    @Test("to-one, to-many, many-to-many and inheritance through generated accessors")
    func relationships() throws {
        let coordinator = try Self.coordinator()
        try Self.write(coordinator) { context in
            let brewery = Brewery.insert(into: context)
            brewery.name = "Westmalle"
            let dubbel = Beer.insert(into: context)
            dubbel.name = "Dubbel"
            dubbel.abv = 7
            dubbel.brewery = brewery                       // to-one setter, inverse kept
            let pils = Lager.insert(into: context)
            pils.name = "Pils"
            pils.abv = 4.8
            pils.hops = "Saaz"
            brewery.addToBeers(pils)                       // to-many helper, inverse kept
            let trappist = Label.insert(into: context)
            trappist.name = "trappist"
            let light = Label.insert(into: context)
            light.name = "light"
            dubbel.addToLabels(trappist)                   // many-to-many, both sides
            pils.labels = [trappist, light]                // to-many setter
            light.addToDrinks(dubbel)
            light.removeFromDrinks(dubbel)
            #expect(brewery.beers == [dubbel, pils])
            #expect(trappist.drinks.count == 2)
        }
        try Self.read(coordinator) { context in
            let breweries = try context.fetch(Brewery.fetchRequest())
            let brewery = try #require(breweries.first)
            #expect(breweries.count == 1)
            #expect(Set(brewery.beers.compactMap(\.name)) == ["Dubbel", "Pils"])

            // Beer's request includes the Lager sub-entity; Lager's request is typed to Lager.
            let beerRequest = Beer.fetchRequest()
            beerRequest.sortDescriptors = [FetchSortDescriptor(key: Beer.Attributes.name)]
            let beers = try context.fetch(beerRequest)
            #expect(beers.map(\.name) == ["Dubbel", "Pils"])
            #expect(beers.map(\.abv) == [7, 4.8])
            #expect(beers.allSatisfy { $0.brewery === brewery })
            let lagers: [Lager] = try context.fetch(Lager.fetchRequest())
            #expect(lagers.count == 1)
            #expect(lagers.first?.hops == "Saaz")
            #expect(lagers.first === beers.last)
            #expect(Lager.entityName == "Lager" && Beer.entityName == "Beer" && Drink.entityName == "Drink")
            #expect(Lager.Attributes.name == "name" && Lager.Relationships.brewery == "brewery")

            let labelRequest = Label.fetchRequest()
            labelRequest.sortDescriptors = [FetchSortDescriptor(key: Label.Attributes.name)]
            let labels = try context.fetch(labelRequest)
            #expect(labels.map(\.name) == ["light", "trappist"])
            #expect(labels[0].drinks.compactMap(\.name) == ["Pils"])
            #expect(Set(labels[1].drinks.compactMap(\.name)) == ["Dubbel", "Pils"])
            #expect(Set(beers[1].labels.compactMap(\.name)) == ["light", "trappist"])
            #expect(beers[0].labels.compactMap(\.name) == ["trappist"])
        }
    }

    @Test("typed relationship getters over prefetched members on SQLite: sets, ordered arrays, to-one, sub-entity classes")
    func prefetchedRelationships() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("persist-codegen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = try ManagedObjectModel(contentsOf: Self.modelURL)
        RoundTripClasses.register(in: model)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .sqlite, at: directory.appendingPathComponent("store.sqlite"))
        try Self.write(coordinator) { context in
            let brewery = Brewery.insert(into: context)
            brewery.name = "Westmalle"
            let dubbel = Beer.insert(into: context)
            dubbel.name = "Dubbel"
            let pils = Lager.insert(into: context)
            pils.name = "Pils"
            brewery.beers = [dubbel, pils]
            let playlist = Playlist.insert(into: context)
            playlist.name = "mix"
            playlist.tracks = ["c", "a", "b"].map { title in
                let track = Track.insert(into: context)
                track.title = title
                return track
            }
        }
        try Self.read(coordinator) { context in
            let request = Brewery.fetchRequest()
            request.relationshipKeyPathsForPrefetching = ["beers"]
            let brewery = try #require(try context.fetch(request).first)
            let beers = brewery.beers
            #expect(Set(beers.compactMap(\.name)) == ["Dubbel", "Pils"])
            #expect(beers.allSatisfy { !$0.isFault && $0.brewery === brewery })
            #expect(beers.filter { $0 is Lager }.compactMap(\.name) == ["Pils"])
            let playlists = Playlist.fetchRequest()
            playlists.relationshipKeyPathsForPrefetching = ["tracks"]
            let playlist = try #require(try context.fetch(playlists).first)
            #expect(playlist.tracks.compactMap(\.title) == ["c", "a", "b"])
            #expect(playlist.tracks.allSatisfy { !$0.isFault && $0.playlist === playlist })
        }
    }

    @Test("insert(into:) takes the entity of the context's current model, in root and child contexts")
    func insertFollowsTheCoordinator() throws {
        let first = try Self.coordinator(), second = try Self.coordinator()
        let context = Self.context(first)
        context.performAndWait {
            let one = Brewery.insert(into: context), two = Brewery.insert(into: context)
            #expect(one.entity === first.managedObjectModel.entitiesByName["Brewery"])
            #expect(two.entity === one.entity && two.isInserted)
            context.reset()
        }
        // Another coordinator, another model: the entity found for the first is not used.
        context.persistentStoreCoordinator = second
        context.performAndWait {
            let three = Brewery.insert(into: context)
            #expect(three.entity === second.managedObjectModel.entitiesByName["Brewery"])
            #expect(context.insertedObjects.count == 1)
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = context
        child.performAndWait {
            let four = Brewery.insert(into: child), five = Label.insert(into: child)
            #expect(four.entity === second.managedObjectModel.entitiesByName["Brewery"])
            #expect(five.entity === second.managedObjectModel.entitiesByName["Label"])
        }
    }

    @Test("ordered to-many: order kept through insert, remove, set, save and fetch")
    func orderedToMany() throws {
        let coordinator = try Self.coordinator()
        try Self.write(coordinator) { context in
            let playlist = Playlist.insert(into: context)
            playlist.name = "mix"
            let tracks = ["a", "b", "c", "d"].map { title in
                let track = Track.insert(into: context)
                track.title = title
                return track
            }
            playlist.tracks = [tracks[2], tracks[0]]      // c a
            playlist.addToTracks(tracks[3])               // c a d
            playlist.insertIntoTracks(tracks[1], at: 1)   // c b a d
            playlist.removeFromTracks(tracks[0])          // c b d
            tracks[0].playlist = playlist                 // c b d a (to-one side appends)
            #expect(playlist.tracks.compactMap(\.title) == ["c", "b", "d", "a"])
        }
        try Self.read(coordinator) { context in
            let playlist = try #require(try context.fetch(Playlist.fetchRequest()).first)
            #expect(playlist.tracks.compactMap(\.title) == ["c", "b", "d", "a"])
            #expect(playlist.tracks.allSatisfy { $0.playlist === playlist })
        }
    }
}
