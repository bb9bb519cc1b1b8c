import Foundation

/// The store metadata kept in `Z_METADATA`: `Z_UUID` and the binary property list `Z_PLIST`.
///
/// Core Data's keys (verified in the corpus stores): `NSStoreType` ("SQLite"),
/// `NSStoreModelVersionHashes` (entity name → 32-byte hash), `NSStoreModelVersionHashesVersion`
/// (3), `NSStoreModelVersionIdentifiers`, `NSPersistenceFrameworkVersion` and
/// `_NSAutoVacuumLevel` ("2"). The corpus stores keep the UUID only in `Z_UUID`; persistd also
/// writes `NSStoreUUID` into the plist, which Core Data ignores on read.
struct SQLiteMetadata: Sendable {
    /// `NSPersistenceFrameworkVersion` written by persistd (Core Data writes its own build
    /// number, for example 479 or 241 in the corpus; readers only display it).
    static let frameworkVersion = 1

    /// The store's UUID (`Z_UUID`, `NSStoreUUID`).
    var uuid: String
    /// The plist's contents, as Sendable values.
    var plist: [String: any Sendable]

    /// The metadata of a new store for `entities`.
    init(uuid: String, versionHashes: [String: Data], versionIdentifiers: [String]) {
        self.uuid = uuid
        self.plist = [
            "NSStoreType": StoreType.sqlite.rawValue,
            "NSStoreUUID": uuid,
            "NSStoreModelVersionHashes": versionHashes as [String: any Sendable],
            "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionIdentifiers": versionIdentifiers as [any Sendable],
            "NSPersistenceFrameworkVersion": Self.frameworkVersion,
            "_NSAutoVacuumLevel": "2",
        ]
    }

    /// Metadata read from a store: `Z_UUID` and the decoded `Z_PLIST`.
    init(uuid: String, plistData: Data) throws {
        self.uuid = uuid
        // Core Data writes the binary form; anything else, or a binary list this reader turns
        // down, goes to Foundation's reader (which then reports what is wrong).
        let value: any Sendable
        if let binary = try? BinaryPropertyListReader.value(of: plistData) {
            value = binary
        } else {
            value = Self.sendable(try PropertyListSerialization.propertyList(from: plistData, options: [], format: nil))
        }
        guard let dictionary = value as? [String: any Sendable] else {
            throw PersistenceError(.persistentStoreOpen, "Z_METADATA.Z_PLIST is not a dictionary")
        }
        self.plist = dictionary
    }

    /// The metadata as `metadata()` returns it: the plist plus `NSStoreUUID` and `NSStoreType`.
    var dictionary: [String: any Sendable] {
        var result = plist
        result["NSStoreUUID"] = uuid
        if result["NSStoreType"] == nil { result["NSStoreType"] = StoreType.sqlite.rawValue }
        return result
    }

    /// The plist as binary property list bytes: written by ``BinaryPropertyListWriter``, or
    /// by Foundation when it holds a value that writer does not take.
    func plistData() throws -> Data {
        if let data = try? BinaryPropertyListWriter.data(plist) { return data }
        return try PropertyListSerialization.data(fromPropertyList: Self.foundationValue(plist), format: .binary, options: 0)
    }

    /// A property list value as Sendable Swift values (strings, numbers, data, dates, arrays, dictionaries).
    static func sendable(_ value: Any) -> any Sendable {
        switch value {
        case let dictionary as [String: Any]: return dictionary.mapValues { sendable($0) } as [String: any Sendable]
        case let array as [Any]: return array.map { sendable($0) } as [any Sendable]
        case let string as String: return string
        case let data as Data: return data
        case let date as Date: return date
        case let bool as Bool where type(of: value) == Bool.self: return bool
        case let int as Int: return int
        case let double as Double: return double
        case let number as NSNumber: return number.intValue
        default: return String(describing: value)
        }
    }

    /// Sendable Swift values back as plist-ready Foundation values.
    ///
    /// Arrays are handed over as `NSArray`, bridged explicitly: see `bridgedArray(_:)`.
    static func foundationValue(_ value: any Sendable) -> Any {
        switch value {
        case let dictionary as [String: any Sendable]: return dictionary.mapValues { foundationValue($0) } as [String: Any]
        case let dictionary as [String: Data]: return dictionary as [String: Any]
        case let array as [any Sendable]: return bridgedArray(array.map { foundationValue($0) })
        default: return value
        }
    }

    /// `array` as an `NSArray`, by a direct call of Foundation's bridging.
    ///
    /// The call is needed for binaries linked with `--static-swift-stdlib`: the linker takes a
    /// member of `libFoundation.a` only when a symbol of it is referenced, and Foundation's
    /// `Array.swift.o` holds both `Array`'s `_ObjectiveCBridgeable` conformance and this method.
    /// Without a direct reference the conformance is absent from the executable, the runtime
    /// cannot bridge any Swift array (`[Any]` to `NSArray` and back, also in
    /// `PropertyListSerialization`'s output), and property list writing fails with "property
    /// lists cannot contain objects of type 'Not A Type'". This reference makes the conformance
    /// present for the whole process (model loading parses property lists too).
    /// `StaticLinkTests` checks it against the statically linked `persistd`.
    static func bridgedArray(_ array: [Any]) -> NSArray {
        array._bridgeToObjectiveC()
    }
}
