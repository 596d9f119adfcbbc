#!/usr/bin/env python3
"""Labelled corpus of memory-like markdown for teammem's secret scanner, and its measurement.

    secrets-corpus.py corpus OUT [--seed N]       write OUT/{pos,neg}/*.md and OUT/labels.json
    secrets-corpus.py measure OUT [--teammem BIN] scan OUT with teammem, print precision and
                                                  recall per rule family (exit 1 below goal)
    secrets-corpus.py bench OUT --mb N [--seed N] ~N MB of memory files with a few planted
                                                  secrets (OUT/planted.json), for benchmarks

Positives come from the sample templates in src/domain/secrets/rules.rs (random bodies of each
rule's alphabet and length); hard negatives are look-alikes that must never be reported:
placeholders, documentation example keys, redacted forms, hashes, UUIDs, integrity strings,
public keys, environment references and prose about tokens. Everything is deterministic for a
given seed. The script never prints a generated secret.
"""

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES_RS = ROOT / "src/domain/secrets/rules.rs"

# --- Reading the rule table -------------------------------------------------------------------

STRING = re.compile(r'r(#*)"(.*?)"\1|"((?:[^"\\]|\\.)*)"', re.S)


def unescape(s):
    return s.encode().decode("unicode_escape").encode("latin-1").decode("utf-8")


def rule_samples():
    """(id, sample) for every rule, read from the Rust source."""
    text = RULES_RS.read_text()
    body = text[text.index("pub(crate) static RULES"):]
    out = []
    for chunk in body.split("Rule::token(")[1:]:
        literals = []
        for m in STRING.finditer(chunk):
            literals.append(m.group(2) if m.group(2) is not None else unescape(m.group(3)))
            # A call ends at its closing `)`; the builder methods after it hold no literals.
        out.append((literals[0], literals[-1]))
    return out


def alphabets():
    text = RULES_RS.read_text()
    fn = text[text.index("fn alphabet"):]
    fn = fn[: fn.index("_ => return None")]
    return {m.group(1): unescape(m.group(2)) for m in re.finditer(r'"(\w+)" => "((?:[^"\\]|\\.)*)"', fn)}


ALPHABETS = alphabets()
TOKEN = re.compile(r"\{(\w+):(\d+)\}")


def expand(template, rng, fill=None):
    """A sample text and its secret: `{an:36}` becomes 36 random chars (or `fill` chars)."""
    def one(m):
        chars = ALPHABETS[m.group(1)]
        n = int(m.group(2))
        if fill is not None:
            return fill * n
        return "".join(rng.choice(chars) for _ in range(n))

    text = TOKEN.sub(one, template)
    if "[[" in text:
        start = text.index("[[")
        text = text.replace("[[", "", 1)
        end = text.index("]]")
        text = text.replace("]]", "", 1)
        return text, text[start:end]
    return text, text


def family(rule_id):
    return rule_id.split("-")[0]


# --- Memory-like prose ------------------------------------------------------------------------

WORDS = (
    "the team agreed to run integration tests against a real database because mocked tests "
    "passed while the migration failed in production deploy pipeline staging cluster review "
    "release branch feature flag rollout monitoring alert dashboard latency budget retry queue "
    "worker cache invalidation schema migration backfill index query planner connection pool "
    "timeout config service owner oncall rotation runbook incident postmortem customer tenant "
    "billing invoice webhook callback endpoint client library version upgrade dependency lockfile "
    "lint format commit message pull request reviewer approve merge squash rebase conflict "
    "token refresh session cookie login auth permission role scope audit log secret manager vault "
    "password policy rotation key management encryption at rest backup restore snapshot region"
).split()
SERVICES = ["deploy", "billing", "search", "ingest", "metrics", "auth", "payments", "notify"]
TYPES = ["user", "feedback", "project", "reference"]


def sentence(rng, n=None):
    n = n or rng.randint(6, 18)
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def paragraph(rng):
    return " ".join(sentence(rng) for _ in range(rng.randint(2, 5)))


