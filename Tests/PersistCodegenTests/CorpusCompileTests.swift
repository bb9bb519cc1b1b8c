import Foundation
import Testing
import PersistKit
@testable import PersistCodegen

/// Generates the classes of every model version in the shared corpus of real Xcode models
/// and compiles them all: one scratch package in a temporary directory whose modules depend on
/// this package's PersistKit by path, built by one `swift build`. Per-entity files, access
/// levels alternating public/internal. To keep the build short (one module per version took
/// 7.5 minutes on 2 cores, mostly per-module overhead), versions share a module when their
/// class names do not collide; the versions of one bundle always collide, so they are spread. The build must succeed
/// without a warning in generated code.
@Suite("Corpus compile", .enabled(if: CodegenTestSupport.corpusIsPresent, "the corpus at <package root>/../shared/corpus is absent"))
struct CorpusCompileTests {
    static let packageRoot = CodegenTestSupport.packageRoot
    static let xcdatamodels = CodegenTestSupport.xcdatamodels

    /// Versions that do not load (docs/models.md, "Unsupported models in the corpus").
    static let knownFailures: Set<String> = [
        "phimage__MomXML/Tests/Model.xcdatamodeld/Model.xcdatamodel",
        "nightscout__Trio/Model/TrioCoreDataPersistentContainer.xcdatamodeld/TrioCoreDataPersistentContainer.xcdatamodel",
    ]

    /// Names generated code qualifies when a class of the same model takes them.
    static let shadowableNames: Set<String> = [
        "Date", "Data", "UUID", "URL", "Decimal", "ManagedObject", "ManagedObjectContext", "ManagedObjectModel",
        "ManagedObjectID", "FetchRequest", "TypedManagedObject", "EntityDescription", "String", "Int", "Int16",
        "Int32", "Int64", "Double", "Float", "Bool", "Set",
    ]

    /// The longest the scratch build may take before it is stopped and the test fails.
    static let buildTimeLimit: TimeInterval = 600

    @Test("every corpus model version generates code that compiles without warnings")
    func everyVersionCompiles() throws {
        let enumerator = try #require(FileManager.default.enumerator(atPath: Self.xcdatamodels.path))
        var versions: [String] = []
        while let path = enumerator.nextObject() as? String {
            if path.hasSuffix(".xcdatamodel") { versions.append(path) }
        }
        versions.sort()
        #expect(versions.count == 212)

        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("persist-codegen-corpus-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.removeItem(at: scratch)
        defer { try? FileManager.default.removeItem(at: scratch) }

        // Models share a module when no two of their classes have the same name; each model's
        // registry is named R<index>. Models defining a class that generated code may have to
        // qualify (Date, Set, …) get a module of their own, since their classes would shadow
        // those names for the other models in it.
        var modules: [(name: String, classes: Set<String>, alone: Bool)] = []
        var versionCount = 0
        var entityCount = 0
        for (index, version) in versions.enumerated() {
            let url = Self.xcdatamodels.appendingPathComponent(version)
            let model: ManagedObjectModel
            do {
                model = try ManagedObjectModel(contentsOf: url)
            } catch {
                #expect(Self.knownFailures.contains(version), "\(version) does not load: \(error)")
                continue
            }
            let registry = String(format: "R%03d", index)
            let classes = Set(ModelPlan(model: model, registryName: registry).classNames.values).union([registry])
            let alone = !classes.isDisjoint(with: Self.shadowableNames)
            let slot = alone ? nil : modules.firstIndex { !$0.alone && $0.classes.isDisjoint(with: classes) }
            let module: String
            if let slot {
                module = modules[slot].name
                modules[slot].classes.formUnion(classes)
            } else {
                module = String(format: "M%03d", modules.count)
                modules.append((module, classes, alone))
            }
            let access: AccessLevel = index.isMultiple(of: 2) ? .public : .internal
            let run = CodegenRun(modelPath: url.path,
                                 outputDirectory: scratch.appendingPathComponent("Sources/\(module)").path,
                                 options: .init(access: access, registryName: registry))
            let actions = try run.run()
            #expect(actions.count == model.entities.count * 2 + 1)
            #expect(actions.allSatisfy { if case .wrote = $0 { return true } else { return false } })
            versionCount += 1
            entityCount += model.entities.count
        }
        #expect(versionCount == 210)
        #expect(entityCount > 1000)

        let identity = Self.packageRoot.lastPathComponent.lowercased()
        let targets = modules.map { """
                    .target(name: "\($0.name)", dependencies: [.product(name: "PersistKit", package: "\(identity)")]),
            """ }
        let manifest = """
            // swift-tools-version:6.0
            import PackageDescription

            let package = Package(
                name: "CodegenCorpus",
                dependencies: [.package(path: \(SwiftNames.literal(Self.packageRoot.path)))],
                targets: [
            \(targets.joined(separator: "\n"))
                ],
                swiftLanguageModes: [.v6]
            )

            """
        try Data(manifest.utf8).write(to: scratch.appendingPathComponent("Package.swift"))

        let started = Date()
        let (status, output) = try Self.swiftBuild(in: scratch)
        let seconds = Date().timeIntervalSince(started)
        print("Corpus compile: \(versionCount) model versions in \(modules.count) modules, \(entityCount) entities, built in \(Int(seconds)) s")
        #expect(status == 0, "swift build failed:\n\(output.suffix(8000))")
        let warnings = output.split(separator: "\n").filter {
            $0.contains("warning:") && $0.contains(scratch.appendingPathComponent("Sources").path)
        }
        #expect(warnings.isEmpty, "warnings in generated code:\n\(warnings.prefix(40).joined(separator: "\n"))")
    }

    /// Runs `swift build` in `directory`, stopping it after ``buildTimeLimit``; returns the exit
    /// status and the combined output.
    static func swiftBuild(in directory: URL) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "build", "--package-path", directory.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let timer = DispatchSource.makeTimerSource()
        timer.schedule(deadline: .now() + buildTimeLimit)
        timer.setEventHandler { [process] in process.terminate() }
        timer.resume()
        defer { timer.cancel() }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
