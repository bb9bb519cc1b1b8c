/// One Swift source file the generator produced.
public struct GeneratedFile: Sendable, Hashable {
    /// Whether the file is rewritten on every run or belongs to the programmer.
    public enum Kind: Sendable, Hashable {
        /// Generated code (`_Beer.swift`, the registry): rewritten on every run.
        case machine
        /// The programmer's file (`Beer.swift`): written only when it does not exist yet.
        case human
    }

    /// The file name, without a directory (`_Beer.swift`).
    public var name: String
    /// The file's text.
    public var contents: String
    /// Whether the file is machine- or human-owned.
    public var kind: Kind

    /// Creates a file.
    public init(name: String, contents: String, kind: Kind) {
        self.name = name
        self.contents = contents
        self.kind = kind
    }
}
