import Foundation
import Testing
@testable import PersistKit

/// The shortcuts of inserting and saving: `setValue` with a non-optional value, new objects'
/// own copy of the defaults, keys for a save whose new objects are all of one entity, and one
/// request per store however the saved objects' entities alternate. Each must give what the
/// general path gives.
@Suite("Save hot path", .serialized, .timeLimit(.minutes(1)))
struct SaveHotPathTests {
    typealias M = ContextTestModel

    /// Sets `value` through a generic parameter: Swift then picks the `Any` form of `setValue`.
    static func setGeneric<T>(_ object: ManagedObject, _ value: T, _ key: String) { object.setValue(value, forKey: key) }

    @Test func nonOptionalSetValueStoresWhatTheOptionalFormStores() throws {
        let context = M.context(try M.coordinator())
        try context.performAndWait {
            let date = Date(timeIntervalSince1970: 1_000_000)
            let values: [(String, Any)] = [
                ("ibu", Int64(30)), ("ibu", Int(31)), ("ibu", Int32(32)), ("ibu", Int16(33)), ("ibu", UInt8(34)),
                ("abv", Double(6.5)), ("abv", Float(7.5)), ("abv", Int64(8)),
                ("name", "Orval"), ("brewedOn", date), ("note", NSNull()),
                // An optional inside an `Any` is unwrapped by the general path.
                ("ibu", Optional(Int64(35)) as Any), ("name", Optional("Chimay") as Any),
            ]
            for (key, value) in values {
                let viaAny = M.insert("Beer", into: context, ["name": "A"])
                let viaOptional = M.insert("Beer", into: context, ["name": "B"])
                viaAny.setValue(value, forKey: key)
                let optional: Any? = value
                viaOptional.setValue(optional, forKey: key)
                #expect(viaAny.primitiveValue(forKey: key) == viaOptional.primitiveValue(forKey: key), "\(key) = \(value)")
                Self.setGeneric(viaAny, value, key)
                #expect(viaAny.primitiveValue(forKey: key) == viaOptional.primitiveValue(forKey: key), "\(key) = \(value) (generic)")
            }
            // Relationships take the general path from the `Any` form too, inverses kept.
            let brewery = M.insert("Brewery", into: context, ["name": "Abbaye d'Orval"])
            let beer = M.insert("Beer", into: context, ["name": "Orval"])
            beer.setValue(brewery, forKey: "brewery")
            #expect(beer.value(forKey: "brewery") as? ManagedObject === brewery)
            #expect((brewery.value(forKey: "beers") as? Set<ManagedObject>) == [beer])
            // On a saved object the `Any` form records the change as the optional form does.
            try context.save()
            beer.setValue(Int64(41), forKey: "ibu")
            #expect(beer.isUpdated)
            #expect(beer.changedValues()["ibu"] as? Int16 == 41)
            #expect(context.updatedObjects == [beer])
        }
    }

