import Dispatch
import Foundation
import PersistKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `persistd` serving: resolve the configuration, start the server, wait for signals.
///
/// Under systemd (see `docs/systemd.md`): serves the sockets it is passed (`LISTEN_FDS`),
/// sends `READY=1` once the store is loaded, pings the watchdog, reloads on SIGHUP between
/// `RELOADING=1` and `READY=1`, sends `STOPPING=1` on SIGTERM, and logs to the journal.
public enum Daemon {
    /// Runs the daemon; returns only on a start failure (exit status 1, or 2 for usage), and
    /// exits the process with 0 after a graceful shutdown.
    public static func run(_ arguments: DaemonArguments, environment: [String: String]) -> Int32 {
        let logger = Logger.daemon
        logger.configure(destination: LogDestination.detect(environment: environment), level: .info)
        let configuration: ServerConfiguration
        do {
            configuration = try DaemonConfiguration.resolve(arguments, environment: environment)
        } catch {
            logger.log(.error, error.message)
            FileHandle.standardError.write(Data(DaemonArguments.usage.utf8))
            return 2
        }
        logger.level = configuration.logLevel
        let notifier = SystemdNotifier(environment: environment)
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
                logger.log(.notice, "signal \(number): shutting down")
                notifier.stopping()
                guard let server = running.withLock({ $0 }) else {
                    pendingStop.store(true, ordering: .sequentiallyConsistent)
                    return
                }
                stop(server)
            }
            source.resume()
            sources.append(source)
        }
        // SIGHUP before the server runs is ignored (nothing to reload yet); after, it reloads.
        // (Resumed at once: a source released while suspended traps, as on a start failure.)
        signal(SIGHUP, SIG_IGN)
        let hangUp = DispatchSource.makeSignalSource(signal: SIGHUP, queue: signals)
        hangUp.setEventHandler {}
        hangUp.resume()
        sources.append(hangUp)

        let server: Server
        do {
            let activated = try SocketActivation.listeningSockets()
            server = try Server(configuration: configuration, activatedSockets: activated) { progress in
                logger.log(.notice, progress)
                notifier.status(progress)
            }
        } catch let error as SocketActivationError {
            logger.log(.error, error.message)
            return 1
        } catch {
            logger.log(.error, "\(error)")
            return 1
        }
        server.start()
        let supervisor = SystemdSupervisor(server: server, notifier: notifier, watchdogInterval: SystemdSupervisor.watchdogInterval(),
                                           statusInterval: Double(environment["PERSISTD_STATUS_INTERVAL"] ?? "") ?? 5)
        let store = configuration.storeType == .inMemory ? "(memory)" : configuration.storePath
        logger.log(.notice, "serving \(configuration.storeType.rawValue) store \(store) on \(server.socketPaths.joined(separator: ", "))")
        hangUp.setEventHandler {
            reload(server, arguments: arguments, environment: environment, notifier: notifier, supervisor: supervisor)
        }
        if let hook = SystemdTestHooks.install(server: server, environment: environment, queue: signals) { sources.append(hook) }
        // Type=notify: the store is loaded, the sockets served, SIGHUP handled: ready. (A
        // signal handler installed after READY=1 could miss a reload sent right after it.)
        // A no-op without NOTIFY_SOCKET.
        notifier.ready(status: supervisor.currentStatus)
        supervisor.start()
        signals.sync {
            running.withLock { $0 = server }
            if pendingStop.load(ordering: .sequentiallyConsistent) { stop(server) }
        }
        withExtendedLifetime((sources, supervisor)) { dispatchMain() }
    }

    /// SIGHUP: reads the configuration again and applies what can change while running.
    /// Runs on the signal queue, so reloads do not overlap.
    private static func reload(_ server: Server, arguments: DaemonArguments, environment: [String: String],
                               notifier: SystemdNotifier, supervisor: SystemdSupervisor) {
        notifier.reloading()
        let logger = Logger.daemon
        let fresh: ServerConfiguration
        do {
            fresh = try DaemonConfiguration.resolve(arguments, environment: environment)
        } catch {
            logger.log(.error, "reload failed, keeping the running configuration: \(error.message)")
            notifier.ready(status: supervisor.currentStatus)
            return
        }
        let reload = ConfigurationReload(running: server.state.configuration, new: fresh)
        if !reload.needsRestart.isEmpty {
            logger.log(.warning, "reload: \(reload.needsRestart.joined(separator: ", ")) changed; restart persistd to apply (keeping the running values)")
        }
        let done = DispatchSemaphore(value: 0)
        server.reload(reload.applied) { done.signal() }
        done.wait()
        logger.level = reload.applied.logLevel
        logger.log(.notice, "reloaded the configuration (log level \(reload.applied.logLevel.name))")
        notifier.ready(status: supervisor.currentStatus)
    }

    private static func stop(_ server: Server) {
        if let commits = server.state.sqliteStore?.groupCommitCounters, commits.groups > 0 {
            Logger.daemon.log(.info, "group commit: \(commits.committed + commits.failed) writes in \(commits.groups) transactions"
                + " (largest \(commits.largestGroup), \(commits.failed) failed, \(commits.ledWhenIdle) committed on the saving thread)")
        }
        if let checkpoints = server.state.sqliteStore?.checkpointCounters, checkpoints.background + checkpoints.onCommit > 0 {
            Logger.daemon.log(.info, "WAL checkpoints: \(checkpoints.background) in the background, \(checkpoints.onCommit) on the committing thread;"
                + " the WAL restarted \(checkpoints.restarts) times")
        }
        server.shutdown {
            Logger.daemon.log(.notice, "stopped")
            // The store is closed and every reply written; exit without running atexit
            // handlers, which may wait on queues still parked in dispatchMain.
            _exit(0)
        }
    }
}
