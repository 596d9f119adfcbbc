#!/usr/bin/env bash
# Qwen Code, pinned in .ci/clients: tests/it/clients/qwen.rs runs its own index builder,
# frontmatter reader and headless sessions. It declares node>=22 but runs on Node 20, so the
# engine check is not enforced.
set -euo pipefail
source "$(dirname "$0")/npm-client.bash"
install_npm_client qwen
