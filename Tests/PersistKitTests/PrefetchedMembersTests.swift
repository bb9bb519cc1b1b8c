import Foundation
import Testing
@testable import PersistKit

/// A prefetched to-many relationship keeps its member objects with its state, so reading it
/// makes no registry lookup per member; these tests check that what it reads stays what the
/// context holds: one object per ID, and every change made since (in the context, by a merge,
/// by a release or a reset) reflected.
@Suite("Prefetched to-many members", .timeLimit(.minutes(1)))
struct PrefetchedMembersTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    /// `breweries` breweries (70, the default, are enough for the store's scan path) with 3
    /// beers each, every beer tagged "IPA" when `tagged`, saved; returns the coordinator.
    static func seeded(_ type: StoreType, breweries: Int = 70, tagged: Bool = false) throws -> PersistentStoreCoordinator {
        let coordinator = try S.coordinator(type)
        let context = M.context(coordinator)
        try context.performAndWait {
            let tag = tagged ? M.insert("Tag", into: context, ["name": "IPA"]) : nil
            for b in 0..<breweries {
                let brewery = M.insert("Brewery", into: context, ["name": String(format: "Brewery %03d", b)])
                for i in 0..<3 {
                    let beer = M.insert("Beer", into: context, ["name": String(format: "Brewery %03d #%d", b, i), "abv": Double(i), "brewery": brewery])
                    if let tag { beer.setValue(Set([tag]), forKey: "tags") }
                }
            }
            try context.save()
        }
        return coordinator
    }

    /// The did-save notification of another context of `coordinator` deleting `doomed` and
    /// saving, for a reader to merge.
    static func deletionSaved(_ doomed: ManagedObjectID, in coordinator: PersistentStoreCoordinator) throws -> Notification {
        let writer = M.context(coordinator)
        // Set on the writer's queue by its save, read after that save returned.
        nonisolated(unsafe) var saved: Notification?
        let token = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification, object: writer, queue: nil) {
            saved = $0
        }
        defer { NotificationCenter.default.removeObserver(token) }
        try writer.performAndWait {
            writer.delete(writer.object(with: doomed))
            try writer.save()
        }
        return try #require(saved)
    }

    /// The breweries, sorted by name, with their beers prefetched.
    static func prefetchedBreweries(_ context: ManagedObjectContext) throws -> [ManagedObject] {
        let request = M.request("Brewery", sort: [FetchSortDescriptor(key: "name")])
        request.relationshipKeyPathsForPrefetching = ["beers"]
        return try context.fetch(request)
    }

    private func beers(_ brewery: ManagedObject) -> Set<ManagedObject> {
        brewery.value(forKey: "beers") as? Set<ManagedObject> ?? []
    }

    /// Shelves with two to-many relationships, `books` and `maps` (and their inverses).
    static func shelfModel() -> ManagedObjectModel {
        let shelf = EntityDescription(name: "Shelf", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "books", destination: "Book", toMany: true, inverse: "shelf"),
            RelationshipDescription(name: "maps", destination: "Map", toMany: true, inverse: "shelf"),
        ])
        let book = EntityDescription(name: "Book", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "books"),
        ])
        let map = EntityDescription(name: "Map", properties: [
            AttributeDescription(name: "name", type: .string),
            RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "maps"),
        ])
        return ManagedObjectModel(entities: [shelf, book, map])
    }

    /// An object reads the members a prefetch recorded by the relationship's name: with the
    /// state of one to-many relationship only, the name is compared (another relationship's read
    /// must not get those members), with two it is looked up. Each read gives its own
    /// relationship's members, the same objects at every read, for each store type, whether one
    /// or both relationships were prefetched.
    @Test(arguments: S.storeTypes)
    func twoToManyRelationshipsEachReadTheirOwnMembers(_ type: StoreType) throws {
        let url = type == .sqlite ? try M.temporaryDirectory().appendingPathComponent("shelves.sqlite") : nil
        let coordinator = try M.coordinator(type: type, at: url, model: Self.shelfModel())
        let writer = M.context(coordinator)
        try writer.performAndWait {
            for s in 0..<70 {
                let shelf = M.insert("Shelf", into: writer, ["name": String(format: "shelf %02d", s)])
                for b in 0..<2 { _ = M.insert("Book", into: writer, ["name": "book \(s).\(b)", "shelf": shelf]) }
                for m in 0..<3 { _ = M.insert("Map", into: writer, ["name": "map \(s).\(m)", "shelf": shelf]) }
            }
            try writer.save()
        }
        func names(_ shelf: ManagedObject, _ key: String) -> Set<String> {
            Set((shelf.value(forKey: key) as? Set<ManagedObject> ?? []).map { $0.value(forKey: "name") as? String ?? "?" })
        }
        for prefetched in [["books"], ["maps"], ["books", "maps"]] {
            let context = M.context(coordinator)
            try context.performAndWait {
                let request = M.request("Shelf", sort: [FetchSortDescriptor(key: "name")])
                request.relationshipKeyPathsForPrefetching = prefetched
                let shelves = try context.fetch(request)
                #expect(shelves.count == 70)
                for (s, shelf) in shelves.enumerated() {
                    // The relationship not prefetched (if any) first: read while the object holds
                    // the other's state alone.
                    for key in ["books", "maps"].sorted(by: { prefetched.contains($1) && !prefetched.contains($0) }) {
                        let expected = Set((0..<(key == "books" ? 2 : 3)).map { "\(key == "books" ? "book" : "map") \(s).\($0)" })
                        #expect(names(shelf, key) == expected, "\(prefetched): shelf \(s), \(key)")
                        let first = shelf.value(forKey: key) as? Set<ManagedObject> ?? []
                        #expect(first.allSatisfy { context.registeredObject(for: $0.objectID) === $0 })
                        #expect(shelf.value(forKey: key) as? Set<ManagedObject> == first, "\(prefetched): shelf \(s), \(key) read again")
                    }
                }
            }
        }
    }

    @Test(arguments: S.storeTypes)
    func membersAreTheRegisteredObjects(_ type: StoreType) throws {
        let coordinator = try Self.seeded(type)
        let context = M.context(coordinator)
        try context.performAndWait {
            let breweries = try Self.prefetchedBreweries(context)
            #expect(breweries.count == 70)
            for brewery in breweries {
                let members = beers(brewery)
                #expect(members.count == 3)
                for beer in members {
                    #expect(context.registeredObject(for: beer.objectID) === beer)
                    #expect(context.object(with: beer.objectID) === beer)
                    #expect(beer.value(forKey: "brewery") as? ManagedObject === brewery)
                }
                // A second read gives the same objects.
                #expect(beers(brewery) == members)
            }
        }
    }

    @Test func changesInTheContextAreReflected() throws {
        let coordinator = try Self.seeded(.sqlite)
        let context = M.context(coordinator)
        try context.performAndWait {
            let breweries = try Self.prefetchedBreweries(context)
            let first = breweries[0], second = breweries[1]
            let moved = try #require(beers(first).first)
            // Moving a beer changes both breweries' memberships before any save.
            moved.setValue(second, forKey: "brewery")
            #expect(!beers(first).contains(moved))
            #expect(beers(first).count == 2)
            #expect(beers(second).contains(moved))
            #expect(beers(second).count == 4)
            let added = M.insert("Beer", into: context, ["name": "New", "brewery": first])
            #expect(beers(first).contains(added))
            let deleted = try #require(beers(second).first { $0 !== moved })
            context.delete(deleted)
            try context.save()
            #expect(beers(first).count == 3)
            #expect(beers(second).count == 3)
            #expect(!beers(second).contains(deleted))
            #expect(beers(second).contains(moved))
            for beer in beers(first).union(beers(second)) {
                #expect(context.registeredObject(for: beer.objectID) === beer)
            }
        }
    }

    @Test func aMergedDeletionIsReflected() throws {
        let coordinator = try Self.seeded(.sqlite)
        let reader = M.context(coordinator)
        let breweries = try reader.performAndWait { try Self.prefetchedBreweries(reader) }
        let first = breweries[0]
        let doomed = try reader.performAndWait { try #require(beers(first).first).objectID }
        reader.mergeChanges(fromContextDidSave: try Self.deletionSaved(doomed, in: coordinator))
        reader.performAndWait {
            let members = beers(first)
            #expect(members.count == 2)
            #expect(!members.contains { $0.objectID == doomed })
            for beer in members { #expect(reader.registeredObject(for: beer.objectID) === beer) }
        }
    }

    @Test func refreshingAChangedSourceKeepingItsChangesReadsItsMembersAgain() throws {
        let coordinator = try Self.seeded(.sqlite, breweries: 2)
        let reader = M.context(coordinator)
        let first = try reader.performAndWait { try Self.prefetchedBreweries(reader)[0] }
        let firstID = reader.performAndWait {
            first.setValue("Ghent", forKey: "city")
            return first.objectID
        }
        // Another context adds a beer to the brewery the reader holds, with an unsaved change.
        let writer = M.context(coordinator)
        try writer.performAndWait {
            _ = M.insert("Beer", into: writer, ["name": "Added", "brewery": writer.object(with: firstID)])
            try writer.save()
        }
        reader.performAndWait {
            #expect(beers(first).count == 3)
            reader.refresh(first, mergeChanges: true)
            // The members are read again (the added beer is one), the unsaved change stays.
            #expect(M.names(beers(first)).contains("Added"))
            #expect(beers(first).count == 4)
            #expect(first.value(forKey: "city") as? String == "Ghent")
            #expect(first.hasChanges)
        }
    }

    @Test func releasedMembersAreLookedUpAgain() throws {
        let coordinator = try Self.seeded(.sqlite)
        let context = M.context(coordinator)
        try context.performAndWait {
            let breweries = try Self.prefetchedBreweries(context)
            // The beers are held by nothing but the registry: released, they are gone.
            let released = context.releaseUnreferencedObjects()
            #expect(released >= 210)
            for brewery in breweries {
                let members = beers(brewery)
                #expect(members.count == 3)
                for beer in members {
                    // Faults registered anew, one per ID, that load from the store.
                    #expect(context.registeredObject(for: beer.objectID) === beer)
                    #expect(beer.value(forKey: "brewery") as? ManagedObject === brewery)
                }
            }
        }
    }

    @Test func aRefreshOrResetForgetsTheMembers() throws {
        let coordinator = try Self.seeded(.sqlite)
        let context = M.context(coordinator)
        try context.performAndWait {
            var breweries = try Self.prefetchedBreweries(context)
            let before = beers(breweries[0])
            context.refresh(breweries[0], mergeChanges: false)
            let after = beers(breweries[0])
            #expect(after == before, "the same registered objects, looked up by ID")
            context.reset()
            breweries = try Self.prefetchedBreweries(context)
            let fresh = beers(breweries[0])
            #expect(fresh.count == 3)
            #expect(fresh.isDisjoint(with: before), "new objects after a reset")
            for beer in fresh { #expect(context.registeredObject(for: beer.objectID) === beer) }
        }
    }

    @Test func prefetchedMembersMakeNoIDUntilAsked() throws {
        let coordinator = try Self.seeded(.sqlite)
        let context = M.context(coordinator)
        try context.performAndWait {
            let breweries = try Self.prefetchedBreweries(context)
            let members = breweries.map { beers($0) }
            #expect(members.allSatisfy { $0.count == 3 })
            #expect(members.allSatisfy { $0.allSatisfy { !$0.hasMadeObjectID } }, "members recorded as objects, not IDs")
            // Asked for, the committed members are the members' IDs (each made once, then kept).
            let ids = try #require(breweries[0].toMany["beers"]?.committed)
            #expect(Set(ids) == Set(members[0].map(\.objectID)))
            #expect(members[0].allSatisfy { $0.hasMadeObjectID && ids.contains($0.objectID) })
            #expect(breweries[0].toMany["beers"]?.committed?.map { ObjectIdentifier($0) }.sorted()
                    == ids.map { ObjectIdentifier($0) }.sorted(), "the same ID instances at each read")
        }
    }

    @Test func membersHoldingEachOtherGoWithTheirContext() throws {
        let coordinator = try Self.seeded(.sqlite, breweries: 2, tagged: true)
        weak var tag: ManagedObject?
        weak var beer: ManagedObject?
        weak var gone: ManagedObjectContext?
        do {
            let context = M.context(coordinator)
            gone = context
            try context.performAndWait {
                let request = M.request("Beer", sort: [FetchSortDescriptor(key: "name")])
                // Beers hold their tag, and the tag holds the beers, as prefetched members.
                request.relationshipKeyPathsForPrefetching = ["tags.beers"]
                let first = try #require(try context.fetch(request).first)
                let theTag = try #require((first.value(forKey: "tags") as? Set<ManagedObject>)?.first)
                #expect((theTag.value(forKey: "beers") as? Set<ManagedObject>)?.contains(first) == true)
                #expect(theTag.toMany["beers"]?.memberObjects(generation: context.registryGeneration) != nil)
                tag = theTag
                beer = first
            }
        }
        #expect(gone == nil)
        #expect(tag == nil && beer == nil, "no cycle of prefetched members outlives the context")
    }

    @Test func aChildContextSeesItsOwnObjects() throws {
        let coordinator = try Self.seeded(.sqlite)
        let parent = M.context(coordinator)
        let breweries = try parent.performAndWait { try Self.prefetchedBreweries(parent) }
        let parentBeers = parent.performAndWait { beers(breweries[0]) }
        let child = ManagedObjectContext(concurrencyType: .privateQueue)
        child.parent = parent
        try child.performAndWait {
            let brewery = child.object(with: breweries[0].objectID)
            let members = beers(brewery)
            #expect(members.count == 3)
            for beer in members {
                #expect(beer.managedObjectContext === child)
                #expect(child.registeredObject(for: beer.objectID) === beer)
                #expect(!parentBeers.contains(beer))
            }
            _ = M.insert("Beer", into: child, ["name": "Child's", "brewery": brewery])
            try child.save()
        }
        parent.performAndWait {
            #expect(beers(breweries[0]).count == 4, "the child's save reached the parent's prefetched relationship")
        }
    }
}

/// A prefetched relationship's reads are values: what the program does with one, or changes
/// made to the relationship later, leave the other reads as they were; an ordered relationship
/// is prefetched with its members in order.
@Suite("Prefetched member sets", .timeLimit(.minutes(1)))
struct PrefetchedMemberSetsTests {
    typealias M = ContextTestModel

    @Test func readsOfAnUnorderedRelationshipAreValues() throws {
        let coordinator = try PrefetchedMembersTests.seeded(.sqlite)
        let context = M.context(coordinator)
        try context.performAndWait {
            let brewery = try PrefetchedMembersTests.prefetchedBreweries(context)[0]
            var first = try #require(brewery.value(forKey: "beers") as? Set<ManagedObject>)
            let second = try #require(brewery.value(forKey: "beers") as? Set<ManagedObject>)
            #expect(first.count == 3 && first == second)
            first.removeAll()
            #expect((brewery.value(forKey: "beers") as? Set<ManagedObject>) == second, "a read's copy changed by the program changes nothing")
            let added = M.insert("Beer", into: context, ["name": "New", "abv": 1.0, "brewery": brewery])
            let after = try #require(brewery.value(forKey: "beers") as? Set<ManagedObject>)
            #expect(after.count == 4 && after.contains(added) && after.isSuperset(of: second))
            #expect(second.count == 3, "an earlier read keeps its members")
        }
    }

    @Test func anOrderedRelationshipIsPrefetchedInOrder() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("prefetch-ordered-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: url) }
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "Team", properties: [
                AttributeDescription(name: "name", type: .string),
                RelationshipDescription(name: "entries", destination: "Member", toMany: true, isOrdered: true),
            ]),
            EntityDescription(name: "Member", properties: [AttributeDescription(name: "name", type: .string)]),
        ])
        let coordinator = try M.coordinator(type: .sqlite, at: url, model: model)
        let writer = M.context(coordinator)
        try writer.performAndWait {
            for t in 0..<70 {
                let team = M.insert("Team", into: writer, ["name": String(format: "t%02d", t)])
                for name in ["c", "a", "b"] {
                    team.addObject(M.insert("Member", into: writer, ["name": "\(t)\(name)"]), forKey: "entries")
                }
            }
            try writer.save()
        }
        let reader = M.context(coordinator)
        try reader.performAndWait {
            let request = M.request("Team", sort: [FetchSortDescriptor(key: "name")])
            request.relationshipKeyPathsForPrefetching = ["entries"]
            let teams = try reader.fetch(request)
            #expect(teams.count == 70)
            for (t, team) in teams.enumerated() {
                let entries = try #require(team.value(forKey: "entries") as? [ManagedObject])
                #expect(entries.map { $0.value(forKey: "name") as? String } == ["\(t)c", "\(t)a", "\(t)b"])
                for entry in entries { #expect(reader.registeredObject(for: entry.objectID) === entry) }
            }
        }
    }
}
