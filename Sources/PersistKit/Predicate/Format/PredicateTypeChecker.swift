import Foundation

/// Checks a predicate against an entity: every key path names properties that exist,
/// constants have the types of the attributes they are compared with, string operators apply
/// to strings, and to-many key paths are compared only through `ANY`/`ALL`/`NONE`, `IN`,
/// `CONTAINS`, an aggregate (`@count`, `@sum`, …) or a `SUBQUERY`, as Core Data requires.
struct PredicateTypeChecker {
    /// What a checked expression yields.
    indirect enum Kind: Equatable {
        case string, number, boolean, date, data, uuid, url, null, unknown
        case object(String)
        /// Values of `Kind` reached through a to-many relationship.
        case many(Kind)

        var element: Kind { if case .many(let kind) = self { return kind.element }; return self }
        var isMany: Bool { if case .many = self { return true }; return false }

        var name: String {
            switch self {
            case .string: return "a string"
            case .number: return "a number"
            case .boolean: return "a Boolean"
            case .date: return "a date"
            case .data: return "binary data"
            case .uuid: return "a UUID"
            case .url: return "a URL"
            case .null: return "nil"
            case .unknown: return "a value"
            case .object(let entity): return "a \(entity) object"
            case .many(let kind): return "a collection of \(kind.name)"
            }
        }

        init(_ type: AttributeType) {
            switch type {
            case .integer16, .integer32, .integer64, .decimal, .double, .float: self = .number
            case .string: self = .string
            case .boolean: self = .boolean
            case .date: self = .date
            case .binaryData: self = .data
            case .uuid: self = .uuid
            case .uri: self = .url
            case .transformable, .undefined, .objectID: self = .unknown
            }
        }

        init(_ value: StoreValue) {
            switch value {
            case .null: self = .null
            case .integer, .double, .decimal: self = .number
            case .bool: self = .boolean
            case .string: self = .string
            case .date: self = .date
            case .data: self = .data
            case .uuid: self = .uuid
            case .url: self = .url
            case .object(let id): self = .object(id.entity.name)
            case .array: self = .unknown
            }
        }
    }

    let entity: EntityDescription
    /// Subquery variables and the entities they range over.
    var variables: [String: EntityDescription] = [:]
    /// The comparison being checked, for error messages.
    var comparison = ""

    init(entity: EntityDescription) { self.entity = entity }

    func error(_ message: String, keyPath: String? = nil) -> PredicateTypeError {
        PredicateTypeError(message: message, entityName: entity.name, keyPath: keyPath, comparison: comparison)
    }

    // MARK: - Predicates

    mutating func check(_ predicate: FetchPredicate) throws(PredicateTypeError) {
        switch predicate {
        case .alwaysTrue, .alwaysFalse: return
        case .compound(let compound):
            for sub in compound.subpredicates { try check(sub) }
        case .comparison(let c):
            let saved = comparison
            comparison = FetchPredicate.comparison(c).predicateFormat
            defer { comparison = saved }
            try check(c)
        }
    }

    private mutating func check(_ c: ComparisonPredicate) throws(PredicateTypeError) {
        let left = try kind(of: c.left)
        let right = try kind(of: c.right)
        let leftName = Self.describe(c.left), rightName = Self.describe(c.right)
        // To-many values need a modifier, an aggregate or a collection operator.
        if c.modifier == .direct {
            if left.isMany, c.operator != .contains {
                throw error("the to-many key path \(leftName) yields a collection; compare it with ANY, ALL or NONE, "
                            + "or reduce it with @count, @sum, @avg, @min or @max", keyPath: leftName)
            }
            if right.isMany, c.operator != .in {
                throw error("the to-many key path \(rightName) yields a collection; only IN can take it on the right", keyPath: rightName)
            }
        }
        let subject = left.element
        switch c.operator {
        case .beginsWith, .endsWith, .like, .matches:
            try requireString(subject, c.left, c.operator)
            try requireString(right.element, c.right, c.operator)
        case .contains where !left.isMany:
            if subject != .unknown, subject != .string {
                try requireString(subject, c.left, c.operator)
            }
            try requireCompatible(subject, c.right, rightKind: right)
        case .contains:
            try requireCompatible(subject, c.right, rightKind: right)
        case .in:
            if case .constant(let value) = c.right {
                switch value {
                case .array(let values):
                    for element in values { try requireCompatible(subject, .constant(element), rightKind: Kind(element)) }
                case .string:
                    try requireString(subject, c.left, c.operator)
                case .null:
                    break
                default:
                    throw error("IN needs a collection (or a string) on the right, not \(PredicatePrinter.describe(value))")
                }
            } else if case .aggregate(let elements) = c.right {
                for element in elements { try requireCompatible(subject, element, rightKind: try kind(of: element)) }
            }
        case .between:
            if case .constant(let value) = c.right {
                guard case .array(let bounds) = value, bounds.count == 2 else {
                    throw error("BETWEEN needs a collection of two bounds, not \(PredicatePrinter.describe(value))")
                }
                for bound in bounds { try requireCompatible(subject, .constant(bound), rightKind: Kind(bound)) }
            }
        default:
            if case .constant(.array) = c.right, !left.isMany, subject != .unknown {
                throw error("\(leftName) is \(subject.name), which cannot be compared with a collection with "
                            + "\(PredicatePrinter.spelling(of: c.operator)); use IN or BETWEEN", keyPath: Self.keyPath(c.left))
            }
            try requireCompatible(subject, c.right, rightKind: right.element)
            if case .constant = c.left { try requireCompatible(right.element, c.left, rightKind: left.element) }
        }
    }

