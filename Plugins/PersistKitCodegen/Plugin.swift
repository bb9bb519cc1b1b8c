import Foundation
import PackagePlugin

/// The `PersistKitCodegen` build tool plugin: for every model in a target (a `.xcdatamodeld`
/// bundle, a `.xcdatamodel` outside a bundle, or a `*.model.json` file), runs `persist-codegen`
/// to write the model's typed classes into one generated file, `<model file>.swift`, in the
/// plugin's work directory, and compiles it with the target. The command's inputs are the model's
/// files, so `swift build` regenerates the classes whenever the model changes.
///
/// A plugin must name its outputs before it runs, without reading the model, so it writes one
/// file per model (`--single-file`) rather than one per entity; human files (`Beer.swift`)
/// make no sense in a build directory and are not written: put your own code in extensions in
/// the target's sources. See docs/codegen.md.
@main
struct PersistKitCodegen: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "persist-codegen")
        let output = context.pluginWorkDirectoryURL.appending(path: "GeneratedSources")
        return try Self.models(in: target.sourceFiles.map(\.url)).map { model in
            let fileName = model.lastPathComponent.replacingOccurrences(of: " ", with: "_") + ".swift"
            return .buildCommand(
                displayName: "Generating PersistKit classes from \(model.lastPathComponent)",
                executable: tool.url,
                arguments: ["--model", model.path, "--out", output.path, "--single-file", fileName],
                inputFiles: try Self.files(of: model),
                outputFiles: [output.appending(path: fileName)]
            )
        }
    }

    /// The models among a target's files, in path order: `.xcdatamodeld` bundles, `.xcdatamodel`
    /// versions outside a bundle, and `*.model.json` files. SwiftPM lists a bundle either as
    /// itself or as the files inside it, so a file's path is cut after its first model component.
    static func models(in files: [URL]) -> [URL] {
        var models: Set<URL> = []
        for file in files {
            var model = URL(fileURLWithPath: "/")
            var found = false
            for component in file.pathComponents.dropFirst() {
                model.appendPathComponent(component)
                if component.hasSuffix(".xcdatamodeld") || component.hasSuffix(".xcdatamodel") {
                    found = true
                    break
                }
            }
            if found {
                models.insert(model)
            } else if file.lastPathComponent.hasSuffix(".model.json") {
                models.insert(file)
            }
        }
        return models.sorted { $0.path < $1.path }
    }

    /// The files a model is read from: the JSON file itself, or every file inside a bundle or
    /// version directory (its `contents` files and `.xccurrentversion`).
    static func files(of model: URL) throws -> [URL] {
        guard model.pathExtension != "json" else { return [model] }
        guard let enumerator = FileManager.default.enumerator(at: model, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return [model]
        }
        var files: [URL] = []
        for case let url as URL in enumerator where (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true {
            files.append(url)
        }
        return files.sorted { $0.path < $1.path }
    }
}
