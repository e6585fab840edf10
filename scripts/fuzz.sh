#!/usr/bin/env bash
# Runs every fuzz target briefly (go test -fuzz takes one target at a time).
set -euo pipefail
cd "$(dirname "$0")/.."
T="${1:-10s}"
for pkg in $(go list ./internal/...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "==> fuzz $pkg $f ($T)"
    go test -run '^$' -fuzz "^$f\$" -fuzztime "$T" "$pkg"
  done
done
