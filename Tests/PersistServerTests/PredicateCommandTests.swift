import Foundation
import Testing
@testable import PersistServer

/// `persistctl predicate`, run as the real built binary.
@Suite("persistctl predicate")
struct PredicateCommandTests {
    static var packageRoot: URL { BuiltBinary.packageRoot }

    static let model = packageRoot.appendingPathComponent("Examples/Beers.model.json").path

    /// Runs `persistctl` with `arguments`; returns its exit status, stdout and stderr.
    static func run(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try BuiltBinary.run("persistctl", arguments)
    }

    @Test("prints the canonical format and the tree")
    func canonicalAndTree() throws {
        let result = try Self.run(["predicate", "name beginswith[c] %@ and abv > %@", "--arg", "d", "--arg", "8"])
        #expect(result.status == 0)
        #expect(result.err == "")
        #expect(result.out == """
            format: name BEGINSWITH[c] "d" AND abv > 8
            tree: {"type":"and","subpredicates":[{"type":"comparison","operator":"BEGINSWITH","options":"c","left":{"type":"keyPath","keyPath":"name"},"right":{"type":"constant","valueType":"string","value":"d"}},{"type":"comparison","operator":">","left":{"type":"keyPath","keyPath":"abv"},"right":{"type":"constant","valueType":"integer","value":8}}]}

            """)
    }

    @Test("placeholders without --arg stay placeholders")
    func placeholders() throws {
        let result = try Self.run(["predicate", "%K IN %@"])
        #expect(result.status == 0)
        #expect(result.out == """
            format: %K IN %@
            tree: {"type":"comparison","operator":"IN","left":{"type":"unboundArgument","specifier":"%K","position":0},"right":{"type":"unboundArgument","specifier":"%@","position":1}}

            """)
    }

    @Test("--arg takes JSON literals and bare words")
    func argumentValues() throws {
        let result = try Self.run(["predicate", "a == %@ AND b == %@ AND c IN %@ AND d == %@ AND e == %@",
                                   "--arg", "1.5", "--arg", "true", "--arg", "[1,\"x\",null]", "--arg", "\"quoted\"", "--arg", "bare word"])
        #expect(result.status == 0)
        #expect(result.out.hasPrefix(#"format: (((a == 1.5 AND b == TRUE) AND c IN {1, "x", nil}) AND d == "quoted") AND e == "bare word""#))
    }

    @Test("a syntax error prints its offset and exits 1")
    func syntaxError() throws {
        let result = try Self.run(["predicate", "name ! 'x'"])
        #expect(result.status == 1)
        #expect(result.out == "")
        #expect(result.err == """
            persistctl: predicate syntax error at offset 5: expected a comparison operator after "name", found "!"
              name ! 'x'
                   ^

            """)
    }

    @Test("with a model: type check and SQL with its bound values")
    func sql() throws {
        let result = try Self.run(["predicate", "name BEGINSWITH[c] %@ AND brewery.name == 'W'", "--arg", "d",
                                   "--model", Self.model, "--entity", "Beer"])
        #expect(result.status == 0)
        #expect(result.err == "")
        let lines = result.out.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[2] == #"sql: SELECT "t0"."Z_PK", "t0"."Z_ENT", "t0"."Z_OPT", "t0"."ZIBU", "t0"."ZISFAVORITE", "t0"."ZBREWERY", "t0"."ZABV", "t0"."ZBREWEDON", "t0"."ZPRICE", "t0"."ZNAME", "t0"."ZSTYLE", "t0"."ZWEBSITE", "t0"."ZLABEL", "t0"."ZUUID" FROM "ZBEER" AS "t0" LEFT JOIN "ZBREWERY" AS "t1" ON "t1"."Z_PK" = "t0"."ZBREWERY" WHERE (NSCoreDataStringSearch("t0"."ZNAME", ?, 9, 0) AND "t1"."ZNAME" = ?)"#)
        #expect(lines[3] == #"arguments: [{"valueType":"string","value":"d"},{"valueType":"string","value":"W"}]"#)
    }

    @Test("with a model: a type error exits 1")
    func typeError() throws {
        let result = try Self.run(["predicate", "nmae == 1", "--model", Self.model, "--entity", "Beer"])
        #expect(result.status == 1)
        #expect(result.err == "persistctl: predicate type error in \"nmae == 1\": entity Beer has no property nmae (key path nmae)\n")
    }

    @Test("with a model: a construct the SQLite store cannot compile yet exits 1")
    func notCompilable() throws {
        let result = try Self.run(["predicate", "FUNCTION(name, 'length') > 3", "--model", Self.model, "--entity", "Beer"])
        #expect(result.status == 1)
        #expect(result.out.hasPrefix("format: FUNCTION(name, \"length\") > 3\n"))
        #expect(result.err == "persistctl: the SQLite store does not support the function FUNCTION on key paths in fetch requests (code 134070)\n")
    }

    @Test("usage errors exit 2")
    func usage() throws {
        #expect(try Self.run(["predicate"]).status == 2)
        #expect(try Self.run(["predicate", "a == 1", "--model", Self.model]).status == 2)
        #expect(try Self.run(["frobnicate"]).status == 2)
    }
}
