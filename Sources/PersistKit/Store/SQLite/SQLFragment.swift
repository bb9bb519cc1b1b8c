/// SQL text with the arguments of its `?` placeholders, in order; built by interpolation so
/// that text and arguments stay together: `"\(a) IS \(b)"`.
struct SQLFragment: ExpressibleByStringInterpolation, CustomStringConvertible {
    var text: String
    var arguments: [StoreValue]

    init(sql text: String, _ arguments: [StoreValue] = []) {
        self.text = text
        self.arguments = arguments
    }

    init(stringLiteral value: String) { self.init(sql: value) }

    init(stringInterpolation: Interpolation) { self.init(sql: stringInterpolation.text, stringInterpolation.arguments) }

    var description: String { text }

    struct Interpolation: StringInterpolationProtocol {
        var text = ""
        var arguments: [StoreValue] = []
        init(literalCapacity: Int, interpolationCount: Int) {}
        mutating func appendLiteral(_ literal: String) { text += literal }
        mutating func appendInterpolation(_ fragment: SQLFragment) {
            text += fragment.text
            arguments += fragment.arguments
        }
        mutating func appendInterpolation(raw: String) { text += raw }
    }

    static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(sql: lhs.text + rhs.text, lhs.arguments + rhs.arguments)
    }

    static func join(_ parts: [SQLFragment], _ separator: String) -> SQLFragment {
        var result: SQLFragment = ""
        for (index, part) in parts.enumerated() {
            if index > 0 { result.text += separator }
            result = result + part
        }
        return result
    }
}
