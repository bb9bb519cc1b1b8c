import Synchronization

/// The name of a plain attribute that remembers where it was last found: for accessors that
/// read the same attribute of many objects, as the classes `persistctl codegen` generates do
/// (a PersistKit addition; Core Data's generated accessors read by name).
///
/// ``ManagedObject/int64(_:)`` and the other typed getters taking a key find the attribute's
/// slot by comparing one word with the object's entity, and look the name up only for an
/// entity other than the last one (`int64(forKey:)` looks the name up at every read). The key
/// is shared by every thread reading it; what it keeps is one word, written whole.
///
/// A key is meant to be made once and kept for the life of the program, in a `static let` as
/// generated classes keep theirs: what it remembers is never freed, so that reading a key
/// copies no reference (a retain and a release of a shared object cost a read about as much
/// as the look-up it saves).
public struct AttributeKey: Sendable {
    /// The attribute's name, and the entity and slot it was last found at.
    private final class Storage: Sendable {
        let name: String
        /// The entity the attribute was last found in (its ``EntityDescription/layoutSerial``)
        /// in the upper 40 bits, and the attribute's slot plus one in the lower 24; 0 before
        /// the first look-up.
        let found = Atomic<UInt64>(0)

        init(_ name: String) {
            self.name = name
        }
    }

    /// Never released (see the type's comment).
    private let storage: Unmanaged<Storage>

    /// The attribute's name.
    public var name: String { storage._withUnsafeGuaranteedRef { $0.name } }

    /// A key for the attribute `name`.
    public init(_ name: String) {
        storage = .passRetained(Storage(name))
    }

    /// The slot of the attribute in objects of `entity`, or `nil` when it is not a plain
    /// attribute of it.
    @inline(__always) func slot(in entity: EntityDescription) -> Int? {
        let word = storage._withUnsafeGuaranteedRef { $0.found.load(ordering: .relaxed) }
        // A layout's serial is never 0, so an empty word matches no entity.
        if word >> 24 == entity.layoutSerial { return Int(truncatingIfNeeded: word & 0xFF_FFFF) &- 1 }
        return lookUp(in: entity)
    }

    /// ``slot(in:)`` by name, kept for the next read when the serial and slot fit the word.
    private func lookUp(in entity: EntityDescription) -> Int? {
        storage._withUnsafeGuaranteedRef { storage in
            guard let plain = entity.plainAttribute(for: storage.name) else { return nil }
            let serial = entity.layoutSerial
            if serial < 1 << 40, plain.slot < 0xFF_FFFF {
                storage.found.store(serial << 24 | UInt64(plain.slot + 1), ordering: .relaxed)
            }
            return plain.slot
        }
    }
}
