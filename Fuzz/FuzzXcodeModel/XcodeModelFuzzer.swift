import Foundation
import PersistKit

/// The fuzz target of the Xcode model loaders: the input is an `.xcdatamodel`'s XML `contents`
/// file, and is also given to the legacy reader of binary `elements` archives (which reads any
/// property list). A model that loads is written as JSON, read back, and its version hashes are
/// computed. Thrown errors are fine; a crash is not.
enum XcodeModelFuzzer {
    static func run(_ input: [UInt8]) {
        let data = Data(input)
        if let model = try? ManagedObjectModel(xcdatamodelContents: data, sourceURL: nil) {
            use(model)
        }
        if let model = try? ManagedObjectModel(xcdatamodelElements: data, sourceURL: nil) {
            use(model)
        }
    }

    static func use(_ model: ManagedObjectModel) {
        _ = model.entityVersionHashesByName
        if let json = try? model.jsonRepresentation() {
            _ = try? ManagedObjectModel(json: json, sourceURL: nil)
        }
    }
}
