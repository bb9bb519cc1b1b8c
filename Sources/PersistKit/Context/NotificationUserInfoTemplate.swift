import Foundation

/// A notification `userInfo` with fixed keys, built once: each post copies it and sets the
/// values by index, so no key is hashed or compared per post.
///
/// Building `[AnyHashable: Any]` from a literal hashes every key through `AnyHashable`, and a
/// bucket collision compares two of them, a dynamic cast of thousands of instructions; with
/// four posts per save that was a noticeable part of saving one object. A copy of the
/// template keeps its bucket layout, so its indices stay valid for the copy.
///
/// ``post(_:object:_:_:_:_:)`` goes further: each thread keeps one copy of the template, fills
/// it in place, posts it and empties its values again. When no observer kept the
/// notification, the copy is the thread's alone again and the next post allocates and copies
/// nothing; when one did, filling it copies it first (copy on write), so what an observer
/// kept never changes.
struct NotificationUserInfoTemplate {
    private let dictionary: [AnyHashable: Any]
    private let indices: [Dictionary<AnyHashable, Any>.Index]
    /// The thread-specific slot holding this template's copy for the thread (a retained
    /// ``ThreadCopy``, released when the thread ends).
    private let threadSlot: pthread_key_t

    /// One thread's copy of the template; `nil` while a post of that thread is using it.
    private final class ThreadCopy {
        var dictionary: [AnyHashable: Any]?
        init(_ dictionary: [AnyHashable: Any]?) { self.dictionary = dictionary }
    }

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

    /// Posts `name` from `object` on the default center, with this template's keys set to the
    /// values, in the order of `keys`: three values for a three-key template, four (`fourth`
    /// given) for a four-key one.
    func post(_ name: Notification.Name, object: ManagedObjectContext, _ first: Any, _ second: Any, _ third: Any, _ fourth: Any? = nil) {
        precondition((fourth == nil ? 3 : 4) == indices.count, "NotificationUserInfoTemplate: \(indices.count) keys, other count of values")
        var userInfo = takeThreadCopy()
        userInfo.values[indices[0]] = first
        userInfo.values[indices[1]] = second
        userInfo.values[indices[2]] = third
        if let fourth { userInfo.values[indices[3]] = fourth }
        NotificationCenter.default.post(name: name, object: object.notificationSender, userInfo: userInfo)
        for index in indices { userInfo.values[index] = () }
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
