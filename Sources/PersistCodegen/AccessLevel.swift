/// The access level of generated declarations (`--access`).
public enum AccessLevel: String, Sendable, Hashable, CaseIterable {
    /// Visible in the module that contains the generated files only (the default).
    case `internal`
    /// Visible to modules that import the one holding the generated files.
    case `public`

    /// The modifier written before a declaration, with a trailing space; empty for internal.
    var modifier: String { self == .public ? "public " : "" }
}
