#!/usr/bin/env bash
# The official MCP Python SDK, pinned, in a virtual environment of its own: tests/mcp_client.py
# drives `teammem mcp` with it over stdio, and tests/mock_*.py run on its interpreter. Whatever
# `mcp` the machine's own Python has (SDK 2.x changed the client API) does not matter: the
# tests use /opt/teammem-clients/mcp-python-$version/bin/python only (tests/it/common/mcp_sdk.rs).
set -euo pipefail
version=1.30.0
venv=/opt/teammem-clients/mcp-python-$version
have=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null || true)
if [ "$have" = "$version" ]; then
  exit 0
fi
echo "installing mcp==$version into $venv (found: ${have:-nothing})"
if ! python3 -c 'import ensurepip' 2>/dev/null; then
  # Debian's Python makes virtual environments only with python3-venv.
  apt-get update -qq || echo "apt-get update failed; installing from the package lists already here"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$version"
"$venv/bin/python" -c 'import mcp.client.stdio'
