import Foundation
import Testing
@testable import PersistKit

@Suite("Batch insert, update and delete requests")
struct BatchRequestTests {
    typealias M = ContextTestModel
    typealias S = FetchTestSupport

    private func setUp(_ type: StoreType) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = try S.coordinator(type)
        try S.seedBreweries(coordinator)
        return (coordinator, M.context(coordinator))
    }

    private func beer(_ name: String, in context: ManagedObjectContext) throws -> ManagedObject? {
        try context.fetch(M.request("Beer", .equal("name", .string(name)))).first
    }

    private func version(_ coordinator: PersistentStoreCoordinator, _ id: ManagedObjectID) throws -> Int64? {
        try coordinator.persistentStores[0].row(for: id)?.version
    }

    // MARK: - Insert

    @Test(arguments: S.storeTypes)
    func batchInsertConvertsValuesAndReturnsIDs(_ type: StoreType) throws {
        let (coordinator, context) = try setUp(type)
        let request = BatchInsertRequest(entityName: "Beer", objects: [
            ["name": "Rochefort 10", "abv": 11.3, "ibu": 27],
            ["name": "Chimay Bleue", "abv": 9, "brewedOn": Date(timeIntervalSinceReferenceDate: 0)],
            ["name": "La Trappe"],
        ])
        request.resultType = .objectIDs
        let result = try context.execute(request)
        let ids = try #require(result.objectIDs)
        #expect(ids.count == 3)
        #expect(ids.allSatisfy { !$0.isTemporaryID && $0.entity.name == "Beer" })
        #expect(Set(ids.map(\.primaryKey)).count == 3)
        #expect(try ids.map { try version(coordinator, $0) } == [1, 1, 1])

        let reader = M.context(coordinator)
        let rochefort = try #require(try beer("Rochefort 10", in: reader))
        #expect(rochefort.value(forKey: "ibu") as? Int16 == 27)
        let chimay = try #require(try beer("Chimay Bleue", in: reader))
        #expect(chimay.value(forKey: "abv") as? Double == 9.0, "an Int becomes a Double for a Double attribute")
        #expect(chimay.value(forKey: "brewedOn") as? Date == Date(timeIntervalSinceReferenceDate: 0))
        let trappe = try #require(try beer("La Trappe", in: reader))
        #expect(trappe.value(forKey: "abv") as? Double == 5.0, "a missing attribute takes its default")
        #expect(try reader.count(for: M.request("Beer")) == 9)

        // A later normal insert gets a fresh key.
        let more = M.insert("Beer", into: reader, ["name": "Later"])
        try reader.save()
        #expect(!ids.map(\.primaryKey).contains(more.objectID.primaryKey))
    }

    @Test(arguments: S.storeTypes)
    func batchInsertResultTypes(_ type: StoreType) throws {
        let (_, context) = try setUp(type)
        let request = BatchInsertRequest(entityName: "Tag", objects: [["name": "sour"], ["name": "dark"]])
        #expect(try context.execute(request).result as? Bool == true)
        request.resultType = .count
        request.objects = [["name": "hoppy"]]
        let counted = try context.execute(request)
        #expect(counted.count == 1)
        #expect(counted.objectIDs == nil)
        #expect(try context.count(for: M.request("Tag")) == 5)
    }

    /// Rows are made in one pass over each dictionary, and again key by key only when
    /// something is wrong: what lands is what the checked rows hold, whatever the shape.
    @Test(arguments: S.storeTypes)
    func batchInsertRowsOfEveryShape(_ type: StoreType) throws {
        let (coordinator, context) = try setUp(type)
        let brewed = Date(timeIntervalSinceReferenceDate: 86_400)
        let request = BatchInsertRequest(entityName: "Beer", objects: [
            ["name": "Transient given", "note": "not stored"],
            ["name": "Null for an optional with a default", "abv": NSNull()],
            ["name": "Transient of another type", "note": 12, "ibu": Int32(7)],
            ["name": "Every kind", "abv": Float(6.5), "ibu": 40, "brewedOn": brewed, "code": "ABC-1"],
        ])
        request.resultType = .objectIDs
        let ids = try #require(try context.execute(request).objectIDs)
        #expect(ids.count == 4)
        let reader = M.context(coordinator)
        let rows = try ids.map { try reader.existingObject(with: $0) }
        #expect(rows.map { $0.value(forKey: "name") as? String }
            == ["Transient given", "Null for an optional with a default", "Transient of another type", "Every kind"])
        #expect(rows.allSatisfy { $0.value(forKey: "note") == nil })
        #expect(rows.map { $0.value(forKey: "abv") as? Double } == [5.0, nil, 5.0, 6.5])
        #expect(rows.map { $0.value(forKey: "ibu") as? Int16 } == [nil, nil, 7, 40])
        #expect(rows[3].value(forKey: "brewedOn") as? Date == brewed && rows[3].value(forKey: "code") as? String == "ABC-1")

        // A mandatory attribute given as null, after good rows: nothing is inserted.
        let before = try context.count(for: M.request("Beer"))
        #expect { try context.execute(BatchInsertRequest(entityName: "Beer", objects: [["name": "fine"], ["name": NSNull()]])) } throws: {
            ($0 as? PersistenceError)?.code == .validationMissingMandatoryProperty
        }
        #expect(try context.count(for: M.request("Beer")) == before)
        // An empty list inserts nothing, even of an abstract entity.
        let empty = BatchInsertRequest(entityName: "Drink", objects: [])
        empty.resultType = .count
        #expect(try context.execute(empty).count == 0)
    }

    @Test(arguments: S.storeTypes)
    func batchInsertRejectsBadValues(_ type: StoreType) throws {
        let (_, context) = try setUp(type)
        func code(_ objects: [[String: Any]], _ entity: String = "Beer") -> PersistenceError.Code? {
            do {
                _ = try context.execute(BatchInsertRequest(entityName: entity, objects: objects))
                return nil
            } catch let error as PersistenceError {
                return error.code
            } catch {
                return nil
            }
        }
        #expect(code([["name": "X", "abv": "strong"]]) == .validationInvalidType)
        #expect(code([["name": "X", "ibu": 100_000]]) == .validationInvalidType, "out of Integer 16's range")
        #expect(code([["name": "X", "colour": "amber"]]) == .validationInvalidType)
        #expect(code([["name": "X", "brewery": NSNull()]]) == .validationInvalidType, "relationships cannot be batch inserted")
        #expect(code([["abv": 5.0]]) == .validationMissingMandatoryProperty)
        #expect(code([["volume": 1]], "Drink") == .persistentStoreOperation, "abstract entity")
        #expect(try context.count(for: M.request("Beer")) == 6, "a failed batch inserts nothing")
    }

    // MARK: - Update

    @Test(arguments: S.storeTypes)
    func batchUpdateWithExpressionsBumpsVersions(_ type: StoreType) throws {
        let (coordinator, context) = try setUp(type)
        let orval = try #require(try beer("Orval", in: context))
        #expect(try version(coordinator, orval.objectID) == 1)

        let request = BatchUpdateRequest(entityName: "Beer")
        request.predicate = .equal("brewery.name", .string("Orval"))
        request.propertiesToUpdate = [
            "abv": .function("add:to:", [.keyPath("abv"), .constant(.integer(1))]),
            "code": .constant(.string("ORV-1")),
        ]
        request.resultType = .objectIDs
        let result = try context.execute(request)
        #expect(Set(try #require(result.objectIDs)) == Set(try context.fetch(M.request("Beer", .equal("brewery.name", .string("Orval")))).map(\.objectID)))
        #expect(try version(coordinator, orval.objectID) == 2)

        let reader = M.context(coordinator)
        let rows = try reader.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
        #expect(rows.map { $0.value(forKey: "abv") as? Double } == [8.0, 5.0, 6.2 + 1, 5.5, 7.0, 9.5])
        #expect(rows.map { $0.value(forKey: "code") as? String } == [nil, nil, "ORV-1", "ORV-1", nil, nil])

        request.predicate = nil
        request.propertiesToUpdate = ["ibu": .constant(.integer(10))]
        request.resultType = .count
        #expect(try context.execute(request).count == 6)
    }

    @Test(arguments: S.storeTypes)
    func batchUpdateRejectsBadAssignments(_ type: StoreType) throws {
        let (_, context) = try setUp(type)
        let request = BatchUpdateRequest(entityName: "Beer")
        request.propertiesToUpdate = ["abv": .constant(.string("strong"))]
        #expect(throws: PersistenceError.self) { try context.execute(request) }
        request.propertiesToUpdate = ["brewery": .constant(.null)]
        #expect(throws: PersistenceError.self, "only attributes") { try context.execute(request) }
        request.propertiesToUpdate = ["note": .constant(.string("x"))]
        #expect(throws: PersistenceError.self, "not transient attributes") { try context.execute(request) }
        let rows = try context.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
        #expect(rows.map { $0.value(forKey: "abv") as? Double } == [8.0, 5.0, 6.2, 4.5, 7.0, 9.5])
    }

    // MARK: - Delete

    @Test(arguments: S.storeTypes)
    func batchDeleteRemovesJoinRowsAndClearsPointingRelationships(_ type: StoreType) throws {
        let (coordinator, context) = try setUp(type)
        let request = BatchDeleteRequest(fetchRequest: M.request("Beer", .equal("brewery.name", .string("Westmalle"))))
        request.resultType = .count
        #expect(try context.execute(request).count == 2)

        let reader = M.context(coordinator)
        #expect(M.names(try reader.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")])))
                == ["Achel Blond", "Mystery", "Orval", "Petite Orval"])
        let tags = try reader.fetch(M.request("Tag", sort: [FetchSortDescriptor(key: "name")]))
        #expect(tags.map { M.names($0.value(forKey: "beers")) } == [["Achel Blond"], ["Achel Blond", "Orval", "Petite Orval"]])
        let westmalle = try #require(try reader.fetch(M.request("Brewery", .equal("name", .string("Westmalle")))).first)
        #expect(M.names(westmalle.value(forKey: "beers")) == [], "no delete rule ran: the brewery stays, without beers")

        // Deleting breweries clears the beers' to-one relationship and bumps their versions.
        let breweries = BatchDeleteRequest(fetchRequest: M.request("Brewery", .equal("name", .string("Orval"))))
        breweries.resultType = .objectIDs
        let result = try context.execute(breweries)
        #expect(result.objectIDs?.count == 1)
        let orval = try #require(try beer("Orval", in: M.context(coordinator)))
        #expect(orval.value(forKey: "brewery") == nil, "nullified, not cascaded")
        #expect(try version(coordinator, orval.objectID) == 2)
        #expect(Set(result.changes[ManagedObjectContext.updatedObjectIDsKey] ?? []).count == 2, "both Orval beers were nullified")
    }

    @Test(arguments: S.storeTypes)
    func batchDeleteByObjectIDs(_ type: StoreType) throws {
        let (_, context) = try setUp(type)
        let ids = try context.fetch(M.request("Beer", .comparison(.keyPath("abv"), .greaterThan, .constant(.double(7.5))))).map(\.objectID)
        let request = BatchDeleteRequest(objectIDs: ids)
        request.resultType = .objectIDs
        #expect(Set(try context.execute(request).objectIDs ?? []) == Set(ids))
        #expect(try context.execute(request).objectIDs == [], "deleting them again deletes nothing")
        let brewery = try #require(try context.fetch(M.request("Brewery")).first)
        #expect(throws: PersistenceError.self, "IDs of one entity only") {
            try context.execute(BatchDeleteRequest(objectIDs: [ids[0], brewery.objectID]))
        }
    }

    // MARK: - Merging into live contexts

    @Test(arguments: S.storeTypes)
    func mergingBatchResultsUpdatesRegisteredObjects(_ type: StoreType) throws {
        let (coordinator, _) = try setUp(type)
        let live = M.context(coordinator)
        let batches = M.context(coordinator)
        try live.performAndWait {
            let beers = try live.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")]))
            #expect(M.names(beers).count == 6)
            let orval = beers[2]
            let mystery = beers[1]

            // Update by batch, merge: the registered object takes the new values and version.
            let update = BatchUpdateRequest(entityName: "Beer")
            update.predicate = .equal("name", .string("Orval"))
            update.propertiesToUpdate = ["abv": .constant(.double(6.9))]
            update.resultType = .objectIDs
            let updated = try batches.execute(update)
            #expect(orval.value(forKey: "abv") as? Double == 6.2, "not merged yet")
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: [ManagedObjectContext.updatedObjectsKey: updated.objectIDs ?? []],
                                              into: [live])
            #expect(orval.value(forKey: "abv") as? Double == 6.9)
            orval.setValue("ORV-2", forKey: "code")
            try live.save()

            // Delete by batch, merge: the object leaves the context.
            let delete = BatchDeleteRequest(objectIDs: [mystery.objectID])
            delete.resultType = .objectIDs
            let deleted = try batches.execute(delete)
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: [ManagedObjectContext.deletedObjectsKey: deleted.objectIDs ?? []],
                                              into: [live])
            #expect(mystery.managedObjectContext == nil)
            #expect(mystery.isDeleted)
            #expect(!live.registeredObjects.contains(mystery))

            // Insert by batch, merge: the new objects are fetched like any other.
            let insert = BatchInsertRequest(entityName: "Beer", objects: [["name": "Zundert"]])
            insert.resultType = .objectIDs
            let inserted = try batches.execute(insert)
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: inserted.changes, into: [live])
            let names = M.names(try live.fetch(M.request("Beer", sort: [FetchSortDescriptor(key: "name")])))
            #expect(names == ["Achel Blond", "Orval", "Petite Orval", "Westmalle Dubbel", "Westmalle Tripel", "Zundert"])

            // Deleting a brewery by batch: merging its changes clears the beers' relationship,
            // and a later save of a beer does not conflict with the bumped version.
            let westmalle = try #require(beers[4].value(forKey: "brewery") as? ManagedObject)
            let breweryDelete = try batches.execute(BatchDeleteRequest(objectIDs: [westmalle.objectID]))
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: breweryDelete.changes, into: [live])
            #expect(beers[4].value(forKey: "brewery") == nil)
            beers[4].setValue(7.5, forKey: "abv")
            try live.save()
            #expect(try self.version(coordinator, beers[4].objectID) == 3)
        }
    }
}
