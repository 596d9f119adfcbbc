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
import base64
import hashlib
import json
import os
import random
import re
import struct
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


# --- Families the rules' sample templates do not generate ------------------------------------
#
# Positives and decoys written from the formats themselves (an openssh-key-v1 container packed
# byte by byte, base64 of user:password, header syntaxes), in contexts and with words of their
# own, so the rules are measured on shapes they were not written from. A label is the file and
# the line where the secret starts; any finding on that line counts.

B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
AN = B64[:62]
LOWER_B32 = "abcdefghijklmnopqrstuvwxyz234567"
HEX = "0123456789abcdef"


def rand(rng, alphabet, n):
    return "".join(rng.choice(alphabet) for _ in range(n))


def letters_and_digits(rng, n):
    """n random alphanumeric chars holding at least one letter and one digit (redrawn at 16
    chars until they do)."""
    v = rand(rng, AN, n)
    while not (any(c.isdigit() for c in v) and any(c.isalpha() for c in v)):
        v = rand(rng, AN, 16)
    return v


def ssh_string(b):
    return struct.pack(">I", len(b)) + b


def openssh_key(rng, encrypted=False, kind=None):
    """An -----BEGIN OPENSSH PRIVATE KEY----- block packed as OpenSSH's PROTOCOL.key lays it
    out, with random key bytes; `encrypted` gives an aes256-ctr/bcrypt container."""
    kind = kind or rng.choice(["ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256"])
    rb = lambda n: bytes(rng.randrange(256) for _ in range(n))
    if kind == "ssh-ed25519":
        pk = rb(32)
        public = ssh_string(b"ssh-ed25519") + ssh_string(pk)
        secret = ssh_string(b"ssh-ed25519") + ssh_string(pk) + ssh_string(rb(32) + pk)
    elif kind == "ssh-rsa":
        n = b"\x00" + rb(256)
        public = ssh_string(b"ssh-rsa") + ssh_string(b"\x01\x00\x01") + ssh_string(n)
        secret = (ssh_string(b"ssh-rsa") + ssh_string(n) + ssh_string(b"\x01\x00\x01")
                  + ssh_string(rb(256)) + ssh_string(rb(128)) + ssh_string(rb(128)) + ssh_string(rb(128)))
    else:
        point = b"\x04" + rb(64)
        public = ssh_string(b"ecdsa-sha2-nistp256") + ssh_string(b"nistp256") + ssh_string(point)
        secret = public + ssh_string(b"\x00" + rb(32))
    check = rb(4)
    private = check + check + secret + ssh_string(f"{rng.choice(SERVICES)}@ci".encode())
    private += bytes(range(1, 1 + (-len(private)) % 8))
    if encrypted:
        head = ssh_string(b"aes256-ctr") + ssh_string(b"bcrypt") + ssh_string(ssh_string(rb(16)) + struct.pack(">I", 16))
        private = rb(len(private))
    else:
        head = ssh_string(b"none") + ssh_string(b"none") + ssh_string(b"")
    blob = b"openssh-key-v1\0" + head + struct.pack(">I", 1) + ssh_string(public) + ssh_string(private)
    body = base64.b64encode(blob).decode()
    lines = [body[i:i + 70] for i in range(0, len(body), 70)]
    return "\n".join(["-----BEGIN OPENSSH PRIVATE KEY-----", *lines, "-----END OPENSSH PRIVATE KEY-----"])


def pem_key(rng, label=None):
    label = label or rng.choice(["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"])
    body = "MII" + rand(rng, "BCDEFGJ", 1) + rand(rng, B64, rng.randint(600, 1500))
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


def password(rng, n=None):
    """A person's password: letters, digits and the symbols config files see, `=` and `:`
    included."""
    n = n or rng.randint(10, 22)
    chars = AN + "!#$%&*+-=:@^_~?."
    while True:
        p = rand(rng, chars, n)
        if (any(c.isdigit() for c in p) and any(c.isalpha() for c in p) and p[0] not in "$.-"
                and not p.endswith((".", ":", "?")) and "..." not in p):
            return p


def uuid4(rng):
    h = rand(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:32]}"


def indent(block, prefix):
    return "\n".join(prefix + l for l in block.split("\n"))


def fam_openssh(rng):
    key = openssh_key(rng)
    ctx = rng.choice(["bare", "fenced", "yaml", "quote", "json"])
    if ctx == "bare":
        return f"Deploy key for the {rng.choice(SERVICES)} box:\n\n{key}", "-----BEGIN"
    if ctx == "fenced":
        return f"The old bastion key (remove once rotated):\n\n```\n{key}\n```", "-----BEGIN"
    if ctx == "yaml":
        return f"```yaml\nssh:\n  deploy_key: |\n{indent(key, '    ')}\n```", "-----BEGIN"
    if ctx == "quote":
        return indent(f"From the handover note:\n{key}", "> "), "-----BEGIN"
    return json.dumps({"host": "bastion", "identity": key + "\n"}), "-----BEGIN"


