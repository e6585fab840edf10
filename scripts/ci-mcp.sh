#!/usr/bin/env bash
# Checks hivemem's MCP server with a client nobody on this project wrote:
# installs the official TypeScript MCP SDK (exact version pinned in
# tests/mcp-node/package.json, locked by package-lock.json) and runs the Go
# tests that drive `hivemem mcp` over stdio and the HTTP handler with it.
#
# Usage: scripts/ci-mcp.sh [extra go test flags...]
# With CI=true the node tests fail instead of skipping when node or the
# installed package is missing; this script sets it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

for tool in go node npm; do
	command -v "$tool" >/dev/null || { echo "ci-mcp: $tool is not on PATH" >&2; exit 1; }
done

echo "ci-mcp: installing tests/mcp-node (node $(node --version))" >&2
(cd tests/mcp-node && npm ci --no-audit --no-fund --loglevel=error)

CI=true go test -count=1 -run 'TestNodeClient' "$@" ./internal/mcpserver/
