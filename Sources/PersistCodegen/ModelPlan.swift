import PersistKit

/// The Swift names chosen for a model: one class per entity, one member per property.
///
/// The rules (docs/codegen.md, "Names"):
/// - Class: the entity's `managedObjectClassName` (Xcode's `representedClassName`) after its
///   last `.` (so `MyApp.Beer` and `.Beer` give `Beer`); the entity name when that is empty or
///   `NSManagedObject`/`ManagedObject`. Characters that are not letters, digits or `_` become
///   `_`. A name Swift or the generated code needs (`Type`, `Foundation`, a keyword, the
///   registry's name) gets `Entity` appended. Entities that would share a class fall back to
///   their entity names, and then `_` is appended until every name is unique.
/// - Property: the property's name made an identifier; keywords are declared in backticks;
///   names that would shadow `ManagedObject` members, the generated `Attributes` and
///   `Relationships`, or mean something else after a dot (`self`, `Type`, `init`) get a
///   trailing `_`; then `_` is appended until unique within the class and its superclasses.
struct ModelPlan {
    /// The Swift class name of each entity, by entity name.
    var classNames: [String: String] = [:]
    /// The Swift member name of each property, by entity name and property name.
    var propertyNames: [String: [String: String]] = [:]
    /// The name of the registry enum (`BeersClasses`).
    var registryName: String
    /// Every class name, for ``qualified(_:)``.
    private var classNameSet: Set<String> = []

    init(model: ManagedObjectModel, registryName: String) {
        self.registryName = registryName
        let entities = model.entities.sorted { $0.name < $1.name }
        var candidates: [String: String] = [:]
        for entity in entities {
            candidates[entity.name] = Self.className(for: entity, registryName: registryName)
        }
        // Entities competing for one class name fall back to their own names.
        var counts: [String: Int] = [:]
        for name in candidates.values { counts[name, default: 0] += 1 }
        var taken: Set<String> = []
        for entity in entities {
            var name = candidates[entity.name] ?? entity.name
            if counts[name, default: 0] > 1 {
                name = Self.checkedTypeName(SwiftNames.identifier(entity.name), registryName: registryName)
            }
            while taken.contains(name) { name += "_" }
            taken.insert(name)
            classNames[entity.name] = name
        }
        classNameSet = taken
        for entity in entities {
            propertyNames[entity.name] = Self.memberNames(for: entity)
        }
    }

    /// The class name `entity` asks for, before uniqueness is resolved.
    static func className(for entity: EntityDescription, registryName: String) -> String {
        var name = entity.managedObjectClassName ?? ""
        if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
        if name.isEmpty || name == "NSManagedObject" || name == "ManagedObject" { name = entity.name }
        return checkedTypeName(SwiftNames.identifier(name), registryName: registryName)
    }

    /// `name` with `Entity` appended when Swift or the generated code needs it for something else.
    static func checkedTypeName(_ name: String, registryName: String) -> String {
        if SwiftNames.keywords.contains(name) || SwiftNames.reservedTypeNames.contains(name) || name == registryName {
            return name + "Entity"
        }
        return name
    }

    /// Member names for every property of `entity`, inherited ones included (an inherited
    /// property keeps the name its superclass gave it).
    static func memberNames(for entity: EntityDescription) -> [String: String] {
        var names = entity.superentity.map(memberNames(for:)) ?? [:]
        var taken = Set(names.values)
        for property in entity.properties {
            var name = SwiftNames.identifier(property.name)
            if SwiftNames.memberHostile.contains(name) || SwiftNames.managedObjectMembers.contains(name)
                || SwiftNames.generatedMembers.contains(name) {
                name += "_"
            }
            while taken.contains(name) { name += "_" }
            taken.insert(name)
            names[property.name] = name
        }
        return names
    }

    /// The class name of `entity`.
    func className(_ entity: EntityDescription) -> String {
        classNames[entity.name] ?? entity.name
    }

    /// The member name of `property` in the class of `entity`.
    func memberName(_ property: PropertyDescription, in entity: EntityDescription) -> String {
        propertyNames[entity.name]?[property.name] ?? property.name
    }

    /// `name` qualified with its module when a generated class of this model shadows it
    /// (an entity class `Date` makes `Foundation.Date` necessary).
    func qualified(_ name: String) -> String {
        guard classNameSet.contains(name) else { return name }
        switch name {
        case "Date", "Data", "UUID", "URL", "Decimal": return "Foundation." + name
        case "ManagedObject", "ManagedObjectContext", "ManagedObjectModel", "ManagedObjectID",
             "FetchRequest", "TypedManagedObject", "EntityDescription", "AttributeKey":
            return "PersistKit." + name
        default: return "Swift." + name
        }
    }
}