def fam_escaped_pem(rng):
    key = pem_key(rng, "PRIVATE KEY")
    esc = key.replace("\n", "\\n") + "\\n"
    ctx = rng.choice(["sa", "env", "yaml", "js"])
    if ctx == "sa":
        doc = {"type": "service_account", "project_id": f"{rng.choice(SERVICES)}-prod",
               "private_key_id": rand(rng, HEX, 40), "private_key": key + "\n",
               "client_email": f"ci@{rng.choice(SERVICES)}.iam.gserviceaccount.com"}
        return "```json\n" + json.dumps(doc, indent=2) + "\n```", "-----BEGIN"
    if ctx == "env":
        return f'SIGNING_PRIVATE_KEY="{esc}"', "-----BEGIN"
    if ctx == "yaml":
        return f'gcp:\n  credentials_pem: "{esc}"', "-----BEGIN"
    return f"const jwtKey = '{esc}';", "-----BEGIN"


def fam_auth_header(rng):
    tok = rand(rng, AN + "-._~", rng.randint(24, 64))
    while not (any(c.isdigit() for c in tok) and any(c.isalpha() for c in tok)):
        tok = rand(rng, AN, 32)
    scheme, value = rng.choice([("Bearer", tok), ("SSWS", "00" + rand(rng, AN + "-_", 40)),
                                ("token", rand(rng, HEX, 40)), ("Bearer", tok),
                                ("Basic", base64.b64encode(f"svc-{rng.choice(SERVICES)}:{password(rng)}".encode()).decode())])
    host = f"https://{rng.choice(SERVICES)}.internal.corp/api/v2/items"
    ctx = rng.choice(["curl", "raw", "yaml", "json", "http", "fetch"])
    if ctx == "curl":
        return f'curl -sS -X POST -H "Authorization: {scheme} {value}" {host}', value
    if ctx == "raw":
        return f"Authorization: {scheme} {value}", value
    if ctx == "yaml":
        return f"http:\n  headers:\n    Authorization: \"{scheme} {value}\"", value
    if ctx == "json":
        return json.dumps({"url": host, "headers": {"Authorization": f"{scheme} {value}"}}), value
    if ctx == "http":
        return f"GET /v1/jobs HTTP/1.1\nHost: ci.internal\nauthorization: {scheme.lower()} {value}", value
    return f"await fetch('{host}', {{ headers: {{ Authorization: `{scheme} {value}` }} }})", value


def fam_registry_auth(rng):
    user = rng.choice(["deploy", "ci-bot", "_json_key", "robot$builder", "AWS"])
    cred = base64.b64encode(f"{user}:{password(rng, rng.randint(16, 40))}".encode()).decode()
    ctx = rng.choice(["docker", "docker-pretty", "npmrc"])
    if ctx == "docker":
        return json.dumps({"auths": {f"registry.{rng.choice(SERVICES)}.io": {"auth": cred}}}), cred
    if ctx == "docker-pretty":
        return ("```json\n{\n  \"auths\": {\n    \"ghcr.io\": {\n      \"auth\": \"" + cred
                + "\"\n    }\n  },\n  \"credsStore\": \"\"\n}\n```"), cred
    return f"//npm.{rng.choice(SERVICES)}.corp/:_auth={cred}", cred


def fam_keyword_spelling(rng):
    v = rand(rng, AN, rng.randint(20, 40))
    while not (any(c.isdigit() for c in v) and any(c.isalpha() for c in v)):
        v = rand(rng, AN, 24)
    b32 = rand(rng, LOWER_B32, 52)
    line, secret = rng.choice([
        (f"service_key: {v}", v),
        (f"Secret access key: {rand(rng, B64, 40)}", None),
        (f"TS_AUTHKEY={v}", v),
        (f"AZURE_DEVOPS_PAT={b32}", b32),
        (f"signingKey = \"{v}\"", v),
        (f"Master-Key: {v}", v),
        (f"client secret: {v}", v),
        (f"webhookSecret: '{v}'", v),
        (f"PUSHER_APP_SECRET={rand(rng, HEX, 20)}", None),
        (f"encryption-key => \"{v}\"", v),
        (f"the staging API key is {v}", v),
    ])
    if secret is None:
        secret = line.split()[-1].split("=")[-1]
    return line, secret


