#!/usr/bin/env python3
"""Benchmark branch-mode sync under contention (issue 37): N clones of one remote served by a
`git daemon` on 127.0.0.1, ROUNDS rounds in which every clone writes one new memory and all N
run `teammem sync --json` at the same time (the default 15 s budget each).

Prints, per round, how many clones published their memory in that round (their memory is on
the remote's `team-memory` when the round ends), the skip reasons, and the CPU time the clones
(teammem and the git it ran) and the server (`git daemon`'s upload-pack and receive-pack) used;
then, after quiet
settling syncs one clone at a time, the totals: published-in-round fraction, memories lost
(written but never on the remote), memories duplicated (a conflict copy, or one memory at two
paths), merge commits and record commits on `team-memory`, and each clone's folder checked
against the remote. Not a timed test: the numbers depend on the machine's load.

Usage: scripts/bench-branch-concurrency.py [--clones 30] [--rounds 4] [--bin target/debug/teammem]
       [--workdir DIR]
Needs git (with `git daemon`) and a built teammem.
"""

import argparse
import collections
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TEAM = ".qwen/team-memory"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Bench:
    def __init__(self, work, teammem):
        self.work = work
        self.teammem = teammem
        home = os.path.join(work, "home")
        os.makedirs(home, exist_ok=True)
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.path.join(home, ".gitconfig"),
            "GIT_TERMINAL_PROMPT": "0",
            "QWEN_CODE_MEMORY_BASE_DIR": os.path.join(work, "qwen"),
            "LC_ALL": "C",
            "TZ": "UTC",
        }

    def git(self, cwd, *args):
        out = subprocess.run(["git", *args], cwd=cwd, env=self.env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"git {' '.join(args)} in {cwd}: {out.stderr}")
        return out.stdout.strip()

    def run_teammem(self, cwd, *args):
        return subprocess.run([self.teammem, *args], cwd=cwd, env=self.env, capture_output=True,
                              text=True)

    def start_sync(self, cwd):
        return subprocess.Popen([self.teammem, "sync", "--json"], cwd=cwd, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)


def write_memory(clone, slug, body):
    path = os.path.join(clone, TEAM, "project", f"{slug}.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"---\nname: {slug.replace('-', ' ')}\ndescription: About {slug}\n"
                f"type: project\n---\n{body}\n")


def remote_memories(bench, bare):
    listed = bench.git(bare, "ls-tree", "-r", "--name-only", "team-memory", "--", TEAM)
    return [l[len(TEAM) + 1:] for l in listed.splitlines() if not l.endswith("/MEMORY.md")]


def folder_memories(clone):
    found = set()
    root = os.path.join(clone, TEAM)
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".md") and name != "MEMORY.md":
                found.add(os.path.relpath(os.path.join(folder, name), root))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clones", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target",
                                                  "debug", "teammem"))
    ap.add_argument("--workdir")
    ap.add_argument("--verbose", action="store_true", help="print each round's sync durations")
    args = ap.parse_args()
    teammem = os.path.abspath(args.bin)
    work = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="bench-branch-conc-"))
    os.makedirs(work, exist_ok=True)
    bench = Bench(work, teammem)

    srv = os.path.join(work, "srv")
    os.makedirs(srv, exist_ok=True)
    bench.git(srv, "init", "-q", "--bare", "-b", "main", "team.git")
    bare = os.path.join(srv, "team.git")
    port = free_port()
    # A kill of the benchmark still stops its daemon and removes its folder.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    daemon = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
         "--listen=127.0.0.1", f"--port={port}", f"--base-path={srv}", srv],
        env=bench.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"git://127.0.0.1:{port}/team.git"
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        run(bench, bare, url, args, daemon.pid)
    finally:
        daemon.terminate()
        daemon.wait()
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


