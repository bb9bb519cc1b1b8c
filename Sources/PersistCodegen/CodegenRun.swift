import Foundation
import PersistKit

/// One run of the generator over a model file: load, generate, write. Shared by
/// `persistctl codegen` and the `persist-codegen` tool the build plugin calls.
///
/// Machine files are rewritten when their text changed (an unchanged file keeps its
/// modification time, so builds do not redo work); human files are written only when missing.
public struct CodegenRun: Sendable, Hashable {
    /// Where the generated code goes.
    public enum Layout: Sendable, Hashable {
        /// `_Beer.swift` and `Beer.swift` per entity, and the registry file (mogenerator's way).
        case perEntity
        /// Every class and the registry in one machine file of this name; no human files.
        case singleFile(String)
    }

    /// What happened to one file.
    public enum Action: Sendable, Hashable {
        /// The file was created or its text changed.
        case wrote(String)
        /// A machine file already had exactly the generated text.
        case unchanged(String)
        /// A human file exists and was left alone.
        case kept(String)

        /// `wrote Out/_Beer.swift`: one line of the command's output, without the newline.
        public var line: String {
            switch self {
            case .wrote(let path): return "wrote \(path)"
            case .unchanged(let path): return "unchanged \(path)"
            case .kept(let path): return "kept \(path) (exists; not overwritten)"
            }
        }
    }

    /// The model file (`.json`, `.xcdatamodel`, `.xcdatamodeld`).
    public var modelPath: String
    /// The directory the files go to; created if missing.
    public var outputDirectory: String
    /// The generator's options.
    public var options: CodeGenerator.Options
    /// Per-entity files or one file.
    public var layout: Layout

    /// Creates a run.
    public init(modelPath: String, outputDirectory: String, options: CodeGenerator.Options = .init(), layout: Layout = .perEntity) {
        self.modelPath = modelPath
        self.outputDirectory = outputDirectory
        self.options = options
        self.layout = layout
    }

    /// Loads the model, generates the files and writes them; returns what happened to each file.
    public func run() throws(CodegenError) -> [Action] {
        let modelURL = URL(fileURLWithPath: modelPath)
        let model: ManagedObjectModel
        do {
            model = try ManagedObjectModel(contentsOf: modelURL)
        } catch let error as ModelError {
            throw .model(error)
        } catch {
            throw .model(ModelError(file: modelURL.path, "\(error)"))
        }
        let generator = CodeGenerator(options: options)
        let modelFileName = modelURL.standardizedFileURL.lastPathComponent
        let files: [GeneratedFile]
        switch layout {
        case .perEntity:
            files = generator.files(for: model, modelFileName: modelFileName)
        case .singleFile(let name):
            files = [generator.singleFile(for: model, modelFileName: modelFileName, fileName: name)]
        }
        do {
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw .file(path: outputDirectory, message: "cannot create the output directory: \(error.localizedDescription)")
        }
        return try files.map { file throws(CodegenError) in try write(file) }
    }

    /// Writes one file as its kind says.
    func write(_ file: GeneratedFile) throws(CodegenError) -> Action {
        let path = (outputDirectory as NSString).appendingPathComponent(file.name)
        let existing = FileManager.default.contents(atPath: path)
        if file.kind == .human, existing != nil { return .kept(path) }
        let data = Data(file.contents.utf8)
        if existing == data { return .unchanged(path) }
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .file(path: path, message: "cannot write: \(error.localizedDescription)")
        }
        return .wrote(path)
    }
}
