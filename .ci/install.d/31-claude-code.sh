#!/usr/bin/env bash
# Claude Code (npm), for tests/it/mcp.rs's end-to-end runs against a mock model server on
# 127.0.0.1. The package ships its binary for this platform as an npm dependency; no
# postinstall download from anywhere else is needed.
set -euo pipefail
prefix=/opt/teammem-clients/claude
if [ -x "$prefix/node_modules/.bin/claude" ] && "$prefix/node_modules/.bin/claude" --version >/dev/null 2>&1; then
  exit 0
fi
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code
"$prefix/node_modules/.bin/claude" --version
