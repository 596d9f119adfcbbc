#!/usr/bin/env python3
"""Benchmark of `teammem mcp` over N memories (default 10,000, about 1 KB each).

Measures, with a raw JSON-RPC client on the server's stdin/stdout (no SDK overhead):
  - server start to the initialize answer, and to the first memory_search answer (goals:
    <= 50 ms to the first answer), median of RUNS fresh servers;
  - memory_search p50 / p90 per call on a warm server (goal: p50 <= 5 ms), for three queries,
    and memory_read of one memory;
  - side by side, `teammem recall` as one process per query over the same memories.

With TEAMMEM_MCP_TIMINGS=1 the server puts where each search spent its time in the result's
`_meta` ("teammem/timings": recall's ranking, the gate, freshness, encoding, in microseconds);
the medians are printed beside the wall times.

Usage: scripts/bench-mcp.py [N] [--scope team|private] [--bin PATH [--bin PATH2 ...]] [--work DIR]
The release binary is built first unless --bin is given; with several, each is measured in
turn over the same memories (side by side, same load). Everything lives in a temp folder, or
in DIR with --work (kept, and reused by the next run with the same N, scope and history).
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

QUERIES = ["postgres migration", "deploy cache schema", "数据库 迁移"]
WORDS = ("build deploy cache index parser server client token schema query release branch "
         "review merge commit config logger metric trace socket thread buffer stream record "
         "bucket shard replica backup").split()


def generate(folder, n):
    random.seed(7)
    types = ["user", "feedback", "project", "reference"]
    for i in range(n):
        kind = types[i % 4]
        os.makedirs(os.path.join(folder, kind), exist_ok=True)
        title = " ".join(random.choice(WORDS) for _ in range(4))
        desc = " ".join(random.choice(WORDS) for _ in range(8))
        body = "\n".join(" ".join(random.choice(WORDS) for _ in range(12)) for _ in range(8))
        if i % 1000 == 0:
            body += "\nThe postgres migration runs before the deploy.\n"
        with open(os.path.join(folder, kind, f"memory-{i:05d}.md"), "w", encoding="utf-8") as f:
            f.write(f"---\nname: {title} {i}\ndescription: {desc}\ntype: {kind}\n---\n"
                    f"{body}\nWhy: measured.\nHow to apply: always.\n")


def add_history(repo, env, commits):
    """`commits` commits that change only a code file, on top of HEAD (git fast-import)."""
    head = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
    stream = []
    for i in range(commits):
        data = f"line {i}\n"
        msg = f"code change {i}\n"
        stream.append(f"commit refs/heads/main\ncommitter Dev <dev@example.com> {1_700_000_000 + i} +0000\n"
                      f"data {len(msg)}\n{msg}" + (f"from {head}\n" if i == 0 else "") +
                      f"M 100644 inline src/code.txt\ndata {len(data)}\n{data}\n")
    subprocess.run(["git", "-C", repo, "fast-import", "--quiet", "--force"], env=env, check=True,
                   input="".join(stream).encode())
    subprocess.run(["git", "-C", repo, "reset", "-q", "--hard", "main"], env=env, check=True)


class Server:
    """`teammem mcp` with newline-delimited JSON-RPC on its pipes."""

    def __init__(self, binary, cwd, env):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([binary, "mcp"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its output")
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(answer["error"])
                return answer["result"]

    def initialize(self):
        result = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "bench", "version": "1"}})
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()
        return result

    def search(self, query):
        result = self.request("tools/call", {"name": "memory_search",
                                             "arguments": {"query": query, "limit": 5}})
        if result.get("isError"):
            raise RuntimeError(result)
        return result.get("_meta", {}).get("teammem/timings")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def measure(binary, repo, env, args):
    """Warm searches, then fresh servers' start, of one binary."""
    print(f"\n== {binary}")
    # Warm the recall index on disk (one query indexes at most a twentieth of a scope).
    server = Server(binary, repo, env)
    server.initialize()
    for _ in range(25):
        server.search(QUERIES[0])
    print(f"memory_search on a warm server, {args.calls} calls per query (goal p50 <= 5 ms):")
    for query in QUERIES:
        times, splits = [], []
        for _ in range(args.calls):
            t = time.perf_counter()
            split = server.search(query)
            times.append(time.perf_counter() - t)
            if split:
                splits.append(split)
        times.sort()
        print(f"  {query!r:24} p50 {ms(statistics.median(times))}  "
              f"p90 {ms(times[int(len(times) * 0.9)])}  min {ms(times[0])}")
        if splits:
            parts = "  ".join(f"{key[:-3]} {statistics.median(s[key] for s in splits) / 1000:.3f}"
                              for key in ("ranking_us", "gate_us", "freshness_us", "encoding_us"))
            print(f"  {'':24} median ms: {parts}")
    times = []
    for _ in range(args.calls):
        t = time.perf_counter()
        server.request("tools/call", {"name": "memory_read",
                                      "arguments": {"id": "team:project/memory-00002.md"
                                                    if args.scope == "team" else
                                                    "private:project/memory-00002.md"}})
        times.append(time.perf_counter() - t)
    times.sort()
    print(f"memory_read of one memory, {args.calls} calls: p50 {ms(statistics.median(times))}  "
          f"p90 {ms(times[int(len(times) * 0.9)])}  min {ms(times[0])}")
    server.close()

    init_times, first_times, first_splits = [], [], []
    for _ in range(args.runs):
        server = Server(binary, repo, env)
        server.initialize()
        init_times.append(time.perf_counter() - server.started)
        split = server.search(QUERIES[0])
        first_times.append(time.perf_counter() - server.started)
        if split:
            first_splits.append(split)
        server.close()
    print(f"Server start, median of {args.runs} fresh servers (goal <= 50 ms to the first answer):")
    print(f"  to the initialize answer     {ms(statistics.median(init_times))}")
    print(f"  to the first memory_search   {ms(statistics.median(first_times))}")
    if first_splits:
        # Waiting for what the server prepares at start counts in the part that waited.
        parts = "  ".join(f"{key[:-3]} {statistics.median(s[key] for s in first_splits) / 1000:.3f}"
                          for key in ("ranking_us", "gate_us", "freshness_us", "encoding_us"))
        print(f"  first search, median ms: {parts}")


