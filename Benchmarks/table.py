#!/usr/bin/env python3
"""Prints the Markdown table of BENCHMARKS.md from the JSON `make bench` writes (.build/bench.json)."""
import json, sys

def number(value, unit):
    if unit in ("req/s", "saves/s"):
        return f"{value:,.0f}"
    return f"{value:,.2f}"

report = json.load(open(sys.argv[1] if len(sys.argv) > 1 else ".build/bench.json"))
print(f"Machine: {report['machine']}  ")
print(f"Command: `{report['command']}`, median of {report['runs']} runs after a warm-up (min–max in brackets; for a ratio, the least and greatest of the rounds' own ratios)\n")
print("| workload | unit | ours | baseline | ratio | target | met |")
print("|---|---|---:|---:|---:|---:|:-:|")
for row in report["rows"]:
    unit, better = row["unit"], row["better"]
    ours = f"{number(row['ours'], unit)} [{number(row['ours_min'], unit)}–{number(row['ours_max'], unit)}]"
    base = f"{number(row['baseline'], unit)} ({row['baseline_name']})"
    met = row["ratio"] <= row["target"] if better == "lower" else row["ratio"] >= row["target"]
    sign = "≤" if better == "lower" else "≥"
    extra = ""
    details = row.get("details") or {}
    if "p99_ms" in details:
        extra = f"; p50 {details['p50_ms']:.2f} / p99 {details['p99_ms']:.2f} ms"
        if "redis_p99_ms" in details:
            extra += f" (redis p99 {details['redis_p99_ms']:.2f} ms, echo {details['echo_req_s']:,.0f} req/s)"
        if "redis_set_req_s" in details:
            extra += f" (redis SET {details['redis_set_req_s']:,.0f} req/s"
            if "echo_req_s" in details:
                extra += f", echo {details['echo_req_s']:,.0f} req/s"
            extra += ")"
    if "raw_sqlite_peak_mib" in details:
        extra = f"; raw SQLite peak {details['raw_sqlite_peak_mib']:.1f} MiB"
    ratio = f"{row['ratio']:.2f}x"
    if "round_ratio_min" in details:
        ratio += f" [{details['round_ratio_min']:.2f}–{details['round_ratio_max']:.2f}]"
    print(f"| {row['workload']}{extra} | {unit} | {ours} | {base} | {ratio} | {sign} {row['target']} | {'yes' if met else 'no'} |")
