import Foundation
import Testing
@testable import PersistKit

@Suite("Context relationships and inverses")
struct ContextRelationshipTests {
    typealias M = ContextTestModel

    @Test func toOneSetKeepsToManyInverse() throws {
        let context = M.context(try M.coordinator())
        let a = M.insert("Brewery", into: context, ["name": "A"])
        let b = M.insert("Brewery", into: context, ["name": "B"])
        let beer = M.insert("Beer", into: context, ["name": "X"])
        beer.setValue(a, forKey: "brewery")
        #expect(M.names(a.value(forKey: "beers")) == ["X"])
        beer.setValue(b, forKey: "brewery")
        #expect(M.names(a.value(forKey: "beers")) == [])
        #expect(M.names(b.value(forKey: "beers")) == ["X"])
        beer.setValue(nil, forKey: "brewery")
        #expect(M.names(b.value(forKey: "beers")) == [])
    }

    @Test func toManyAddAndRemoveKeepToOneInverse() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let a = M.insert("Brewery", into: context, ["name": "A"])
        let b = M.insert("Brewery", into: context, ["name": "B"])
        let beer = M.insert("Beer", into: context, ["name": "X"])
        a.addObject(beer, forKey: "beers")
        #expect(beer.value(forKey: "brewery") as? ManagedObject === a)
        b.addObject(beer, forKey: "beers")
        #expect(beer.value(forKey: "brewery") as? ManagedObject === b)
        #expect(M.names(a.value(forKey: "beers")) == [])
        b.removeObject(beer, forKey: "beers")
        #expect(beer.value(forKey: "brewery") == nil)
        b.setValue(Set([beer]), forKey: "beers")
        try context.save()

        let reader = M.context(coordinator)
        let fetched = try reader.fetch(M.request("Brewery", .equal("name", .string("B"))))[0]
        #expect(M.names(fetched.value(forKey: "beers")) == ["X"])
        let fetchedBeer = try reader.fetch(M.request("Beer"))[0]
        #expect((fetchedBeer.value(forKey: "brewery") as? ManagedObject) === fetched)
    }

    @Test func manyToManyBothWaysAndPersisted() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let sour = M.insert("Tag", into: context, ["name": "sour"])
        let dark = M.insert("Tag", into: context, ["name": "dark"])
        let x = M.insert("Beer", into: context, ["name": "X"])
        let y = M.insert("Beer", into: context, ["name": "Y"])
        x.addObject(sour, forKey: "tags")
        x.addObject(dark, forKey: "tags")
        dark.addObject(y, forKey: "beers")
        #expect(M.names(dark.value(forKey: "beers")) == ["X", "Y"])
        #expect(M.names(y.value(forKey: "tags")) == ["dark"])
        try context.save()

        let reader = M.context(coordinator)
        let tags = try reader.fetch(M.request("Tag", sort: [FetchSortDescriptor(key: "name")]))
        #expect(M.names(tags[0].value(forKey: "beers")) == ["X", "Y"])
        #expect(M.names(tags[1].value(forKey: "beers")) == ["X"])
        let readerX = try reader.fetch(M.request("Beer", .equal("name", .string("X"))))[0]
        readerX.removeObject(tags[0], forKey: "tags")
        try reader.save()

        let third = M.context(coordinator)
        let dark3 = try third.fetch(M.request("Tag", .equal("name", .string("dark"))))[0]
        #expect(M.names(dark3.value(forKey: "beers")) == ["Y"])
    }

    @Test func oneToOneStealsFromPreviousOwner() throws {
        let context = M.context(try M.coordinator())
        let brewery = M.insert("Brewery", into: context, ["name": "A"])
        let first = M.insert("Person", into: context, ["name": "First"])
        let second = M.insert("Person", into: context, ["name": "Second"])
        brewery.setValue(first, forKey: "owner")
        #expect(first.value(forKey: "brewery") as? ManagedObject === brewery)
        second.setValue(brewery, forKey: "brewery")
        #expect(brewery.value(forKey: "owner") as? ManagedObject === second)
        #expect(first.value(forKey: "brewery") == nil)
    }

    @Test func relationshipToObjectOfWrongEntityIsRefused() throws {
        let context = M.context(try M.coordinator())
        let beer = M.insert("Beer", into: context, ["name": "X"])
        let tag = M.insert("Tag", into: context, ["name": "t"])
        let error = #expect(throws: PersistenceError.self) { try beer.setCheckedValue(tag, forKey: "brewery") }
        #expect(error?.message == "Beer.brewery takes Brewery objects, not Tag")
    }

    @Test func inheritanceFetchesSubentities() throws {
        let context = M.context(try M.coordinator())
        _ = M.insert("Juice", into: context, ["volume": Int32(250), "fruit": "apple"])
        _ = M.insert("Soda", into: context, ["volume": Int32(330), "sugar": 35.0])
        try context.save()
        let drinks = try context.fetch(M.request("Drink", sort: [FetchSortDescriptor(key: "volume")]))
        #expect(drinks.map(\.entity.name) == ["Juice", "Soda"])
        let big = try context.fetch(M.request("Drink", .comparison(.keyPath("volume"), .greaterThan, .constant(.integer(300)))))
        #expect(big.map(\.entity.name) == ["Soda"])
        let onlyDrink = M.request("Drink")
        onlyDrink.includesSubentities = false
        #expect(try context.fetch(onlyDrink).isEmpty)
    }
}

@Suite("Context delete rules")
struct ContextDeleteRuleTests {
    typealias M = ContextTestModel

