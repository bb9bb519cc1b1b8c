import Foundation
import Synchronization

/// An entity: a kind of object with attributes and relationships, stored in one table.
///
/// The corresponding Core Data class is `NSEntityDescription`.
public final class EntityDescription: @unchecked Sendable {
    // @unchecked Sendable: every stored property is written only before the owning model is
    // frozen (see ManagedObjectModel.freeze()); after that the description is read-only.

    /// The entity's name, unique within its model.
    public var name: String
    /// The name of the Swift class instances are made from, as written in the model.
    public var managedObjectClassName: String?
    /// The class instances are made from: ``ManagedObject`` unless a subclass is registered.
    // No dynamic exclusivity checks: read for every new object and fault, written only before
    // the model is frozen (above).
    @exclusivity(unchecked) public var managedObjectClass: ManagedObject.Type = ManagedObject.self
    /// Whether the entity may have no instances of its own, only of sub-entities.
    // No dynamic exclusivity checks, as for `managedObjectClass`: read for every new object.
    @exclusivity(unchecked) public var isAbstract: Bool = false
    /// The properties this entity declares (not those it inherits).
    public var properties: [PropertyDescription] {
        didSet { for property in properties { property.entity = self } }
    }
    /// Groups of property names whose values together must be unique among all instances.
    public var uniquenessConstraints: [[String]] = []
    /// The fetch indexes the store creates for this entity.
    public var indexes: [FetchIndexDescription] = []
    /// Free-form keys and values from the model file.
    public var userInfo: [String: String] = [:]
    /// Extra input to the entity's version hash.
    public var versionHashModifier: String?
    /// The entity's name in an earlier model version, for lightweight migration.
    public var renamingIdentifier: String?

    /// The entities that inherit from this one.
    public var subentities: [EntityDescription] = [] {
        didSet { for sub in subentities { sub.superentity = self } }
    }
    /// The entity this one inherits from, if any.
    // Unowned, not weak, as `PropertyDescription.entity` (see there): the superentity is in the
    // same model, which holds every entity.
    public internal(set) unowned var superentity: EntityDescription?
    /// The name of the superentity, used by loaders until the model is frozen.
    public var superentityName: String?

    /// The model that owns this entity; set when the entity is added to a model.
    public internal(set) weak var managedObjectModel: ManagedObjectModel?

    // Computed when the model is frozen (``computeLayout()``), then only read. Exclusivity
    // checks off, as for `_shortKeyTable` below: each read of a relationship by name and each
    // prefetch reads some of them, and a dynamic check costs about 60 instructions a read.
    @exclusivity(unchecked) var _allProperties: [PropertyDescription] = []
    @exclusivity(unchecked) var _propertiesByName: [String: PropertyDescription] = [:]
    @exclusivity(unchecked) var _attributesByName: [String: AttributeDescription] = [:]
    @exclusivity(unchecked) var _relationshipsByName: [String: RelationshipDescription] = [:]
    @exclusivity(unchecked) var _slots: [PropertyDescription] = []
    @exclusivity(unchecked) var _slotIndexByName: [String: Int] = [:]
    @exclusivity(unchecked) var _accessorNames: [String] = []
    /// Parallel to `_accessorNames`: each name's accessor (for a name declared twice, the
    /// last declaration's, at both places).
    @exclusivity(unchecked) var _accessorList: [PropertyAccessor] = []
    /// Parallel to `_accessorNames`: each property's slot and, for a plain attribute, its type.
    @exclusivity(unchecked) var _plainAccessors: [PlainAttributeAccessor] = []
    /// Parallel to `_slots`: the type of the plain attribute at each slot, as
    /// ``plainAttribute(for:)`` gives it for the attribute's name; `.undefined` at the slot of
    /// any other property. What the keyed setters check a value's type against. Exclusivity
    /// checks off, as for `_shortKeyTable`: written once at freezing, then only read, once per
    /// keyed set.
    @exclusivity(unchecked) var _slotPlainTypes: [AttributeType] = []
    /// Each name's last index in `_accessorNames`. Exclusivity checks off, as for
    /// `_shortKeyTable`: read by every `value(forKey:)` of a long name in an entity of more
    /// than 24 properties.
    @exclusivity(unchecked) var _accessorIndexByName: [String: Int] = [:]
    /// The index in `_accessorNames` of each short name, by its short key (``ShortKeyTable``);
    /// `nil` when no name is short.
    // Exclusivity checks off, as for `rulesReference` below: written once at freezing, then only read.
    @exclusivity(unchecked) var _shortKeyTable: ShortKeyTable?
    /// What creating, validating and writing this entity's objects needs (see ``EntityRules``),
    /// worked out when the model is frozen: retained here (and released at `deinit`) so that
    /// ``withRules(_:)`` and ``rulesSatisfy(_:)`` lend the rules without retaining and releasing
    /// them at each object.
    ///
    /// Written once, when the model is frozen (under the model's freeze lock, before any
    /// context uses the entity), and only read after. Exclusivity checks off: every new object
    /// reads it, and the dynamic check cost about 63 instructions an insert under callgrind.
    @exclusivity(unchecked) private var rulesReference: Unmanaged<EntityRules>?

