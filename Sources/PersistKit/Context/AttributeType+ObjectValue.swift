import Foundation

extension AttributeType {
    /// The store value for a Swift value set on an attribute of this type, or `nil` if the
    /// value's type does not fit. Integers of any width and `NSNumber` are accepted for integer
    /// types (checked against the type's range), any floating-point or integer value for
    /// floating-point types.
    func storeValue(fromObject value: Any) -> StoreValue? {
        switch self {
        case .integer16, .integer32, .integer64:
            guard let integer = Self.integer(from: value), integerRange?.contains(integer) ?? false else { return nil }
            return .integer(integer)
        case .double, .float:
            switch value {
            case let v as Double: return .double(v)
            case let v as Float: return .double(Double(v))
            case let v as Decimal: return .double(NSDecimalNumber(decimal: v).doubleValue)
            default: return Self.integer(from: value).map { .double(Double($0)) }
            }
        case .decimal:
            switch value {
            case let v as Decimal: return .decimal(v)
            case let v as Double: return .decimal(Decimal(v))
            default: return Self.integer(from: value).map { .decimal(Decimal($0)) }
            }
        case .string:
            return (value as? String).map(StoreValue.string)
        case .boolean:
            return (value as? Bool).map(StoreValue.bool)
        case .date:
            return (value as? Date).map(StoreValue.date)
        case .binaryData:
            return (value as? Data).map(StoreValue.data)
        case .uuid:
            return (value as? UUID).map(StoreValue.uuid)
        case .uri:
            return (value as? URL).map(StoreValue.url)
        case .objectID:
            return (value as? ManagedObjectID).map(StoreValue.object)
        case .transformable, .undefined:
            return nil
        }
    }

    /// The Swift value for a stored value of this type: `Int16`, `Int32`, `Int64`, `Double`,
    /// `Float`, `Decimal`, `String`, `Bool`, `Date`, `Data`, `UUID`, `URL`, or `nil`.
    func objectValue(from value: StoreValue) -> Any? {
        switch (self, value) {
        case (_, .null): return nil
        case (.integer16, .integer(let v)): return Int16(truncatingIfNeeded: v)
        case (.integer32, .integer(let v)): return Int32(truncatingIfNeeded: v)
        case (.integer64, .integer(let v)): return v
        case (.float, .double(let v)): return Float(v)
        case (.boolean, .integer(let v)): return v != 0
        default: return value.anyValue
        }
    }

    private static func integer(from value: Any) -> Int64? {
        // The two common types first, told apart by metatype: a cast that fails (`as Int` on an
        // Int64) costs hundreds of instructions, a metatype comparison one.
        let dynamicType = type(of: value)
        if dynamicType == Int64.self, let v = value as? Int64 { return v }
        if dynamicType == Int.self, let v = value as? Int { return Int64(v) }
        switch value {
        case let v as Int: return Int64(v)
        case let v as Int64: return v
        case let v as Int32: return Int64(v)
        case let v as Int16: return Int64(v)
        case let v as Int8: return Int64(v)
        case let v as UInt8: return Int64(v)
        case let v as UInt16: return Int64(v)
        case let v as UInt32: return Int64(v)
        case let v as UInt: return Int64(exactly: v)
        case let v as UInt64: return Int64(exactly: v)
        case let v as NSNumber where !(value is Bool): return v.int64Value
        default: return nil
        }
    }
}
