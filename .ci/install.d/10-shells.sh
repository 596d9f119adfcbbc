#!/usr/bin/env bash
# tests/it/cli/conventions.rs loads `teammem completions SHELL` in each shell Debian packages
# (bash, zsh, fish, elvish; PowerShell is not in Debian) and renders `teammem man` with man.
set -euo pipefail
need=()
command -v bash >/dev/null || need+=(bash)
command -v zsh >/dev/null || need+=(zsh)
command -v fish >/dev/null || need+=(fish)
command -v elvish >/dev/null || need+=(elvish)
command -v man >/dev/null || need+=(man-db)
command -v groff >/dev/null || need+=(groff-base)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq || echo "apt-get update failed; installing from the package lists already here"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