    private func requireString(_ kind: Kind, _ expression: FetchExpression, _ op: ComparisonPredicate.Operator) throws(PredicateTypeError) {
        switch kind {
        case .string, .unknown, .null: return
        default:
            let name = Self.describe(expression)
            throw error("\(PredicatePrinter.spelling(of: op)) compares strings, but \(name) is \(kind.name)", keyPath: Self.keyPath(expression))
        }
    }

    /// Whether a value of `other` (the expression `expression`) can be compared with `kind`.
    private func requireCompatible(_ kind: Kind, _ expression: FetchExpression, rightKind other: Kind) throws(PredicateTypeError) {
        let ok: Bool
        switch (kind, other.element) {
        case (.unknown, _), (_, .unknown), (.null, _), (_, .null): ok = true
        case (.number, .number), (.number, .boolean), (.boolean, .boolean), (.boolean, .number): ok = true
        case (.string, .string), (.date, .date), (.data, .data): ok = true
        case (.uuid, .uuid), (.uuid, .string), (.url, .url), (.url, .string): ok = true
        case (.object(let a), .object(let b)): ok = a == b || related(a, b)
        case (.object, .number): ok = true   // a primary key
        default: ok = false
        }
        if !ok {
            throw error("\(Self.describe(expression)) is \(other.element.name), which cannot be compared with \(kind.name)",
                        keyPath: Self.keyPath(expression))
        }
    }

    /// Whether two entity names are in one inheritance hierarchy.
    private func related(_ a: String, _ b: String) -> Bool {
        guard let model = entity.managedObjectModel,
              let x = model.entitiesByName[a], let y = model.entitiesByName[b] else { return true }
        return x.rootEntity === y.rootEntity
    }

    // MARK: - Expressions

    mutating func kind(of expression: FetchExpression) throws(PredicateTypeError) -> Kind {
        switch expression {
        case .constant(let value):
            return Kind(value)
        case .evaluatedObject:
            return .object(entity.name)
        case .keyPath(let path):
            return try resolve(path, from: entity, fullPath: path)
        case .member(let base, let path):
            let baseKind = try kind(of: base)
            guard case .object(let name) = baseKind.element, let start = entity.managedObjectModel?.entitiesByName[name] ?? variableEntity(base) else {
                return .unknown
            }
            let kind = try resolve(path, from: start, fullPath: Self.describe(expression), many: baseKind.isMany)
            return kind
        case .variable(let name):
            if let entity = variables[name] { return .object(entity.name) }
            return .unknown
        case .function(let name, let arguments):
            var kinds: [Kind] = []
            for argument in arguments { kinds.append(try kind(of: argument)) }
            switch name {
            case "add:to:", "from:subtract:":
                if kinds.first?.element == .date { return .date }
                return .number
            case "multiply:by:", "divide:by:", "modulus:by:", "raise:toPower:", "sqrt:", "log:", "ln:", "exp:", "floor:",
                 "ceiling:", "abs:", "trunc:", "count:", "sum:", "average:", "bitwiseAnd:with:", "bitwiseOr:with:", "bitwiseXor:with:":
                return .number
            case "now": return .date
            case "lowercase:", "uppercase:": return .string
            case "length:": return .number
            case "objectFrom:withIndex:":
                if PredicateFunctions.indexSymbol(arguments[1]) == "SIZE" { return .number }
                return kinds.first?.element ?? .unknown
            case "castObject:toType:":
                if case .constant(.string(let type)) = arguments.last {
                    switch type {
                    case "NSDate": return .date
                    case "NSNumber", "NSDecimalNumber": return .number
                    case "NSString": return .string
                    default: return .unknown
                    }
                }
                return .unknown
            default:
                return .unknown
            }
        case .aggregate(let elements):
            for element in elements { _ = try kind(of: element) }
            return .unknown
        case .subquery(let collection, let variable, let predicate):
            let collectionKind = try kind(of: collection)
            guard case .object(let name) = collectionKind.element,
                  let destination = entity.managedObjectModel?.entitiesByName[name] ?? (name == entity.name ? entity : nil) else {
                if collectionKind != .unknown {
                    throw error("SUBQUERY needs a collection of objects, but \(Self.describe(collection)) is \(collectionKind.name)")
                }
                return .unknown
            }
            var inner = self
            inner.variables[variable] = destination
            try inner.check(predicate)
            return .many(.object(name))
        case .conditional(let condition, let then, let otherwise):
            try check(condition)
            let a = try kind(of: then), b = try kind(of: otherwise)
            return a == b ? a : .unknown
        case .unboundArgument:
            return .unknown
        }
    }

