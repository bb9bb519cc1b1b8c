/// What a reload (SIGHUP) applies: the limits, the access policy and the log level. The model,
/// the store and the socket are fixed for the life of the process; a reload that changes them
/// keeps the running values and says a restart is needed.
public struct ConfigurationReload: Sendable, Equatable {
    /// The configuration to run with: `new`, with the settings that need a restart as they were.
    public var applied: ServerConfiguration
    /// The settings that changed but need a restart (`model`, `store`, `store-type`, `socket`, `socket-mode`,
    /// `history`, `busy-timeout`, `commit-delay`).
    public var needsRestart: [String]

    /// Merges a freshly read configuration into the running one.
    public init(running: ServerConfiguration, new: ServerConfiguration) {
        var applied = new
        var needsRestart: [String] = []
        func keep<Value: Equatable>(_ name: String, _ keyPath: WritableKeyPath<ServerConfiguration, Value>) {
            if new[keyPath: keyPath] != running[keyPath: keyPath] {
                needsRestart.append(name)
                applied[keyPath: keyPath] = running[keyPath: keyPath]
            }
        }
        keep("model", \.modelPath)
        keep("store", \.storePath)
        keep("store-type", \.storeType)
        keep("socket", \.socketPath)
        keep("socket-mode", \.socketMode)
        keep("history", \.historyTracking)
        keep("busy-timeout", \.busyTimeout)
        keep("commit-delay", \.commitDelay)
        applied.shutdownGracePeriod = running.shutdownGracePeriod
        self.applied = applied
        self.needsRestart = needsRestart
    }
}
