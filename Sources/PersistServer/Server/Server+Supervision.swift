import Dispatch
import Foundation
import PersistKit

extension Server {
    /// Checks that the serving loops and the store answer: hops onto the listener queue and
    /// through every event loop, then reads one object ID from the store on the probe context.
    /// `completion` gets `nil` when all answered, else what failed; it runs on some queue, and
    /// not at all while any is stuck.
    ///
    /// The watchdog pings systemd only after a probe completes (see ``SystemdSupervisor``).
    public func probe(completion: @escaping @Sendable (String?) -> Void) {
        queue.async { [self] in probeLoops(from: 0) { [self] in probeStore(completion: completion) } }
    }

    /// Hops through the event loops from `index` on, one after the other, then calls `next`.
    private func probeLoops(from index: Int, then next: @escaping @Sendable () -> Void) {
        guard index < loops.count else { return next() }
        loops[index].execute { [self] in probeLoops(from: index + 1, then: next) }
    }

    private func probeStore(completion: @escaping @Sendable (String?) -> Void) {
        let context = probeContext
        context.perform {
            guard let entity = context.persistentStoreCoordinator?.managedObjectModel.entities.first else {
                return completion(nil) // A model without entities: nothing to read, the queue answered.
            }
            let request = FetchRequest<ManagedObjectID>(entityName: entity.name)
            request.resultType = .managedObjectIDResultType
            request.fetchLimit = 1
            do {
                _ = try context.fetch(request)
                completion(nil)
            } catch {
                completion("the store does not answer: \(Self.oneLine(error))")
            }
        }
    }

    /// Test-only (see `SystemdTestHooks`): blocks the listener queue for `seconds`, as a hung
    /// serving loop would.
    func blockServingLoop(seconds: Double) {
        queue.async { usleep(UInt32(seconds * 1_000_000)) }
    }
}