    private func variableEntity(_ base: FetchExpression) -> EntityDescription? {
        if case .variable(let name) = base { return variables[name] }
        if case .evaluatedObject = base { return entity }
        return nil
    }

    /// The kind of the key path `path` from `start`.
    private func resolve(_ path: String, from start: EntityDescription, fullPath: String, many: Bool = false) throws(PredicateTypeError) -> Kind {
        let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var current: EntityDescription? = start
        var kind: Kind = .object(start.name)
        var toMany = many
        var index = 0
        while index < components.count {
            let component = components[index]
            defer { index += 1 }
            if component == "self" || component == "SELF" { continue }
            if component.hasPrefix("@") {
                switch component {
                case "@count":
                    guard toMany || kind == .unknown else {
                        throw error("@count in \(fullPath) needs a to-many relationship before it", keyPath: fullPath)
                    }
                    return .number
                case "@sum", "@avg", "@min", "@max":
                    var element = kind
                    if index + 1 < components.count, let from = current {
                        // `employees.@avg.age`: the operator applies to the rest of the path.
                        element = try resolve(components[(index + 1)...].joined(separator: "."), from: from, fullPath: fullPath).element
                    }
                    return component == "@sum" || component == "@avg" ? (element == .date ? .date : .number) : element
                default:
                    continue   // @distinctUnionOfObjects and friends keep the collection.
                }
            }
            guard let entity = current else {
                throw error("key path \(fullPath): \(components[index - 1]) is \(kind.name), which has no key \(component)", keyPath: fullPath)
            }
            guard let property = entity.propertiesByName[component] else {
                throw error("entity \(entity.name) has no property \(component) (key path \(fullPath))", keyPath: fullPath)
            }
            if let attribute = property as? AttributeDescription {
                kind = Kind(attribute.attributeType)
                current = nil
            } else if let relationship = property as? RelationshipDescription {
                toMany = toMany || relationship.isToMany
                kind = .object(relationship.destinationEntityName)
                current = relationship.destinationEntity
            } else {
                kind = .unknown
                current = nil
            }
        }
        return toMany ? .many(kind) : kind
    }

    // MARK: - Descriptions

    static func describe(_ expression: FetchExpression) -> String { expression.expressionFormat }

    static func keyPath(_ expression: FetchExpression) -> String? {
        if case .keyPath(let path) = expression { return path }
        return nil
    }
}

extension FetchPredicate {
    /// Checks the predicate against `entity` before it runs: every key path must name
    /// properties of the entity (through relationships), constants must have the types of the
    /// attributes they are compared with, string operators must apply to strings, and a to-many
    /// key path must be compared with `ANY`/`ALL`/`NONE`, through `IN`/`CONTAINS`, or reduced
    /// with an aggregate (`@count`, `@sum`, …) — as Core Data rejects it otherwise.
    ///
    /// Unbound arguments and variables not bound by a subquery are not checked.
    ///
    /// - Throws: ``PredicateTypeError`` naming the key path, the entity and the comparison.
    public func typeCheck(against entity: EntityDescription) throws {
        var checker = PredicateTypeChecker(entity: entity)
        try checker.check(self)
    }
}