    @Test func newObjectsGetTheirOwnCopyOfTheDefaults() throws {
        let model = ManagedObjectModel(entities: [EntityDescription(name: "Counter", properties: [
            AttributeDescription(name: "count", type: .integer64, defaultValue: .integer(7)),
            AttributeDescription(name: "ratio", type: .double, defaultValue: .double(0.5)),
            AttributeDescription(name: "flag", type: .boolean, defaultValue: .bool(true)),
            AttributeDescription(name: "since", type: .date, defaultValue: .date(Date(timeIntervalSince1970: 86_400))),
            AttributeDescription(name: "label", type: .string),
        ])])
        let url = try M.temporaryDirectory().appendingPathComponent("defaults.sqlite")
        let context = M.context(try M.coordinator(type: .sqlite, at: url, model: model))
        try context.performAndWait {
            guard let entity = model.entitiesByName["Counter"] else { Issue.record("no entity"); return }
            #expect(EntityRules.of(entity).defaultsAreBitwise)
            let first = ManagedObject(entity: entity, insertInto: context)
            let second = ManagedObject(entity: entity, insertInto: context)
            first.setValue(Int64(1), forKey: "count")
            first.setValue("one", forKey: "label")
            first.setValue(false, forKey: "flag")
            #expect(second.primitiveValue(forKey: "count") == .integer(7), "another object's write leaves the defaults alone")
            #expect(second.primitiveValue(forKey: "flag") == .bool(true))
            #expect(second.primitiveValue(forKey: "ratio") == .double(0.5))
            #expect(second.primitiveValue(forKey: "since") == .date(Date(timeIntervalSince1970: 86_400)))
            #expect(second.primitiveValue(forKey: "label") == .null)
            #expect(EntityRules.of(entity).defaultSlots[0] == .integer(7))
            let third = ManagedObject(entity: entity, insertInto: context)
            #expect(third.primitiveValue(forKey: "count") == .integer(7))
            #expect(Set(third.changedValues().keys) == ["count", "ratio", "flag", "since"])
            try context.save()
            context.reset()
            let saved = try context.fetch(FetchRequest<ManagedObject>(entityName: "Counter")).map { $0.int64(forKey: "count") }
            #expect(saved.sorted { ($0 ?? 0) < ($1 ?? 0) } == [1, 7, 7])
        }
        // Defaults holding references (a string) are shared until the first write, as before.
        let named = EntityDescription(name: "Named", properties: [AttributeDescription(name: "title", type: .string, defaultValue: .string("untitled"))])
        let namedContext = M.context(try M.coordinator(model: ManagedObjectModel(entities: [named])))
        namedContext.performAndWait {
            #expect(!EntityRules.of(named).defaultsAreBitwise)
            let first = ManagedObject(entity: named, insertInto: namedContext)
            let second = ManagedObject(entity: named, insertInto: namedContext)
            first.setValue("mine", forKey: "title")
            #expect(second.primitiveValue(forKey: "title") == .string("untitled"))
        }
    }

