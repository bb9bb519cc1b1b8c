import Dispatch
import Foundation
import Testing
@testable import PersistKit

/// One model frozen by several threads at once, as when coordinators for one model are made on
/// several threads (`StoreCreationRaceTests` once crashed in CI with an array "deallocated with
/// non-zero retain count": two threads froze the shared model together). The first freeze
/// resolves and lays out every entity; the others wait for it and find the model frozen.
@Suite("Concurrency of freezing one model", .timeLimit(.minutes(1)))
struct ModelFreezeConcurrencyTests {
    typealias M = ContextTestModel

    /// The context tests' model and 300 entities of 20 attributes each, so that a freeze takes
    /// long enough for the threads' freezes to overlap.
    static func largeModel() -> ManagedObjectModel {
        let model = M.make()
        model.entities += (0..<300).map { index in
            EntityDescription(name: "Filler\(index)", properties: (0..<20).map {
                AttributeDescription(name: "a\($0)", type: .integer64)
            })
        }
        return model
    }

    @Test("8 threads freeze one new model at once, 20 rounds: one layout, every lookup complete")
    func simultaneousFreeze() throws {
        for _ in 0..<20 {
            let model = Self.largeModel()
            let failures = Locked<[String]>([])
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<8 {
                DispatchQueue.global().async(group: group) {
                    start.wait()
                    do {
                        try model.freeze()
                        // Frozen as seen from this thread: the lookups the freeze made are there.
                        if !model.isFrozen || model.entitiesByName.count != model.entities.count {
                            failures.withLock { $0.append("not frozen whole after freeze() returned") }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
            for _ in 0..<8 { start.signal() }
            group.wait()
            #expect(failures.withLock { $0 } == [])
            let beer = try #require(model.entitiesByName["Beer"])
            #expect(beer.propertiesByName.count == beer.properties.count)
            #expect(model.entitiesByName["Brewery"]?.relationshipsByName["beers"]?.destinationEntity === beer)
            #expect(model.entitiesByName["Filler299"]?.attributesByName.count == 20)
        }
    }
}
