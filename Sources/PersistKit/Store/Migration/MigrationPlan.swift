import Foundation

/// What opening a store with a model would do to it: the model versions it passes through and
/// every change of each step, or the changes that stop it.
///
/// Made by ``SQLiteStore/migrationPlan(forStoreAt:model:configurationName:options:)`` without
/// touching the store (a dry run; `persistctl migrate --dry-run` prints ``description``).
///
/// ```text
/// Migration of /data/Notes.sqlite: 2 steps, backup to /data/Notes.sqlite.backup
/// step 1: v1 -> v2
///   + Note.pinned: attribute added (default NO)
/// step 2: v2 -> current
///   ~ Note.body: renamed from text
/// ```
public struct MigrationPlan: Sendable, CustomStringConvertible {
    /// One step: from one model version to the next.
    public struct Step: Sendable {
        /// The source version's name (from ``ModelVersionHistory``, or `store` for the model
        /// copy kept in the store's metadata).
        public var sourceName: String
        /// The destination version's name (`current` for the model the store is opened with).
        public var destinationName: String
        /// Every change of the step, blocking ones included.
        public var changes: [MigrationChange]
        /// The source model of the step.
        let source: ManagedObjectModel
        /// The destination model of the step.
        let destination: ManagedObjectModel
        /// The inferred mapping the step runs.
        let mapping: InferredMapping
    }

    /// What the plan concludes.
    public enum Outcome: Sendable, Hashable {
        /// The store already fits the model: nothing to do.
        case upToDate
        /// The store can be migrated by the plan's steps.
        case migratable
        /// Some change cannot be inferred: see ``MigrationPlan/blockingChanges``.
        case blocked
        /// The model the store was written with is unknown (not in the version history nor
        /// in the store's metadata), so no mapping can be inferred; opening still succeeds when
        /// the store's tables fit the model.
        case sourceModelUnknown
    }

    /// The store the plan is for.
    public var storeURL: URL
    /// Where the backup copy is written before migrating.
    public var backupURL: URL
    /// The conclusion.
    public var outcome: Outcome
    /// The steps, in order; empty unless ``outcome`` is `migratable` or `blocked`.
    public var steps: [Step]

    /// Whether opening the store would migrate it.
    public var needsMigration: Bool { outcome == .migratable || outcome == .blocked }

    /// Every change that stops the migration, from every step.
    public var blockingChanges: [MigrationChange] { steps.flatMap(\.changes).filter(\.isBlocking) }

    /// The plan in a few human-readable lines: the steps and each change, marked `+` added,
    /// `-` removed, `~` changed, `!` blocking.
    public var description: String {
        var lines: [String] = []
        switch outcome {
        case .upToDate:
            lines.append("\(storeURL.path): up to date, nothing to migrate")
        case .sourceModelUnknown:
            lines.append("\(storeURL.path): the model the store was written with is unknown; it opens only if its tables fit the model")
        case .migratable, .blocked:
            let verdict = outcome == .blocked ? "BLOCKED (a mapping model would be needed)" : "backup to \(backupURL.path)"
            lines.append("Migration of \(storeURL.path): \(steps.count) step\(steps.count == 1 ? "" : "s"), \(verdict)")
            for (number, step) in steps.enumerated() {
                lines.append("step \(number + 1): \(step.sourceName) -> \(step.destinationName)")
                if step.changes.isEmpty { lines.append("  (no change to the stored data)") }
                for change in step.changes {
                    let mark: String
                    switch change.kind {
                    case .entityAdded, .attributeAdded, .relationshipAdded: mark = "+"
                    case .entityRemoved, .attributeRemoved, .relationshipRemoved: mark = "-"
                    case .blocking: mark = "!"
                    default: mark = "~"
                    }
                    lines.append("  \(mark) \(change)")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}
