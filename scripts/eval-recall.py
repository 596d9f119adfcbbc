#!/usr/bin/env python3
"""Recall evaluation: teammem recall side by side with BM25 (rank_bm25) on the labelled sets
in benches/recall-eval/.

Each set file holds memories ("M id | type | name | description | body"), dialog turns
("D id | speaker | date | text", saved as a memory each) and questions
("Q dev|test | question | evidence ids"). A question is answered at k when one of its evidence
memories is among the first k results. Printed: recall@1, recall@5 and MRR@10, for the dev
split, the test split and both, with one scope per set and with every set in one scope.

Usage: scripts/eval-recall.py [--bin LABEL=PATH ...] [--split dev|test|all] [--show-misses]
  Without --bin, builds and uses target/release/teammem (as "teammem").
Needs: python3, git, rank_bm25 (pip install rank_bm25).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETS = ROOT / "benches" / "recall-eval"


def load_sets():
    sets = {}
    for path in sorted(SETS.glob("*.txt")):
        memories, questions = [], []
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            kind, _, rest = line.partition(" ")
            parts = [p.strip() for p in rest.split(" | ")]
            if kind == "M" and len(parts) == 5:
                mid, mtype, name, desc, body = parts
                memories.append(dict(id=mid, type=mtype, name=name, description=desc, body=body))
            elif kind == "D" and len(parts) == 4:
                mid, speaker, date, text = parts
                first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
                memories.append(dict(id=mid, type="project", name=f"{speaker}, {date}",
                                     description=first, body=f"{speaker}: {text}"))
            elif kind == "Q" and len(parts) == 3:
                split, question, evidence = parts
                questions.append(dict(split=split, question=question,
                                      evidence=[e.strip() for e in evidence.split(",")]))
            else:
                sys.exit(f"{path}:{n}: cannot read this line (see the format in the script's help)")
        ids = {m["id"] for m in memories}
        for q in questions:
            missing = [e for e in q["evidence"] if e not in ids]
            if missing:
                sys.exit(f"{path}: question {q['question']!r} names unknown memories {missing}")
        sets[path.stem] = (memories, questions)
    return sets


def yaml_scalar(text):
    return json.dumps(text, ensure_ascii=False)


def write_scope(folder, memories):
    for m in memories:
        target = folder / m["type"] / f"{m['id']}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            f"---\nname: {yaml_scalar(m['name'])}\ndescription: {yaml_scalar(m['description'])}\n"
            f"type: {m['type']}\n---\n{m['body']}\n", encoding="utf-8")


def teammem_ranker(binary, memories, work):
    """Writes the memories as a private scope of a fresh repository; returns a ranker."""
    repo = work / "repo"
    base = work / "base"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = dict(os.environ, HOME=str(work), QWEN_CODE_MEMORY_BASE_DIR=str(base),
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(work / "gitconfig"))
    sanitized = re.sub(r"[^a-zA-Z0-9]", "-", str(repo.resolve()))
    write_scope(base / "projects" / sanitized / "memory", memories)

    def rank(question):
        out = subprocess.run([binary, "recall", "--scope", "private", "--max", "10", "--json",
                              "--", question], cwd=repo, env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{binary} recall failed: {out.stderr}")
        return [Path(h["id"]).stem for h in json.loads(out.stdout)["hits"]]

    return rank


def bm25_ranker(memories):
    from rank_bm25 import BM25Okapi

    def tokens(text):
        return re.findall(r"\w+", text.lower())

    docs = [tokens(f"{m['name']} {m['description']} {m['body']}") for m in memories]
    bm25 = BM25Okapi(docs)

    def rank(question):
        scores = bm25.get_scores(tokens(question))
        order = sorted(range(len(memories)), key=lambda i: -scores[i])
        return [memories[i]["id"] for i in order[:10] if scores[i] > 0]

    return rank


def measure(rank, questions, misses=None):
    r1 = r5 = rr = 0.0
    for q in questions:
        got = rank(q["question"])
        ranks = [got.index(e) + 1 for e in q["evidence"] if e in got]
        best = min(ranks) if ranks else None
        r1 += best == 1
        r5 += best is not None and best <= 5
        rr += 1.0 / best if best else 0.0
        if misses is not None and (best is None or best > 5):
            misses.append((q["question"], q["evidence"], got[:5]))
    n = max(len(questions), 1)
    return r1 / n, r5 / n, rr / n


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", action="append", default=[], help="LABEL=PATH of a teammem binary")
    parser.add_argument("--split", default="all", choices=["dev", "test", "all"])
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    try:
        import rank_bm25  # noqa: F401
    except ImportError:
        sys.exit("rank_bm25 is missing: pip install rank_bm25")
    bins = []
    for spec in args.bin:
        label, _, path = spec.partition("=")
        bins.append((label, path))
    if not bins:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path",
                        str(ROOT / "Cargo.toml")], check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        bins.append(("teammem", str(target / "release" / "teammem")))

    sets = load_sets()
    splits = ["dev", "test"] if args.split == "all" else [args.split]
    layouts = [(name, [name]) for name in sets] + [("all sets, one scope", list(sets))]
    header = f"{'scope':<22} {'split':<5} {'n':>3}  " + "  ".join(
        f"{label:>22}" for label in [b[0] for b in bins] + ["BM25"])
    print("recall@1 / recall@5 / MRR@10\n" + header)
    totals = {}
    with tempfile.TemporaryDirectory() as tmp:
        for layout, names in layouts:
            memories = [m for n in names for m in sets[n][0]]
            rankers = [teammem_ranker(path, memories, Path(tmp) / f"{layout}-{i}")
                       for i, (_, path) in enumerate(bins)]
            rankers.append(bm25_ranker(memories))
            for split in splits + (["all"] if len(splits) > 1 else []):
                questions = [q for n in names for q in sets[n][1]
                             if split == "all" or q["split"] == split]
                cells = []
                for i, rank in enumerate(rankers):
                    misses = [] if args.show_misses and i == 0 and split != "all" else None
                    r1, r5, mrr = measure(rank, questions, misses)
                    cells.append(f"{r1:.3f} / {r5:.3f} / {mrr:.3f}")
                    for miss in misses or []:
                        print(f"   miss [{layout}/{split}] {miss[0]!r} wants {miss[1]}, got {miss[2]}")
                    totals.setdefault((layout == "all sets, one scope", split, i), []).append(
                        (len(questions), r5))
                print(f"{layout:<22} {split:<5} {len(questions):>3}  " + "  ".join(
                    f"{c:>22}" for c in cells))


if __name__ == "__main__":
    main()