def fam_symbol_password(rng):
    p = password(rng)
    key = rng.choice(["DB_PASSWORD", "smtp_pass", "redisPassword", "admin-password", "PGPASSWORD", "Password"])
    ctx = rng.choice(["quoted", "single", "json", "env", "ini"])
    if ctx == "quoted":
        return f'{key} = "{p}"', p
    if ctx == "single":
        return f"{key}: '{p}'", p
    if ctx == "json":
        return json.dumps({key: p}), p
    p = p.replace(" ", "")
    if ctx == "env":
        return f"{key}={p}", p
    return f"Server=db.{rng.choice(SERVICES)};User Id=app;{key}={p.replace(';', '')};", p.replace(";", "")


def fam_empty_user_uri(rng):
    p = rand(rng, AN, rng.randint(12, 28))
    scheme = rng.choice(["redis", "rediss", "postgres", "postgresql", "amqp", "mongodb+srv", "mysql"])
    return f"CACHE_URL={scheme}://:{p}@{rng.choice(SERVICES)}.internal:6380/0", p


def fam_vendor_uuid(rng):
    u = uuid4(rng)
    vendor, key = rng.choice([("heroku", "HEROKU_API_KEY"), ("snyk", "SNYK_TOKEN"),
                              ("postmark", "POSTMARK_SERVER_TOKEN"), ("opsgenie", "opsgenie_api_key"),
                              ("splunk", "SPLUNK_HEC_TOKEN"), ("launchdarkly", "launchDarklySdkKey"),
                              ("codecov", "CODECOV_TOKEN"), ("scaleway", "SCW_SECRET_KEY"),
                              ("sauce labs", "SAUCE_ACCESS_KEY"), ("shortcut", "SHORTCUT_API_TOKEN")])
    ctx = rng.choice(["env", "yaml", "prose"])
    if ctx == "env":
        return f"{key}={u}", u
    if ctx == "yaml":
        return f"{key.lower()}: \"{u}\"", u
    return f"The {vendor} token is {u} (ask ops before rotating).", u


def fam_header_uuid(rng):
    """UUID-shaped keys under an API-key name or in an API-key header, no vendor named."""
    u = uuid4(rng)
    svc = rng.choice(SERVICES)
    return rng.choice([
        f'curl -H "X-API-Key: {u}" https://{svc}.internal/v2/jobs',
        f"INTERNAL_API_KEY={u}",
        f'headers: {{"x-auth-token": "{u}"}}',
        f"{svc}:\n  apiKey: {u}",
        f"X-Access-Token: {u}",
    ]), u


def fam_wireguard(rng):
    k = rand(rng, B64, 42) + rng.choice("AEIMQUYcgkosw048") + "="
    return f"```ini\n[Interface]\nAddress = 10.8.0.{rng.randint(2, 250)}/24\nPrivateKey = {k}\nListenPort = 51820\n```", k


def fam_prefixed(rng):
    tok = rng.choice([
        f"tskey-auth-k{rand(rng, AN, 10)}CNTRL-{rand(rng, AN, 32)}",
        f"tskey-api-k{rand(rng, AN, 10)}CNTRL-{rand(rng, AN, 32)}",
        f"pat{rand(rng, AN, 14)}.{rand(rng, HEX, 64)}",
        f"NRAK-{rand(rng, AN[:26] + AN[52:], 27)}",
        f"NRII-{rand(rng, AN + '-_', 32)}",
        f"eu01xx{rand(rng, HEX, 30)}NRAL",
        f"sq{rng.choice('upa')}_{rand(rng, HEX, 40)}",
        f"dckr_pat_{rand(rng, AN + '-_', 27)}",
        f"dd{rng.choice('pw')}_{rand(rng, AN, 36)}",
        f"dnkey-{rand(rng, LOWER_B32.upper(), 26)}-{rand(rng, LOWER_B32.upper(), 52)}",
        f"sgp_{rand(rng, AN, 64)}",
        f"fc-{rand(rng, HEX, 32)}",
        f"hawk.{rand(rng, AN + '-_', 20)}.{rand(rng, AN + '-_', 20)}",
        f"da2-{rand(rng, AN[26:], 26)}",
        f"{rng.choice(['sdk', 'mob', 'api'])}-{uuid4(rng)}",
        f"amzn.mws.{uuid4(rng)}",
        f"access-{rng.choice(['sandbox', 'development', 'production'])}-{uuid4(rng)}",
        f"nvapi-{rand(rng, AN + '-_', 64)}",
        f"CCDB1_{rand(rng, AN, 22)}_{rand(rng, AN, 40)}",
        f"tgp_v1_{rand(rng, AN + '-_', 43)}",
        f"AstraCS:{rand(rng, AN[:52], 24)}:{rand(rng, HEX, 64)}",
        f"wandb_v1_{rand(rng, AN, 77)}",
        f"csk-{rand(rng, AN[26:], 48)}",
        f"rootly_{rand(rng, HEX, 64)}",
        f"cfxk_{rand(rng, AN, rng.randint(20, 22))}_{rand(rng, AN, 6)}",
        f"cfxk_{rand(rng, AN + '-_', 30)}",
        f"apk_user_{rand(rng, B64, 152)}",
        f"apk_{rand(rng, B64, 96)}",
        f"cog_{rand(rng, LOWER_B32, 52)}",
        f"CAIS{rand(rng, B64, rng.randint(180, 400))}",
        f"LTAI{rand(rng, AN, 12)}",
    ])
    ctx = rng.choice(["prose", "cjk", "table", "bullet"])
    if ctx == "prose":
        return f"We pasted {tok} into the runner by mistake last week.", tok
    if ctx == "cjk":
        return f"临时凭据：{tok}（请在周五前轮换）", tok
    if ctx == "table":
        return f"| ci | {tok} | expires Friday |", tok
    return f"- runner credential `{tok}`", tok


