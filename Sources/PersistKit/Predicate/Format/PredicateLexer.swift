/// Splits a predicate format string into ``PredicateToken``s, following Apple's "Predicate
/// Format String Syntax": quoted strings with `\` escapes, decimal, hexadecimal (`0x`), octal
/// (`0o`), binary (`0b`) and floating-point numbers, `$VARIABLES`, `#escaped` keys, `@`
/// collection operators, `printf`-style specifiers (`%@`, `%K`, `%d`, `%1$@`) and operators.
///
/// Inside a quoted string, `%%` stands for one `%`; any other `%` is literal (a quoted `%@`
/// is not a specifier, as in Foundation).
struct PredicateLexer {
    private let characters: [Character]
    private let format: String
    private var index = 0

    /// The conversions accepted after `%` (with their length modifiers).
    static let conversions: Set<String> = [
        "@", "K", "d", "i", "u", "x", "X", "o", "c", "C", "s", "S", "f", "e", "E", "g", "G", "a", "A", "p",
        "ld", "li", "lu", "lx", "lX", "lo", "lf", "lF", "le", "lE", "lg", "lG", "la", "lA",
        "lld", "lli", "llu", "llx", "llX", "llo",
        "qd", "qi", "qu", "qx", "hd", "hi", "hu", "hhd", "hhu", "zd", "zu", "Lf", "jd", "td",
    ]

    /// Two-character operators by their first character.
    static let twoCharacterSymbols: [Character: [String]] = [
        "*": ["**"], "=": ["==", "=>", "=<"], "<": ["<=", "<>"], ">": [">="], "!": ["!="], "&": ["&&"], "|": ["||"], ":": [":="],
    ]
    /// One-character operators and punctuation.
    static let oneCharacterSymbols: Set<Character> = ["(", ")", "{", "}", "[", "]", ",", ".", "+", "-", "*", "/", "=", "<", ">", "!", "&", "|", "^"]

    init(_ format: String) {
        self.format = format
        self.characters = Array(format)
    }

    /// All tokens of the format, ending with ``PredicateToken/Kind/end``.
    mutating func tokens() throws(PredicateSyntaxError) -> [PredicateToken] {
        var result: [PredicateToken] = []
        while true {
            let token = try next()
            result.append(token)
            if case .end = token.kind { return result }
        }
    }

    private func error(_ offset: Int, _ message: String, expected: String? = nil) -> PredicateSyntaxError {
        PredicateSyntaxError(offset: offset, message: message, expected: expected, format: format)
    }

    private func peek(_ ahead: Int = 0) -> Character? {
        index + ahead < characters.count ? characters[index + ahead] : nil
    }

    private func text(from start: Int) -> String { String(characters[start..<index]) }

    /// A word starts with `_` or a letter, not with a combining mark (a lone one can only begin
    /// the format): printed after `(` or a space it would join that character, and the printed
    /// predicate would not parse (found by the FuzzPredicateParser fuzz target).
    static func isIdentifierStart(_ c: Character) -> Bool {
        guard let first = c.unicodeScalars.first else { return false }
        if first.properties.isGraphemeExtend || first.properties.generalCategory == .spacingMark { return false }
        return c == "_" || c.isLetter
    }
    static func isIdentifierPart(_ c: Character) -> Bool { c == "_" || c.isLetter || c.isNumber }

