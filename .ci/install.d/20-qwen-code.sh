#!/usr/bin/env bash
# Qwen Code, pinned: tests/it/clients_qwen.rs runs its own index builder, frontmatter reader and a
# headless session. It declares node>=22 but runs on Node 20, so the engine check is not enforced.
set -euo pipefail
version=0.24.4
prefix=/opt/teammem-clients/qwen
pkg="$prefix/node_modules/@qwen-code/qwen-code/package.json"
if [ -f "$pkg" ] && grep -q "\"version\": \"$version\"" "$pkg"; then
  exit 0
fi
command -v npm >/dev/null || { echo "npm is required to install Qwen Code" >&2; exit 1; }
mkdir -p "$prefix"
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "@qwen-code/qwen-code@$version"
