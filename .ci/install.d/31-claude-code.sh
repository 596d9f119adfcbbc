#!/usr/bin/env bash
# Claude Code, pinned in .ci/clients, for tests/it/mcp/tools.rs's and tests/it/clients/claude.rs's
# headless runs against a mock model server on 127.0.0.1. The package ships its binary for
# this platform as an npm dependency; no postinstall download from anywhere else is needed.
set -euo pipefail
source "$(dirname "$0")/npm-client.bash"
install_npm_client claude
