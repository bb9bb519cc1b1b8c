import Foundation

/// A notification `userInfo` with fixed keys, built once: each post copies it and sets the
/// values by index, so no key is hashed or compared per post.
///
/// Building `[AnyHashable: Any]` from a literal hashes every key through `AnyHashable`, and a
/// bucket collision compares two of them, a dynamic cast of thousands of instructions; with
/// four posts per save that was a noticeable part of saving one object. A copy of the
/// template keeps its bucket layout, so its indices stay valid for the copy.
///
/// ``post(_:object:_:_:_:)`` goes further: each thread keeps one copy of the template, fills
/// it in place, posts it and empties its values again. When no observer kept the
/// notification, the copy is the thread's alone again and the next post allocates and copies
/// nothing; when one did, filling it copies it first (copy on write), so what an observer
/// kept never changes.
///
/// Each key has an empty value (an empty set), which the template holds between posts: an
/// empty set given for a key leaves it in place, so a save of one new object, whose updated and
/// deleted sets are empty, writes and empties again only the slots that hold something
/// (assigning an existential and putting the empty value back cost about 280 instructions a
/// slot under callgrind, six slots a save).
struct NotificationUserInfoTemplate {
    private let dictionary: [AnyHashable: Any]
    private let indices: [Dictionary<AnyHashable, Any>.Index]
    /// Each key's empty value, in the order of the keys. The template's own values are the
    /// same, but reading them back through `dictionary.values[index]` to empty a filled key
    /// cost more (about 230 instructions a save of one object, under callgrind) than this copy.
    private let emptyValues: [Any]
    /// The thread-specific slot holding this template's copy for the thread (a retained
    /// ``ThreadCopy``, released when the thread ends).
    private let threadSlot: pthread_key_t

    /// One thread's copy of the template; `nil` while a post of that thread is using it.
    private final class ThreadCopy {
        var dictionary: [AnyHashable: Any]?
        init(_ dictionary: [AnyHashable: Any]?) { self.dictionary = dictionary }
    }

    /// A template whose keys are `keys`, in that order (each once), each holding its value of
    /// `emptyValues` (as many, in the same order) unless a post gives it another.
    init(keys: [String], emptyValues: [Any]) {
        precondition(keys.count == emptyValues.count, "NotificationUserInfoTemplate: \(keys.count) keys, \(emptyValues.count) empty values")
        var dictionary: [AnyHashable: Any] = [:]
        for (key, empty) in zip(keys, emptyValues) { dictionary[AnyHashable(key)] = empty }
        var indices: [Dictionary<AnyHashable, Any>.Index] = []
        for key in keys {
            // Found: every key was just inserted.
            if let index = dictionary.index(forKey: AnyHashable(key)) { indices.append(index) }
        }
        precondition(indices.count == keys.count, "NotificationUserInfoTemplate: duplicate keys \(keys)")
        self.dictionary = dictionary
        self.indices = indices
        self.emptyValues = emptyValues
        var slot = pthread_key_t()
        // Fails only when the process ran out of thread-specific keys (PTHREAD_KEYS_MAX, 1024),
        // which three templates made once per process do not.
        let created = pthread_key_create(&slot) { copy in
            guard let copy else { return }
            Unmanaged<AnyObject>.fromOpaque(copy).release()
        }
        precondition(created == 0, "NotificationUserInfoTemplate: pthread_key_create failed (\(created))")
        self.threadSlot = slot
    }

    /// Posts `name` from `object` on the default center with this three-key template's keys
    /// set to the sets, in the order of the keys; an empty set leaves its key the empty value.
    func post<Element: Hashable>(_ name: Notification.Name, object: ManagedObjectContext,
                                 _ first: Set<Element>, _ second: Set<Element>, _ third: Set<Element>) {
        precondition(indices.count == 3, "NotificationUserInfoTemplate: \(indices.count) keys, three sets")
        var userInfo = takeThreadCopy()
        let filled = fill(first, second, third, into: &userInfo)
        post(name, object: object, &userInfo, filled: filled)
    }

