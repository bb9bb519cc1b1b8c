import Foundation
import Testing
@testable import PersistKit

/// `performAndWait(_:)` called off the context's queue: the block runs on the queue (a hop
/// through Dispatch's non-generic `sync`), and its result, of any size and kind, or its error
/// comes back to the caller unchanged; nothing is left behind or released twice.
@Suite("performAndWait from another thread: results and errors carried back", .serialized)
struct PerformAndWaitHopTests {
    struct Failure: Error, Equatable { var code: Int }

    /// A result larger than an existential's inline buffer, holding references.
    struct Wide: Equatable {
        var name: String
        var numbers: [Int]
        var a: Int, b: Int, c: Int, d: Int
    }

    /// A result of exactly four words holding references: the most the hop carries in its room
    /// on the stack (`HopResultRoom`); `Wide` goes through the heap.
    struct FourWords: Equatable {
        var first: String
        var second: String
    }

    /// Counts its instances alive, to see that carried results are neither leaked nor freed twice.
    final class Tracked: Sendable {
        static let alive = Locked(0)
        let value: Int
        init(_ value: Int) { self.value = value; Self.alive.withLock { $0 += 1 } }
        deinit { Self.alive.withLock { $0 -= 1 } }
    }

    static func context() -> ManagedObjectContext {
        ManagedObjectContext(concurrencyType: .privateQueue)
    }

    @Test func resultsOfEveryKindComeBack() {
        let context = Self.context()
        #expect(!context.isOnQueue)
        #expect(context.performAndWait { 42 } == 42)
        #expect(context.performAndWait { "a string longer than fifteen bytes" } == "a string longer than fifteen bytes")
        let wide = Wide(name: "wide", numbers: Array(0..<100), a: 1, b: 2, c: 3, d: 4)
        #expect(context.performAndWait { wide } == wide)
        #expect(context.performAndWait { Optional<Int>.none } == nil)
        #expect(MemoryLayout<FourWords>.size == MemoryLayout<HopResultRoom>.size)
        let four = FourWords(first: "the first string, on the heap", second: "the second string, on the heap")
        #expect(context.performAndWait { four } == four)
        // Aligned to 16 bytes, more than the room's words: carried through the heap.
        #expect(MemoryLayout<SIMD4<Float>>.alignment > MemoryLayout<HopResultRoom>.alignment)
        #expect(context.performAndWait { SIMD4<Float>(1, 2, 3, 4) } == SIMD4<Float>(1, 2, 3, 4))
        let ranOnQueue = context.performAndWait { context.isOnQueue }
        #expect(ranOnQueue)
        context.performAndWait { () -> Void in }
    }

    @Test func anErrorComesBackAndNoResultIsMade() {
        let context = Self.context()
        let before = Tracked.alive.withLock { $0 }
        #expect(throws: Failure(code: 7)) {
            let _: Tracked = try context.performAndWait { throw Failure(code: 7) }
        }
        #expect(Tracked.alive.withLock { $0 } == before)
    }

    @Test func aCarriedObjectIsOwnedOnceByTheCaller() {
        let context = Self.context()
        let before = Tracked.alive.withLock { $0 }
        do {
            let tracked = context.performAndWait { Tracked(5) }
            #expect(tracked.value == 5)
            #expect(Tracked.alive.withLock { $0 } == before + 1)
        }
        #expect(Tracked.alive.withLock { $0 } == before)
    }

    @Test func nestedCallsRunInlineAndCarryTheirOwnResults() throws {
        let outer = Self.context(), inner = Self.context()
        let result = try outer.performAndWait { () throws -> [Int] in
            // Already on `outer`'s queue: inline. `inner` is another queue: a hop from here.
            let own = outer.performAndWait { 1 }
            let other = try inner.performAndWait { () throws -> Int in
                #expect(inner.isOnQueue)
                return 2
            }
            #expect(throws: Failure(code: 3)) { try inner.performAndWait { throw Failure(code: 3) } }
            return [own, other]
        }
        #expect(result == [1, 2])
    }
}
