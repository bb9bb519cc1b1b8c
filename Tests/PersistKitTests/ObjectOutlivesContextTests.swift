import Foundation
import Testing
@testable import PersistKit

/// Objects held after their context is gone: the context's reference is cleared (it is not
/// retained, see `ManagedObject.managedObjectContext`), nothing reads a freed context.
@Suite("Objects that outlive their context", .timeLimit(.minutes(1)))
struct ObjectOutlivesContextTests {
    typealias M = ContextTestModel

    /// Fetches `count` saved beers (of `count + 1`) in a context that is then let go of, and
    /// returns them with one of them read (not a fault), and a fault made from the last beer's
    /// ID alone (not fetched: no row at hand).
    private func objectsOfAGoneContext(count: Int) throws -> (objects: [ManagedObject], loaded: ManagedObject, fault: ManagedObject) {
        let coordinator = try M.coordinator(type: .sqlite, at: try M.temporaryDirectory().appendingPathComponent("gone.sqlite"))
        let saver = M.context(coordinator)
        let lastID = try saver.performAndWait {
            var last: ManagedObject?
            for index in 0..<count { _ = M.insert("Beer", into: saver, ["name": "b\(index)", "ibu": Int16(index % 100)]) }
            last = M.insert("Beer", into: saver, ["name": "zz"])
            try saver.save()
            return last!.objectID
        }
        var context: ManagedObjectContext? = M.context(coordinator)
        weak let gone = context
        let (objects, loaded, fault) = try context!.performAndWait {
            // The last beer ("zz") is left out.
            let request = M.request("Beer", sort: [FetchSortDescriptor(key: "name")])
            request.fetchLimit = count
            let objects = try context!.fetch(request)
            #expect(objects.count == count)
            let loaded = objects[0]
            #expect(loaded.value(forKey: "name") as? String == "b0")
            let fault = context!.object(with: lastID)
            #expect(fault.isFault)
            return (objects, loaded, fault)
        }
        #expect(objects.allSatisfy { $0.managedObjectContext === context })
        context = nil
        #expect(gone == nil, "the context is let go of")
        return (objects, loaded, fault)
    }

    @Test("their context is nil; values read or fetched stay; a fault with no row at hand reads as empty", arguments: [3, 5_000])
    func objectsOutliveTheirContext(count: Int) throws {
        let (objects, loaded, fault) = try objectsOfAGoneContext(count: count)
        #expect(objects.allSatisfy { $0.managedObjectContext == nil })
        #expect(loaded.managedObjectContext == nil && fault.managedObjectContext == nil)
        #expect(loaded.value(forKey: "name") as? String == "b0")
        // Fetched faults fill themselves from the rows fetched with them.
        let names = Set(objects.compactMap { $0.value(forKey: "name") as? String })
        #expect(names.count == count)
        // Nothing left to fill it from: a fault of a gone context reads as empty, as after a reset.
        #expect(fault.value(forKey: "name") == nil)
    }
}
