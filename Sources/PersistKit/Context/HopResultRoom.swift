/// Room on the stack for the result a ``ManagedObjectContext`` carries back from a
/// synchronous hop onto its queue (`performAndWait` called off the queue): four words,
/// word-aligned. The hop initializes the result in its bytes and moves it out again, so the
/// room itself never holds a value of its own type after it is made, nor a reference.
struct HopResultRoom {
    /// The bytes, as four words (zeroed when made; never read as words).
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
}
