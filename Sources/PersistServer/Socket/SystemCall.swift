#if canImport(Glibc)
import Glibc
#endif

/// The one place `EINTR` is handled: runs `call` again while it fails with `EINTR`, and
/// returns its result, or `-errno` when it fails otherwise (as swift-system's
/// `valueOrErrno(retryOnInterrupt:)` does).
@inline(__always)
func retryingOnInterrupt<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        if result == -1 { return Result(-errno) }
        return result
    }
}

/// Makes `descriptor` non-blocking and close-on-exec.
func makeNonBlocking(_ descriptor: Int32) {
    let flags = fcntl(descriptor, F_GETFL)
    _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
}
