import Foundation

extension SQLitePredicateCompiler {
    /// What kind of value an expression yields, for the checks `NSPredicate` makes at run time
    /// (a string never equals a number; only strings match `BEGINSWITH`).
    enum Kind: Equatable {
        case string, number, date, data, uuid, url
        case object(EntityDescription?)
        /// Not known at compile time (`NULL`, a `TERNARY` of mixed kinds).
        case unknown

        init(_ type: AttributeType) {
            switch type {
            case .integer16, .integer32, .integer64, .double, .float, .decimal, .boolean: self = .number
            case .string: self = .string
            case .date: self = .date
            case .binaryData, .transformable: self = .data
            case .uuid: self = .uuid
            case .uri: self = .url
            case .undefined, .objectID: self = .unknown
            }
        }

        init(of value: StoreValue) {
            switch value {
            case .integer, .double, .decimal, .bool: self = .number
            case .string: self = .string
            case .date: self = .date
            case .data: self = .data
            case .uuid: self = .uuid
            case .url: self = .url
            case .object(let id): self = .object(id.entity)
            case .null, .array: self = .unknown
            }
        }

        /// Whether values of the two kinds can ever be equal or ordered.
        func isCompatible(with other: Kind) -> Bool {
            switch (self, other) {
            case (.unknown, _), (_, .unknown): return true
            case (.object(let a), .object(let b)):
                guard let a, let b else { return true }
                return a.rootEntity === b.rootEntity
            default: return self == other
            }
        }

        static func == (lhs: Kind, rhs: Kind) -> Bool {
            switch (lhs, rhs) {
            case (.string, .string), (.number, .number), (.date, .date), (.data, .data), (.uuid, .uuid), (.url, .url), (.unknown, .unknown):
                return true
            case (.object(let a), .object(let b)): return a === b
            default: return false
            }
        }
    }

    /// A table row an expression refers to: its alias, entity, and the scope it belongs to.
    struct Row {
        var alias: String
        var entity: EntityDescription
        var scope: Int
        /// Whether the row comes from a `LEFT JOIN` and may be all `NULL`s.
        var mayBeNull: Bool
    }

    /// A single SQL value (possibly `NULL`).
    struct Scalar {
        var sql: SQLFragment
        var kind: Kind
        /// The row whose primary key `sql` is, for an object.
        var row: Row?
        /// The row and relationship whose foreign key `sql` is, for a to-one.
        var foreignKey: (Row, RelationshipDescription)?
        var attributeType: AttributeType?

        init(sql: SQLFragment, kind: Kind, row: Row? = nil, foreignKey: (Row, RelationshipDescription)? = nil, attributeType: AttributeType? = nil) {
            self.sql = sql
            self.kind = kind
            self.row = row
            self.foreignKey = foreignKey
            self.attributeType = attributeType
        }
    }

    /// The elements of a to-many key path: the rows of a sub-select's scope, one value each.
    struct Collection {
        /// The index of the sub-select's scope.
        var scope: Int
        /// The value of one element, valid inside the sub-select.
        var element: Value
        /// When the collection is `nil` rather than empty (reached through a `nil` to-one).
        var isNil: SQLFragment?
    }

    /// The main query or a sub-select: its first table, its joins and its `WHERE` conditions.
    struct Scope {
        var from: String
        var joins: [String]
        var conditions: [SQLFragment]
    }

    /// A compiled expression.
    indirect enum Value {
        case constant(StoreValue)
        case scalar(Scalar)
        case collection(Collection)
        /// A collection literal with key paths in it (`{low, high}`).
        case list([Value])

        enum Shape { case scalarOrConstant, other }

        var shape: Shape {
            switch self {
            case .constant(.array), .collection, .list: return .other
            case .constant, .scalar: return .scalarOrConstant
            }
        }

        var kind: Kind {
            switch self {
            case .constant(let v): return Kind(of: v)
            case .scalar(let s): return s.kind
            case .collection, .list: return .unknown
            }
        }

        var isConstant: Bool { if case .constant = self { return true } else { return false } }
        var isNullConstant: Bool { if case .constant(.null) = self { return true } else { return false } }
    }
}