def fam_facebook(rng):
    """Facebook app access tokens (`app id|app secret`) beside a mention of Facebook."""
    tok = f"{rand(rng, '123456789', 1)}{rand(rng, '0123456789', rng.choice([14, 15]))}|{rand(rng, AN + '-_', rng.randint(27, 32))}"
    line = rng.choice([
        f"FB_APP_ACCESS_TOKEN={tok}",
        f'"facebook": {{"app_token": "{tok}"}}',
        f"The Facebook Graph app token for the pixel job is {tok} (rotate in Meta's console).",
        f"curl 'https://graph.facebook.com/v19.0/debug_token?access_token={tok.replace('|', '%7C')}'",
        f"| facebook | {tok} | marketing sync |",
    ])
    return line, tok.replace("|", "%7C") if "%7C" in line else tok


def fam_prose_layout(rng):
    """Keys in backticks, Markdown tables, German prose, CJK separators."""
    v = rand(rng, AN, rng.randint(24, 40))
    while not (any(c.isdigit() for c in v) and any(c.isalpha() for c in v)):
        v = rand(rng, AN, 24)
    key = rng.choice(["DD_API_KEY", "CONFLUENT_API_SECRET", "AUTH0_CLIENT_SECRET", "IBMCLOUD_API_KEY", "jwtSecret"])
    words = key.lower().replace("_", " ")
    line = rng.choice([
        f"Set `{key}` to `{v}` before running the job.",
        f"| prod | `{key}` | `{v}` |",
        f"The {words} is {v}",
        f"Der {words} lautet: {v}",
        f"{words}：{v}",
        f"本番の {words}：{v} です。",
    ])
    return line, v


def fam_client_lines(rng):
    """Passwords given to database clients, .pgpass lines and .NET credential calls."""
    p = letters_and_digits(rng, rng.randint(14, 24))
    line = rng.choice([
        f"mysql -h db.{rng.choice(SERVICES)} -u root -p'{p}' app",
        f"mysqldump -uroot -p{p} app > /tmp/app.sql",
        f"db.{rng.choice(SERVICES)}.internal:5432:app:app_rw:{p}",
        f"*:*:*:replicator:{p}",
        f'var creds = new NetworkCredential("ci-{rng.choice(SERVICES)}", "{p}");',
        f'new DirectoryEntry("LDAP://dc1.corp", "CORP\\svc", "{p}")',
    ])
    return line, p


def fam_odd_tokens(rng):
    """Tokens a placeholder check would refuse or whose prefix others share."""
    tok = rng.choice([
        "A" * 21 + rand(rng, AN, 20) + "%3D" + rand(rng, AN, 50),
        f"pk_{rand(rng, '0123456789', 8)}_{rand(rng, AN[:26] + AN[52:], 32)}",
        f"00{rand(rng, AN + '-_', 40)}",
        f"ops_eyJ{rand(rng, AN + '-_', 300)}",
    ])
    if tok.startswith("00"):
        return f"OKTA_API_TOKEN={tok}", tok
    return rng.choice([f"X_BEARER={tok}", f"token: {tok}", f"We pasted {tok} by mistake."]), tok


def prose_value(rng):
    """A password as people paste one into prose: letters and digits, at least one of each."""
    while True:
        v = rand(rng, AN, rng.randint(10, 20))
        if any(c.isdigit() for c in v) and any(c.isalpha() for c in v):
            return v


def fam_prose_password(rng):
    """Passwords given in prose (several languages, words between the key and its verb, a
    value before its key or in parentheses) and in gradle/groovy/kotlin build scripts."""
    v = prose_value(rng)
    what = rng.choice(["the staging db", "the replica", "user 'deploy'", "the bastion", "prod"])
    line = rng.choice([
        f"The password for {what} is {v} until the rotation.",
        f"password for {what} is `{v}`",
        f"The default password for {what} is \"{v}\".",
        f"Use {v} as the password for {what}.",
        f"`{v}` is the {rng.choice(['admin', 'root', 'replica'])} password.",
        f"The {rng.choice(['db', 'smtp', 'vpn'])} password ({v}) rotates monthly.",
        f"La contraseña de la base de datos es {v}",
        f"la contraseña es \"{v}\"",
        f"Le mot de passe de prod est : {v}",
        f"A senha do banco é {v}",
        f"Das Passwort für die Datenbank ist {v}",
        f"本番のパスワードは{v}です",
        f"    password '{v}'",
        f'    password("{v}")',
        f'    password.set("{v}")',
    ])
    return line, v


