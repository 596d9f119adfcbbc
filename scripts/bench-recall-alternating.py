#!/usr/bin/env python3
"""Warm `teammem recall` of two binaries, run by turns (old, new, new, old, ...), so that a load
that changes during the run weighs on both alike (hyperfine runs one command's batch, then the
other's). Each binary answers in its own project (`-C`), whose memories must be copies of each
other, so that the two never rewrite each other's recall index; both indexes must be warm.

    scripts/bench-recall-alternating.py OLD_BIN OLD_PROJECT NEW_BIN NEW_PROJECT [RUNS]

Prints the p50 of each side per query (RUNS runs each after 5 warm-up turns, default 40) and the
ratio new/old, with the load average. Times include starting the process from Python.
"""
import statistics
import subprocess
import sys
import time

QUERIES = ["postgres migration", "deploy cache schema", "数据库 迁移"]


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    old, old_dir, new, new_dir = sys.argv[1:5]
    runs = int(sys.argv[5]) if len(sys.argv) == 6 else 40
    sides = [("old", old, old_dir), ("new", new, new_dir)]
    for query in QUERIES:
        times = {"old": [], "new": []}
        for turn in range(runs + 5):
            for name, binary, project in sides if turn % 2 == 0 else sides[::-1]:
                start = time.perf_counter()
                subprocess.run([binary, "recall", "-C", project, query],
                               stdout=subprocess.DEVNULL, check=True)
                if turn >= 5:
                    times[name].append(time.perf_counter() - start)
        o = statistics.median(times["old"]) * 1000
        n = statistics.median(times["new"]) * 1000
        load = open("/proc/loadavg").read().split()[0]
        print(f"{query}: p50 old {o:.1f} ms, new {n:.1f} ms, new/old {n / o:.2f} (load {load})")


if __name__ == "__main__":
    main()
