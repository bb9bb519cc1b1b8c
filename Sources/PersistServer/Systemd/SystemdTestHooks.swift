import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Test-only hooks, off unless `PERSISTD_TEST_HOOKS=1` is in the environment. Never set it in
/// production: it lets anyone who may signal the daemon hang it.
///
/// - SIGUSR2 blocks the serving loop (the listener queue) for `PERSISTD_TEST_BLOCK_SECONDS`
///   seconds (default 5), as a deadlock would: the watchdog tests check that pings stop.
enum SystemdTestHooks {
    /// Installs the hooks if the environment enables them; returns the signal source to keep alive.
    static func install(server: Server, environment: [String: String], queue: DispatchQueue) -> (any DispatchSourceSignal)? {
        guard environment["PERSISTD_TEST_HOOKS"] == "1" else { return nil }
        let seconds = environment["PERSISTD_TEST_BLOCK_SECONDS"].flatMap(Double.init) ?? 5
        signal(SIGUSR2, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR2, queue: queue)
        source.setEventHandler {
            Logger.daemon.log(.warning, "test hook: blocking the serving loop for \(seconds) s")
            server.blockServingLoop(seconds: seconds)
        }
        source.resume()
        return source
    }
}
