import Foundation

/// A blocking call run on a thread of its own, for a test that must go on meanwhile.
///
/// Not a `Task`: blocking socket reads of tests running in parallel can hold every thread of
/// Swift's cooperative pool (two on a 2-core machine), and a task would then wait for one.
final class BackgroundCall<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `result` is written once, on the thread, before `done` is signalled,
    // and read only after waiting for `done`.
    private var result: Result<Value, any Error>?
    private let done = DispatchSemaphore(value: 0)

    /// Starts `body` on a new thread.
    init(_ body: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            result = Result { try body() }
            done.signal()
        }
        thread.start()
    }

    /// Waits for the call to finish and returns its value, or throws its error.
    func value() throws -> Value {
        done.wait()
        done.signal() // later calls return at once
        guard let result else { throw HarnessError("BackgroundCall: finished without a result") }
        return try result.get()
    }
}