    @Test func nullifyRemovesFromInverse() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let brewery = M.insert("Brewery", into: context, ["name": "A"])
        let beer = M.insert("Beer", into: context, ["name": "X", "brewery": brewery])
        _ = M.insert("Beer", into: context, ["name": "Y", "brewery": brewery])
        try context.save()
        context.delete(beer)
        try context.save()
        #expect(M.names(brewery.value(forKey: "beers")) == ["Y"])
        let reader = M.context(coordinator)
        #expect(M.names(try reader.fetch(M.request("Beer"))) == ["Y"])
    }

    @Test func cascadeDeletesDestinations() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let brewery = M.insert("Brewery", into: context, ["name": "A"])
        for name in ["X", "Y"] { _ = M.insert("Beer", into: context, ["name": name, "brewery": brewery]) }
        _ = M.insert("Beer", into: context, ["name": "Orphan"])
        try context.save()
        context.delete(brewery)
        try context.save()
        let reader = M.context(coordinator)
        #expect(M.names(try reader.fetch(M.request("Beer"))) == ["Orphan"])
    }

    @Test func denyRefusesAndSavesNothing() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let brewery = M.insert("Brewery", into: context, ["name": "A"])
        let owner = M.insert("Person", into: context, ["name": "Owner"])
        brewery.setValue(owner, forKey: "owner")
        try context.save()
        context.delete(brewery)
        let error = #expect(throws: PersistenceError.self) { try context.save() }
        #expect(error?.code == .validationRelationshipDeniedDelete)
        #expect(error?.key == "owner")
        #expect(try M.context(coordinator).count(for: M.request("Brewery")) == 1)
        context.rollback()
        owner.setValue(nil, forKey: "brewery")
        context.delete(brewery)
        try context.save()
        #expect(try M.context(coordinator).count(for: M.request("Brewery")) == 0)
    }

    /// Deleting members of a to-many relationship whose members were never read records their
    /// removal on the other side without reading the members (one look-up per deleted member
    /// made deleting many members of one object cost the square of their number).
    @Test func deletingMembersOfAnUnreadToManyRecordsTheirRemovalWithoutReadingIt() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("Unread.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let store = try #require(coordinator.persistentStores.first as? SQLiteStore)
        let writer = M.context(coordinator)
        let brewery = M.insert("Brewery", into: writer, ["name": "A"])
        for name in ["X", "Y", "Z"] { _ = M.insert("Beer", into: writer, ["name": name, "brewery": brewery]) }
        try writer.save()

        let context = M.context(coordinator)
        let beers = try context.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
        let seen = Locked<[String]>([])
        store.setStatementObserver { sql in seen.withLock { $0.append(sql) } }
        context.performAndWait {
            context.delete(beers[0])
            context.delete(beers[1])
            context.processPendingChanges()
        }
        store.setStatementObserver(nil)
        // Each deleted beer's own tags are read (their nullify rule needs them); the brewery's
        // beers are not.
        let reads = seen.withLock { $0 }
        #expect(reads.count == 2)
        #expect(!reads.contains { $0.contains(#"FROM "ZBEER""#) })
        let reloaded = try context.performAndWait { try #require(beers[2].value(forKey: "brewery") as? ManagedObject) }
        #expect(M.names(reloaded.value(forKey: "beers")) == ["Z"])
        try context.save()
        let reader = M.context(coordinator)
        let saved = try #require(try reader.fetch(M.request("Brewery")).first)
        #expect(M.names(saved.value(forKey: "beers")) == ["Z"])
        #expect(M.names(try reader.fetch(M.request("Beer"))) == ["Z"])
    }

    /// A cascade over many destinations, each with a nullify rule of its own: every level is
    /// deleted and every inverse emptied.
    @Test func aCascadeOverManyDestinationsDeletesThemAllAndNullifiesTheirInverses() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("Cascade.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let context = M.context(coordinator)
        let tag = M.insert("Tag", into: context, ["name": "hoppy"])
        let breweries = (0..<3).map { M.insert("Brewery", into: context, ["name": "B\($0)"]) }
        for (index, brewery) in breweries.enumerated() {
            for number in 0..<100 {
                let beer = M.insert("Beer", into: context, ["name": "beer \(index)-\(number)", "brewery": brewery])
                beer.addObject(tag, forKey: "tags")
            }
        }
        try context.save()
        #expect((tag.value(forKey: "beers") as? Set<ManagedObject>)?.count == 300)

        context.delete(breweries[0])
        context.delete(breweries[2])
        try context.save()
        #expect(M.names(tag.value(forKey: "beers")) == (0..<100).map { "beer 1-\($0)" }.sorted())
        let reader = M.context(coordinator)
        #expect(M.names(try reader.fetch(M.request("Brewery"))) == ["B1"])
        #expect(M.names(try reader.fetch(M.request("Beer"))).sorted() == (0..<100).map { "beer 1-\($0)" }.sorted())
        let savedTag = try #require(try reader.fetch(M.request("Tag")).first)
        #expect((savedTag.value(forKey: "beers") as? Set<ManagedObject>)?.count == 100)
    }

    @Test func deletingAnInsertedObjectLeavesNoTrace() throws {
        let context = M.context(try M.coordinator())
        let brewery = M.insert("Brewery", into: context, ["name": "A"])
        try context.save()
        let beer = M.insert("Beer", into: context, ["name": "Brief", "brewery": brewery])
        context.delete(beer)
        try context.save()
        #expect(M.names(brewery.value(forKey: "beers")) == [])
        #expect(try context.count(for: M.request("Beer")) == 0)
        #expect(!context.hasChanges)
    }
}