    /// Posts `name` from `object` with this four-key template's keys set to the sets and, for
    /// the last key, to `last` (a value every post gives: the saved changes).
    func post<Element: Hashable>(_ name: Notification.Name, object: ManagedObjectContext,
                                 _ first: Set<Element>, _ second: Set<Element>, _ third: Set<Element>, last: Any) {
        precondition(indices.count == 4, "NotificationUserInfoTemplate: \(indices.count) keys, four values")
        var userInfo = takeThreadCopy()
        let filled = fill(first, second, third, into: &userInfo)
        userInfo.values[indices[3]] = last
        post(name, object: object, &userInfo, filled: filled | 8)
    }

    /// Posts `name` from `object` with this four-key template's keys set to the four sets.
    func post<Element: Hashable>(_ name: Notification.Name, object: ManagedObjectContext,
                                 _ first: Set<Element>, _ second: Set<Element>, _ third: Set<Element>, _ fourth: Set<Element>) {
        precondition(indices.count == 4, "NotificationUserInfoTemplate: \(indices.count) keys, four sets")
        var userInfo = takeThreadCopy()
        var filled = fill(first, second, third, into: &userInfo)
        fill(fourth, at: 3, into: &userInfo, filled: &filled)
        post(name, object: object, &userInfo, filled: filled)
    }

    /// Sets the first three keys to the sets that are not empty, and returns which it set, one
    /// bit a slot.
    @inline(__always)
    private func fill<Element: Hashable>(_ first: Set<Element>, _ second: Set<Element>, _ third: Set<Element>,
                                         into userInfo: inout [AnyHashable: Any]) -> Int {
        var filled = 0
        fill(first, at: 0, into: &userInfo, filled: &filled)
        fill(second, at: 1, into: &userInfo, filled: &filled)
        fill(third, at: 2, into: &userInfo, filled: &filled)
        return filled
    }

    /// Sets the key at `slot` to `set` unless it is empty (the key holds its empty set then),
    /// marking the slot in `filled`.
    @inline(__always)
    private func fill<Element: Hashable>(_ set: Set<Element>, at slot: Int, into userInfo: inout [AnyHashable: Any], filled: inout Int) {
        if set.isEmpty { return }
        userInfo.values[indices[slot]] = set
        filled |= 1 << slot
    }

    /// Posts the filled `userInfo`, then puts the empty value back into each slot `filled`
    /// marks and keeps the copy for the thread's next post. In place (`inout`): the copy stays
    /// the only reference to its storage once the post is done, so emptying it copies nothing.
    private func post(_ name: Notification.Name, object: ManagedObjectContext, _ userInfo: inout [AnyHashable: Any], filled: Int) {
        NotificationCenter.default.post(name: name, object: object.notificationSender, userInfo: userInfo)
        var filled = filled
        var slot = 0
        while filled != 0 {
            if filled & 1 != 0 { userInfo.values[indices[slot]] = emptyValues[slot] }
            filled >>= 1
            slot += 1
        }
        returnThreadCopy(userInfo)
    }

    /// The calling thread's copy, taken out of its slot (a post made by an observer of this
    /// one, on the same thread, then finds none and uses the template).
    private func takeThreadCopy() -> [AnyHashable: Any] {
        guard let raw = pthread_getspecific(threadSlot) else { return dictionary }
        return Unmanaged<ThreadCopy>.fromOpaque(raw).takeUnretainedValue().dictionary.take() ?? dictionary
    }

    /// Puts `userInfo` (its values emptied) back as the calling thread's copy.
    private func returnThreadCopy(_ userInfo: consuming [AnyHashable: Any]) {
        if let raw = pthread_getspecific(threadSlot) {
            Unmanaged<ThreadCopy>.fromOpaque(raw).takeUnretainedValue().dictionary = userInfo
        } else {
            pthread_setspecific(threadSlot, Unmanaged.passRetained(ThreadCopy(userInfo)).toOpaque())
        }
    }
}
