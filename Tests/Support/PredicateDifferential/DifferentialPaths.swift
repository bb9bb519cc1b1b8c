/// What ``PredicateGenerator`` can say about one entity of ``DifferentialStores``' model:
/// its key paths by kind and its to-many paths.
struct DifferentialPaths: Sendable {
    var strings: [String]
    var numbers: [String]
    var dates: [String] = []
    var bools: [String] = []
    var toOne: [(String, String)] = []
    /// To-many key paths and the entity of their elements.
    var toMany: [(String, String)]

    /// The paths of `Person`, `Team` and `Tag`.
    static let byEntity: [String: DifferentialPaths] = [
        "Person": DifferentialPaths(strings: ["name", "nick", "team.name"], numbers: ["age", "score", "team.rank"], dates: ["born"], bools: ["active"],
                        toOne: [("team", "Team")], toMany: [("tags", "Tag"), ("team.members", "Person"), ("tags.people", "Person"),
                                                          ("friends", "Person"), ("friendOf", "Person"), ("friends.friends", "Person"), ("friends.tags", "Tag")]),
        "Team": DifferentialPaths(strings: ["name"], numbers: ["rank"], toMany: [("members", "Person"), ("members.tags", "Tag")]),
        "Tag": DifferentialPaths(strings: ["name"], numbers: [], toMany: [("people", "Person"), ("people.tags", "Tag"), ("people.team.members", "Person")]),
    ]
}
