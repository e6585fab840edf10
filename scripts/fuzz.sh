#!/usr/bin/env bash
# Fuzzing, in two parts:
#
#  1. Every fuzz target's committed corpus (its f.Add seeds and
#     testdata/fuzz/<Target>/*) as ordinary tests. Deterministic: a failure
#     here fails the run, whatever else changed.
#  2. A bounded exploration of each target (go test -fuzz, an execution
#     budget per target). Go's fuzzer has no seed flag, so what it tries
#     differs from run to run: a find here cannot be caused by the commit
#     under test, so by default it is reported (and the input saved by go
#     test in testdata/fuzz/<Target>/, to commit as a regression case)
#     without failing the run. --long (make fuzz-long) runs a bigger budget
#     and fails on a find.
#
# Budgets are execution counts, not durations: a duration -fuzztime can fail
# with a spurious "context deadline exceeded" (Go issue 75804, unfixed in
# go1.26), whereas a count has no deadline to race.
#
# Usage: scripts/fuzz.sh [execs per target, default 200000]        (make fuzz, part of make test)
#        scripts/fuzz.sh --long [execs per target, default 5000000] (make fuzz-long)
# FUZZ_ROOT (default: this repository) and FUZZ_PKGS (default ./internal/...)
# say what to fuzz.
set -euo pipefail
cd "${FUZZ_ROOT:-$(dirname "$0")/..}"
long=false
if [ "${1:-}" = "--long" ]; then
  long=true
  shift
fi
N="${1:-$($long && echo 5000000 || echo 200000)}"
pkgs=$(go list ${FUZZ_PKGS:-./internal/...})

echo "==> fuzz corpus: every target's seeds and testdata/fuzz (deterministic)"
for pkg in $pkgs; do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  if grep -qs '^func Fuzz' "$dir"/*_test.go; then
    go test -count=1 -run '^Fuzz' "$pkg"
  fi
done

finds=()
finds_dir="${FUZZ_FINDS:-$PWD/fuzz-finds}"
for pkg in $pkgs; do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    n="$N"
    # Targets that run SQLite per input manage a few hundred execs a second.
    case "$f" in FuzzLexical) n=$((N / 40)) ;; esac
    echo "==> fuzz $pkg $f (${n} execs)"
    corpus="$dir/testdata/fuzz/$f"
    before=$(ls "$corpus" 2>/dev/null || true)
    if ! go test -run '^$' -fuzz "^$f\$" -fuzztime "${n}x" "$pkg"; then
      finds+=("$pkg $f")
      # go test saved the failing input in the package's corpus, where the
      # test run after this one would fail on it. Unless --long, it moves
      # to fuzz-finds/ (ignored by git): reported, to be fixed and committed
      # to the corpus, but not failing a run it does not depend on.
      if ! $long; then
        for name in $(ls "$corpus" 2>/dev/null); do
          if ! grep -qxF "$name" <<<"$before"; then
            mkdir -p "$finds_dir/$f"
            mv "$corpus/$name" "$finds_dir/$f/$name"
            echo "fuzz: moved the failing input to $finds_dir/$f/$name"
          fi
        done
        [ -n "$before" ] || rmdir "$corpus" 2>/dev/null || true
      fi
    fi
  done
done
if [ "${#finds[@]}" -gt 0 ]; then
  echo
  echo "fuzz: exploration found failing inputs in: ${finds[*]}"
  if $long; then
    echo "fuzz: go test saved each under the package's testdata/fuzz/<Target>/: fix the bug and commit the file, so the corpus run above holds it"
  else
    echo "fuzz: the failing inputs are in $finds_dir/<Target>/: fix the bug and commit each file to the package's testdata/fuzz/<Target>/, so the corpus run above holds it"
  fi
  if $long; then
    exit 1
  fi
  echo "fuzz: not failing this run: the exploration is random (Go's fuzzer takes no seed), so its finds do not depend on the change under test"
fi
