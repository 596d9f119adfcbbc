#!/usr/bin/env python3
"""Two teammem binaries run by turns (before, after, after, before, ...) on the workloads of
scripts/bench-house.sh, so that a load changing during the run weighs on both alike (hyperfine
runs one command's batch, then the other's). Per run: wall time, and the CPU time (user +
system) of the process from wait4, which a busy machine disturbs far less than wall time.

    scripts/bench-alternate.py BEFORE AFTER WORK [RUNS]

WORK is the fixture folder bench-house.sh made (WORK=... scripts/bench-house.sh). Prints the
median of each side per workload and the ratio after/before, with the load average.
"""
import os
import statistics
import subprocess
import sys
import time


def workloads(work):
    return [
        ("check --staged (100,000-file index)", ["-C", f"{work}/big", "check", "--staged"]),
        ("check --range (500 commits)", ["-C", f"{work}/history", "check", "--range", "base..main"]),
        ("session-start --hook claude (1,000)", ["-C", f"{work}/session", "session-start", "--hook", "claude"]),
        ("scan (team folder, 1,000 memories)", ["-C", f"{work}/team", "scan", "--format", "json"]),
    ]


def run(binary, args, env):
    """Wall and CPU milliseconds of one run."""
    start = time.perf_counter()
    child = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = 0  # reaped by wait4: Popen must not wait for it again
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    before, after, work = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) == 5 else 30
    env = dict(os.environ, HOME=work, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=f"{work}/gitconfig",
               QWEN_CODE_MEMORY_BASE_DIR=f"{work}/qwen", CLAUDE_CONFIG_DIR=f"{work}/claude")
    sides = [("before", before), ("after", after)]
    print(f"load average at start: {os.getloadavg()}")
    print(f"{'workload':<38} {'wall before':>11} {'after':>8} {'ratio':>6}  {'cpu before':>10} {'after':>8} {'ratio':>6}")
    for name, args in workloads(work):
        wall = {"before": [], "after": []}
        cpu = {"before": [], "after": []}
        for turn in range(runs + 3):
            for side, binary in sides if turn % 2 == 0 else sides[::-1]:
                w, c = run(binary, args, env)
                if turn >= 3:
                    wall[side].append(w)
                    cpu[side].append(c)
        wb, wa = statistics.median(wall["before"]), statistics.median(wall["after"])
        cb, ca = statistics.median(cpu["before"]), statistics.median(cpu["after"])
        print(f"{name:<38} {wb:>9.1f}ms {wa:>6.1f}ms {wa / wb:>6.2f}  {cb:>8.1f}ms {ca:>6.1f}ms {ca / cb:>6.2f}",
              flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
