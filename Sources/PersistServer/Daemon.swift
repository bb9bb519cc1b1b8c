import Dispatch
import Foundation
import PersistKit
import Synchronization
import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// `persistd` serving: resolve the configuration, start the server, wait for SIGTERM/SIGINT.
public enum Daemon {
    /// Runs the daemon; returns only on a start failure (exit status 1, or 2 for usage), and
    /// exits the process with 0 after a graceful shutdown.
    public static func run(_ arguments: DaemonArguments, environment: [String: String]) -> Int32 {
        let configuration: ServerConfiguration
        do {
            configuration = try DaemonConfiguration.resolve(arguments, environment: environment)
        } catch {
            log("\(error.message)\n\(DaemonArguments.usage)")
            return 2
        }
        signal(SIGPIPE, SIG_IGN)
        // Signals first: once the socket is bound a client (or systemd) may send SIGTERM at
        // any moment, and a signal that arrives before its source exists would be lost.
        let signals = DispatchQueue(label: "persistd.signals")
        let running = Locked<Server?>(nil)
        let pendingStop = Atomic<Bool>(false)
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: signals)
            source.setEventHandler {
                log("signal \(number): shutting down")
                _ = sd_notify(0, "STOPPING=1")
                guard let server = running.withLock({ $0 }) else {
                    pendingStop.store(true, ordering: .sequentiallyConsistent)
                    return
                }
                stop(server)
            }
            source.resume()
            sources.append(source)
        }

        let server: Server
        do {
            server = try Server(configuration: configuration)
        } catch {
            log(error.message)
            return 1
        }
        server.start()
        log("serving \(configuration.storeType.rawValue) store \(configuration.storeType == .inMemory ? "(memory)" : configuration.storePath) on \(configuration.socketPath)")
        // Type=notify: a no-op when NOTIFY_SOCKET is not set.
        _ = sd_notify(0, "READY=1")
        signals.sync {
            running.withLock { $0 = server }
            if pendingStop.load(ordering: .sequentiallyConsistent) { stop(server) }
        }
        withExtendedLifetime(sources) { dispatchMain() }
    }

    private static func stop(_ server: Server) {
        server.shutdown {
            log("stopped")
            // The store is closed and every reply written; exit without running atexit
            // handlers, which may wait on queues still parked in dispatchMain.
            _exit(0)
        }
    }

    static func log(_ message: String) {
        FileHandle.standardError.write(Data("persistd: \(message)\n".utf8))
    }
}
