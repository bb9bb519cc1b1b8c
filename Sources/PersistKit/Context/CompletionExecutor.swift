/// Where a queued save's second half runs instead of the group commit's committer thread
/// (``ManagedObjectContext/saveQueued(overlapping:leadingIfIdle:completingOn:completion:)``):
/// called on the committer with the work to do, once the save's write committed or failed,
/// it runs that work on a thread of its own (persistd: the connection's event loop).
public typealias CompletionExecutor = @Sendable (@escaping @Sendable () -> Void) -> Void
