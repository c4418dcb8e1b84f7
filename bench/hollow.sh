#!/usr/bin/env bash
# A hollow cluster against its replay: the real coordinator and client, and WORKERS hollow
# workers of THREADS slots (`cubeswarm bench hollow-worker`: the real worker session, its
# search the trace's at RATE nodes a second per thread, its link delayed by LATENCY_MS each
# way), on loopback; then `bench split` of the same trace, layout, latency and rate.
#
#   bench/hollow.sh BINARY TRACE WORKERS THREADS LATENCY_MS RATE [all]
#
# Prints the real run's wall time (the client's, from its start to its record), nodes,
# jobs, hand-back requests, the coordinator's CPU seconds and peak RSS, and messages a
# second through the coordinator (jobs sent, results, hand-back requests and
# cancellations); the replay's wall time beside it; and a last line `real/replay R`. The
# client's record is checked against the trace's: length, solutions (all of them with
# `all`, one of the trace's otherwise) and the optimal flag. Exits 1 when they differ.
#
# Environment: PORT (the coordinator's port, default 7560; PORT+1 its metrics); REPLAY
# (below).
set -euo pipefail
usage="usage: bench/hollow.sh BINARY TRACE WORKERS THREADS LATENCY_MS RATE [all]"
bin=${1:?$usage}
trace=${2:?$usage}
workers=${3:?$usage}
threads=${4:?$usage}
latency=${5:?$usage}
rate=${6:?$usage}
all=${7:-}
port=${PORT:-7560}
metrics=$((port + 1))
url="http://127.0.0.1:$port"
logs=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$logs"
}
trap cleanup EXIT

# The trace's header (a trace of every solution of a symmetric position holds thousands).
python3 -c 'import gzip,sys
f = gzip.open(sys.argv[1], "rt") if sys.argv[1].endswith(".gz") else open(sys.argv[1])
print(f.readline().strip())' "$trace" >"$logs/header"
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$logs/header" "$1"; }
position=$(field position)
table=$(field table)

# One figure of the coordinator's metrics (0 when absent).
metric() {
    python3 - "$metrics" "$1" <<'EOF'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
total = 0.0
for line in text.splitlines():
    if line.startswith(sys.argv[2] + " ") or line.startswith(sys.argv[2] + "{"):
        total += float(line.split()[-1])
print(int(total))
EOF
}
# The coordinator's CPU seconds so far (user + system).
cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }

# Claims are not checked (--verify off): the replay runs no checks, and this compares the
# schedules; what checking adds is bench/verify-cost.sh's.
"$bin" coordinator --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$metrics" \
    --no-serve-tables --verify off >"$logs/coordinator" 2>&1 &
coord=$!
pids+=("$coord")
for i in $(seq "$workers"); do
    "$bin" bench hollow-worker --coordinator "$url" --trace "$trace" --rate "$rate" \
        --threads "$threads" --latency-ms "$latency" --worker-id "hollow-$i" \
        >"$logs/w$i" 2>&1 &
    pids+=($!)
done
# Every worker connected before the client asks (or the first ones take everything).
for _ in $(seq 600); do
    n=$(metric cubeswarm_workers_connected 2>/dev/null || echo 0)
    [ "$n" -ge "$workers" ] && break
    sleep 0.1
done
[ "$n" -ge "$workers" ] || { echo "only $n of $workers hollow workers connected" >&2; exit 1; }