    /// Calls `body` with the entity's rules, borrowed: those worked out when its model was
    /// frozen, or, for an entity of a model not frozen yet (whose properties may still change),
    /// worked out now.
    @inline(__always) func withRules<Result>(_ body: (EntityRules) throws -> Result) rethrows -> Result {
        if let rulesReference { return try rulesReference._withUnsafeGuaranteedRef(body) }
        return try body(EntityRules(self))
    }

    /// Whether the rules worked out when the entity's model was frozen satisfy `predicate`,
    /// read borrowed; `false` before the model is frozen.
    @inline(__always) func rulesSatisfy(_ predicate: (EntityRules) -> Bool) -> Bool {
        guard let rulesReference else { return false }
        return rulesReference._withUnsafeGuaranteedRef(predicate)
    }

    deinit {
        rulesReference?.release()
    }

    /// Creates an entity with a name and its own properties.
    public init(name: String, properties: [PropertyDescription] = [], managedObjectClass: ManagedObject.Type = ManagedObject.self) {
        self.name = name
        self.properties = properties
        self.managedObjectClass = managedObjectClass
        for property in properties { property.entity = self }
    }

    // MARK: - Lookups (valid once the model is frozen)

    /// Every property, inherited ones first, in declaration order.
    public var allProperties: [PropertyDescription] {
        _allProperties.isEmpty && !properties.isEmpty ? computeAllProperties() : _allProperties
    }

