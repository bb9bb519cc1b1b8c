import CSystemd
import Dispatch
import Foundation

/// Keeps systemd informed while persistd serves: `WATCHDOG=1` pings and the `STATUS=` line.
///
/// Watchdog: with `WatchdogSec=` systemd sets `WATCHDOG_USEC`; persistd pings at half that
/// interval, but only when the previous ``Server/probe(completion:)`` came back healthy: a
/// probe hops onto the listener queue (the serving loop) and then reads the store. If either
/// hangs, the pings stop, systemd kills the service with SIGABRT and `Restart=on-failure`
/// starts it again. The supervisor runs on its own queue, so a hung serving loop cannot make
/// it ping. See sd_watchdog_enabled(3).
public final class SystemdSupervisor: @unchecked Sendable {
    // @unchecked Sendable: every mutable property is touched only on `queue`.
    private let queue = DispatchQueue(label: "persistd.supervisor")
    private let server: Server
    private let notifier: SystemdNotifier
    private let watchdogInterval: Double?
    private let statusInterval: Double
    private var timers: [any DispatchSourceTimer] = []
    private var probeOutstanding = false
    private var probeFailure: String?
    private var withholding = false
    private var lastRequests = 0
    private var lastTick = DispatchTime.now()
    private var lastSaves = 0
    private var lastSaveTime: DispatchTime?

    /// Seconds between watchdog pings: half of `WATCHDOG_USEC`, or `nil` when the watchdog is
    /// off (not set, or `WATCHDOG_PID` names another process). The corresponding C function is
    /// `sd_watchdog_enabled`.
    public static func watchdogInterval() -> Double? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return Double(microseconds) / 2 / 1_000_000
    }

    /// A supervisor for `server`; `statusInterval` seconds between `STATUS=` updates.
    public init(server: Server, notifier: SystemdNotifier, watchdogInterval: Double?, statusInterval: Double = 5) {
        self.server = server
        self.notifier = notifier
        self.watchdogInterval = watchdogInterval
        self.statusInterval = statusInterval
    }

    /// The status now, for `READY=1` and `STATUS=` (without updating the request rate).
    public var currentStatus: String {
        queue.sync { status(updatingRate: false).text }
    }

    /// Starts probing and pinging (if the watchdog is on) and updating the status (if systemd listens).
    public func start() {
        queue.async { [self] in
            lastRequests = server.state.statistics.requestsServed.load(ordering: .relaxed)
            // No baseline for saves: the server serves before `READY=1`, and this runs after it,
            // so a save counted by now is a client's, the last save until the next. (A baseline
            // taken here hid a save made right after `READY=1` from the status line for good.)
            lastTick = .now()
            if let interval = watchdogInterval {
                startProbe()
                timers.append(timer(every: interval) { [unowned self] in watchdogTick(interval) })
            }
            if notifier.isEnabled {
                timers.append(timer(every: statusInterval) { [unowned self] in notifier.status(status(updatingRate: true).text) })
            }
        }
    }

    private func timer(every interval: Double, _ handler: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(Int(interval * 50)))
        timer.setEventHandler(handler: handler)
        timer.resume()
        return timer
    }

    private func watchdogTick(_ interval: Double) {
        if probeOutstanding {
            if !withholding {
                withholding = true
                Logger.daemon.log(.error, "withholding the watchdog ping: the serving loop or the store did not answer within \(interval) s")
            }
            return
        }
        if let probeFailure {
            if !withholding {
                withholding = true
                Logger.daemon.log(.error, "withholding the watchdog ping: \(probeFailure)")
            }
        } else {
            // Logged before the ping: whoever sees the ping resume finds the line already written.
            if withholding {
                withholding = false
                Logger.daemon.log(.notice, "the serving loop and the store answer again; watchdog pings resumed")
            }
            notifier.watchdog()
        }
        startProbe()
    }

    private func startProbe() {
        probeOutstanding = true
        server.probe { [self] failure in
            queue.async { [self] in
                probeOutstanding = false
                probeFailure = failure
            }
        }
    }

    private func status(updatingRate: Bool) -> StatusLine {
        let statistics = server.state.statistics
        let now = DispatchTime.now()
        let requests = statistics.requestsServed.load(ordering: .relaxed)
        let saves = statistics.saves.load(ordering: .relaxed)
        let elapsed = Double(now.uptimeNanoseconds - lastTick.uptimeNanoseconds) / 1e9
        let rate = elapsed > 0 ? Double(requests - lastRequests) / elapsed : 0
        if saves != lastSaves { lastSaveTime = now }
        if updatingRate {
            lastRequests = requests
            lastTick = now
            lastSaves = saves
        }
        return StatusLine(connections: statistics.openConnections.load(ordering: .relaxed),
                          requestsPerSecond: updatingRate ? rate : 0,
                          secondsSinceLastSave: lastSaveTime.map { Int((now.uptimeNanoseconds - $0.uptimeNanoseconds) / 1_000_000_000) })
    }

    /// Stops the timers.
    public func stop() {
        queue.async { [self] in
            for timer in timers { timer.cancel() }
            timers = []
        }
    }
}