    private mutating func next() throws(PredicateSyntaxError) -> PredicateToken {
        while let c = peek(), c.isWhitespace { index += 1 }
        let start = index
        guard let c = peek() else { return PredicateToken(kind: .end, offset: start, text: "") }
        if Self.isIdentifierStart(c) {
            while let d = peek(), Self.isIdentifierPart(d) { index += 1 }
            // `add:to:(…)`: a selector name with colons (not `:=`).
            while peek() == ":", let d = peek(1), d != "=" , Self.isIdentifierStart(d) || d == "(" {
                index += 1
                while let e = peek(), Self.isIdentifierPart(e) { index += 1 }
            }
            let word = text(from: start)
            return PredicateToken(kind: .identifier(word), offset: start, text: word)
        }
        switch c {
        case "#", "$", "@":
            index += 1
            guard let d = peek(), Self.isIdentifierStart(d) else {
                let what = c == "#" ? "a key after #" : c == "$" ? "a variable name after $" : "a collection operator name after @"
                throw error(index, "expected \(what), found \(peek().map { "\"\($0)\"" } ?? "the end of the format")", expected: what)
            }
            while let e = peek(), Self.isIdentifierPart(e) { index += 1 }
            let name = String(characters[(start + 1)..<index])
            let kind: PredicateToken.Kind = c == "#" ? .escapedIdentifier(name) : c == "$" ? .variable(name) : .collectionOperator("@" + name)
            return PredicateToken(kind: kind, offset: start, text: text(from: start))
        case "\"", "'":
            return try string(quote: c)
        case "%":
            return try specifier()
        default:
            break
        }
        if c.isASCII, c.isNumber || (c == "." && peek(1).map { $0.isASCII && $0.isNumber } == true) {
            return try number()
        }
        if let d = peek(1), let symbol = Self.twoCharacterSymbols[c]?.first(where: { $0.last == d }) {
            index += 2
            return PredicateToken(kind: .symbol(symbol), offset: start, text: symbol)
        }
        if Self.oneCharacterSymbols.contains(c) {
            index += 1
            return PredicateToken(kind: .symbol(String(c)), offset: start, text: String(c))
        }
        if c == "?" {
            throw error(start, "\"?\" is not a valid token (Foundation's parser rejects it too; use a %@ argument or $VARIABLE)")
        }
        throw error(start, "unexpected character \"\(c)\"")
    }

    private mutating func string(quote: Character) throws(PredicateSyntaxError) -> PredicateToken {
        let start = index
        index += 1
        var value = ""
        while true {
            guard let c = peek() else {
                throw error(start, "the string starting here is not closed with \(quote)", expected: "a closing \(quote)")
            }
            index += 1
            if c == quote { break }
            if c == "%" {
                // A run of n ≥ 2 percent signs stands for n/2 of them (`%%` is one `%`).
                var run = 1
                while peek() == "%" { run += 1; index += 1 }
                value += String(repeating: "%", count: run == 1 ? 1 : (run + 1) / 2)
                continue
            }
            guard c == "\\" else { value.append(c); continue }
            guard let e = peek() else { continue }
            index += 1
            switch e {
            case "n": value += "\n"
            case "t": value += "\t"
            case "r": value += "\r"
            case "0": value += "\0"
            case "\"", "'", "\\": value.append(e)
            case "u":
                let scalar = try unicodeEscape(at: index - 2)
                if (0xD800...0xDBFF).contains(scalar), peek() == "\\", peek(1) == "u" {
                    let lowStart = index
                    index += 2
                    let low = try unicodeEscape(at: lowStart)
                    // The range check first: `low - 0xDC00` would overflow for a low half below 0xDC00.
                    if (0xDC00...0xDFFF).contains(low), let s = Unicode.Scalar(0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)) {
                        value.unicodeScalars.append(s)
                        continue
                    }
                    throw error(lowStart, "\\u escapes do not form a valid surrogate pair")
                }
                guard let s = Unicode.Scalar(scalar) else { throw error(index - 6, "\\u escape is not a Unicode scalar") }
                value.unicodeScalars.append(s)
            default:
                throw error(index - 2, "unknown escape \\\(e) in a string (known: \\n \\t \\r \\0 \\\" \\' \\\\ \\uXXXX)")
            }
        }
        return PredicateToken(kind: .string(value), offset: start, text: text(from: start))
    }

    /// Four hex digits after `\u` (or `{…}` with 1 to 6 digits).
    private mutating func unicodeEscape(at start: Int) throws(PredicateSyntaxError) -> UInt32 {
        var digits = ""
        if peek() == "{" {
            index += 1
            while let d = peek(), d != "}" { digits.append(d); index += 1 }
            index += 1
        } else {
            for _ in 0..<4 { if let d = peek() { digits.append(d); index += 1 } }
        }
        guard !digits.isEmpty, digits.count <= 6, let value = UInt32(digits, radix: 16) else {
            throw error(start, "\\u needs four hexadecimal digits, found \"\(digits)\"", expected: "four hexadecimal digits")
        }
        return value
    }

    private mutating func specifier() throws(PredicateSyntaxError) -> PredicateToken {
        let start = index
        index += 1
        if peek() == "%" {
            throw error(start, "%% (a literal %) is only meaningful inside a quoted string")
        }
        var position: Int?
        var digits = ""
        var lookahead = index
        while lookahead < characters.count, characters[lookahead].isASCII, characters[lookahead].isNumber {
            digits.append(characters[lookahead]); lookahead += 1
        }
        if !digits.isEmpty, lookahead < characters.count, characters[lookahead] == "$" {
            guard let n = Int(digits), n >= 1 else { throw error(start, "positional argument numbers start at 1") }
            position = n - 1
            index = lookahead + 1
        }
        // Longest known conversion first.
        for length in stride(from: 3, through: 1, by: -1) where index + length <= characters.count {
            let candidate = String(characters[index..<(index + length)])
            if Self.conversions.contains(candidate) {
                index += length
                return PredicateToken(kind: .specifier(conversion: candidate, position: position), offset: start, text: text(from: start))
            }
        }
        throw error(start, "unknown format specifier \"\(String(characters[start..<min(index + 1, characters.count)]))\"",
                    expected: "a format specifier such as %@, %K, %d or %f")
    }

    private mutating func number() throws(PredicateSyntaxError) -> PredicateToken {
        let start = index
        if peek() == "0", let p = peek(1), let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][p] {
            index += 2
            let digitsStart = index
            while let d = peek(), d.isHexDigit || d == "_" { index += 1 }
            let digits = String(characters[digitsStart..<index]).replacingOccurrences(of: "_", with: "")
            guard let value = UInt64(digits, radix: radix) else {
                throw error(start, "\"\(text(from: start))\" is not a valid base-\(radix) integer")
            }
            return PredicateToken(kind: .integer(value), offset: start, text: text(from: start))
        }
        var isFloat = false
        while let d = peek(), d.isASCII, d.isNumber { index += 1 }
        if peek() == ".", let d = peek(1), d.isASCII, d.isNumber {
            isFloat = true
            index += 1
            while let d = peek(), d.isASCII, d.isNumber { index += 1 }
        } else if peek() == ".", !(peek(1).map(Self.isIdentifierStart) ?? false), peek(1) != "@" {
            // `1.` is a float; `1.foo` is not.
            isFloat = true
            index += 1
        }
        if let e = peek(), e == "e" || e == "E" {
            var lookahead = index + 1
            if lookahead < characters.count, characters[lookahead] == "+" || characters[lookahead] == "-" { lookahead += 1 }
            if lookahead < characters.count, characters[lookahead].isASCII, characters[lookahead].isNumber {
                isFloat = true
                index = lookahead
                while let d = peek(), d.isASCII, d.isNumber { index += 1 }
            }
        }
        let literal = text(from: start)
        if let c = peek(), Self.isIdentifierStart(c) {
            throw error(index, "a number cannot be followed directly by \"\(c)\"")
        }
        if isFloat {
            guard let value = Double(literal) else { throw error(start, "\"\(literal)\" is not a valid number") }
            return PredicateToken(kind: .double(value), offset: start, text: literal)
        }
        guard let value = UInt64(literal) else {
            throw error(start, "the integer \(literal) is too large (the largest is \(UInt64.max))")
        }
        return PredicateToken(kind: .integer(value), offset: start, text: literal)
    }
}
