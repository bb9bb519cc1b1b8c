import Foundation

extension ManagedObjectModel {
    /// Loads and validates a model file, choosing the reader by the path's extension.
    ///
    /// - `.json`: our JSON model format (``init(json:sourceURL:)``).
    /// - `.xcdatamodel`: an Xcode model version directory; its XML `contents` file is read
    ///   (``init(xcdatamodelContents:sourceURL:)``).
    /// - `.xcdatamodeld`: an Xcode model bundle; its current version is read (see
    ///   ``currentVersionURL(inBundle:)``).
    ///
    /// The corresponding Core Data initializer is `NSManagedObjectModel(contentsOf:)`, which
    /// reads compiled `.mom`/`.momd` files instead; those are not supported here.
    ///
    /// - Throws: ``ModelError`` naming the file (and entity and property) of the first problem.
    public convenience init(contentsOf url: URL) throws {
        let url = url.standardizedFileURL
        switch url.pathExtension {
        case "json":
            try self.init(json: Self.readFile(url), sourceURL: url)
        case "xcdatamodel":
            let contents = url.appendingPathComponent("contents")
            let elements = url.appendingPathComponent("elements")
            if !FileManager.default.fileExists(atPath: contents.path) && FileManager.default.fileExists(atPath: elements.path) {
                // Xcode 3's binary archive form (XcodeLegacyModelReader.swift).
                try self.init(xcdatamodelElements: Self.readFile(elements), sourceURL: elements)
                return
            }
            try self.init(xcdatamodelContents: Self.readFile(contents), sourceURL: contents)
        case "xcdatamodeld":
            try self.init(contentsOf: Self.currentVersionURL(inBundle: url))
        case "mom", "momd":
            throw ModelError(file: url.path, "compiled Core Data models (.mom, .momd) are not supported; load the .xcdatamodeld or a .json model")
        default:
            throw ModelError(file: url.path, "unknown model file type (expected .json, .xcdatamodel or .xcdatamodeld)")
        }
    }

    /// Loads and validates the XML `contents` file of an Xcode `.xcdatamodel`.
    ///
    /// - Parameters:
    ///   - data: The `contents` file's bytes.
    ///   - sourceURL: Where the bytes came from; named in every error.
    public convenience init(xcdatamodelContents data: Data, sourceURL: URL?) throws {
        self.init()
        self.sourceURL = sourceURL
        try XcodeModelReader(file: sourceURL?.path).read(data, into: self)
        try resolveAndValidate()
    }

    /// The `.xcdatamodel` version directories of an `.xcdatamodeld` bundle, sorted by name
    /// without the extension, numbers in names comparing by value: `Model`, `Model 2`, …,
    /// `Model 9`, `Model 10`.
    public static func versionURLs(inBundle bundle: URL) throws -> [URL] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
        } catch {
            throw ModelError(file: bundle.path, "cannot read the model bundle: \(error.localizedDescription)")
        }
        return names
            .filter { $0.hasSuffix(".xcdatamodel") }
            .sorted { versionSortKey($0).compare(versionSortKey($1), options: [.numeric, .literal]) == .orderedAscending }
            .map { bundle.appendingPathComponent($0) }
    }

    /// The current version of an `.xcdatamodeld` bundle: the one its `.xccurrentversion`
    /// property list names under `_XCCurrentVersionName`; without one (or with an empty
    /// one), the only version, or the last in ``versionURLs(inBundle:)`` order.
    ///
    /// - Throws: ``ModelError`` naming the bundle when it holds no version, or when
    ///   `.xccurrentversion` names a version that is not there.
    public static func currentVersionURL(inBundle bundle: URL) throws -> URL {
        let versions = try versionURLs(inBundle: bundle)
        let plistURL = bundle.appendingPathComponent(".xccurrentversion")
        if let data = try? Data(contentsOf: plistURL) {
            let plist: Any
            do {
                plist = try PropertyListSerialization.propertyList(from: data, format: nil)
            } catch {
                throw ModelError(file: plistURL.path, "not a valid property list")
            }
            if let name = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String, !name.isEmpty {
                guard let version = versions.first(where: { $0.lastPathComponent == name }) else {
                    throw ModelError(file: bundle.path, "the current version \(name) named by .xccurrentversion is not in the bundle")
                }
                return version
            }
        }
        guard let last = versions.last else {
            throw ModelError(file: bundle.path, "the model bundle holds no .xcdatamodel version")
        }
        return last
    }

    /// A version's name without `.xcdatamodel`, so that `Model` sorts before `Model 2`.
    private static func versionSortKey(_ name: String) -> String {
        String(name.dropLast(".xcdatamodel".count))
    }

    private static func readFile(_ url: URL) throws -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            throw ModelError(file: url.path, exists ? "cannot read the file" : "no such file")
        }
    }
}
