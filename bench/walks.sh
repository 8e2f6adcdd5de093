#!/usr/bin/env bash
# Cold walks (rig plan's walk rates for ext4, xfs and btrfs: docs/plan-language.md,
# "The time estimate"): a tree of FILES files (1 KiB to 8 KiB) in DIRS folders two levels
# deep on an image target, one layout per file system, each walked with fts from a dropped
# cache REPEAT times (a tree built afresh each time). Prints entries per second per walk
# and the median per file system.
#
#   bench/walks.sh        RIG=build/rig, FILES=100000, DIRS=1000, REPEAT=3, FS="ext4 xfs btrfs"
#
# Needs root (loop devices, mkfs, the cache drop). Everything it makes is in a folder of
# its own, removed at the end; rig removes its image and loop device itself.
set -euo pipefail
cd "$(dirname "$0")/.."
RIG=${RIG:-build/rig}
FILES=${FILES:-100000}
DIRS=${DIRS:-1000}
REPEAT=${REPEAT:-3}
FS=${FS:-ext4 xfs btrfs}
[ "$(id -u)" -eq 0 ] || { echo "bench/walks.sh: needs root (loop devices, mkfs, cache drop)"; exit 2; }
WORK=$(mktemp -d /tmp/rig-walks.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM
{
	echo "rig: 1"
	echo "name: walks"
	echo "target:"
	echo "  image: { path: $WORK/walk.img, size: 2G }"
	echo "layouts:"
	for fs in $FS; do
		echo "  - name: $fs"
		echo "    partitions:"
		echo "      - { name: V, fs: $fs, size: rest }"
	done
	echo "repeat: $REPEAT"
	echo "steps:"
	echo "  - tree: { files: $FILES, dirs: $DIRS, depth: 2, sizes: 1K..8K }"
	echo "  - enumerate: { order: fts, cache: drop }"
	echo "report: { formats: [csv] }"
} >"$WORK/walks.yaml"
"$RIG" run -q --yes -o "$WORK/run" "$WORK/walks.yaml" >"$WORK/rig.log" 2>&1 ||
	{ echo "rig failed:"; tail -20 "$WORK/rig.log"; exit 1; }
sqlite3 -separator ' ' "$WORK/run/results.db" "
  SELECT c.layout, c.rep, printf('%.0f', ($FILES + $DIRS) / s.value)
  FROM samples s JOIN cells c ON c.seq = s.seq
  WHERE c.module = 'enumerate' AND s.metric = 'seconds' ORDER BY c.layout, c.rep" >"$WORK/walks"
while read -r fs rep rate; do echo "$fs walk $rep: $rate entries/s"; done <"$WORK/walks"
for fs in $FS; do
	awk -v f="$fs" '$1 == f { print $3 }' "$WORK/walks" | sort -n |
		awk -v f="$fs" '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
			print f, "median", m, "entries/s" }'
done
echo "($($RIG --version); $FILES files in $DIRS folders, fts from a dropped cache)"