def ms(seconds):
    return f"{seconds * 1000:6.2f} ms"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=10_000)
    parser.add_argument("--scope", choices=["team", "private"], default="team")
    parser.add_argument("--bin", action="append")
    parser.add_argument("--history", type=int, default=500,
                        help="code commits after the team memory's (a walk to a memory's last "
                             "commit crosses them)")
    parser.add_argument("--no-recall", action="store_true",
                        help="skip `teammem recall` as a process")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--work", help="keep the generated project in this folder (made when "
                        "missing, reused when it holds one of the same N, scope and history)")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binaries = args.bin
    if not binaries:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=root, check=True)
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
        binaries = [os.path.join(target, "release", "teammem")]
    binary = binaries[0]

    if args.work:
        os.makedirs(args.work, exist_ok=True)
        run(args, binaries, os.path.realpath(args.work))
    else:
        with tempfile.TemporaryDirectory() as work:
            run(args, binaries, work)


def run(args, binaries, work):
    """Generates the project in `work` (unless it is there already) and measures each binary."""
    binary = binaries[0]
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    gitconfig = os.path.join(home, ".gitconfig")
    with open(gitconfig, "w") as f:
        f.write("[user]\n\tname = Bench\n\temail = bench@example.com\n")
    env = {"PATH": os.environ["PATH"], "HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": gitconfig, "QWEN_CODE_MEMORY_BASE_DIR": os.path.join(home, ".qwen"),
           "LC_ALL": "C", "TEAMMEM_MCP_TIMINGS": "1"}
    repo = os.path.realpath(os.path.join(work, "project"))
    git = lambda *a: subprocess.run(["git", "-C", repo, *a], env=env, check=True,
                                    stdout=subprocess.DEVNULL)
    if args.scope == "team":
        folder = os.path.join(repo, ".qwen", "team-memory")
    else:
        sanitized = "".join(c if c.isalnum() else "-" for c in repo)
        folder = os.path.join(home, ".qwen", "projects", sanitized, "memory")
    stamp = os.path.join(work, f"generated-{args.n}-{args.scope}-{args.history}")
    if not os.path.exists(stamp):
        generate_project(args, binary, env, repo, folder, git)
        with open(stamp, "w"):
            pass

    for binary in binaries:
        measure(binary, repo, env, args)
    if args.no_recall:
        return
    print("\nSide by side: `teammem recall --max 5` as one process per query:")
    for query in QUERIES:
        times = []
        for _ in range(20):
            t = time.perf_counter()
            subprocess.run([binary, "recall", "--max", "5", query], cwd=repo, env=env,
                           check=True, stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - t)
        print(f"  {query!r:24} p50 {ms(statistics.median(times))}")


def generate_project(args, binary, env, repo, folder, git):
    """A repository with N memories in the scope (committed, then `history` code commits)."""
    import shutil
    shutil.rmtree(repo, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(repo)
    git("init", "-q", "-b", "main")
    git("commit", "-q", "--allow-empty", "-m", "initial")
    print(f"Generating {args.n} memories in the {args.scope} scope")
    generate(folder, args.n)
    if args.scope == "team":
        subprocess.run([binary, "index", "--scope", "team"], cwd=repo, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        git("add", "-A")
        git("commit", "-q", "-m", "team memory")
        if args.history:
            add_history(repo, env, args.history)
    # Memories are older than the recall index's settle window in real life.
    time.sleep(3)


if __name__ == "__main__":
    sys.exit(main())
