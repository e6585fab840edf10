#!/usr/bin/env bash
# Runs every fuzz target briefly (go test -fuzz takes one target at a time).
# Budgets are execution counts, not durations: a duration -fuzztime can fail
# with a spurious "context deadline exceeded" (Go issue 75804, unfixed in
# go1.26), whereas a count has no deadline to race.
# Usage: scripts/fuzz.sh [execs per target, default 200000]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-200000}"
for pkg in $(go list ./internal/...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    n="$N"
    # Targets that run SQLite per input manage a few hundred execs a second.
    case "$f" in FuzzLexical) n=$((N / 40)) ;; esac
    echo "==> fuzz $pkg $f (${n} execs)"
    go test -run '^$' -fuzz "^$f\$" -fuzztime "${n}x" "$pkg"
  done
done
