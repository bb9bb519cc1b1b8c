import CSystemd

/// Tells the service manager how the daemon is doing: `sd_notify(3)` messages on `$NOTIFY_SOCKET`.
///
/// Without `NOTIFY_SOCKET` (not started by systemd with `Type=notify`) every message is a
/// no-op, as systemd's `notify-selfcontained-example.c` does; an `@` path is an abstract
/// socket. The corresponding C function is `sd_notify`.
public struct SystemdNotifier: Sendable {
    /// Whether `NOTIFY_SOCKET` was set at start.
    public let isEnabled: Bool

    /// A notifier for a process whose environment is `environment`.
    public init(environment: [String: String]) {
        isEnabled = !(environment["NOTIFY_SOCKET"] ?? "").isEmpty
    }

    /// `READY=1`: start-up (or a reload) is finished; the store is loaded and the sockets are served.
    public func ready(status: String) { send("READY=1\nSTATUS=\(Self.oneLine(status))") }

    /// `RELOADING=1`: a reload (SIGHUP) began; ``ready(status:)`` ends it.
    public func reloading() { send("RELOADING=1\nSTATUS=reloading the configuration") }

    /// `STOPPING=1`: shutdown began.
    public func stopping() { send("STOPPING=1\nSTATUS=shutting down") }

    /// `WATCHDOG=1`: the serving loop and the store answered since the last ping.
    public func watchdog() { send("WATCHDOG=1") }

    /// `STATUS=…`: the one-line state `systemctl status` shows.
    public func status(_ text: String) { send("STATUS=\(Self.oneLine(text))") }

    /// Sends `state` (newline-separated `NAME=value` assignments) if notification is enabled.
    public func send(_ state: String) {
        guard isEnabled else { return }
        _ = sd_notify(0, state)
    }

    /// `text` with newlines made spaces: a `STATUS=` value ends at the first newline.
    static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
