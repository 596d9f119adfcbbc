#!/usr/bin/env python3
"""Recall and precision on Nosey Parker's public rule examples, read from a local mirror.

    secrets-noseyparker.py MIRROR [--teammem BIN]... [--betterleaks BIN] [--gitleaks BIN]
                           [--rev REV] [--misses]

MIRROR is a git directory of github.com/praetorian-inc/noseyparker (for example the one the
`fetch` tool leaves under /work/.mirror/); nothing of it is copied into this repository. Each
rule's `examples` are positives and its `negative_examples` negatives, each written to a file
of its own in a temporary folder; a tool finds a positive when it reports anything in that file.
Rules whose categories include `identifier` (ids that are not secrets, such as an age public
key or an AWS account id) are counted apart. Prints P / R / F1 per tool and, with --misses,
teammem's misses grouped by rule file.

Precision is printed twice. A rule's negative examples are negative only for that rule: many
are another rule's real secret (a Slack bot token is a negative example of the Slack user-token
rule). So "P other-rule" leaves out of the count every negative example that another
non-identifier Nosey Parker rule's own pattern matches (compiled with Python's `re`; the few
patterns `re` cannot compile are left out and counted) - Nosey Parker itself reports it, under
that other rule. A finding on such an example is neither a true nor a false positive; "P raw"
counts it as a false positive.
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

RULES = "crates/noseyparker/data/default/builtin/rules/"


def load(mirror, rev, patterns=None):
    """The examples; with `patterns` (a dict), also fills it with each non-identifier rule's
    compiled pattern, and returns how many patterns did not compile."""
    names = subprocess.run(["git", "-C", mirror, "ls-tree", "-r", "--name-only", rev, RULES],
                           capture_output=True, text=True, check=True).stdout.split()
    items = []  # (rule file, rule id, identifier?, positive?, text)
    failed = 0
    for name in names:
        if not name.endswith(".yml"):
            continue
        text = subprocess.run(["git", "-C", mirror, "show", f"{rev}:{name}"], capture_output=True,
                              text=True, check=True).stdout
        for rule in (yaml.safe_load(text) or {}).get("rules", []):
            ident = "identifier" in (rule.get("categories") or [])
            if patterns is not None and not ident:
                try:
                    patterns[rule["id"]] = re.compile(rule["pattern"])
                except re.error:
                    failed += 1
            for ex in rule.get("examples") or []:
                items.append((Path(name).stem, rule["id"], ident, True, ex))
            for ex in rule.get("negative_examples") or []:
                items.append((Path(name).stem, rule["id"], ident, False, ex))
    return (items, failed) if patterns is not None else items


def other_rules_secret(item, patterns):
    """The id of another rule whose pattern matches this negative example, or None."""
    return next((rid for rid, pat in patterns.items() if rid != item[1] and pat.search(item[4])), None)


def flagged_teammem(bin_, folder):
    p = subprocess.run([bin_, "scan", str(folder), "--format", "json"], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{bin_}: {p.stderr[:300]}")
    return {os.path.basename(f["path"]) for f in json.loads(p.stdout)["findings"]}


def flagged_betterleaks(bin_, folder, work):
    rep = work / "bl.json"
    subprocess.run([bin_, "fs", str(folder), "--no-banner", "--log-level", "error", "-s", "-o", str(rep)],
                   capture_output=True)
    return {os.path.basename(f["location"]["path"]) for f in json.loads(rep.read_text()).get("findings", [])}


def flagged_gitleaks(bin_, folder, work):
    rep = work / "gl.json"
    subprocess.run([bin_, "dir", str(folder), "--no-banner", "--log-level", "error", "--report-format",
                    "json", "--report-path", str(rep)], capture_output=True)
    return {os.path.basename(f["File"]) for f in json.loads(rep.read_text())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mirror")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--teammem", action="append", default=[])
    ap.add_argument("--betterleaks")
    ap.add_argument("--gitleaks")
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args()
    patterns = {}
    items, failed = load(args.mirror, args.rev, patterns)
    others = [not it[3] and other_rules_secret(it, patterns) is not None for it in items]
    work = Path(tempfile.mkdtemp(prefix="np-examples-"))
    folder = work / "examples"
    folder.mkdir()
    for i, (_, _, _, _, text) in enumerate(items):
        (folder / f"e{i:04d}.txt").write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    tools = [(f"teammem{'' if len(args.teammem) == 1 else j + 1}", lambda b=b: flagged_teammem(b, folder))
             for j, b in enumerate(args.teammem)]
    if args.betterleaks:
        tools.append(("betterleaks", lambda: flagged_betterleaks(args.betterleaks, folder, work)))
    if args.gitleaks:
        tools.append(("gitleaks", lambda: flagged_gitleaks(args.gitleaks, folder, work)))
    pos = sum(1 for it in items if it[3])
    neg = len(items) - pos
    print(f"{pos} examples, {neg} negative examples "
          f"({sum(1 for it in items if it[3] and not it[2])} examples of non-identifier rules); "
          f"{sum(others)} negative examples are another rule's secret "
          f"({failed} patterns did not compile and were not tried)")
    print(f"{'tool':<12} {'P raw':>6} {'P other-rule':>12} {'R':>6} {'F1':>6}   {'R w/o identifiers':>17}"
          f"  FP raw / FP on another rule's secret")
    misses = {}
    for name, run in tools:
        hit = run()
        flags = [f"e{i:04d}.txt" in hit for i in range(len(items))]
        tp = sum(1 for it, f in zip(items, flags) if it[3] and f)
        fp = sum(1 for it, f in zip(items, flags) if not it[3] and f)
        fp_other = sum(1 for it, f, o in zip(items, flags, others) if not it[3] and f and o)
        secret_pos = [f for it, f in zip(items, flags) if it[3] and not it[2]]
        p = tp / (tp + fp) if tp + fp else 1.0
        p_other = tp / (tp + fp - fp_other) if tp + fp - fp_other else 1.0
        rc = tp / pos
        f1 = 2 * p * rc / (p + rc) if p + rc else 0.0
        print(f"{name:<12} {p:6.3f} {p_other:12.3f} {rc:6.3f} {f1:6.3f}   "
              f"{sum(secret_pos) / len(secret_pos):17.3f}  {fp} / {fp_other}")
        misses[name] = [(it, f) for it, f in zip(items, flags)]
    shutil.rmtree(work)
    if args.misses:
        for name, rows in misses.items():
            if not name.startswith("teammem"):
                continue
            miss = collections.Counter(it[0] for it, f in rows if it[3] and not f)
            total = collections.Counter(it[0] for it, _ in rows if it[3])
            fps = collections.Counter(it[1] for (it, f), o in zip(rows, others) if not it[3] and f and not o)
            print(f"\n{name} misses by rule file (missed/examples): "
                  + ", ".join(f"{k} {v}/{total[k]}" for k, v in miss.most_common()))
            print(f"{name} false positives by rule (not another rule's secret): " + (", ".join(f"{k} {v}" for k, v in fps.most_common()) or "none"))


if __name__ == "__main__":
    main()
