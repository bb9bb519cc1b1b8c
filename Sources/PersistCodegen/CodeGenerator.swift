import Foundation
import PersistKit

/// Turns a managed object model into Swift source: one typed ``ManagedObject`` subclass per
/// entity, and a registry that puts the classes on the model's entities. Pure: it reads the
/// model and returns text; ``CodegenRun`` writes the files.
///
/// ```swift
/// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "Beers.model.json"))
/// let files = CodeGenerator().files(for: model, modelFileName: "Beers.model.json")
/// // _Beer.swift, Beer.swift, _Brewery.swift, Brewery.swift, …, _BeersClasses.swift
/// ```
///
/// The shape of the generated code and its naming rules are documented in docs/codegen.md.
public struct CodeGenerator: Sendable {
    /// How the code is generated.
    public struct Options: Sendable, Hashable {
        /// The access level of the generated declarations.
        public var access: AccessLevel
        /// The name of the registry enum; `nil` derives it from the model file's name
        /// (``CodeGenerator/registryName(forModelFile:)``).
        public var registryName: String?

        /// Creates options.
        public init(access: AccessLevel = .internal, registryName: String? = nil) {
            self.access = access
            self.registryName = registryName
        }
    }

    /// The options in use.
    public var options: Options

    /// Creates a generator.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// The files for `model`, mogenerator's way: per entity a machine file `_Beer.swift` and a
    /// human file `Beer.swift`, then the registry `_BeersClasses.swift`. Entities are in name
    /// order. `modelFileName` is the model file's name, used in headers and for the registry name.
    public func files(for model: ManagedObjectModel, modelFileName: String) -> [GeneratedFile] {
        let (renderer, entities) = prepare(model, modelFileName: modelFileName)
        var files: [GeneratedFile] = []
        for entity in entities {
            let name = renderer.plan.className(entity)
            files.append(GeneratedFile(name: "_\(name).swift", contents: renderer.machineFile(entity), kind: .machine))
            files.append(GeneratedFile(name: "\(name).swift", contents: renderer.humanFile(entity), kind: .human))
        }
        files.append(GeneratedFile(name: "_\(renderer.plan.registryName).swift",
                                   contents: renderer.registryFile(entities), kind: .machine))
        return files
    }

    /// Every class and the registry in one machine file named `fileName`: the form the build
    /// tool plugin uses, since a plugin must name its outputs before the model is read.
    public func singleFile(for model: ManagedObjectModel, modelFileName: String, fileName: String) -> GeneratedFile {
        let (renderer, entities) = prepare(model, modelFileName: modelFileName)
        return GeneratedFile(name: fileName, contents: renderer.singleFile(entities), kind: .machine)
    }

    /// The registry name for a model file: its name without `.json`, `.model`, `.xcdatamodeld`
    /// or `.xcdatamodel`, made an upper-camel-case identifier, plus `Classes`
    /// (`Beers.model.json` → `BeersClasses`, `My Model 2.xcdatamodel` → `MyModel2Classes`).
    public static func registryName(forModelFile fileName: String) -> String {
        var base = fileName
        for suffix in [".json", ".model", ".xcdatamodeld", ".xcdatamodel"] where base.hasSuffix(suffix) {
            base = String(base.dropLast(suffix.count))
        }
        let words = base.split { !($0.isLetter || $0.isNumber) || !$0.isASCII }
        let joined = words.map { SwiftNames.capitalized(String($0)) }.joined()
        return SwiftNames.identifier(joined.isEmpty ? "Model" : joined) + "Classes"
    }

    private func prepare(_ model: ManagedObjectModel, modelFileName: String) -> (SwiftFileRenderer, [EntityDescription]) {
        let registry = options.registryName ?? Self.registryName(forModelFile: modelFileName)
        let plan = ModelPlan(model: model, registryName: registry)
        let renderer = SwiftFileRenderer(plan: plan, access: options.access, modelFileName: modelFileName)
        return (renderer, model.entities.sorted { $0.name < $1.name })
    }
}
