/// A notification `userInfo` with fixed keys, built once: each post copies it and sets the
/// values by index, so no key is hashed or compared per post.
///
/// Building `[AnyHashable: Any]` from a literal hashes every key through `AnyHashable`, and a
/// bucket collision compares two of them, a dynamic cast of thousands of instructions; with
/// four posts per save that was a noticeable part of saving one object. A copy of the
/// template keeps its bucket layout, so its indices stay valid for the copy.
struct NotificationUserInfoTemplate {
    private let dictionary: [AnyHashable: Any]
    private let indices: [Dictionary<AnyHashable, Any>.Index]

    /// A template whose keys are `keys`, in that order (each once).
    init(keys: [String]) {
        var dictionary: [AnyHashable: Any] = [:]
        for key in keys { dictionary[AnyHashable(key)] = () }
        var indices: [Dictionary<AnyHashable, Any>.Index] = []
        for key in keys {
            // Found: every key was just inserted.
            if let index = dictionary.index(forKey: AnyHashable(key)) { indices.append(index) }
        }
        precondition(indices.count == keys.count, "NotificationUserInfoTemplate: duplicate keys \(keys)")
        self.dictionary = dictionary
        self.indices = indices
    }

    /// The `userInfo` with the values of the three keys, in the order of `keys`.
    func filled(_ first: Any, _ second: Any, _ third: Any) -> [AnyHashable: Any] {
        var result = dictionary
        result.values[indices[0]] = first
        result.values[indices[1]] = second
        result.values[indices[2]] = third
        return result
    }

    /// The `userInfo` with the values of the four keys, in the order of `keys`.
    func filled(_ first: Any, _ second: Any, _ third: Any, _ fourth: Any) -> [AnyHashable: Any] {
        var result = dictionary
        result.values[indices[0]] = first
        result.values[indices[1]] = second
        result.values[indices[2]] = third
        result.values[indices[3]] = fourth
        return result
    }
}
