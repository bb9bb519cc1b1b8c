import Foundation

/// Where a running migration is, for a progress line (persistd's `STATUS=`).
///
/// ```swift
/// try SQLiteStore.migrateStore(at: url, to: model, options: options) { progress in
///     notify("STATUS=\(progress)") // "migrating Notes.sqlite: step 2 of 3 (v2 -> v3)"
/// }
/// ```
public struct MigrationProgress: Sendable, CustomStringConvertible {
    /// The phase the migration is in.
    public enum Phase: Sendable, Hashable {
        /// Writing the backup copy.
        case backup
        /// Running step `number` (from 1), from one version to the next.
        case step(Int, source: String, destination: String)
        /// Committed.
        case finished
    }

    /// The phase.
    public var phase: Phase
    /// The number of steps of the plan.
    public var stepCount: Int
    /// The plan being run.
    public var plan: MigrationPlan

    /// A short line: `migrating <file>: step 2 of 3 (v2 -> v3)`.
    public var description: String {
        let file = plan.storeURL.lastPathComponent
        switch phase {
        case .backup: return "migrating \(file): writing the backup \(plan.backupURL.lastPathComponent)"
        case let .step(number, source, destination): return "migrating \(file): step \(number) of \(stepCount) (\(source) -> \(destination))"
        case .finished: return "migrated \(file) in \(stepCount) step\(stepCount == 1 ? "" : "s")"
        }
    }
}