    @Test func newObjectsOfOneEntityGetConsecutiveDistinctKeys() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("keys.sqlite")
        let context = M.context(try M.coordinator(type: .sqlite, at: url))
        try context.performAndWait {
            var keys: [Int64] = []
            for round in 0..<12 {
                let beers = (0..<(round % 3 + 1)).map { M.insert("Beer", into: context, ["name": "Beer \(round).\($0)"]) }
                try context.save()
                let roundKeys = beers.map(\.objectID.primaryKey).sorted()
                #expect(beers.allSatisfy { !$0.objectID.isTemporaryID })
                #expect(roundKeys == Array(roundKeys[0]..<(roundKeys[0] + Int64(beers.count))), "one run of keys")
                keys += roundKeys
            }
            #expect(Set(keys).count == keys.count)
            context.reset()
            #expect(try context.count(for: M.request("Beer")) == keys.count)
        }
    }

    @Test func savesOfAlternatingEntitiesWriteEveryObject() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("alternating.sqlite")
        let context = M.context(try M.coordinator(type: .sqlite, at: url))
        try context.performAndWait {
            var beers: [ManagedObject] = []
            for index in 0..<6 {
                let brewery = M.insert("Brewery", into: context, ["name": "Brewery \(index)"])
                let beer = M.insert("Beer", into: context, ["name": "Beer \(index)"])
                beer.setValue(brewery, forKey: "brewery")
                _ = M.insert("Person", into: context, ["name": "Person \(index)"])
                beers.append(beer)
            }
            try context.save()
            for (index, beer) in beers.enumerated() { beer.setValue(Int64(index), forKey: "ibu") }
            try context.delete(context.fetch(M.request("Person")).first ?? beers[0])
            try context.save()
            context.reset()
            #expect(try context.count(for: M.request("Brewery")) == 6)
            #expect(try context.count(for: M.request("Person")) == 5)
            let fetched = try context.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
            #expect(fetched.map { $0.int64(forKey: "ibu") } == (0..<6).map { Int64($0) })
            #expect(fetched.allSatisfy { ($0.value(forKey: "brewery") as? ManagedObject) != nil })
        }
    }

    /// The notifications of a save, kept by an observer: filled in place for each post, they
    /// must still hold their own save's contents after later saves.
    @Test func keptNotificationsKeepTheirContentsAcrossLaterSaves() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("kept.sqlite")
        let context = M.context(try M.coordinator(type: .sqlite, at: url))
        let kept = Locked<[Notification]>([])
        let center = NotificationCenter.default
        let observers = [ManagedObjectContext.didChangeObjectsNotification, ManagedObjectContext.didSaveObjectsNotification,
                         ManagedObjectContext.didSaveObjectIDsNotification].map { name in
            center.addObserver(forName: name, object: context, queue: nil) { note in kept.withLock { $0.append(note) } }
        }
        defer { for observer in observers { center.removeObserver(observer) } }
        var beers: [ManagedObject] = []
        try context.performAndWait {
            for index in 0..<3 {
                beers.append(M.insert("Beer", into: context, ["name": "Beer \(index)"]))
                try context.save()
            }
        }
        let notes = kept.withLock { $0 }
        #expect(notes.count == 9)
        guard notes.count == 9 else { return }
        for (index, beer) in beers.enumerated() {
            let (changed, saved, savedIDs) = (notes[index * 3], notes[index * 3 + 1], notes[index * 3 + 2])
            #expect(changed.userInfo?[ManagedObjectContext.insertedObjectsKey] as? Set<ManagedObject> == [beer])
            #expect(saved.userInfo?[ManagedObjectContext.insertedObjectsKey] as? Set<ManagedObject> == [beer])
            #expect(saved.userInfo?[ManagedObjectContext.updatedObjectsKey] as? Set<ManagedObject> == [])
            #expect(savedIDs.userInfo?[ManagedObjectContext.insertedObjectIDsKey] as? Set<ManagedObjectID> == [beer.objectID])
            #expect((savedIDs.userInfo?[ManagedObjectContext.savedChangesKey] as? SavedChanges)?.inserted == [beer.objectID])
            #expect(saved.userInfo?.count == 4 && changed.userInfo?.count == 3)
        }
    }

    /// An observer that saves another context on the same thread while a notification is
    /// being posted: both saves' notifications carry their own objects.
    @Test func aSaveInsideAnObserverPostsItsOwnContents() throws {
        let url = try M.temporaryDirectory().appendingPathComponent("nested.sqlite")
        let coordinator = try M.coordinator(type: .sqlite, at: url)
        let outer = M.context(coordinator)
        let inner = M.context(coordinator)
        let innerSaved = Locked<[[String]]>([])
        let outerSaved = Locked<[Set<ManagedObject>]>([])
        let innerBeer = Locked<ManagedObject?>(nil)
        let center = NotificationCenter.default
        let onOuter = center.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification, object: outer, queue: nil) { note in
            outerSaved.withLock { $0.append(note.userInfo?[ManagedObjectContext.insertedObjectsKey] as? Set<ManagedObject> ?? []) }
            // Same thread: the inner context's queue runs this block inline.
            inner.performAndWait {
                let beer = M.insert("Beer", into: inner, ["name": "Inner"])
                innerBeer.withLock { $0 = beer }
                try? inner.save()
            }
        }
        let onInner = center.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification, object: inner, queue: nil) { note in
            // Read on the inner context's queue, where this observer runs.
            let names = (note.userInfo?[ManagedObjectContext.insertedObjectsKey] as? Set<ManagedObject> ?? []).map { $0.value(forKey: "name") as? String ?? "?" }
            innerSaved.withLock { $0.append(names) }
        }
        defer {
            center.removeObserver(onOuter)
            center.removeObserver(onInner)
        }
        var outerBeers: [ManagedObject] = []
        try outer.performAndWait {
            for index in 0..<2 {
                outerBeers.append(M.insert("Beer", into: outer, ["name": "Outer \(index)"]))
                try outer.save()
            }
        }
        #expect(outerSaved.withLock { $0 } == outerBeers.map { [$0] })
        let innerSets = innerSaved.withLock { $0 }
        #expect(innerSets.count == 2)
        #expect(innerSets.allSatisfy { $0 == ["Inner"] })
        #expect(innerBeer.withLock { $0 } != nil)
    }
}
