#!/usr/bin/env bash
# The main job on the embedded defaults, on a fresh machine: build hivemem,
# fetch the local MiniLM model, create a sample hive, mine it, search it and
# print a wake-up digest. Usage: scripts/demo.sh [home-dir]  (default ./demo-home)
set -euo pipefail
cd "$(dirname "$0")/.."
HOME_DIR="${1:-$PWD/demo-home}"
mkdir -p bin
echo "==> building bin/hivemem"
go build -o bin/hivemem ./cmd/hivemem
echo "==> fetching the embedding model (once; cached under ~/.local/share/hivemem/models)"
bin/hivemem model fetch
echo "==> creating a sample hive in $HOME_DIR"
bin/hivemem init --home "$HOME_DIR"
cp -R examples/hive/agents/. "$HOME_DIR/hive/agents/"
echo "==> mining"
bin/hivemem mine --home "$HOME_DIR"
echo "==> status"
bin/hivemem status --home "$HOME_DIR"
echo
echo '==> search "flaky authentication check on slow build machines"'
bin/hivemem search --home "$HOME_DIR" --results 3 "flaky authentication check on slow build machines"
echo '==> wake-up --wing coder'
bin/hivemem wake-up --home "$HOME_DIR" --wing coder
echo
echo "Try: bin/hivemem search --home $HOME_DIR \"connection pool\" --json"
