import Foundation
import Testing
@testable import PersistKit

/// glibc's `malloc_usable_size`, which the Glibc module does not import: the bytes a heap block
/// holds (its chunk less the chunk's header).
@_silgen_name("malloc_usable_size")
private func mallocUsableSize(_ block: UnsafeMutableRawPointer) -> Int

/// A managed object fits a 128-byte heap chunk: every fetched object is one, and a field that
/// pads it past 120 bytes makes each one 144 bytes under glibc's malloc (the flags declared
/// between two words once did).
@Suite("Object layout")
struct ObjectLayoutTests {
    final class Subclass: ManagedObject {}

    @Test func aManagedObjectFitsA128ByteChunk() throws {
        let entity = try #require(ContextTestModel.make().entitiesByName["Person"])
        let store = StoreToken.forIdentifier("object-layout-test")
        let kinds: [(String, () -> ManagedObject)] = [
            ("a new object", { ManagedObject(entity: entity, insertInto: nil) }),
            ("a subclass's object", { Subclass(entity: entity, insertInto: nil) }),
            ("a fault", { ManagedObject(fault: ObjectKey(entity: entity, store: store, primaryKey: 1), entity: entity) }),
        ]
        for (kind, make) in kinds {
            let usable = Self.usableBytes(make)
            #expect(usable <= 120, "\(kind): a block of \(usable) usable bytes")
        }
    }

    /// An object ID fits a 64-byte heap chunk (56 usable bytes): it holds its store as a token's
    /// address, not as an identifier string of its own (which made it an 80-byte chunk). A save
    /// of new objects, a batched fetch and every prefetch make one per object.
    @Test func anObjectIDFitsA64ByteChunk() throws {
        let entity = try #require(ContextTestModel.make().entitiesByName["Person"])
        let store = StoreToken.forIdentifier("object-layout-test")
        let kinds: [(String, () -> ManagedObjectID)] = [
            ("a permanent ID", { ManagedObjectID(entity: entity, store: store, primaryKey: 1) }),
            ("an ID made from a string", { ManagedObjectID(entity: entity, storeIdentifier: "object-layout-test", primaryKey: 1) }),
            ("a temporary ID", { ManagedObjectID(temporaryFor: entity) }),
        ]
        for (kind, make) in kinds {
            let usable = Self.usableBytes(make)
            #expect(usable <= 56, "\(kind): a block of \(usable) usable bytes")
        }
    }

    /// The usable bytes of the heap block of an instance `make` returns: malloc may hand out a
    /// larger free chunk than a request needs (when the rest would be too small to keep), so
    /// the smallest of 64 blocks, all alive at once, is the request's own size.
    private static func usableBytes<T: AnyObject>(_ make: () -> T) -> Int {
        let instances = (0..<64).map { _ in make() }
        return instances.map { mallocUsableSize(Unmanaged.passUnretained($0).toOpaque()) }.min() ?? 0
    }
}
