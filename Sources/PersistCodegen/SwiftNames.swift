/// Swift spelling rules the generator follows: keywords, identifiers, string literals.
enum SwiftNames {
    /// Words that must be written in backticks to be declared as a property or enum constant.
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import",
        "init", "inout", "internal", "let", "open", "operator", "private", "precedencegroup",
        "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var",
        "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough",
        "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while",
        "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true",
        "try", "_",
    ]

    /// Names that compile as declarations but mean something else after a dot (`x.self`,
    /// `T.Type`, `x.init`): a property with one of these names is renamed with a trailing `_`.
    static let memberHostile: Set<String> = ["self", "Self", "Type", "Protocol", "init", "deinit", "super"]

    /// Public members of `ManagedObject` (and `TypedManagedObject`) a property must not shadow.
    /// The model loader already refuses most of them (`PropertyDescription.reservedNames`);
    /// the rest are listed so that models built in code cannot produce broken classes.
    static let managedObjectMembers: Set<String> = [
        "entity", "objectID", "managedObjectContext", "isFault", "isInserted", "isDeleted",
        "isUpdated", "hasChanges", "hasPersistentChangedValues", "description", "hash",
        "hashValue", "debugDescription",
    ]

    /// Names of the members every generated class declares itself.
    static let generatedMembers: Set<String> = ["Attributes", "Relationships", "AttributeKeys"]

    /// Type names a generated class may not take, because generated code or Swift needs them:
    /// the modules generated code imports or qualifies with, `Type`/`Protocol`, and the
    /// private `AttributeKeys` every class with typed attributes declares (inside such a class
    /// it would hide a class of that name).
    static let reservedTypeNames: Set<String> = [
        "Swift", "Foundation", "PersistKit", "Dispatch", "Glibc", "Type", "Protocol", "AttributeKeys",
    ]

    /// `text` made into a valid Swift identifier: characters other than letters, digits and
    /// `_` become `_`, and a leading digit gets a `_` in front. Empty text gives `_`.
    static func identifier(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            let isLetter = (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_"
            let isDigit = scalar >= "0" && scalar <= "9"
            result.unicodeScalars.append(isLetter || isDigit ? scalar : "_")
        }
        if result.isEmpty { return "_" }
        if let first = result.unicodeScalars.first, first >= "0" && first <= "9" { result = "_" + result }
        return result
    }

    /// `name` as written in a declaration: in backticks when it is a keyword.
    static func declared(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// `text` as a Swift string literal, quotes included.
    static func literal(_ text: String) -> String {
        var result = "\""
        for character in text.unicodeScalars {
            switch character {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if character.value < 0x20 {
                    result += "\\u{\(String(character.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(character)
                }
            }
        }
        return result + "\""
    }

    /// `name` with its first letter upper-cased (`beers` → `Beers`), for `addToBeers`.
    static func capitalized(_ name: String) -> String {
        guard let first = name.first else { return name }
        return first.uppercased() + name.dropFirst()
    }
}
