#!/usr/bin/env python3
"""Instructions per unit of workloads 1 to 6, 9 and 10, ours against raw SQLite, counted by callgrind.

`make bench-instructions` runs this after a release build of persistd-bench. For each workload it
runs the benchmark's quick size under callgrind twice, with one measured round and with three,
and takes the difference: two rounds of each body in their steady state, without the one-time
costs of the first run (type metadata, conformance caches, statement preparation, opening files),
which a single profile mixes in. Measure.interleaved calls each body through a function of its
own (Measure.body0, body1, ...), whose inclusive count callgrind reports. The units a round
handles (objects, lookups, saves, fetches) come from the benchmark's own JSON (`units_per_round`
in each row's details), so they follow its sizes.

Instruction counts do not depend on the machine's load: the ratio moves only when code does. They
are not the benchmark's figure (time is, `make bench`): memory stalls and system calls cost time
without instructions. See BENCHMARKS.md, "Instructions".

usage: instructions.py PERSISTD_BENCH [--json PATH] [--only N]
"""
import json
import re
import subprocess
import sys
import tempfile

# Workload: (name, unit, the bodies: index -> label). Workload 3 runs its two variants (no
# index, fetch index) through the same two bodies, so its figures are those of both together:
# its rows' units are summed.
WORKLOADS = {
    "1": ("1 insert, one save", "object", {0: "ours", 1: "ours generated class", 2: "raw"}),
    "2": ("2 fetch", "object", {0: "ours value(forKey:)", 1: "ours int64(forKey:)", 2: "ours generated class", 3: "raw"}),
    "3": ("3 predicate, sort, limit 100 (both variants)", "fetch", {0: "ours", 1: "raw"}),
    "4": ("4 lookups by object ID", "lookup", {0: "ours", 1: "raw"}),
    "5": ("5 parents x 10 children, prefetch", "object", {0: "ours", 1: "ours generated classes", 2: "raw"}),
    "6": ("6 saves of one object", "save", {0: "ours", 1: "raw"}),
    "9": ("9 delete, one save", "object", {0: "ours", 1: "raw"}),
    "10": ("10 update, one save", "object", {0: "ours", 1: "raw"}),
}


def units_per_round(report, workload):
    """The units one round of workload `workload` handles, from the benchmark's JSON report.

    Rows of one workload that share bodies (workload 2's two rows) report the same count; rows
    that run one after the other through the same bodies (workload 3's variants) add up."""
    counts = [row.get("details", {}).get("units_per_round") for row in report["rows"]
              if row["workload"].split(" ")[0] == workload]
    if not counts or None in counts:
        sys.exit(f"workload {workload}: the benchmark's JSON gives no units_per_round")
    return sum(counts) if workload == "3" else counts[0]


def body_counts(bench, workload, runs):
    """Inclusive instructions of each Measure.bodyN function in one callgrind run, and the
    benchmark's JSON report of that run."""
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out, tempfile.NamedTemporaryFile(suffix=".json") as report:
        subprocess.run(["setarch", "-R", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", bench,
                        "--quick", "--only", workload, "--runs", str(runs), "--json", report.name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no", "--threshold=100", out.name],
                              check=True, capture_output=True, text=True).stdout
        with open(report.name) as file:
            parsed = json.load(file)
    counts = {}
    total = 0
    for line in text.splitlines():
        match = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
        if not match:
            continue
        value = int(match.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in match.group(2):
            total = value
        body = re.search(r"MeasureO5body(\d)", match.group(2))
        # One function may be listed under several source files (inlined code): the largest
        # inclusive count is the function's.
        if body:
            index = int(body.group(1))
            counts[index] = max(counts.get(index, 0), value)
    if sum(counts.values()) > total:
        sys.exit(f"workload {workload}: the bodies' counts exceed the program's; functions were merged")
    return counts, parsed


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    bench, json_path, only = args[0], None, None
    if "--json" in args:
        json_path = args[args.index("--json") + 1]
    if "--only" in args:
        only = args[args.index("--only") + 1]
    rows = []
    print(f"{'workload':<58} {'body':<22} {'per unit':>10} {'ratio':>7}")
    for number, (title, unit, bodies) in WORKLOADS.items():
        if only and number != only:
            continue
        (one, report), (three, _) = body_counts(bench, number, 1), body_counts(bench, number, 3)
        units = units_per_round(report, number)
        plural = unit + ("es" if unit.endswith("h") else "s")
        name = f"{title} (quick: {units:,.0f} {plural} a round)"
        # Two more rounds in the second run: the difference over two is one round of each body.
        per_round = {index: (three.get(index, 0) - one.get(index, 0)) / 2 for index in bodies}
        raw = per_round[max(bodies)]
        for index, label in bodies.items():
            per_unit = per_round[index] / units
            ratio = per_round[index] / raw if raw else 0
            print(f"{name:<58} {label:<22} {per_unit:>10,.0f} {ratio:>6.2f}x")
            rows.append({"workload": name, "body": label, "unit": unit,
                         "instructions_per_unit": round(per_unit), "ratio": round(ratio, 3)})
    if json_path:
        with open(json_path, "w") as file:
            json.dump({"rows": rows}, file, indent=2)


if __name__ == "__main__":
    main()