def reaped_cpu(pid):
    """CPU seconds (user + system) of the process `pid`, its descendants and every child they
    reaped: for `git daemon` (a wrapper around `git-daemon`), every upload-pack and receive-pack
    it served so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total = sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(k) for k in f.read().split()]
    except (OSError, IndexError, ValueError):
        return 0.0
    return total + sum(reaped_cpu(k) for k in kids)


def children_cpu():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(bench, bare, url, args, daemon_pid):
    work = bench.work
    seed = os.path.join(work, "seed")
    bench.git(work, "clone", "-q", url, "seed")
    bench.git(seed, "config", "user.name", "seed")
    bench.git(seed, "config", "user.email", "seed@example.com")
    with open(os.path.join(seed, "README.md"), "w") as f:
        f.write("# project\n")
    bench.git(seed, "add", "README.md")
    bench.git(seed, "commit", "-q", "-m", "initial")
    bench.git(seed, "push", "-q", "origin", "main")
    init = bench.run_teammem(seed, "init", "--branch")
    if init.returncode != 0:
        sys.exit(f"teammem init --branch: {init.stderr}")
    write_memory(seed, "seed-note", "From the seed.")
    bench.run_teammem(seed, "sync", "--json")

    clones = []
    for c in range(args.clones):
        name = f"clone{c:03}"
        bench.git(work, "clone", "-q", url, name)
        clone = os.path.join(work, name)
        bench.git(clone, "config", "user.name", name)
        bench.git(clone, "config", "user.email", f"{name}@example.com")
        bench.run_teammem(clone, "sync", "--json")
        clones.append(clone)
    print(f"{args.clones} clones of {url}, {args.rounds} rounds of concurrent syncs, "
          f"teammem {bench.teammem}")

    written = {"project/seed-note.md"}
    in_round = 0
    reasons_total = collections.Counter()
    slowest = 0.0
    for r in range(args.rounds):
        mine = {}
        for c, clone in enumerate(clones):
            slug = f"clone{c:03}-round{r}"
            write_memory(clone, slug, f"Written by clone {c} in round {r}.")
            mine[clone] = f"project/{slug}.md"
            written.add(mine[clone])
        started = time.monotonic()
        cpu_before = (children_cpu(), reaped_cpu(daemon_pid))
        procs = [(clone, bench.start_sync(clone)) for clone in clones]
        reasons = collections.Counter()
        reports = {}
        for clone, proc in procs:
            out, _ = proc.communicate()
            try:
                reports[clone] = json.loads(out)
                reasons[reports[clone].get("skipped_reason") or "ok"] += 1
            except json.JSONDecodeError:
                reasons["no-report"] += 1
        took = time.monotonic() - started
        clients_cpu = children_cpu() - cpu_before[0]
        server_cpu = reaped_cpu(daemon_pid) - cpu_before[1]
        slowest = max(slowest, took)
        on_remote = set(remote_memories(bench, bare))
        published = sum(1 for clone in clones if mine[clone] in on_remote)
        in_round += published
        reasons_total.update(reasons)
        print(f"round {r + 1}: {published}/{len(clones)} published in the round, "
              f"{took:.1f} s, reasons {dict(sorted(reasons.items()))}; CPU: clients "
              f"{clients_cpu:.1f} s, server {server_cpu:.1f} s")
        # Why the rest missed their round: each one's own report.
        for clone in clones:
            if mine[clone] in on_remote:
                continue
            report = reports.get(clone, {})
            print(f"  missed {os.path.basename(clone)}: {report.get('skipped_reason')} after "
                  f"{report.get('duration_ms')} ms: {(report.get('warnings') or [''])[0][:160]}")
        if args.verbose:
            took_ms = sorted(rep.get("duration_ms", 0) for rep in reports.values())
            print(f"  durations ms: min {took_ms[0]}, median {took_ms[len(took_ms) // 2]}, "
                  f"max {took_ms[-1]}")

    # Settle: one clone at a time until every clone's sync has nothing left to do.
    for _ in range(5):
        quiet = True
        for clone in clones:
            report = json.loads(bench.run_teammem(clone, "sync", "--json").stdout)
            if report.get("committed") or report.get("pushed") or report.get("skipped_reason"):
                quiet = False
        if quiet:
            break

    on_remote = remote_memories(bench, bare)
    lost = sorted(written - set(on_remote))
    copies = [p for p in on_remote if ".conflict-" in p]
    duplicated = len(copies) + (len(on_remote) - len(set(on_remote)))
    merges = int(bench.git(bare, "rev-list", "--count", "--merges", "team-memory"))
    commits = int(bench.git(bare, "rev-list", "--count", "--no-merges", "team-memory"))
    expected = set(on_remote)
    folders_differ = [os.path.basename(c) for c in clones if folder_memories(c) != expected]
    total = len(clones) * args.rounds
    print(f"published in their round: {in_round}/{total} ({100.0 * in_round / total:.1f}%)")
    print(f"reasons over all rounds: {dict(sorted(reasons_total.items()))}")
    print(f"slowest round: {slowest:.1f} s")
    print(f"lost: {len(lost)} {lost[:5]}")
    print(f"duplicated: {duplicated} {copies[:5]}")
    print(f"merge commits on team-memory: {merges}; other commits: {commits}")
    print(f"clones whose folder differs from the remote after settling: {len(folders_differ)} "
          f"{folders_differ[:5]}")


if __name__ == "__main__":
    main()
