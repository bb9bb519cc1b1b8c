import Foundation
import PersistKit

/// `persistctl migrate --model PATH --store PATH [--dry-run]`: plans, and unless `--dry-run`
/// performs, the lightweight migration of a SQLite store to a model, offline (no daemon).
///
/// With an `.xcdatamodeld` model every version in the bundle is a step of a staged migration.
/// Exit status: 0 when the store is (or now is) up to date, 1 when the migration is blocked or
/// fails (the store is left as it was), 2 for a usage error.
public enum MigrateCommand {
    /// The subcommand's name.
    public static let name = "migrate"
    /// The usage text.
    public static let usage = "usage: persistctl migrate --model PATH --store PATH [--dry-run]\n"

    /// Runs the subcommand with `arguments` (those after `migrate`).
    public static func run(_ arguments: [String]) -> CommandOutput {
        var modelPath: String?, storePath: String?, dryRun = false
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--model": modelPath = iterator.next()
            case "--store": storePath = iterator.next()
            case "--dry-run": dryRun = true
            case "--help", "-h": return CommandOutput(exitCode: 0, standardOutput: usage)
            default: return CommandOutput(exitCode: 2, standardError: "persistctl migrate: unknown argument \(argument)\n" + usage)
            }
        }
        guard let modelPath, let storePath else {
            return CommandOutput(exitCode: 2, standardError: "persistctl migrate: --model and --store are required\n" + usage)
        }
        do {
            let (model, options) = try StoreMigration.load(modelPath: modelPath)
            let storeURL = URL(fileURLWithPath: storePath)
            let plan = try SQLiteStore.migrationPlan(forStoreAt: storeURL, model: model, options: options)
            if dryRun || plan.outcome != .migratable {
                let blocked = plan.outcome == .blocked
                return CommandOutput(exitCode: blocked ? 1 : 0, standardOutput: plan.description + "\n",
                                     standardError: blocked ? "persistctl: the migration is blocked; the store is unchanged\n" : "")
            }
            let lines = Locked<[String]>([])
            _ = try SQLiteStore.migrateStore(at: storeURL, to: model, options: options) { progress in
                lines.withLock { $0.append(progress.description) }
            }
            return CommandOutput(exitCode: 0, standardOutput: ([plan.description] + lines.withLock { $0 } + ["migrated"]).joined(separator: "\n") + "\n")
        } catch {
            return CommandOutput(exitCode: 1, standardError: "persistctl: \(error)\n")
        }
    }
}