def fam_compared_password(rng):
    """A password compared in code, and quoted passphrases of words."""
    words = ["orbit", "maple", "cobalt", "harbor", "violet", "summit", "ember", "quartz", "lantern"]
    p = rand(rng, "abcdefghijklmnopqrstuvwxyz0123456789", rng.randint(6, 10))
    phrase = " ".join(rng.sample(words, rng.randint(2, 4)))
    line = rng.choice([
        f'if username == "ops" and password == "{p}":',
        f"if user.password != '{p}' {{",
        f'if creds.Secret != "{p}-{rng.choice(words)}" {{',
        f"password = '{phrase}'",
        f'db_password: "{phrase}"',
    ])
    secret = line.split('"')[-2] if '"' in line else line.split("'")[-2]
    return line, secret


def fam_prose_secret(rng):
    """Secrets other than passwords given in prose: words between the key and its verb in
    several languages, the value before its key, or in parentheses after it."""
    v = rand(rng, AN + "+/_-", rng.randint(20, 48))
    while not (any(c.isdigit() for c in v) and any(c.isalpha() for c in v)) or v[0] in "/+_-":
        v = rand(rng, AN, 32)
    key = rng.choice(["api key", "jwt secret", "deploy token", "signing secret", "access token",
                      "client secret", "encryption key", "app key", "pat", "webhook secret"])
    vendor = rng.choice(["datadog", "stripe", "sentry", "azure devops", "okta", "internal", "ci"])
    env = rng.choice(["staging", "prod", "the nightly job", "QA"])
    line = rng.choice([
        f"The {vendor} {key} for {env} is {v} until the rotation.",
        f"El {vendor} {key} de {env} es {v}",
        f"La clé {vendor} {key} de {env} est : {v}",
        f"Der {vendor} {key} für {env} lautet: {v}",
        f"Use {v} as the {vendor} {key} until Friday.",
        f"Usa {v} como {vendor} {key} hasta el viernes.",
        f"Utiliser {v} comme {vendor} {key}.",
        f"Bitte {v} als {vendor} {key} verwenden.",
        f"FYI the {vendor} {key} ({v}) expires next month.",
        f"{vendor} {key} base为 {v}，下周轮换。",
    ])
    return line, v


def fam_typed_declaration(rng):
    """Secrets in typed declarations of several languages, and short random passwords."""
    v = rand(rng, AN, rng.randint(20, 40))
    name = rng.choice(["apiKey", "clientSecret", "authToken", "dbPassword", "signingSecret"])
    upper = "".join("_" + c if c.isupper() else c.upper() for c in name)
    line = rng.choice([
        f'const {name}: string = "{v}";',
        f"private readonly {name}: string = '{v}';",
        f'var {name} string = "{v}"',
        f'val {name}: String = "{v}"',
        f'let {name}: String = "{v}"',
        f'const {upper}: &str = "{v}";',
        f'static {upper}: &\'static str = "{v}";',
        f'public const string {name[0].upper() + name[1:]} = "{v}";',
        f'{upper}: str = "{v}"',
    ])
    return line, v


def fam_table_column(rng):
    """A Markdown table whose column header names a secret; the value is in a row below."""
    v = letters_and_digits(rng, rng.randint(10, 32))
    col = rng.choice(["password", "Password", "token", "API key", "secret", "pass"])
    svc = rng.choice(SERVICES)
    cell = rng.choice([v, f"`{v}`"])
    table = [f"| service | user | {col} |", rng.choice(["|---|---|---|", "| --- | --- | --- |", "|:--|:--|:--|"]),
             f"| {svc} | {rng.choice(['admin', 'ops', 'ci-bot'])} | {cell} |"]
    if rng.random() < 0.5:
        table.insert(2, f"| {rng.choice(SERVICES)} | svc | `<in vault>` |")
    return "\n".join(table), v


def fam_cli_login(rng):
    """Registry logins and redis-cli with a password on the command line or piped in."""
    p = rand(rng, AN, rng.randint(16, 40))
    reg = rng.choice(["registry.corp.io", "ghcr.io", "quay.io", "harbor.internal:5000"])
    line = rng.choice([
        f"docker login -u {rng.choice(SERVICES)} -p {p} {reg}",
        f"podman login {reg} -u bot -p '{p}'",
        f"helm registry login {reg} --username ci -p {p}",
        f"redis-cli -h cache.{rng.choice(SERVICES)}.internal -a {p} ping",
        f'echo "{p}" | docker login {reg} -u ops --password-stdin',
    ])
    return line, p


