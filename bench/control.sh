#!/usr/bin/env bash
# The same-file-system control of issue 31 (methodology: "Known nulls"): ext4
# in both halves of a synthetic rotating disk (fuse-hdd, 150 MB/s at the edge
# falling to 80 MB/s at the centre, speed a function of the byte offset
# only), in both orders, 16 MB files, direct I/O, over SEEDS. There is no
# file-system difference to find: at the 5% level at most about 1 in 20
# volume rows may say `effect`; every position row should.
#
#   bench/control.sh [once|each]    RIG=build/rig, SEEDS="41 42 ... 50", REPEAT=3,
#                                   FILES=8, SIZE=16M, DISK=1G
#
# once: repeat: N (every layout provisioned once); each: repeat: { times: N,
# provision: each }. Prints one line per seed and step (the volume and
# position rows' estimate, interval, verdict and units) and the counts.
# Needs root, the provisioning tools and build/tools/fuse-hdd (make tools).
# Everything it makes is removed on every exit path (KEEP=1 keeps the folder
# with its runs, for a look): the loop device by
# its name, the FUSE mount, the fuse-hdd process it started, its folder.
set -euo pipefail
cd "$(dirname "$0")/.."
RIG=${RIG:-build/rig}
FUSE_HDD=${FUSE_HDD:-build/tools/fuse-hdd}
SEEDS=${SEEDS:-41 42 43 44 45 46 47 48 49 50}
REPEAT=${REPEAT:-3}
FILES=${FILES:-8}
SIZE=${SIZE:-16M}
DISK=${DISK:-1G}
MODE=${1:-once}
[ "$(id -u)" -eq 0 ] || { echo "bench/control.sh: needs root (loop devices, mkfs, mount)"; exit 2; }
[ -x "$RIG" ] && [ -x "$FUSE_HDD" ] || { echo "bench/control.sh: needs $RIG and $FUSE_HDD (make, make tools)"; exit 2; }

WORK=$(mktemp -d /tmp/rig-control.XXXXXX)
FPID= LOOP=
cleanup() {
	set +e
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	mountpoint -q "$WORK/mnt" && umount "$WORK/mnt"
	[ -n "$FPID" ] && kill "$FPID" 2>/dev/null && wait "$FPID" 2>/dev/null
	[ -n "${KEEP:-}" ] && { echo "kept $WORK"; return; }; rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

mkdir "$WORK/mnt"
"$FUSE_HDD" --backing="$WORK/backing" --size="$DISK" --outer=150 --inner=80 "$WORK/mnt" -f \
	>"$WORK/fuse-hdd.log" 2>&1 &
FPID=$!
for _ in $(seq 500); do [ -e "$WORK/mnt/disk" ] && break; sleep 0.01; done
[ -e "$WORK/mnt/disk" ] || { echo "fuse-hdd did not come up:"; cat "$WORK/fuse-hdd.log"; exit 1; }
LOOP=$(losetup --find --show --direct-io=on "$WORK/mnt/disk")

if [ "$MODE" = each ]; then rep="repeat: { times: $REPEAT, provision: each }"; else rep="repeat: $REPEAT"; fi
cat >"$WORK/control.yaml" <<EOF
rig: 1
name: control
target:
  disk: { device: $LOOP, confirm: "$WORK/mnt/disk" }
layouts:
  - name: a-first
    partitions:
      - { name: A, fs: ext4, size: 50% }
      - { name: B, fs: ext4, size: rest }
  - name: b-first
    partitions:
      - { name: B, fs: ext4, size: 50% }
      - { name: A, fs: ext4, size: rest }
order: counterbalance
$rep
cache: { direct: true }
steps:
  - write: { files: $FILES, size: $SIZE }
  - read: {}
report: { formats: [csv] }
EOF

vol_eff=0 vol_rows=0 pos_eff=0 pos_rows=0
for seed in $SEEDS; do
	out="$WORK/run-$seed"
	"$RIG" run -q --yes --allow loop --seed "$seed" -o "$out" "$WORK/control.yaml" >"$WORK/rig-$seed.log" 2>&1 ||
		{ echo "seed $seed: rig failed:"; tail -20 "$WORK/rig-$seed.log"; exit 1; }
	# step, kind, estimate, ci_low, ci_high, verdict, units (the csv's
	# sentence may hold commas: python's csv module reads it)
	python3 - "$out/findings.csv" "$seed" <<'PY' >>"$WORK/rows"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["kind"] in ("position", "filesystem"):
        print(sys.argv[2], r["step"], r["kind"], r["estimate"], r["ci_low"], r["ci_high"],
              r["verdict"], r.get("units", ""))
PY
done
printf '%-5s %-4s %-10s %9s %9s %9s %-16s %s\n' seed step row estimate ci_low ci_high verdict units
while read -r seed step kind est lo hi verdict units; do
	printf '%-5s %-4s %-10s %9.2f %9.2f %9.2f %-16s %s\n' "$seed" "$step" "$kind" "$est" "$lo" "$hi" \
		"$verdict" "$units"
	if [ "$kind" = filesystem ]; then
		vol_rows=$((vol_rows + 1))
		[ "$verdict" = effect ] && vol_eff=$((vol_eff + 1))
	else
		pos_rows=$((pos_rows + 1))
		[ "$verdict" = effect ] && pos_eff=$((pos_eff + 1))
	fi
done <"$WORK/rows"
echo "volume rows saying effect: $vol_eff of $vol_rows; position rows saying effect: $pos_eff of $pos_rows ($MODE, repeat $REPEAT, $($RIG --version))"
