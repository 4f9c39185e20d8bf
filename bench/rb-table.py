#!/usr/bin/env python3
"""Tables of bench/redis-benchmark.sh's results: the median and the worst
repetition of every engine, and Goblin's ratios to its peers, medians over
medians (and worst over worst, in brackets).

    python3 bench/rb-table.py results.csv
"""
import csv
import statistics
import sys
from collections import defaultdict

# (label, goblin engine, via, its peer engine, via, kinds, target): the
# comparisons the targets are stated for. kinds: "w" writes, "r" reads,
# "o" READONLY reads (workloads ending in -ro).
COMPARISONS = [
    ("single node, --fsync always / redis appendfsync always", "goblin-always", "primary", "redis-always", "primary", "w", 1.0),
    ("3-node cluster via the leader / redis primary + 2 replicas (always)", "goblin-3node", "primary", "redis-repl", "primary", "w", 1.0),
    ("3-node cluster via a follower / via the leader", "goblin-3node", "second", "goblin-3node", "primary", "w", 0.8),
    ("linearizable reads on the leader / single node", "goblin-3node", "primary", "goblin-always", "primary", "r", 0.8),
    ("linearizable reads on a follower / a redis replica", "goblin-3node", "second", "redis-repl", "second", "r", 0.8),
    ("READONLY reads on a follower / a redis replica (goblin-bench)", "goblin-3node", "second", "redis-repl", "second", "o", 1.0),
    ("single node, --fsync everysec / redis without persistence", "goblin-everysec", "primary", "redis", "primary", "wr", None),
]
WRITES = {"zadd", "zadd-keys", "zincrby"}


def main(path):
    runs = defaultdict(list)
    p50s = defaultdict(list)
    cpus = defaultdict(list)
    maxes = defaultdict(list)
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row["engine"], row["via"], row["workload"], int(row["pipeline"]))
            runs[key].append(float(row["rps"]))
            p50s[key].append(float(row["p50_ms"]))
            if row.get("cpu_us"):
                cpus[key].append(float(row["cpu_us"]))
            if row.get("max_ms"):
                maxes[key].append(float(row["max_ms"]))

    print("## Throughput (requests/s): median and worst of the repetitions\n")
    print("| engine | via | workload | -P | median | worst | reps | p50 latency (ms, median) | max latency (ms, median / highest) | server CPU µs/request (median) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(runs):
        r = runs[key]
        cpu = f"{statistics.median(cpus[key]):.1f}" if cpus[key] else ""
        mx = f"{statistics.median(maxes[key]):.1f} / {max(maxes[key]):.1f}" if maxes[key] else ""
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {statistics.median(r):,.0f} | {min(r):,.0f} "
              f"| {len(r)} | {statistics.median(p50s[key]):.3f} | {mx} | {cpu} |")

    print("\n## Ratios: median / median (worst / worst)\n")
    print("| comparison | workload | -P | ratio | target |")
    print("|---|---|---|---|---|")
    for label, eng, via, peer, pvia, kinds, target in COMPARISONS:
        for (e, v, w, p) in sorted(runs):
            if (e, v) != (eng, via):
                continue
            kind = "w" if w in WRITES else "o" if w.endswith("-ro") else "r"
            if kind not in kinds:
                continue
            other = runs.get((peer, pvia, w, p))
            if not other:
                continue
            mine = runs[(e, v, w, p)]
            ratio = statistics.median(mine) / statistics.median(other)
            worst = min(mine) / min(other)
            t = f"≥ {target}×" if target else ""
            print(f"| {label} | {w} | {p} | {ratio:.2f}× ({worst:.2f}×) | {t} |")


if __name__ == "__main__":
    main(sys.argv[1])
