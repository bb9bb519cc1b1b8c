/// Random edits of a request line, for the tests that hold a fast line reader to the general
/// parser: one to three bytes replaced, removed or inserted, drawn from `alphabet`.
enum LineMutation {
    /// `line` with one to three random edits.
    static func mutated(_ line: String, alphabet: [UInt8], generator: inout MigrationCrashTests.SplitMix64) -> [UInt8] {
        var bytes = Array(line.utf8)
        for _ in 0...(generator.next() % 3) {
            let position = Int(generator.next() % UInt64(bytes.count + 1))
            let byte = alphabet[Int(generator.next() % UInt64(alphabet.count))]
            switch generator.next() % 3 {
            case 0 where position < bytes.count: bytes[position] = byte
            case 1 where position < bytes.count: bytes.remove(at: position)
            default: bytes.insert(byte, at: position)
            }
        }
        return bytes
    }
}