flags=()
[ "$all" = all ] && flags+=(--all)
# The hollow workers' CPU seconds in all so far.
wcpu() {
    for p in "${pids[@]:1}"; do cat "/proc/$p/stat"; done |
        awk -v hz="$(getconf CLK_TCK)" '{t += $14 + $15} END {print t / hz}'
}
wcpu0=$(wcpu)
cpu0=$(cpu "$coord")
start=$(date +%s.%N)
"$bin" solve --coordinator "$url" --table "$table" --format jsonl "${flags[@]}" "$position" >"$logs/record"
end=$(date +%s.%N)
cpu1=$(cpu "$coord")
jobs=$(metric cubeswarm_jobs_dispatched_total)
results=$(metric cubeswarm_jobs_done_total)
asked=$(metric cubeswarm_splits_asked_total)
handed=$(metric cubeswarm_pieces_handed_back_total)
rss=$(awk '/VmHWM/ {print $2 / 1024}' "/proc/$coord/status")
echo "real   jobs created $(metric cubeswarm_jobs_created_total), requeued $(metric cubeswarm_jobs_requeued_total), ignored results $(metric cubeswarm_results_ignored_total), lost $(metric cubeswarm_jobs_lost_total)" >&2
# The hollow workers' CPU seconds during the search (their start, which works out the
# trace's counts, left out): beside the wall time and the machine's cores, whether they
# were starved.
wcpu1=$(wcpu)
wcpu=$(python3 -c "print($wcpu1 - $wcpu0)")

# REPLAY=FILE: the replay's output is kept there, and taken from there when it exists (a
# replay is deterministic: runs of one trace, layout, latency and rate share it).
if [ -n "${REPLAY:-}" ] && [ -s "$REPLAY" ]; then
    cp "$REPLAY" "$logs/replay"
else
    "$bin" bench split --trace "$trace" --workers "$workers" --threads "$threads" \
        --latency "$latency" --rate "$rate" "${flags[@]}" >"$logs/replay"
    if [ -n "${REPLAY:-}" ]; then cp "$logs/replay" "$REPLAY"; fi
fi

python3 - "$logs/header" "$logs/record" "$start" "$end" "$cpu0" "$cpu1" "$jobs" "$results" "$asked" \
    "$handed" "$rss" "$all" "$logs/replay" "$workers" "$threads" "$latency" "$rate" "$wcpu" <<'EOF'
import json, os, sys
(h, rec, start, end, cpu0, cpu1, jobs, results, asked, handed, rss, all_, replay,
 workers, threads, latency, rate, wcpu) = sys.argv[1:]
h = json.load(open(h))
replay = open(replay).read()
# One JSONL line per solution.
lines = [json.loads(l) for l in open(rec) if l.strip()]
rec = lines[0] if lines else {}
wall = float(end) - float(start)
cpu = float(cpu1) - float(cpu0)
jobs, results, asked = int(jobs), int(results), int(asked)
messages = jobs + results + asked
print(f"hollow {workers} x {threads} threads, latency {latency} ms, {float(rate):.3g} nodes/s a thread"
      f"{', --all' if all_ == 'all' else ''}")
print(f"real   wall {wall:.3f} s; nodes {rec.get('nodes', 0):.4e}; jobs {jobs}; hand-backs asked {asked} "
      f"({handed} pieces); coordinator CPU {cpu:.2f} s ({1e6 * cpu / max(jobs, 1):.0f} us a job), "
      f"peak RSS {float(rss):.0f} MB; {messages / wall:.0f} messages/s")
print(f"hollow workers' CPU {float(wcpu):.1f} s during the search ({os.cpu_count()} cores here)")
rwall = None
for line in replay.splitlines():
    if line.startswith("wall "):
        rwall = float(line.split()[1])
    if line.startswith(("wall ", "nodes ", "idle:", "efficiency")):
        print("replay " + line)
problems = []
sols = [r["solution"] for r in lines if r.get("solution") is not None]
length = rec.get("length")
if length != h["optimal"]:
    problems.append(f"length {length}, the trace's {h['optimal']}")
if any(r.get("optimal") is not True for r in lines) or not lines:
    problems.append("the record is not marked optimal")
if all_ == "all" and h.get("all_solutions"):
    if sorted(sols) != sorted(h["solutions"]):
        problems.append(f"solutions {sorted(sols)}, the trace's {sorted(h['solutions'])}")
elif not sols or any(s not in h["solutions"] for s in sols):
    problems.append(f"solution {sols} is not one of the trace's")
print("record " + ("matches the trace" if not problems else "DIFFERS: " + "; ".join(problems)))
print(f"real/replay {wall / rwall:.3f}" if rwall else "real/replay (no replay figure)")
sys.exit(1 if problems else 0)
EOF
