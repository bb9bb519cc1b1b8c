import Foundation
import Testing

/// The README's example is a real program: it must match `Examples/BeerWorkflow/main.swift`
/// byte for byte, and the program must do the seed workflow across three processes.
@Suite("README workflow example")
struct WorkflowExampleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binary: URL {
        if let directory = ProcessInfo.processInfo.environment["PERSIST_BIN_DIR"], !directory.isEmpty {
            return URL(fileURLWithPath: directory).appendingPathComponent("BeerWorkflow")
        }
        return packageRoot.appendingPathComponent(".build/debug/BeerWorkflow")
    }

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func readmeShowsTheExampleVerbatim() throws {
        let readme = try String(contentsOf: Self.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(contentsOf: Self.packageRoot.appendingPathComponent("Examples/BeerWorkflow/main.swift"), encoding: .utf8)
        #expect(readme.contains("```swift\n" + example + "```\n"))
    }

    @Test func workflowRunsAcrossProcesses() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("workflow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("Beers.sqlite").path

        let create = try Self.run(["create", store])
        #expect(create.status == 0)
        #expect(create.output == "hasChanges before save: true\nhasChanges after save: false\nbeers of Duvel Moortgat: 2\n")

        let update = try Self.run(["update", store])
        #expect(update.status == 0)
        #expect(update.output == "fetched: Duvel 8.5, Vedett 5.2\nhasChanges after update: true\nhasChanges after save: false\n")

        // A third process sees the update and the delete.
        let again = try Self.run(["update", store])
        #expect(again.status == 0)
        #expect(again.output == "fetched: Duvel 8.6\nhasChanges after update: true\nhasChanges after save: false\n")

        let container = try Self.run(["container", directory.appendingPathComponent("container").path])
        #expect(container.status == 0)
        #expect(container.output == "view context sees: Dubbel, Tripel\n")
    }
}
