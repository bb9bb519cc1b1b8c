import PersistKit

extension Session {
    /// Runs the writes `requests` in order on the session's context and passes their replies to
    /// `then`, on the context's queue, once every one is done.
    ///
    /// Saves are queued for the store's group commit, so no thread waits for a `COMMIT`:
    /// - an `insert`+`save` unit overlaps the units after it when its save writes new objects
    ///   alone (`ManagedObjectContext.saveQueued(overlapping:leadingIfIdle:completingOn:completion:)`): the next unit runs
    ///   while its write waits for its group, and a pipelined batch's saves commit together;
    /// - any other request waits until the saves before it are done, and the batch goes on in
    ///   a hop to the context's queue; a `save` that ends the batch is queued, one in the
    ///   middle saves at once.
    ///
    /// Each reply is the one the request would have had alone, with one difference when a
    /// write fails: a save queued behind a failed one does not save the failed one's objects,
    /// which are pending again for the next save (docs/daemon.md, "Overlapping saves").
    ///
    /// A `close` that comes while the batch waits for a save is held off until the batch is
    /// answered (``writeBatches``): its saves' objects are between their two halves, and,
    /// between two saves, the rest of the batch is still to run.
    ///
    /// `leadingIfIdle`: the batch's saves commit on this thread when the store's group commit
    /// is idle (`ManagedObjectContext.saveQueued(overlapping:leadingIfIdle:completingOn:completion:)`).
    func writeReplies(_ requests: [WireRequest], leadingIfIdle: Bool = false, then: @escaping ([WireReply]) -> Void) {
        writeBatches.withLock { $0.inFlight += 1 }
        advance(WriteBatch(requests, leadingIfIdle: leadingIfIdle) { [self] replies in
            then(replies)
            // The last batch in flight runs the close that came meanwhile, if any.
            let close = writeBatches.withLock { state -> (() -> Void)? in
                state.inFlight -= 1
                guard state.inFlight == 0 else { return nil }
                defer { state.closeAfter = nil }
                return state.closeAfter
            }
            close?()
        })
    }

    /// Runs `batch`'s requests from the first not started on, until they are all started or
    /// one waits for the saves in flight; finishes the batch when nothing is left in flight.
    private func advance(_ batch: WriteBatch) {
        batch.isAdvancing = true
        defer { batch.isAdvancing = false }
        let requests = batch.requests
        while batch.next < requests.count {
            let index = batch.next
            let request = requests[index]
            // An insert saved at once shares the save's transaction (Session+InsertThenSave.swift).
            if request.op == "insert", index + 1 < requests.count, requests[index + 1].op == "save" {
                batch.next += 2
                batch.inFlight += 1
                let free = insertThenSave(request, requests[index + 1], mode: .overlapping,
                                          leadingIfIdle: batch.leadingIfIdle) { [self] (unit: consuming [WireReply]) in
                    // Moved out of the unit's array, not copied (a copy retains what a reply holds).
                    batch.replies[index + 1] = unit.removeLast()
                    batch.replies[index] = unit.removeLast()
                    unitDone(batch)
                }
                if !free { return }
                continue
            }
            // Anything else starts once the saves before it are done.
            if batch.inFlight > 0 { return }
            batch.next += 1
            if request.op == "save" {
                batch.inFlight += 1
                let free = saveReply(request, mode: index + 1 == requests.count ? .queued : .now) { [self] reply in
                    batch.replies[index] = reply
                    unitDone(batch)
                }
                if !free { return }
                continue
            }
            Logger.daemon.log(.debug, "request", [.requestID(request.id.encoded), .op(request.op)] + LogField.peer(peer))
            batch.replies[index] = checkedWriteReply(request)
        }
        if batch.inFlight == 0 { batch.finish() }
    }

    /// A unit of `batch` (a save, or an `insert`+`save`) has its replies: the batch finishes
    /// when it was the last, or goes on when it was the last in flight and requests wait.
    private func unitDone(_ batch: WriteBatch) {
        batch.inFlight -= 1
        // Called back before the unit's call returned: advance(_:) goes on by itself.
        guard !batch.isAdvancing, batch.inFlight == 0 else { return }
        if batch.next == batch.requests.count { return batch.finish() }
        // From the committer's thread, most likely: the rest runs in a hop of its own.
        let work = ContextQueueWork { [self] in advance(batch) }
        context.perform { work.run() }
    }
}
