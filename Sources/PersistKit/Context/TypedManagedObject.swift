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
        guard let model = context.persistentStoreCoordinator?.managedObjectModel else {
            preconditionFailure("\(Self.self).insert(into:): the context has no persistent store coordinator")
        }
        guard let entity = model.entitiesByName[entityName] else {
            preconditionFailure("\(Self.self).insert(into:): the context's model has no entity \(entityName)")
        }
        precondition(entity.managedObjectClass == Self.self,
                     "\(Self.self).insert(into:): entity \(entityName) has the class \(entity.managedObjectClass), not \(Self.self); register the generated classes on the model before using it")
        return Self(entity: entity, insertInto: context)
    }
}

extension ManagedObject {
    /// The destination of the to-one relationship `key` as a `T`, or `nil` when there is none;
    /// what generated to-one accessors return. A destination of another class means the
    /// model's entities do not have their classes registered: a programmer error that traps.
    public func relatedObject<T: ManagedObject>(forKey key: String, as type: T.Type) -> T? {
        guard let object = value(forKey: key) as? ManagedObject else { return nil }
        return Self.cast(object, to: T.self, entity: entity.name, key: key)
    }

    /// The destinations of the unordered to-many relationship `key` as `T`s; what generated
    /// to-many accessors return. Traps as ``relatedObject(forKey:as:)`` does.
    public func relatedObjects<T: ManagedObject>(forKey key: String, as type: T.Type) -> Set<T> {
        let objects = value(forKey: key) as? Set<ManagedObject> ?? []
        return Set(objects.map { Self.cast($0, to: T.self, entity: entity.name, key: key) })
    }

    /// The destinations of the ordered to-many relationship `key` as `T`s, in order; what
    /// generated ordered to-many accessors return. Traps as ``relatedObject(forKey:as:)`` does.
    public func orderedRelatedObjects<T: ManagedObject>(forKey key: String, as type: T.Type) -> [T] {
        let objects = value(forKey: key) as? [ManagedObject] ?? []
        return objects.map { Self.cast($0, to: T.self, entity: entity.name, key: key) }
    }

    private static func cast<T: ManagedObject>(_ object: ManagedObject, to type: T.Type, entity: String, key: String) -> T {
        guard let typed = object as? T else {
            preconditionFailure("ManagedObject: \(entity).\(key) holds an object of class \(Swift.type(of: object)) (entity \(object.entity.name)), not \(T.self); register the generated classes on the model (entity.managedObjectClass) before using it")
        }
        return typed
    }
}
