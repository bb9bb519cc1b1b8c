import Foundation
import Testing
@testable import PersistServer

/// `persistctl codegen`, run as the real built binary.
@Suite("persistctl codegen")
struct CodegenCommandTests {
    static let model = PredicateCommandTests.packageRoot.appendingPathComponent("Examples/Beers.model.json").path

    /// A fresh temporary directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("persistctl-codegen-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static let entities = ["Beer", "Bison", "Brewery", "Person", "Student", "Tag"]

    @Test("writes a machine and a human file per entity and the registry; a second run keeps human files")
    func writesFiles() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("Generated").path

        let first = try PredicateCommandTests.run(["codegen", "--model", Self.model, "--out", out])
        #expect(first.status == 0)
        #expect(first.err == "")
        let expected = Self.entities.flatMap { ["wrote \(out)/_\($0).swift", "wrote \(out)/\($0).swift"] }
            + ["wrote \(out)/_BeersClasses.swift"]
        #expect(first.out == expected.map { $0 + "\n" }.joined())
        let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(names == (Self.entities.flatMap { ["_\($0).swift", "\($0).swift"] } + ["_BeersClasses.swift"]).sorted())
        let machine = try String(contentsOfFile: "\(out)/_Beer.swift", encoding: .utf8)
        #expect(machine.contains("final class Beer: ManagedObject, TypedManagedObject {"))
        #expect(machine.contains("    var tags: Set<Tag> {"))
        #expect(machine.contains("    func addToTags(_ object: Tag) {"))

        // The human file is the programmer's: edits survive; machine files are regenerated.
        let human = "\(out)/Beer.swift"
        try Data("extension Beer { var strong: Bool { (abv ?? 0) > 8 } }\n".utf8).write(to: URL(fileURLWithPath: human))
        try Data("stale".utf8).write(to: URL(fileURLWithPath: "\(out)/_Beer.swift"))
        let second = try PredicateCommandTests.run(["codegen", "--model", Self.model, "--out", out])
        #expect(second.status == 0)
        #expect(second.out.contains("wrote \(out)/_Beer.swift\nkept \(out)/Beer.swift (exists; not overwritten)\n"))
        #expect(second.out.contains("unchanged \(out)/_Brewery.swift\nkept \(out)/Brewery.swift (exists; not overwritten)\n"))
        #expect(second.out.hasSuffix("unchanged \(out)/_BeersClasses.swift\n"))
        #expect(try String(contentsOfFile: human, encoding: .utf8) == "extension Beer { var strong: Bool { (abv ?? 0) > 8 } }\n")
        #expect(try String(contentsOfFile: "\(out)/_Beer.swift", encoding: .utf8) == machine)
    }

    @Test("--access public and --single-file")
    func publicSingleFile() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try PredicateCommandTests.run(["codegen", "--model", Self.model, "--out", directory.path,
                                                    "--access", "public", "--single-file", "Beers.swift", "--registry", "BeerModel"])
        #expect(result.status == 0)
        #expect(result.out == "wrote \(directory.path)/Beers.swift\n")
        let text = try String(contentsOfFile: directory.appendingPathComponent("Beers.swift").path, encoding: .utf8)
        #expect(text.contains("public final class Beer: ManagedObject, TypedManagedObject {"))
        #expect(text.contains("public enum BeerModel {"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["Beers.swift"])
    }

    @Test("a model that does not load exits 1 with the model error")
    func badModel() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let model = directory.appendingPathComponent("Bad.model.json")
        try Data(#"{"formatVersion": 1, "entities": [{"name": "A", "attributes": [{"name": "x", "type": "integer"}]}]}"#.utf8).write(to: model)
        let result = try PredicateCommandTests.run(["codegen", "--model", model.path, "--out", directory.appendingPathComponent("out").path])
        #expect(result.status == 1)
        #expect(result.out == "")
        #expect(result.err.hasPrefix("persistctl: \(model.path): entity A, property x: "))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("out").path))

        let missing = try PredicateCommandTests.run(["codegen", "--model", "/nonexistent/M.model.json", "--out", directory.path])
        #expect(missing.status == 1)
        #expect(missing.err.hasPrefix("persistctl: /nonexistent/M.model.json: "))
    }

    @Test("usage errors exit 2")
    func usageErrors() throws {
        for arguments in [["--out", "x"], ["--model", "m.json"], ["--model", "m.json", "--out", "x", "--access", "open"],
                          ["--model", "m.json", "--out", "x", "--bogus"], ["--model"]] {
            let result = try PredicateCommandTests.run(["codegen"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.err.hasPrefix("persistctl codegen: "), "\(arguments)")
            #expect(result.err.contains("usage: persistctl codegen --model PATH --out DIR"))
        }
        let help = try PredicateCommandTests.run(["codegen", "--help"])
        #expect(help.status == 0)
        #expect(help.out == CodegenCommand.usage)
    }
}
