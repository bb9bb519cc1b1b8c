import Foundation
import Testing
import PersistKit
@testable import PersistCodegen

@Suite("Code generator")
struct CodeGeneratorTests {
    @Test("registry names come from the model file's name")
    func registryNames() {
        #expect(CodeGenerator.registryName(forModelFile: "Beers.model.json") == "BeersClasses")
        #expect(CodeGenerator.registryName(forModelFile: "My Model 2.xcdatamodel") == "MyModel2Classes")
        #expect(CodeGenerator.registryName(forModelFile: "Advanced.EvolutionDemo.xcdatamodeld") == "AdvancedEvolutionDemoClasses")
    }
}