FAMILIES = {
    "typed-declaration": fam_typed_declaration,
    "table-column": fam_table_column,
    "cli-login": fam_cli_login,
    "prose-secret": fam_prose_secret,
    "prose-layout": fam_prose_layout,
    "client-lines": fam_client_lines,
    "odd-tokens": fam_odd_tokens,
    "openssh-key": fam_openssh,
    "escaped-pem": fam_escaped_pem,
    "auth-header": fam_auth_header,
    "registry-auth": fam_registry_auth,
    "key-spelling": fam_keyword_spelling,
    "symbol-password": fam_symbol_password,
    "empty-user-uri": fam_empty_user_uri,
    "vendor-uuid": fam_vendor_uuid,
    "header-uuid": fam_header_uuid,
    "wireguard": fam_wireguard,
    "prefixed-token": fam_prefixed,
    "facebook-app-token": fam_facebook,
    "prose-password": fam_prose_password,
    "compared-password": fam_compared_password,
}


def decoys(rng):
    """Look-alikes of the families above that must not be reported."""
    out = []
    for _ in range(12):
        out.append(("encrypted-openssh-key", openssh_key(rng, encrypted=True)))
        out.append(("secretsmanager-arn", f"SecretId: arn:aws:secretsmanager:us-east-1:{rand(rng, '0123456789', 12)}:secret:{rng.choice(SERVICES)}/db-{rand(rng, AN, 6)}"))
        out.append(("publishable-key", f"stripe_key: pk_live_{rand(rng, AN, 48)}"))
        out.append(("publishable-key", f"NEXT_PUBLIC_STRIPE_KEY=pk_test_{rand(rng, AN, 48)}"))
        out.append(("publishable-key", f"posthog_key: phc_{rand(rng, AN, 43)}"))
        out.append(("placeholder-prefix", rng.choice([
            'sv_licenseKey "cfxk_xxxxxxxxxxxxxxxxxxxx_xxxxx"',
            "DEVIN_API_KEY=apk_user_<your key here>",
            "setr nord_keymaster \"cfxk_your_key\"",
        ])))
        out.append(("prefix-lookalike", rng.choice([
            f"apk_release_path = build/outputs/apk/{rng.choice(SERVICES)}-release.apk",
            "The CAIS team owns the Alibaba STS rotation runbook.",
            f"facebook page id {rand(rng, '123456789', 15)} | owner: marketing",
        ])))
        out.append(("bare-uuid", f"request_id = {uuid4(rng)}"))
        out.append(("bare-uuid", rng.choice([
            f'curl -H "Idempotency-Key: {uuid4(rng)}" https://api.internal/charges',
            f"X-Request-Id: {uuid4(rng)}",
            f"idempotency_key: {uuid4(rng)}",
            f"partition_key = {uuid4(rng)}",
            f'headers: {{"x-correlation-id": "{uuid4(rng)}"}}',
        ])))
        out.append(("bare-uuid", f"The {rng.choice(SERVICES)} tenant is {uuid4(rng)}."))
        out.append(("password-hash", f"password: $2b$12${rand(rng, B64[:-2] + './', 53)}"))
        out.append(("header-reference", f'curl -H "Authorization: Bearer ${rng.choice(SERVICES).upper()}_TOKEN" https://x.internal'))
        out.append(("table-non-secret", f"| token | meaning |\n|---|---|\n| `{rng.choice(['glpat-', 'ghp_', 'xoxb-', 'sk_live_'])}` | {rng.choice(SERVICES)} token prefix |\n| ******** | redacted |"))
        out.append(("typed-non-literal", rng.choice([f"const apiKey: string = process.env.{rng.choice(SERVICES).upper()}_KEY;",
                                                     "def refresh(self, token: Token = None, retries: int = 3):",
                                                     "startToken:Token=None, stopToken:Token=None",
                                                     f"maxTokens: number = {rng.randint(100, 9000)}"])))
        out.append(("login-reference", rng.choice([f"echo $CR_PAT | docker login ghcr.io -u {rng.choice(SERVICES)} --password-stdin",
                                                   "docker login -u ci -p $REGISTRY_PASSWORD registry.corp.io",
                                                   'redis-cli -a "$REDIS_PASSWORD" ping'])))
        out.append(("path-or-number", rng.choice([f'const SHORT_PAT: &str = "src/**/{rng.choice(SERVICES)}.rs";',
                                                  f"static uint32_t token_seed = 0x{rand(rng, HEX, 8)};"])))
        out.append(("header-reference", "Authorization: Bearer <token>"))
        out.append(("basic-not-credentials", f"Authorization: Basic {base64.b64encode(b'just-a-name').decode()}"))
        out.append(("docker-no-auth", '{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}'))
        out.append(("key-names", f"cache_key = user-{rng.randint(1, 999)}-profile-v{rng.randint(1, 9)}"))
        out.append(("key-names", f"idempotency_key: {uuid4(rng)}"))
        out.append(("schema-words", "password: required"))
        out.append(("schema-words", '"password": "string"'))
        out.append(("uri-no-password", f"REDIS_URL=redis://{rng.choice(SERVICES)}.internal:6379/0"))
        out.append(("public-key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rand(rng, B64, 43)} {rng.choice(SERVICES)}@ci"))
        out.append(("wireguard-public", f"PublicKey = {rand(rng, B64, 43)}="))
        out.append(("digest", f"sha256:{rand(rng, HEX, 64)}"))
        out.append(("prose-layout", f"Set `LOG_LEVEL` to `debug` and `API_TOKEN` to `${{API_TOKEN}}`."))
        out.append(("prose-layout", "| prod | `TOKEN_TTL` | `3600` |"))
        out.append(("prose-layout", "The token for staging is rotated every Friday."))
        out.append(("client-lines", "mysql -h db -u root -p app"))
        out.append(("client-lines", "mysql -u app -p$MYSQL_PASSWORD app"))
        out.append(("client-lines", "localhost:5432:app:app:*"))
        out.append(("dollar-reference", rng.choice(["password = $DB_PASSWORD", "-Password $ESXipass", "let accountKey = $accountKey;"])))
        out.append(("selector", 'this.addPassword = "#add-password";'))
        out.append(("image-default", rng.choice(["POSTGRES_PASSWORD=postgres", "DB_PASSWORD=mysql"])))
        out.append(("padding", "A" * 64))
        out.append(("prose-password", rng.choice([
            "The password is stored in Vault.", "The password for the staging db is in 1Password.",
            "password for the db is rotated weekly", "Use the password manager for the bastion.",
            "La contraseña es obligatoria.", "Le mot de passe est incorrect.", "A senha é obrigatória.",
            "Das Passwort ist falsch.", "パスワードは必須です", "The password policy is 14 chars minimum.",
            "the password (see 1Password) is kept there", "The password for user 'postgres' is 'changeme'."])))
        out.append(("prose-secret", rng.choice([
            "The token rotation policy for staging is 90d-2024Q1x.",
            "The api key name for prod is deploy-key-v2-2024.",
            "The secret for staging is stored in Vault under ops/db.",
            "El token de pruebas es obligatorio desde 2024.",
            "the cache key for users is user:1234:profile:v2",
            f"the key fingerprint for the host is SHA256:{rand(rng, B64, 43)}",
            f"the commit for the token fix is {rand(rng, HEX, 40)}",
            f"the public key for staging is {rand(rng, AN, 32)}",
            "Use EXAMPLEKEY1234567890ab as the api key in the docs.",
            "the api key (see the vault entry) expires next month",
            "Use the deploy key as the fallback.",
            "password = 'super$ecret'", '"password": "$super$ecret",', 'db_password: "P@ssw0rd!"',
            'IAMUserChangePassword = "arn:aws:iam::aws:policy/IAMUserChangePassword"'])))
        out.append(("build-script", rng.choice([
            "    password 'changeme'", '    password project.findProperty("repoPassword")',
            '    password System.getenv("REPO_PASSWORD")', '    password = providers.gradleProperty("pw")'])))
        out.append(("compared-password", rng.choice([
            'if password == "":', "if password != confirm_password:", 'if (type == "password") {',
            'if token == "Bearer":', "if token != 'expired_token':", "password = 'Enter your password'",
            'password: "not set yet"', 'db_password: "See the vault"'])))
        out.append(("typed-sequence", rng.choice([
            "license_key: a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8NRAL", "api_secret = 'abcdefg12346+FJQCK'",
            "--set pixie.deployKey=px-dep-d4c3b2a1-f6e5-h8g7-j1i8-p5o0n5m3l2k1"])))
        out.append(("route-or-label", rng.choice([
            "put '/forgot-password' => \"cms/sites/passwords#update\", as: 'update_password'",
            'passwordLabel:"Password:",rememberMeLabel:"Remember me:"',
            "REACT_APP_FORGOT_PASSWORD=$REACT_APP_BASE_URL/classroom/#/forgot_password"])))
        out.append(("vendor-look-alike", rng.choice([
            "See the Discord server for the bot token.", "export VAULT_ADDR=https://vault.internal:8200",
            "npm config set //registry.npmjs.org/:_authToken=${NPM_TOKEN}",
            "Cookie: _gitlab_session=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"])))
    return out


