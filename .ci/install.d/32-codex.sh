#!/usr/bin/env bash
# Codex, pinned in .ci/clients, for tests/it/clients/codex.rs's headless runs (`codex exec`)
# against a mock Responses API on 127.0.0.1. The npm package carries the native binary for
# this platform as an optional dependency.
set -euo pipefail
source "$(dirname "$0")/npm-client.bash"
install_npm_client codex
