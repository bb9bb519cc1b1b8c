import Foundation

/// A ``ManagedObject`` subclass that knows its entity: the protocol generated classes adopt
/// (`persistctl codegen`, see docs/codegen.md), and hand-written ones may.
///
/// It gives the class a typed fetch request and a typed insert, as Core Data's generated
/// `fetchRequest()` and Swift's `init(context:)` do:
///
/// ```swift
/// let request = Beer.fetchRequest()            // FetchRequest<Beer>
/// let beer = Beer.insert(into: context)        // Beer
/// ```
///
/// A sub-entity's class inherits the conformance and overrides ``entityName``, so
/// `Lager.fetchRequest()` is a `FetchRequest<Lager>`.
public protocol TypedManagedObject: ManagedObject {
    /// The name of the entity whose objects are instances of this class.
    static var entityName: String { get }
}

extension TypedManagedObject {
    /// A fetch request for objects of this class's entity (and, by default, its sub-entities).
    public static func fetchRequest() -> FetchRequest<Self> {
        FetchRequest<Self>(entityName: entityName)
    }

    /// Creates an object of this class's entity and inserts it into `context`; call it on the
    /// context's queue. The entity must have this class registered
    /// (``EntityDescription/managedObjectClass``) so that fetches return the same class; a
    /// missing entity or class is a programmer error and traps.
    public static func insert(into context: ManagedObjectContext) -> Self {
        Self(entity: context.entityForInsert(of: Self.self, named: entityName), insertInto: context)
    }
}

extension ManagedObject {
    /// The destination of the to-one relationship `key` as a `T`, or `nil` when there is none;
    /// what generated to-one accessors return. A destination of another class means the
    /// model's entities do not have their classes registered: a programmer error that traps.
    ///
    /// Reads the relationship's slot directly, as ``value(forKey:)`` does, without the box in
    /// `Any` and the runtime casts out of it; an object of class `T` itself is checked by
    /// comparing classes (see ``typed(_:as:key:)``).
    public func relatedObject<T: ManagedObject>(forKey key: String, as type: T.Type) -> T? {
        guard let accessor = entity.accessor(for: key), case .toOne = accessor.kind else {
            // Not a to-one relationship: value(forKey:) traps for an unknown key, as before.
            guard let object = value(forKey: key) as? ManagedObject else { return nil }
            return typed(object, as: T.self, key: key)
        }
        willAccessValue()
        return destination(values[accessor.slot]).map { typed($0, as: T.self, key: key) }
    }

    /// The destinations of the unordered to-many relationship `key` as `T`s; what generated
    /// to-many accessors return. Traps as ``relatedObject(forKey:as:)`` does.
    ///
    /// Inlinable, so that the set is built in code specialized for `T` (generic code of the
    /// standard library's `Set` looks `Set<T>`'s metadata up in the runtime's cache at each
    /// step), from the relationship's members directly: not a set of `ManagedObject`s boxed in
    /// `Any`, cast out and mapped into a second set.
    @inlinable
    public func relatedObjects<T: ManagedObject>(forKey key: String, as type: T.Type) -> Set<T> {
        guard let members = relationshipMembers(forKey: key, ordered: false) else {
            let objects = value(forKey: key) as? Set<ManagedObject> ?? []
            return Set(objects.map { typed($0, as: T.self, key: key) })
        }
        var objects = Set<T>(minimumCapacity: members.count)
        // `update(with:)`, not `insert(_:)`, whose returned member costs a retain and a
        // release of each object (see `Set.add(_:)`).
        for member in members { _ = objects.update(with: typed(member, as: T.self, key: key)) }
        return objects
    }

    /// The destinations of the ordered to-many relationship `key` as `T`s, in order; what
    /// generated ordered to-many accessors return. Traps as ``relatedObject(forKey:as:)`` does.
    @inlinable
    public func orderedRelatedObjects<T: ManagedObject>(forKey key: String, as type: T.Type) -> [T] {
        guard let members = relationshipMembers(forKey: key, ordered: true) else {
            let objects = value(forKey: key) as? [ManagedObject] ?? []
            return objects.map { typed($0, as: T.self, key: key) }
        }
        return members.map { typed($0, as: T.self, key: key) }
    }

    /// The member objects of the to-many relationship `key`, in order for an ordered one, after
    /// firing the fault; `nil` when `key` names no to-many relationship with that ordering
    /// (the caller then goes through ``value(forKey:)``, which traps for an unknown key).
    @usableFromInline
    func relationshipMembers(forKey key: String, ordered: Bool) -> [ManagedObject]? {
        guard let accessor = entity.accessor(for: key), case .toMany(let relationship) = accessor.kind,
              relationship.isOrdered == ordered else { return nil }
        willAccessValue()
        return orderedMembers(relationship)
    }

    /// `object`, a destination of this object's relationship `key`, as a `T`. An object of class
    /// `T` itself (the common case) is checked by comparing classes, not by the runtime's cast,
    /// which costs hundreds of instructions; an object of a subclass is cast.
    @inlinable
    func typed<T: ManagedObject>(_ object: ManagedObject, as type: T.Type, key: String) -> T {
        if Swift.type(of: object) == T.self { return unsafeDowncast(object, to: T.self) }
        return castDestination(object, to: T.self, key: key)
    }

    /// The slow half of ``typed(_:as:key:)``: the runtime's cast, and the trap when it fails.
    @usableFromInline @inline(never)
    func castDestination<T: ManagedObject>(_ object: ManagedObject, to type: T.Type, key: String) -> T {
        guard let typed = object as? T else {
            preconditionFailure("ManagedObject: \(entity.name).\(key) holds an object of class \(Swift.type(of: object)) (entity \(object.entity.name)), not \(T.self); register the generated classes on the model (entity.managedObjectClass) before using it")
        }
        return typed
    }
}
