import Foundation
import Testing
@testable import PersistKit

/// Every format string of `shared/corpus/predicates.tsv` (real predicates from public
/// projects) parses with its arguments absent, and its canonical form parses back to the same tree.
@Suite("PredicateFormatCorpus")
struct PredicateFormatCorpusTests {
    /// `<package root>/../shared/corpus/predicates.tsv`.
    static let corpusURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/corpus/predicates.tsv")

    /// Corpus lines that deliberately do not parse, with the start of their error message
    /// (see `docs/predicates.md`, "Not supported").
    static let unsupported: [String: String] = [:]

    /// Lines whose source passes more arguments than the format has specifiers (Foundation
    /// ignores the extra ones), so fewer arguments are unbound than the corpus counts.
    static let extraArguments: Set<String> = [
        "SELF == '%@'",   // a quoted %@ is a literal string, not a specifier
        "triggerSet == NULL",
        "%K == %@ AND ((%K & %d) != 0 OR (%K & %d) != 0)",
    ]

    @Test func everyLineParsesAndRoundTrips() throws {
        guard let text = try? String(contentsOf: Self.corpusURL, encoding: .utf8) else {
            print("PredicateFormatCorpus: skipped, \(Self.corpusURL.path) is absent")
            return
        }
        var failures: [String: String] = [:]
        var lines = 0
        var dump = ""
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            try #require(fields.count == 3, "malformed corpus line \(line)")
            let format = String(fields[0])
            lines += 1
            let predicate: FetchPredicate
            do {
                predicate = try FetchPredicate(format: format)
            } catch {
                failures[format] = "\(error)"
                continue
            }
            let canonical = predicate.predicateFormat
            dump += format + "\t" + canonical + "\n"
            let reparsed = try FetchPredicate(format: canonical)
            #expect(reparsed == predicate, "\(format) printed as \(canonical)")
            #expect(reparsed.predicateFormat == canonical)
            // The number of unbound arguments is the corpus's count.
            if !Self.extraArguments.contains(format) {
                #expect(Self.unboundCount(predicate) == Int(fields[1]), "\(format)")
            } else {
                #expect(Self.unboundCount(predicate) < Int(fields[1]) ?? 0, "\(format)")
            }
        }
        #expect(lines == 1138)
        // PREDICATE_CORPUS_DUMP=path writes each format with its canonical form, for review.
        if let path = ProcessInfo.processInfo.environment["PREDICATE_CORPUS_DUMP"] {
            try dump.write(toFile: path, atomically: true, encoding: .utf8)
        }
        for (format, message) in failures.sorted(by: { $0.key < $1.key }) {
            let expected = Self.unsupported[format]
            #expect(expected.map { message.contains($0) } == true, "\(format): \(message)")
        }
        for format in Self.unsupported.keys where failures[format] == nil {
            Issue.record("\(format) is listed as unsupported but parses")
        }
    }

    static func unboundCount(_ predicate: FetchPredicate) -> Int {
        var positions = Set<Int>()
        func visit(_ p: FetchPredicate) {
            switch p {
            case .alwaysTrue, .alwaysFalse: break
            case .comparison(let c): visit(c.left); visit(c.right)
            case .compound(let c): c.subpredicates.forEach(visit)
            }
        }
        func visit(_ e: FetchExpression) {
            switch e {
            case .unboundArgument(_, let position): positions.insert(position)
            case .member(let base, _): visit(base)
            case .function(_, let arguments): arguments.forEach(visit)
            case .aggregate(let elements): elements.forEach(visit)
            case .subquery(let collection, _, let predicate): visit(collection); visit(predicate)
            case .conditional(let p, let a, let b): visit(p); visit(a); visit(b)
            case .constant, .evaluatedObject, .keyPath, .variable: break
            }
        }
        visit(predicate)
        return positions.count
    }
}