def memory(rng, title, lines):
    head = [
        "---",
        f"name: {title}",
        f"description: {sentence(rng, 8)}",
        f"type: {rng.choice(TYPES)}",
        "---",
    ]
    return head + lines


CONTEXTS = [
    lambda s, v: f"- The {v.lower()} credential is `{s}` (rotate it quarterly).",
    lambda s, v: f"export {v}={s}",
    lambda s, v: f"{v.lower()}: {s}",
    lambda s, v: f'  "{v.lower()}": "{s}",',
    lambda s, v: f"Used {s} yesterday — ünïcödé 日本語 → done.",
    lambda s, v: f"{s}",
]

# --- Hard negatives ---------------------------------------------------------------------------


def hard_negatives(rng, samples):
    negs = []
    hexs = lambda n: "".join(rng.choice("0123456789abcdef") for _ in range(n))
    for rule_id, sample in samples:
        text, secret = expand(sample, rng, fill="x")
        negs.append(("placeholder-x", text))
        text, secret = expand(sample, rng)
        negs.append(("redacted", text.replace(secret, secret[:4] + "…" + secret[-2:])))
        negs.append(("redacted", text.replace(secret, secret[:4] + "..." + secret[-2:])))
        negs.append(("placeholder-star", text.replace(secret, secret[:4] + "*" * 12)))
    for _ in range(40):
        negs.append(("commit-sha", f"Fixed in commit {hexs(40)} (see {hexs(7)})."))
        negs.append(("sha256", f"sha256: {hexs(64)}"))
        negs.append(("checksum", f"checksum = {hexs(64)}"))
        u = f"{hexs(8)}-{hexs(4)}-4{hexs(3)}-a{hexs(3)}-{hexs(12)}"
        negs.append(("uuid", f"request id {u}; tenant_id = {u}"))
        negs.append(("uuid", f"token = {u}"))
        b64 = "".join(rng.choice(ALPHABETS["b64"]) for _ in range(86))
        negs.append(("integrity", f'"integrity": "sha512-{b64}=="'))
        negs.append(("ssh-public-key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64[:43]} ci@example"))
        negs.append(("ssh-public-key", f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{b64}{b64[:40]} deploy@ci"))
        negs.append(("env-reference", f'password = os.environ["{rng.choice(SERVICES).upper()}_PASSWORD"]'))
        negs.append(("env-reference", f"token = process.env.{rng.choice(SERVICES).upper()}_TOKEN"))
        negs.append(("env-reference", f"api_key: ${{{rng.choice(SERVICES).upper()}_API_KEY}}"))
        negs.append(("env-reference", "token: ${{ secrets.DEPLOY_TOKEN }}"))
        negs.append(("env-reference", "set PASSWORD=%DB_PASSWORD%"))
        negs.append(("url", f"See https://{rng.choice(SERVICES)}.example.com/docs/{hexs(8)} for the token flow."))
        negs.append(("url", f"DATABASE_URL=postgres://app:${{DB_PASSWORD}}@db:5432/{rng.choice(SERVICES)}"))
        negs.append(("url", "DATABASE_URL=postgres://postgres:postgres@localhost:5432/dev"))
        negs.append(("prose", f"The {rng.choice(SERVICES)} token refresh runs every {rng.randint(2, 60)} minutes; secrets live in Vault."))
        negs.append(("prose", f"password: see the {rng.choice(SERVICES)} entry in 1Password"))
        negs.append(("identifier", f"secret_name = {rng.choice(SERVICES)}-db-credentials-v{rng.randint(1, 9)}"))
        negs.append(("identifier", f"max_tokens = {rng.randint(100, 9000)}"))
        negs.append(("identifier", "password = getPassword()"))
        negs.append(("placeholder", f"{rng.choice(SERVICES).upper()}_API_KEY=YOUR_API_KEY"))
        negs.append(("placeholder", "token = <your-token>"))
        negs.append(("placeholder", 'api_key = "****************"'))
        negs.append(("vendor-example", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"))
        negs.append(("vendor-example", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"))
    negs.append(("public-key", "-----BEGIN PUBLIC KEY-----\n" + "\n".join("".join(rng.choice(ALPHABETS["b64"]) for _ in range(64)) for _ in range(4)) + "\n-----END PUBLIC KEY-----"))
    negs.append(("private-key-placeholder", "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----"))
    return negs


# --- Commands ---------------------------------------------------------------------------------


def write_file(path, lines, crlf=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    nl = "\r\n" if crlf else "\n"
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(nl.join(lines) + nl)


def corpus(out, seed, per_rule=30):
    rng = random.Random(seed)
    samples = rule_samples()
    labels = []
    n = 0
    for rule_id, sample in samples:
        for i in range(per_rule):
            text, secret = expand(sample, rng)
            var = rng.choice(SERVICES).upper() + "_VALUE"
            if "\n" in text:
                block = ["```", *text.split("\n"), "```"]
                offset = 1
            else:
                line = CONTEXTS[i % len(CONTEXTS)](text, var) if text == secret else f"- {text}"
                block = [line]
                offset = 0
            lines = memory(rng, f"Memory {n}", [paragraph(rng), ""])
            line_no = len(lines) + 1 + offset + text[: text.index(secret)].count("\n")
            lines += block + ["", paragraph(rng)]
            rel = f"pos/{n:05d}.md"
            crlf = i % 7 == 3
            write_file(out / rel, lines, crlf=crlf)
            if crlf:
                secret = secret.replace("\n", "\r\n")
            labels.append({"path": rel, "line": line_no, "rule": rule_id,
                           "fingerprint": hashlib.sha256(f"{rule_id}:{secret}".encode()).hexdigest()})
            n += 1
    # The generic rule in the syntaxes memories use, beyond its one sample template.
    forms = ['"client_secret": "{v}",', "API_TOKEN={v}", "  password: {v}", "**Password:** {v}",
             "apiKey: '{v}'", "db.password = {v}", "SECRET_KEY := {v}", "auth_token => \"{v}\""]
    for i in range(len(forms) * 10):
        secret, _ = expand("{pw:18}", rng)
        line = forms[i % len(forms)].format(v=secret)
        lines = memory(rng, f"Memory {n}", [paragraph(rng), "", line, "", paragraph(rng)])
        rel = f"pos/{n:05d}.md"
        write_file(out / rel, lines)
        labels.append({"path": rel, "line": 8, "rule": "generic-secret",
                       "fingerprint": hashlib.sha256(f"generic-secret:{secret}".encode()).hexdigest()})
        n += 1
    negatives = hard_negatives(rng, samples)
    for j in range(0, len(negatives), 10):
        chunk = negatives[j:j + 10]
        lines = memory(rng, f"Negatives {j}", [])
        for _, text in chunk:
            lines += [paragraph(rng), "", text, ""]
        write_file(out / f"neg/{j // 10:05d}.md", lines)
    (out / "labels.json").write_text(json.dumps({"positives": labels, "negatives": len(negatives)}, indent=1))
    print(f"wrote {n} positive files ({len(samples)} rules) and {len(negatives)} hard negatives to {out}")


def measure(out, teammem):
    labels = json.loads((out / "labels.json").read_text())
    run = subprocess.run([teammem, "scan", str(out / "pos"), str(out / "neg"), "--format", "json"],
                         capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"teammem scan failed ({run.returncode}): {run.stderr}")
    report = json.loads(run.stdout)
    findings = report["findings"]
    # Paths in the report are relative to each scanned folder; both folders are scanned, so a
    # positive file is `NNNNN.md` under pos/ and negatives are recognised by their fingerprints.
    by_fp = {}
    for f in findings:
        by_fp.setdefault(f["fingerprint"], []).append(f)
    fams = {}
    label_fps = set()
    for lab in labels["positives"]:
        fam = fams.setdefault(family(lab["rule"]), {"tp": 0, "fn": 0, "fp": 0})
        label_fps.add(lab["fingerprint"])
        hit = any(f["line"] == lab["line"] for f in by_fp.get(lab["fingerprint"], []))
        fam["tp" if hit else "fn"] += 1
        if not hit:
            print(f"missed: {lab['path']}:{lab['line']} {lab['rule']}", file=sys.stderr)
    neg_findings = 0
    for f in findings:
        if f["fingerprint"] not in label_fps:
            fams.setdefault(family(f["rule"]), {"tp": 0, "fn": 0, "fp": 0})["fp"] += 1
            neg_findings += 1
            print(f"unexpected: {f['path']}:{f['line']} {f['rule']} {f['redacted']}", file=sys.stderr)
    print(f"{'family':<14} {'TP':>5} {'FN':>4} {'FP':>4} {'precision':>9} {'recall':>7}")
    total = {"tp": 0, "fn": 0, "fp": 0}
    worst = 1.0
    for name in sorted(fams):
        c = fams[name]
        for k in total:
            total[k] += c[k]
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        worst = min(worst, r)
        print(f"{name:<14} {c['tp']:>5} {c['fn']:>4} {c['fp']:>4} {p:>9.3f} {r:>7.3f}")
    p = total["tp"] / max(1, total["tp"] + total["fp"])
    r = total["tp"] / max(1, total["tp"] + total["fn"])
    print(f"{'ALL':<14} {total['tp']:>5} {total['fn']:>4} {total['fp']:>4} {p:>9.3f} {r:>7.3f}")
    print(f"hard negatives: {labels['negatives']}, findings on them or on prose: {neg_findings}")
    print(f"files scanned: {report['files_scanned']}, bytes: {report['bytes_scanned']}")
    if worst < 0.98 or neg_findings:
        sys.exit(1)


PLANTED = [
    "AKIA{b32:16}",
    "ghp_{an:36}",
    "xoxb-{d:12}-{d:13}-{an:24}",
    "sk_live_{an:24}",
    "glpat-{url:20}",
    "-----BEGIN RSA PRIVATE KEY-----\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:40}==\n-----END RSA PRIVATE KEY-----",
]


def bench(out, mb, seed, files=None, paras=(4, 30)):
    """~mb MB of memory files: a pool of paragraphs reassembled, with one planted secret per
    ~500 KB (OUT/planted.json lists file and line)."""
    rng = random.Random(seed)
    pool = [paragraph(rng) for _ in range(3000)]
    target = mb * 1_000_000
    size = 0
    n = 0
    planted = []
    every = 500_000
    next_plant = every // 2
    while size < target:
        lines = memory(rng, f"Memory {n}", [])
        for _ in range(rng.randint(*paras)):
            lines += [rng.choice(pool), ""]
        if size >= next_plant:
            tmpl = PLANTED[len(planted) % len(PLANTED)]
            text, secret = expand(tmpl, rng)
            line_no = len(lines) + 2
            lines += ["```", *text.split("\n"), "```", ""] if "\n" in text else [f"- key `{text}`", ""]
            if "\n" not in text:
                line_no -= 1
            planted.append({"path": f"{n // 1000:03d}/{n:06d}.md", "line": line_no, "kind": tmpl.split("{")[0][:12]})
            next_plant += every
        rel = out / f"{n // 1000:03d}/{n:06d}.md"
        write_file(rel, lines)
        size += sum(len(l) + 1 for l in lines)
        n += 1
        if files and n >= files:
            break
    (out.parent / (out.name + ".planted.json")).write_text(json.dumps(planted, indent=1))
    print(f"wrote {n} files, {size} bytes, {len(planted)} planted secrets to {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["corpus", "measure", "bench"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--files", type=int, default=None, help="bench: stop after this many files")
    ap.add_argument("--paras", default="4-30", help="bench: paragraphs per memory, MIN-MAX")
    ap.add_argument("--teammem", default=str(ROOT / "target/release/teammem"))
    a = ap.parse_args()
    if a.command == "corpus":
        corpus(a.out, a.seed)
    elif a.command == "measure":
        measure(a.out, a.teammem)
    else:
        lo, hi = (int(x) for x in a.paras.split("-"))
        bench(a.out, a.mb, a.seed, a.files, (lo, hi))


if __name__ == "__main__":
    main()
