import Foundation
import PersistKit

/// JSON to ``StoreValue`` where no attribute says the type: predicate arguments, and the
/// Swift values ``WireValueCoder/decode(_:for:of:in:coordinator:)`` returns.
public enum WireStoreValue {
    /// A predicate argument: strings, numbers, booleans, `null` and arrays as themselves; a
    /// string in object ID form as that object; a one-member object for other types:
    /// `{"date":"2026-01-31T12:00:00.000Z"}`, `{"decimal":"3.50"}`, `{"uuid":"…"}`,
    /// `{"data":"<base64>"}`, `{"uri":"https://…"}`, `{"object":"x-coredata://…"}`.
    public static func argument(_ json: JSON, coordinator: PersistentStoreCoordinator) throws(WireError) -> StoreValue {
        switch json {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .integer(let value): return .integer(value)
        case .double(let value): return .double(value)
        case .string(let text):
            if text.hasPrefix("x-coredata://") {
                return .object(try WireObjectID.parse(json, coordinator: coordinator, what: "argument"))
            }
            return .string(text)
        case .array(let elements):
            var values: [StoreValue] = []
            for element in elements { values.append(try argument(element, coordinator: coordinator)) }
            return .array(values)
        case .object(let members):
            guard members.count == 1, let member = members.first, case .string(let text) = member.value else {
                throw WireError(.badRequest, "a typed argument is one member such as {\"date\":\"2026-01-31T12:00:00.000Z\"}, not \(json.encoded)")
            }
            let invalid = WireError(.typeMismatch, "\"\(text)\" is not a valid \(member.key) argument")
            switch member.key {
            case "date":
                guard let date = WireDate.parse(text) else { throw invalid }
                return .date(date)
            case "decimal":
                guard WireValueCoder.isDecimalLiteral(text), let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw invalid }
                return .decimal(decimal)
            case "uuid":
                guard let uuid = UUID(uuidString: text) else { throw invalid }
                return .uuid(uuid)
            case "data":
                guard let data = Data(base64Encoded: text) else { throw invalid }
                return .data(data)
            case "uri":
                guard let url = URL(string: text) else { throw invalid }
                return .url(url)
            case "object":
                return .object(try WireObjectID.parse(member.value, coordinator: coordinator, what: "argument"))
            default:
                throw WireError(.badRequest, "unknown argument type \"\(member.key)\"; use date, decimal, uuid, data, uri or object")
            }
        }
    }

    /// The store value of a Swift value that ``WireValueCoder`` decoded for an attribute.
    static func storeValue(_ value: Any?) -> StoreValue {
        switch value {
        case nil: return .null
        case let v as Int64: return .integer(v)
        case let v as Double: return .double(v)
        case let v as Decimal: return .decimal(v)
        case let v as String: return .string(v)
        case let v as Bool: return .bool(v)
        case let v as Date: return .date(v)
        case let v as Data: return .data(v)
        case let v as UUID: return .uuid(v)
        case let v as URL: return .url(v)
        case let v as ManagedObject: return .object(v.objectID)
        default: return .null
        }
    }
}
