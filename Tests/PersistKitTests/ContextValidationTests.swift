import Foundation
import Testing
@testable import PersistKit

@Suite("Context validation at save")
struct ContextValidationTests {
    typealias M = ContextTestModel

    @Test func everyFailureIsListedAndNothingIsWritten() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let beer = M.insert("Beer", into: context, ["abv": 90.0, "code": "abc"])
        let tag = M.insert("Tag", into: context, ["name": "far-too-long-a-name"])
        let error = #expect(throws: PersistenceError.self) { try context.save() }
        #expect(error?.code == .validationMultipleErrors)
        let details = (error?.detailedErrors ?? []).map { "\($0.objectID?.entity.name ?? "?").\($0.key ?? "?"):\($0.code.rawValue)" }.sorted()
        #expect(details == ["Beer.abv:1610", "Beer.code:1680", "Beer.name:1570", "Tag.name:1660"])
        #expect(try M.context(coordinator).count(for: M.request("Beer")) == 0)
        #expect(context.hasChanges, "a failed save keeps the changes")
        beer.setValue("Fixed", forKey: "name")
        beer.setValue(8.0, forKey: "abv")
        beer.setValue("ABC-12", forKey: "code")
        tag.setValue("short", forKey: "name")
        try context.save()
        #expect(try M.context(coordinator).count(for: M.request("Beer")) == 1)
    }

    @Test func singleFailureIsThrownDirectly() throws {
        let context = M.context(try M.coordinator())
        _ = M.insert("Brewery", into: context)
        let error = #expect(throws: PersistenceError.self) { try context.save() }
        #expect(error?.code == .validationMissingMandatoryProperty)
        #expect(error?.message == "Brewery.name is required")
    }

    @Test func transientValuesAreNotStored() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        let beer = M.insert("Beer", into: context, ["name": "T", "note": "only here"])
        try context.save()
        #expect(beer.value(forKey: "note") as? String == "only here")
        let other = M.context(coordinator)
        #expect(try other.fetch(M.request("Beer"))[0].value(forKey: "note") == nil)
    }

    @Test func uniquenessConstraintAgainstStoreAndPending() throws {
        let coordinator = try M.coordinator()
        let context = M.context(coordinator)
        _ = M.insert("Tag", into: context, ["name": "hoppy"])
        try context.save()
        _ = M.insert("Tag", into: context, ["name": "hoppy"])
        let error = #expect(throws: PersistenceError.self) { try context.save() }
        #expect(error?.code == .managedObjectConstraintValidation)
        context.rollback()
        _ = M.insert("Tag", into: context, ["name": "fresh"])
        _ = M.insert("Tag", into: context, ["name": "fresh"])
        #expect(throws: PersistenceError.self) { try context.save() }
    }
}
