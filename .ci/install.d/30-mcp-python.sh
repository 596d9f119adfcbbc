#!/usr/bin/env bash
# The official MCP Python SDK: tests/mcp_client.py drives `teammem mcp` with it over stdio.
set -euo pipefail
if python3 -c 'import mcp.client.stdio' 2>/dev/null; then
  exit 0
fi
python3 -m pip install --quiet --disable-pip-version-check 'mcp>=1.9,<2'
