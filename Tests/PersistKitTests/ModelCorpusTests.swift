import Foundation
import Testing
@testable import PersistKit

/// Loads every model version of the shared corpus of real Xcode models.
@Suite("Model corpus", .enabled(if: ModelTestSupport.corpusIsPresent, "the corpus at <package root>/../shared/corpus is absent"))
struct ModelCorpusTests {
    /// Model versions that cannot load, by path under `xcdatamodels/`, with the reason;
    /// the same list is in docs/models.md ("Unsupported models in the corpus").
    static let knownFailures: [String: String] = [
        "phimage__MomXML/Tests/Model.xcdatamodeld/Model.xcdatamodel":
            "entity Produit, property attribute1: composite attributes (attributeType Composite) are not supported",
        "nightscout__Trio/Model/TrioCoreDataPersistentContainer.xcdatamodeld/TrioCoreDataPersistentContainer.xcdatamodel":
            "property id: default value \"empy\" is not a valid UUID",
    ]

    static var xcdatamodelsURL: URL { ModelTestSupport.corpusURL.appendingPathComponent("xcdatamodels") }

    /// Every `.xcdatamodel` directory under `xcdatamodels/`, as paths relative to it.
    static func allVersions() throws -> [String] {
        let root = xcdatamodelsURL.path
        let enumerator = try #require(FileManager.default.enumerator(atPath: root))
        var versions: [String] = []
        while let path = enumerator.nextObject() as? String {
            if path.hasSuffix(".xcdatamodel") { versions.append(path) }
        }
        return versions.sorted()
    }

    @Test("every model version loads and freezes, except the known list")
    func everyVersionLoads() throws {
        let versions = try Self.allVersions()
        #expect(versions.count == 212)
        var failures: [String: String] = [:]
        var entityCount = 0
        for version in versions {
            do {
                let model = try ManagedObjectModel(contentsOf: Self.xcdatamodelsURL.appendingPathComponent(version))
                try model.freeze()
                entityCount += model.entities.count
            } catch let error as ModelError {
                failures[version] = error.description
            }
        }
        for (version, message) in failures.sorted(by: { $0.key < $1.key }) {
            let known = Self.knownFailures[version]
            #expect(known != nil, "\(version) does not load: \(message)")
            if let known { #expect(message.contains(known), "\(version): \(message)") }
        }
        for version in Self.knownFailures.keys.sorted() where failures[version] == nil {
            Issue.record("\(version) is listed as failing but loads now; update the list and docs/models.md")
        }
        #expect(entityCount > 1000)
    }

    @Test("every model bundle loads its current version")
    func everyBundleLoadsCurrentVersion() throws {
        let root = Self.xcdatamodelsURL.path
        let enumerator = try #require(FileManager.default.enumerator(atPath: root))
        var bundles: [String] = []
        while let path = enumerator.nextObject() as? String {
            if path.hasSuffix(".xcdatamodeld") { bundles.append(path) }
        }
        #expect(bundles.count == 104)
        for bundle in bundles.sorted() {
            let url = Self.xcdatamodelsURL.appendingPathComponent(bundle)
            let current = try ManagedObjectModel.currentVersionURL(inBundle: url)
            let relative = bundle + "/" + current.lastPathComponent
            if Self.knownFailures[relative] != nil { continue }
            let model = try ManagedObjectModel(contentsOf: url)
            #expect(model.sourceURL?.path == current.appendingPathComponent("contents").path)
        }
    }

    @Test("the current version comes from .xccurrentversion, else the last version")
    func currentVersionChoice() throws {
        let brave = Self.xcdatamodelsURL.appendingPathComponent("brave__brave-ios/Sources/Data/models/Model.xcdatamodeld")
        #expect(try ManagedObjectModel.currentVersionURL(inBundle: brave).lastPathComponent == "Model27.xcdatamodel")
        // An empty <dict/> in .xccurrentversion: the last version in numeric name order.
        let evolution = Self.xcdatamodelsURL.appendingPathComponent(
            "JohnEstropia__CoreStore/Demo/Sources/Demos/Advanced/EvolutionDemo/Advanced.EvolutionDemo.xcdatamodeld")
        let versions = try ManagedObjectModel.versionURLs(inBundle: evolution).map(\.lastPathComponent)
        #expect(try ManagedObjectModel.currentVersionURL(inBundle: evolution).lastPathComponent == versions.last)
    }
}
