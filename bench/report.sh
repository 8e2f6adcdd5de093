#!/bin/bash
# Report generation for a run of 1,000,000 samples: `rig report` must take
# under 1 s, the median of 5 runs, on a quiet machine (the target in
# bench/README.md). The store is made by rig itself (a null-module run on
# four directories, for the schema, the run and the volumes), then filled
# with SQL: 500,000 cells (4 volumes x 5 steps x 25,000 repetitions) of 2
# samples each, values with noise, so every statistic, figure, summary.csv,
# results.json and results.csv is computed over all of them.
#
# Each run's wall time and its user+sys CPU time are printed (CPU time is
# less sensitive to other load on the machine than wall time), with the
# load average before and after the runs, and the last run's
# RIG_REPORT_TIMES lines (each step's wall and CPU time).
#
#   RIG=build/rig bash bench/report.sh        (needs the sqlite3 command)
#   KEEP=1 ...        keep the work folder (the store: $tmp/run) and print it
#   STORE=DIR ...     time a store made earlier (DIR/run) instead of making one
#   RUNS=N ...        runs to take the median of (5)
set -euo pipefail
RIG=${RIG:-build/rig}
REPS=${REPS:-25000}
LIMIT=${LIMIT:-1.0}
RUNS=${RUNS:-5}
command -v sqlite3 >/dev/null || { echo "bench/report.sh: needs the sqlite3 command (apt-get install sqlite3)"; exit 2; }
command -v bc >/dev/null || { echo "bench/report.sh: needs bc"; exit 2; }
# The store: a null-module run, then its cells and samples replaced.
make_store() {
cat > "$tmp/plan.yaml" <<PLAN
rig: 1
name: bench-report
seed: 1
target:
  dirs: [$tmp/a, $tmp/b, $tmp/c, $tmp/d]
repeat: 1
steps:
  - null: { value: 1 }
  - null: { value: 2 }
  - null: { value: 3 }
  - null: { value: 4 }
  - null: { value: 5 }
report:
  baseline: a
  formats: [html, csv, json]
PLAN
"$RIG" run -q -o "$tmp/run" "$tmp/plan.yaml" >/dev/null
sqlite3 "$tmp/run/results.db" <<SQL
PRAGMA foreign_keys = OFF;
PRAGMA synchronous = OFF;
DELETE FROM samples; DELETE FROM file_samples; DELETE FROM notes; DELETE FROM cells;
WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i + 1 < $REPS * 20)
INSERT INTO cells (seq, phase, layout, rep, step, module, volume_id, start_utc, end_utc, status)
SELECT i + 1, i / 4 + 1, '', i / 20 + 1, CAST((i / 4) % 5 + 1 AS TEXT), 'null',
       (SELECT min(id) FROM volumes) + i % 4,
       '2024-01-01T00:00:00Z', '2024-01-01T00:00:01Z', 'done' FROM r;
INSERT INTO samples (seq, metric, value, unit, cache)
SELECT seq, 'value', (100.0 + 10 * (volume_id % 4)) * (1 + (abs(random()) % 100000) / 1e6), '1', 'direct'
FROM cells ORDER BY seq;
INSERT INTO samples (seq, metric, value, unit, cache)
SELECT seq, 'seconds', 0.001 + (abs(random()) % 100000) / 1e8, 's', 'direct' FROM cells ORDER BY seq;
SQL
}
if [ -n "${STORE:-}" ]; then
	tmp=$STORE
else
	tmp=$(mktemp -d)
	trap '[ -n "${KEEP:-}" ] && echo "bench/report.sh: kept $tmp" || rm -rf "$tmp"' EXIT
	make_store
fi
n=$(sqlite3 "$tmp/run/results.db" "SELECT count(*) FROM samples")
# RUNS runs, the median counts (the first also warms the page cache).
# /usr/bin/time for the CPU time (bash's `time` has no file to write to).
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
times=(); cpus=()
for ((i = 1; i <= RUNS; i++)); do
	start=$(date +%s.%N)
	/usr/bin/time -f '%U %S' -o "$tmp/time" env RIG_REPORT_TIMES=1 "$RIG" report "$tmp/run" >/dev/null 2>"$tmp/laps"
	end=$(date +%s.%N)
	read -r user sys < "$tmp/time"
	times+=("$(printf '%.3f' "$(echo "$end - $start" | bc)")")
	cpus+=("$(printf '%.2f' "$(echo "$user + $sys" | bc)")")
done
mid=$(( (RUNS + 1) / 2 ))
secs=$(printf '%s\n' "${times[@]}" | sort -n | sed -n ${mid}p)
cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | sed -n ${mid}p)
size=$(du -sh "$tmp/run" | cut -f1)
echo "rig report: $n samples: wall ${times[*]} s, median ${secs} s (limit ${LIMIT} s)"
echo "  user+sys ${cpus[*]} s, median ${cpu} s; load average after: $(cut -d' ' -f1-3 /proc/loadavg); run folder $size"
sed 's/^/  /' "$tmp/laps"
ls -la "$tmp/run" | sed 's/^/  /'
if (( $(echo "$secs > $LIMIT" | bc) )); then
	echo "bench/report.sh: too slow"
	exit 1
fi
