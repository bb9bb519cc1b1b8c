import Foundation
import Synchronization

/// One benchmark row: our median against the baseline's median, in the same run.
struct BenchmarkRow: Codable {
    var workload: String
    var unit: String
    var ours: Double
    var baseline: Double
    var ratio: Double
    var target: Double
    var better: String
    var rssMiB: Double
    var oursMin: Double
    var oursMax: Double
    var baselineMin: Double
    var baselineMax: Double
    /// What the baseline is (`raw SQLite`, `redis GET`, `goal`).
    var baselineName: String = "raw SQLite"
    /// Further figures of the row (latencies, the echo ceiling), by name.
    var details: [String: Double] = [:]

    enum CodingKeys: String, CodingKey {
        case workload, unit, ours, baseline, ratio, target, better, details
        case rssMiB = "rss_mib"
        case oursMin = "ours_min", oursMax = "ours_max", baselineMin = "baseline_min", baselineMax = "baseline_max"
        case baselineName = "baseline_name"
    }

    /// Whether the row meets its target.
    var meetsTarget: Bool { better == "lower" ? ratio <= target : ratio >= target }
}

/// Timing and memory helpers.
enum Measure {
    /// Milliseconds taken by each of `runs` calls of `body`, after one warm-up call.
    static func milliseconds(runs: Int, _ body: () throws -> Void) rethrows -> [Double] {
        try body()
        var samples: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            try body()
            let elapsed = ContinuousClock.now - start
            samples.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        }
        return samples
    }

    /// Milliseconds taken by each of `runs` calls of `body(0)`, `body(1)`, … `body(count - 1)`,
    /// taken in turns: one warm-up round, then `runs` measured rounds, each calling every body
    /// once, the first to go rotating from round to round. The load of a noisy machine then
    /// drifts over all of them alike, instead of over whichever ran in a later block. The
    /// result holds the samples of each body, in round order, so sample `i` of two bodies
    /// were taken in the same round.
    ///
    /// `prepare(which)`, when given, runs before each call of `body(which)`, untimed: what a
    /// round needs in place that is not the measured work (a store file copied afresh).
    static func interleaved(runs: Int, count: Int, prepare: ((_ which: Int) throws -> Void)? = nil,
                            _ body: (_ which: Int) throws -> Void) rethrows -> [[Double]] {
        var samples = [[Double]](repeating: [], count: count)
        for round in 0...runs {
            for turn in 0..<count {
                let which = (turn + round) % count
                try prepare?(which)
                let start = ContinuousClock.now
                try runBody(which, body)
                let elapsed = ContinuousClock.now - start
                if round > 0 {
                    samples[which].append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
                }
            }
        }
        return samples
    }

    /// Calls `body(which)` through a function of its own for each of the first four bodies, so
    /// that a callgrind profile of the run counts each body's instructions apart
    /// (`Benchmarks/instructions.py`, `make bench-instructions`).
    static func runBody(_ which: Int, _ body: (_ which: Int) throws -> Void) rethrows {
        switch which {
        case 0: try body0(body)
        case 1: try body1(body)
        case 2: try body2(body)
        case 3: try body3(body)
        default: try body(which)
        }
    }

    // Never inlined. The optimizer clones each for every closure it is called with, and merges
    // clones that differ only in a constant into one function (a `Tm` symbol), which would then
    // count two bodies as one: each calls ``mark()`` a different number of times, so no two
    // have the same shape. (`mark()` must do something: an empty one was found free of effects
    // and its calls removed, and bodies 1 to 3 of workload 2 were merged, callgrind counting
    // two bodies under one name.)
    @inline(never) static func body0(_ body: (_ which: Int) throws -> Void) rethrows { try body(0) }
    @inline(never) static func body1(_ body: (_ which: Int) throws -> Void) rethrows { try body(1); mark() }
    @inline(never) static func body2(_ body: (_ which: Int) throws -> Void) rethrows { try body(2); mark(); mark() }
    @inline(never) static func body3(_ body: (_ which: Int) throws -> Void) rethrows { try body(3); mark(); mark(); mark() }
    /// Counts one call in ``marks``, out of line (see ``body1(_:)``): a store the optimizer keeps.
    @inline(never) static func mark() { marks.wrappingAdd(1, ordering: .relaxed) }
    /// How many times ``mark()`` was called; read by no one.
    static let marks = Atomic<Int>(0)

    static func median(_ samples: [Double]) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The process's resident set size now, in MiB (`VmRSS` of `/proc/self/status`).
    static func residentMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kib = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return kib / 1024
        }
        return 0
    }

    /// A row of medians; `ratio` = ours / baseline. With `paired`, sample `i` of `ours` and of
    /// `baseline` come from the same round (``interleaved(runs:count:_:)``), and the details add
    /// the median, least and greatest of the rounds' own ratios (`round_ratio_median`,
    /// `round_ratio_min`, `round_ratio_max`): how far one round's ratio strays on this machine.
    /// `unitsPerRound`, the objects, lookups, saves or fetches one round of each side handles,
    /// goes to the details as `units_per_round`: `make bench-instructions` divides by it.
    static func row(_ workload: String, target: Double, ours: [Double], baseline: [Double], unit: String = "ms",
                    better: String = "lower", baselineName: String = "raw SQLite", paired: Bool = false,
                    details: [String: Double] = [:], unitsPerRound: Int? = nil) -> BenchmarkRow {
        let o = median(ours), b = median(baseline)
        var details = details
        if let unitsPerRound { details["units_per_round"] = Double(unitsPerRound) }
        if paired && ours.count == baseline.count && !ours.isEmpty {
            let ratios = zip(ours, baseline).map { $1 > 0 ? $0 / $1 : 0 }
            details["round_ratio_median"] = median(ratios)
            details["round_ratio_min"] = ratios.min() ?? 0
            details["round_ratio_max"] = ratios.max() ?? 0
        }
        return BenchmarkRow(workload: workload, unit: unit, ours: o, baseline: b, ratio: b > 0 ? o / b : 0, target: target,
                            better: better, rssMiB: residentMiB(), oursMin: ours.min() ?? 0, oursMax: ours.max() ?? 0,
                            baselineMin: baseline.min() ?? 0, baselineMax: baseline.max() ?? 0, baselineName: baselineName,
                            details: details)
    }
}
