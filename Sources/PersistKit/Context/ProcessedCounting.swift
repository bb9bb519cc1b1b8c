/// A context's list of objects that counts, at its front, the objects a change notification
/// reported (``ManagedObjectContext/processPendingChanges()``): the inserted objects
/// (``InsertedObjects``) and the changed and deleted ones (``ListedObjects``). Each keeps the
/// count through its own ways of changing; what is asked of the count is shared here.
protocol ProcessedCounting {
    /// The objects; the first ``processedCount`` of them were processed.
    var objects: [ManagedObject] { get }
    /// How many objects at the front of ``objects`` were processed.
    var processedCount: Int { get }
    /// Marks every listed object processed.
    mutating func markProcessed()
}

extension ProcessedCounting {
    /// How many objects are unprocessed.
    var unprocessedCount: Int { objects.count - processedCount }

    /// Whether every listed object was processed.
    var isProcessed: Bool { processedCount == objects.count }

    /// Calls `body` with each unprocessed object, in order, borrowed from the list (not
    /// retained for the call). `body` must not change the list.
    @inline(__always) func forEachUnprocessed(_ body: (ManagedObject) -> Void) {
        for index in processedCount..<objects.count { objects.withBorrowedElement(at: index, body) }
    }
}
