#!/usr/bin/env bash
# idle-cost.sh — what `hivemem run` costs while nothing happens.
#
# Creates a throw-away home with $AGENTS agents (default 100), starts
# `hivemem run` on it, waits until the start-up scan has mined everything,
# lets it settle, then samples its CPU time (/proc/<pid>/stat utime+stime)
# over $IDLE_SECONDS (default 30) and its resident memory (VmRSS, VmHWM).
# The manager loads the embedding model at start, so with the model
# installed (`hivemem model fetch`, or HIVEMEM_MODEL_DIR) the figure
# includes it. Linux only (/proc).
#
#   scripts/idle-cost.sh                  # 100 agents, 30 s, model if installed
#   AGENTS=500 IDLE_SECONDS=60 scripts/idle-cost.sh
#   HIVEMEM_BIN=./hivemem scripts/idle-cost.sh
set -euo pipefail

AGENTS=${AGENTS:-100}
IDLE_SECONDS=${IDLE_SECONDS:-30}
SETTLE_SECONDS=${SETTLE_SECONDS:-5}
SECTIONS=${SECTIONS:-3}

[[ -r /proc/self/stat ]] || { echo "idle-cost: needs Linux /proc" >&2; exit 1; }
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/hivemem-idle.XXXXXX")
pid=""
cleanup() {
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

bin=${HIVEMEM_BIN:-}
if [[ -z $bin ]]; then
	bin=$work/hivemem
	echo "building hivemem..."
	go build -o "$bin" ./cmd/hivemem
fi

export HIVEMEM_HOME=$work/home
unset HIVEMEM_MANAGER_HTTP HIVEMEM_REFLECTOR_INTERVAL HIVEMEM_MANAGER_SCAN_INTERVAL
"$bin" init >/dev/null

echo "creating $AGENTS agents ($SECTIONS sections each)..."
for i in $(seq -w 1 "$AGENTS"); do
	dir=$HIVEMEM_HOME/hive/agents/agent$i
	mkdir -p "$dir"
	{
		printf '# Memory — Agent %s (agent%s)\n\n' "$i" "$i"
		printf '## 📌 Durable facts (pinned — never condensed)\n- agent %s deploys through the main branch\n' "$i"
		printf '## 🗜 Condensed history\n_(none yet)_\n## Recent\n'
		for s in $(seq 1 "$SECTIONS"); do
			printf '## 2026-11-%02d — session %d of agent %s\n' "$s" "$s" "$i"
			printf 'Worked on ticket %s-%d: traced a flaky test to a shared fixture, fixed the teardown, and wrote down why.\n' "$i" "$s"
		done
	} >"$dir/memory.md"
done

echo "starting hivemem run..."
"$bin" run --http 127.0.0.1:0 >"$work/run.out" 2>"$work/run.log" &
pid=$!

# Wait (with a deadline) until the start-up scan is done and nothing is
# pending: that is when the manager is idle.
deadline=$((SECONDS + 600))
until "$bin" status --json 2>/dev/null >"$work/status.json" &&
	grep -q '"last_scan"' "$work/status.json" && ! grep -q '"pending"' "$work/status.json"; do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "idle-cost: hivemem run exited:" >&2
		cat "$work/run.log" >&2
		exit 1
	fi
	if ((SECONDS > deadline)); then
		echo "idle-cost: the start-up scan did not finish in 600 s" >&2
		exit 1
	fi
	sleep 0.5
done
search=$(grep -m1 '"search_mode"' "$work/status.json" | sed 's/.*: "\(.*\)".*/\1/')
drawers=$(grep -m1 '"Drawers"' "$work/status.json" | sed 's/[^0-9]//g')
echo "start-up scan done: $drawers drawers, search mode $search; settling for ${SETTLE_SECONDS}s..."
sleep "$SETTLE_SECONDS"

ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
t0=$(ticks)
s0=$(date +%s.%N)
sleep "$IDLE_SECONDS"
t1=$(ticks)
s1=$(date +%s.%N)
rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
threads=$(awk '/^Threads:/ { print $2 }' "/proc/$pid/status")

awk -v t0="$t0" -v t1="$t1" -v s0="$s0" -v s1="$s1" -v hz="$hz" -v rss="$rss" -v hwm="$hwm" \
	-v agents="$AGENTS" -v search="$search" -v threads="$threads" 'BEGIN {
	secs = s1 - s0
	cpu = (t1 - t0) / hz
	printf "hivemem run idle cost (%d agents, search %s, %d threads)\n", agents, search, threads
	printf "  CPU: %.2f s over %.1f s = %.3f %% of one core\n", cpu, secs, 100 * cpu / secs
	printf "  RSS: %.1f MiB now, %.1f MiB peak (VmHWM, includes the start-up scan)\n", rss / 1024, hwm / 1024
}'
kill -TERM "$pid"
wait "$pid" || true
pid=""