def family_corpus(out, rng, per_family=40):
    """Writes OUT/pos/fam-*.md and OUT/neg/decoy-*.md; returns their labels."""
    labels = []
    for name, make in FAMILIES.items():
        for i in range(per_family):
            block, marker = make(rng)
            wrap = rng.choice(["plain", "plain", "cjk", "list"])
            if wrap == "cjk" and "\n" not in block:
                block = f"备注：{block}"
            elif wrap == "list" and "\n" not in block:
                block = f"- {block}"
            lines = memory(rng, f"{name} {i}", [paragraph(rng), ""])
            body_start = len(lines)
            lines += block.split("\n") + ["", paragraph(rng)]
            line_no = next(body_start + 1 + j for j, l in enumerate(block.split("\n")) if marker in l)
            rel = f"pos/fam-{name}-{i:03d}.md"
            write_file(out / rel, lines)
            labels.append({"path": rel, "line": line_no, "family": name})
    decoy_list = decoys(rng)
    for j, (kind, text) in enumerate(decoy_list):
        lines = memory(rng, f"decoy {kind}", [paragraph(rng), "", *text.split("\n"), "", paragraph(rng)])
        write_file(out / f"neg/decoy-{kind}-{j:03d}.md", lines)
    return labels, len(decoy_list)


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
        # A bare value's trailing `*` reads as Markdown emphasis (`**Password:** v*`), not as
        # part of the value.
        secret = secret[:-1] + "Q" if secret.endswith("*") else secret
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
    family_labels, n_decoys = family_corpus(out, rng)
    (out / "labels.json").write_text(json.dumps({"positives": labels, "families": family_labels,
                                                 "negatives": len(negatives) + n_decoys}, indent=1))
    print(f"wrote {n} positive files ({len(samples)} rules), {len(family_labels)} positives of "
          f"{len(FAMILIES)} independent families, {len(negatives)} hard negatives and {n_decoys} "
          f"decoys to {out}")


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
    # The independent families: any finding on a labelled line is a hit.
    family_lines = {(Path(lab["path"]).name, lab["line"]): lab["family"] for lab in labels.get("families", [])}
    family_hits = set()
    neg_findings = 0
    for f in findings:
        name = Path(f["path"]).name
        if name.startswith("fam-"):
            fam_name = family_lines.get((name, f["line"]))
            if fam_name:
                family_hits.add((name, f["line"]))
                continue
            fam_name = name[4:].rsplit("-", 1)[0]
            fams.setdefault("fam:" + fam_name, {"tp": 0, "fn": 0, "fp": 0})["fp"] += 1
            neg_findings += 1
            print(f"unexpected: {f['path']}:{f['line']} {f['rule']} {f['redacted']}", file=sys.stderr)
            continue
        if name.startswith("decoy-"):
            kind = name[6:].rsplit("-", 1)[0]
            fams.setdefault("decoy:" + kind, {"tp": 0, "fn": 0, "fp": 0})["fp"] += 1
            neg_findings += 1
            print(f"unexpected: {f['path']}:{f['line']} {f['rule']} {f['redacted']}", file=sys.stderr)
            continue
        if f["fingerprint"] not in label_fps:
            fams.setdefault(family(f["rule"]), {"tp": 0, "fn": 0, "fp": 0})["fp"] += 1
            neg_findings += 1
            print(f"unexpected: {f['path']}:{f['line']} {f['rule']} {f['redacted']}", file=sys.stderr)
    for (name, line), fam_name in family_lines.items():
        fam = fams.setdefault("fam:" + fam_name, {"tp": 0, "fn": 0, "fp": 0})
        hit = (name, line) in family_hits
        fam["tp" if hit else "fn"] += 1
        if not hit:
            print(f"missed: {name}:{line} {fam_name}", file=sys.stderr)
    print("Rows `fam:` are positives written from the formats, not from the rules' templates;")
    print("rows `decoy:` are their look-alikes (any finding there is a false positive).")
    print(f"{'family':<22} {'TP':>5} {'FN':>4} {'FP':>4} {'precision':>9} {'recall':>7}")
    total = {"tp": 0, "fn": 0, "fp": 0}
    worst = 1.0
    for name in sorted(fams):
        c = fams[name]
        for k in total:
            total[k] += c[k]
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        worst = min(worst, r)
        print(f"{name:<22} {c['tp']:>5} {c['fn']:>4} {c['fp']:>4} {p:>9.3f} {r:>7.3f}")
    p = total["tp"] / max(1, total["tp"] + total["fp"])
    r = total["tp"] / max(1, total["tp"] + total["fn"])
    print(f"{'ALL':<22} {total['tp']:>5} {total['fn']:>4} {total['fp']:>4} {p:>9.3f} {r:>7.3f}")
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
