#!/usr/bin/env bash
# The main job on the embedded defaults, on a fresh machine: build hivemem,
# fetch the local MiniLM model, create a sample hive, mine it, search it and
# print a wake-up digest. Usage: scripts/demo.sh [home-dir]  (default ./demo-home)
#
# Run again, it never overwrites a file: the sample agents' files are copied
# only where none exists yet, so notes added to the demo home (hivemem
# remember, an edit) survive. HIVEMEM_BIN=path uses that binary instead of
# building bin/hivemem.
set -euo pipefail
cd "$(dirname "$0")/.."
HOME_DIR="${1:-$PWD/demo-home}"
if [ -n "${HIVEMEM_BIN:-}" ]; then
  hm="$HIVEMEM_BIN"
else
  hm=bin/hivemem
  mkdir -p bin
  echo "==> building bin/hivemem"
  go build -o bin/hivemem ./cmd/hivemem
fi
echo "==> fetching the embedding model (once; cached under ~/.local/share/hivemem/models)"
"$hm" model fetch
echo "==> creating a sample hive in $HOME_DIR"
"$hm" init --home "$HOME_DIR"
kept=0
while IFS= read -r -d '' src; do
  dst="$HOME_DIR/hive/agents/${src#examples/hive/agents/}"
  mkdir -p "$(dirname "$dst")"
  # noclobber: the shell creates dst exclusively, so an existing file (or
  # one made meanwhile) is never written over.
  if ! (set -o noclobber; cat "$src" >"$dst") 2>/dev/null; then
    echo "    kept $dst as it is (it exists; the demo never overwrites a file)"
    kept=$((kept + 1))
  fi
done < <(find examples/hive/agents -type f -print0 | sort -z)
echo "==> mining"
"$hm" mine --home "$HOME_DIR"
echo "==> status"
"$hm" status --home "$HOME_DIR"
echo
echo '==> search "flaky authentication check on slow build machines"'
"$hm" search --home "$HOME_DIR" --results 3 "flaky authentication check on slow build machines"
echo '==> wake-up --wing coder'
"$hm" wake-up --home "$HOME_DIR" --wing coder
echo
if [ "$kept" -gt 0 ]; then
  echo "Kept $kept existing file(s) in $HOME_DIR; to start the demo afresh, remove it first (rm -rf $HOME_DIR)."
fi
echo "Try: $hm --home $HOME_DIR search \"connection pool\" --json"