    /// Every property, inherited or own, by name.
    public var propertiesByName: [String: PropertyDescription] {
        _propertiesByName.isEmpty && !properties.isEmpty
            ? Dictionary(computeAllProperties().map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
            : _propertiesByName
    }

    /// Every attribute, inherited or own, by name.
    public var attributesByName: [String: AttributeDescription] {
        // Computed once when the model is frozen: prefetching and relationship edits look it up per object.
        _propertiesByName.isEmpty ? propertiesByName.compactMapValues { $0 as? AttributeDescription } : _attributesByName
    }

    /// Every relationship, inherited or own, by name.
    public var relationshipsByName: [String: RelationshipDescription] {
        _propertiesByName.isEmpty ? propertiesByName.compactMapValues { $0 as? RelationshipDescription } : _relationshipsByName
    }

    /// The properties that have a slot in an object's values and in a store row:
    /// every attribute and every to-one relationship, inherited ones first.
    /// A sub-entity's slots begin with its superentity's, in the same positions.
    public var slots: [PropertyDescription] { _slots }

    /// The slot of the attribute or to-one relationship named `name`, or `nil`.
    public func slotIndex(of name: String) -> Int? { _slotIndexByName[name] }

    /// The root of this entity's inheritance tree (the entity whose table holds it).
    public var rootEntity: EntityDescription {
        var entity = self
        while let parent = entity.superentity { entity = parent }
        return entity
    }

    /// This entity and every entity below it, depth first.
    public var selfAndDescendants: [EntityDescription] {
        [self] + subentities.flatMap(\.selfAndDescendants)
    }

    /// Whether this entity is `other` or inherits from it.
    @inline(__always)
    public func isKind(of other: EntityDescription) -> Bool {
        // The usual answer, an entity of itself, without touching a reference count: walking
        // the unowned superentities retains and releases each (four atomic operations a row
        // when a prefetch checks each destination row's entity).
        self === other || isSubentity(of: other)
    }

    /// Whether `other` is a superentity of this entity, at any depth.
    private func isSubentity(of other: EntityDescription) -> Bool {
        var entity = superentity
        while let current = entity {
            if current === other { return true }
            entity = current.superentity
        }
        return false
    }

    /// The uniqueness constraints of this entity and of every superentity.
    public var inheritedUniquenessConstraints: [[String]] {
        (superentity?.inheritedUniquenessConstraints ?? []) + uniquenessConstraints
    }

    func computeAllProperties() -> [PropertyDescription] {
        (superentity?.computeAllProperties() ?? []) + properties
    }

    /// Computes the derived lookups; called by ``ManagedObjectModel/freeze()``.
    func computeLayout() {
        _allProperties = computeAllProperties()
        _propertiesByName = Dictionary(_allProperties.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        _attributesByName = _propertiesByName.compactMapValues { $0 as? AttributeDescription }
        _relationshipsByName = _propertiesByName.compactMapValues { $0 as? RelationshipDescription }
        _slots = _allProperties.filter { property in
            if property is AttributeDescription { return true }
            if let relationship = property as? RelationshipDescription { return !relationship.isToMany }
            return false
        }
        _slotIndexByName = Dictionary(_slots.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        // A name's accessor is its last property's (a subentity's redeclaration), wherever
        // the name stands in the list.
        let accessorByName = Dictionary(_allProperties.map { property in
            (property.name, PropertyAccessor(property: property, slot: _slotIndexByName[property.name] ?? -1))
        }, uniquingKeysWith: { _, last in last })
        _accessorNames = _allProperties.map(\.name)
        _accessorList = _allProperties.map { accessorByName[$0.name] ?? PropertyAccessor(property: $0, slot: -1) }
        _plainAccessors = _accessorList.map { accessor in
            if case .attribute(let type) = accessor.kind { return PlainAttributeAccessor(slot: accessor.slot, type: type) }
            return PlainAttributeAccessor(slot: accessor.slot, type: nil)
        }
        _slotPlainTypes = Array(repeating: .undefined, count: _slots.count)
        for accessor in _plainAccessors where accessor.slot >= 0 {
            if let type = accessor.type { _slotPlainTypes[accessor.slot] = type }
        }
        _shortKeyTable = ShortKeyTable(keys: _accessorNames.map { Self.shortKey($0) ?? 0 })
        _accessorIndexByName = Dictionary(_accessorNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { _, last in last })
        rulesReference?.release()
        rulesReference = Unmanaged.passRetained(EntityRules(self))
        layoutSerial = Self.layoutSerials.add(1, ordering: .relaxed).newValue
    }

    /// A number no other layout of any entity had in this process, given by
    /// ``computeLayout()``: an ``AttributeKey`` that found an attribute in a layout of this
    /// number knows its slot. `1 << 40` (more than any key keeps) before the layout is made.
    @exclusivity(unchecked) private(set) var layoutSerial: UInt64 = 1 << 40
    /// The last ``layoutSerial`` given.
    private static let layoutSerials = Atomic<UInt64>(0)

    /// A name of at most 7 UTF-8 bytes as one integer (its bytes, and its length in the top
    /// byte; never 0), or `nil` for a longer name: equal names give equal keys and unequal
    /// names unequal keys.
    @inline(__always) static func shortKey(_ name: String) -> UInt64? {
        // A small string (at most 15 UTF-8 bytes, held in the String's two words) gives its
        // key from its raw words: the first holds its first 8 bytes (zero past its count), the
        // top byte of the second its form (b63 immortal, b61 small, b60 foreign: 1?10 for
        // small) and its count. The loop below costs about 50 instructions per key; this, 6.
        // This relies on the Swift standard library's String layout on 64-bit platforms (not
        // a public API): ShortKeyTests checks that it gives the looped key for strings made
        // every way, so a toolchain that changes that layout fails those tests.
        #if arch(x86_64) || arch(arm64)
        let words = unsafeBitCast(name, to: (UInt64, UInt64).self)
        let top = words.1 >> 56
        if top & 0xB0 == 0xA0 {
            let count = top & 0x0F
            guard count <= 7 else { return nil }
            return words.0 | count << 56 | 1 << 63
        }
        #endif
        return loopedShortKey(name)
    }

    /// ``shortKey(_:)`` read byte by byte: for names not in the small form, and for tests.
    static func loopedShortKey(_ name: String) -> UInt64? {
        let utf8 = name.utf8
        guard utf8.count <= 7 else { return nil }
        var key = UInt64(utf8.count) << 56 | 1 << 63
        var shift: UInt64 = 0
        for byte in utf8 {
            key |= UInt64(byte) << shift
            shift += 8
        }
        return key
    }

    /// The index of the property `name` in `_accessorNames` (and its parallel lists), or `nil`
    /// for an unknown name (valid once frozen).
    ///
    /// A short name is found in the ``ShortKeyTable``; a longer one is searched linearly in
    /// entities with few properties (comparing strings costs less than hashing one; measured:
    /// hashing was a tenth of a fetch's instructions), and hashed in wider ones.
    @inline(__always) func accessorIndex(for name: String) -> Int? {
        if let key = Self.shortKey(name) {
            // Integers compared, not strings (unequal Strings take Swift's slow comparison
            // path). Without a table the entity has no short name, so none is this one.
            return _shortKeyTable?.index(of: key)
        }
        if _accessorNames.count <= 24 {
            return _accessorNames.withUnsafeBufferPointer { names in names.firstIndex { $0 == name } }
        }
        return _accessorIndexByName[name]
    }

    /// The slot and type of the plain (not transformable) attribute `name`, or `nil` for any
    /// other property or an unknown name (valid once frozen). The result holds no references,
    /// so the hot getters read it without retaining anything.
    @inline(__always) func plainAttribute(for name: String) -> PlainAttributeAccessor? {
        guard let index = accessorIndex(for: name) else { return nil }
        return _plainAccessors.withUnsafeBufferPointer { accessors in
            let accessor = accessors[index]
            return accessor.type == nil ? nil : accessor
        }
    }

    /// The type of the plain attribute at `slot` (see `_slotPlainTypes`): `.undefined` for
    /// the slot of any other property (valid once frozen).
    @inline(__always) func plainType(atSlot slot: Int) -> AttributeType {
        _slotPlainTypes[slot]
    }

    /// How objects read and write the property `name`: one lookup (``accessorIndex(for:)``),
    /// no casts (valid once frozen).
    @inline(__always) func accessor(for name: String) -> PropertyAccessor? {
        accessorIndex(for: name).map { _accessorList[$0] }
    }
}

extension EntityDescription: CustomStringConvertible {
    /// The entity's name.
    public var description: String { "EntityDescription(\(name))" }
}
