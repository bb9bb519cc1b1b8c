import Foundation

/// The versions of a model, oldest first, so a store written with any of them can be migrated
/// step by step (staged migration) to the newest.
///
/// Core Data finds the source model of a migration by searching the app bundle for a model
/// whose entity version hashes equal the store's; on a server there is no app bundle, so the
/// versions are handed over explicitly, usually loaded from the `.xcdatamodeld` bundle:
///
/// ```swift
/// let bundle = URL(fileURLWithPath: "Model.xcdatamodeld")
/// var options = StoreOptions()
/// options.modelVersionHistory = try ModelVersionHistory(bundle: bundle)
/// try coordinator.addPersistentStore(type: .sqlite, at: storeURL, options: options)
/// ```
///
/// Equality and hashing compare the models by identity, so the value can sit in
/// ``StoreOptions``.
public struct ModelVersionHistory: Sendable, Hashable {
    /// The model versions, oldest first.
    public let versions: [ManagedObjectModel]
    /// A name for each version (the `.xcdatamodel` name without extension, or `v1`, `v2`, …).
    public let names: [String]

    /// A history of models built in code, oldest first; named `v1`, `v2`, ….
    public init(_ versions: [ManagedObjectModel]) {
        self.versions = versions
        self.names = versions.indices.map { "v\($0 + 1)" }
    }

    /// Every version of an Xcode `.xcdatamodeld` bundle, in
    /// ``ManagedObjectModel/versionURLs(inBundle:)`` order (`Model`, `Model 2`, …, `Model 10`).
    ///
    /// - Throws: ``ModelError`` naming the version that does not load.
    public init(bundle: URL) throws {
        let urls = try ManagedObjectModel.versionURLs(inBundle: bundle)
        var versions: [ManagedObjectModel] = []
        for url in urls { versions.append(try ManagedObjectModel(contentsOf: url)) }
        self.versions = versions
        self.names = urls.map { $0.deletingPathExtension().lastPathComponent }
    }

    /// The index of the newest version whose entity hashes (for `configuration`) equal `hashes`.
    func index(matching hashes: [String: Data], configuration: String?) -> Int? {
        versions.indices.reversed().first { index in
            versions[index].entityVersionHashes(forConfiguration: configuration) == hashes
        }
    }

    /// Compares the models by identity.
    public static func == (lhs: ModelVersionHistory, rhs: ModelVersionHistory) -> Bool {
        lhs.names == rhs.names && lhs.versions.map(ObjectIdentifier.init) == rhs.versions.map(ObjectIdentifier.init)
    }

    /// Hashes the models' identities.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(names)
        for version in versions { hasher.combine(ObjectIdentifier(version)) }
    }
}
