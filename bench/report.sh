#!/bin/bash
# Report generation for a run of 1,000,000 samples: `rig report` must take
# under 2 s (the target in bench/README.md). The store is made by rig itself (a null-module run on
# four directories, for the schema, the run and the volumes), then filled
# with SQL: 500,000 cells (4 volumes x 5 steps x 25,000 repetitions) of 2
# samples each, values with noise, so every statistic, figure, summary.csv,
# results.json and results.csv is computed over all of them.
#
#   RIG=build/rig bash bench/report.sh        (needs the sqlite3 command)
set -euo pipefail
RIG=${RIG:-build/rig}
REPS=${REPS:-25000}
LIMIT=${LIMIT:-2.0}
command -v sqlite3 >/dev/null || { echo "bench/report.sh: needs the sqlite3 command (apt-get install sqlite3)"; exit 2; }
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
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
n=$(sqlite3 "$tmp/run/results.db" "SELECT count(*) FROM samples")
# Three runs, the median counts (the first also warms the page cache).
times=()
for i in 1 2 3; do
	start=$(date +%s.%N)
	RIG_REPORT_TIMES=1 "$RIG" report "$tmp/run" >/dev/null 2>"$tmp/laps"
	end=$(date +%s.%N)
	times+=("$(echo "$end - $start" | bc)")
done
secs=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
size=$(du -sh "$tmp/run" | cut -f1)
echo "rig report: $n samples: ${times[*]} s, median ${secs} s (limit ${LIMIT} s); run folder $size"
sed 's/^/  /' "$tmp/laps"
ls -la "$tmp/run" | sed 's/^/  /'
if (( $(echo "$secs > $LIMIT" | bc) )); then
	echo "bench/report.sh: too slow"
	exit 1
fi
