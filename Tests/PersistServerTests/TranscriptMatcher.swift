import Foundation
@testable import PersistServer

/// Replays `protocol/examples/*.ndjson` transcripts: a line with `op` is a request to send, a
/// line with `ok` or `event` the reply expected next, a line with only `comment` is skipped.
///
/// Values that vary between runs are written as placeholders in expected replies:
/// - `"*"` matches any value;
/// - `"${name}"` inside a string matches any text and binds it to `name` the first time; later
///   uses must be equal. In requests, `${name}` is replaced by the bound text.
///
/// ```
/// {"id":1,"op":"hello"}
/// {"id":1,"ok":true,"result":{"protocol":1,"server":"*","store":{"type":"SQLite","uuid":"${store}"},"entities":"*","limits":"*"}}
/// {"id":2,"op":"get","ids":["x-coredata://${store}/Beer/p1"]}
/// ```
struct TranscriptMatcher {
    var bindings: [String: String] = [:]

    /// `request` with every `${name}` replaced.
    func substitute(_ request: JSON) -> JSON {
        switch request {
        case .string(let text): return .string(substitute(text))
        case .array(let elements): return .array(elements.map(substitute))
        case .object(let members): return .object(members.map { JSON.Member($0.key, substitute($0.value)) })
        default: return request
        }
    }

    func substitute(_ text: String) -> String {
        var result = text
        for (name, value) in bindings { result = result.replacingOccurrences(of: "${\(name)}", with: value) }
        return result
    }

    /// Whether `actual` matches `expected`, binding placeholders; on a mismatch, the path where it failed.
    mutating func match(_ expected: JSON, _ actual: JSON, path: String = "$") -> String? {
        if expected == "*" { return nil }
        switch (expected, actual) {
        case (.string(let pattern), .string(let text)):
            return matchString(pattern, text) ? nil : "\(path): expected \(expected.encoded), got \(actual.encoded)"
        case (.array(let left), .array(let right)):
            guard left.count == right.count else { return "\(path): expected \(left.count) elements, got \(right.count)" }
            for (index, pair) in zip(left, right).enumerated() {
                if let failure = match(pair.0, pair.1, path: "\(path)[\(index)]") { return failure }
            }
            return nil
        case (.object(let left), .object(let right)):
            guard left.map(\.key) == right.map(\.key) else {
                return "\(path): expected keys \(left.map(\.key)), got \(right.map(\.key))"
            }
            for (member, other) in zip(left, right) {
                if let failure = match(member.value, other.value, path: "\(path).\(member.key)") { return failure }
            }
            return nil
        default:
            return expected == actual ? nil : "\(path): expected \(expected.encoded), got \(actual.encoded)"
        }
    }

    /// Matches literal text and `${name}` placeholders, binding unbound names (shortest match
    /// up to the next literal).
    mutating func matchString(_ pattern: String, _ text: String) -> Bool {
        var pattern = Substring(pattern)
        var text = Substring(text)
        var pendingBindings: [String: String] = [:]
        while !pattern.isEmpty {
            guard let open = pattern.range(of: "${") else {
                guard pattern == text else { return false }
                text = text.dropFirst(text.count)
                break
            }
            let literal = pattern[..<open.lowerBound]
            guard text.hasPrefix(literal) else { return false }
            text = text.dropFirst(literal.count)
            guard let close = pattern[open.upperBound...].firstIndex(of: "}") else { return false }
            let name = String(pattern[open.upperBound..<close])
            pattern = pattern[pattern.index(after: close)...]
            if let bound = bindings[name] ?? pendingBindings[name] {
                guard text.hasPrefix(bound) else { return false }
                text = text.dropFirst(bound.count)
                continue
            }
            // Unbound: take text up to the next literal of the pattern (or all of it).
            let nextLiteral = pattern.range(of: "${").map { pattern[..<$0.lowerBound] } ?? pattern
            let end: Substring.Index
            if nextLiteral.isEmpty {
                end = text.endIndex
            } else if let found = text.range(of: nextLiteral) {
                end = found.lowerBound
            } else {
                return false
            }
            pendingBindings[name] = String(text[..<end])
            text = text[end...]
        }
        guard text.isEmpty else { return false }
        bindings.merge(pendingBindings) { old, _ in old }
        return true
    }
}
