#!/usr/bin/env bash
# Benchmarks rig's write/read/randread/randwrite/seqread/seqwrite against fio
# on the same file system of the same device, alternately, and checks rig's accuracy
# against the kernel's own blkio throttle. Needs root, fio and python3.
#
#   bench/io.sh [quick]      RIG=build/rig by default; `quick` = 1 pair, short runs
#
# Devices: a RAM-backed loop device (image on /dev/shm) and a disk-backed one
# (image on /var/tmp), both `--direct-io=on` with ext4 made without lazy
# init. Each ratio is the median of rig's results over the median of fio's,
# from PAIRS alternating rig/fio pairs (this machine is noisy: see
# ../shared/design/machine-notes.md). Everything it makes is removed on every
# exit path: it unmounts what it mounted, detaches exactly the loop devices
# it attached, removes its images and its cgroup, and puts vm.nr_hugepages
# back (the seqread/seqwrite rows lend fio huge pages).
set -euo pipefail
cd "$(dirname "$0")/.."
RIG=${RIG:-build/rig}
MODE=${1:-full}
PAIRS=${PAIRS:-3}
T=${T:-8}            # seconds per random-I/O run
SEQ=${SEQ:-1G}       # sequential file size
ONLY=${ONLY:-.}      # run only the comparisons whose label matches this regex
ACCURACY=${ACCURACY:-1} # 0: skip the blkio throttle accuracy runs
if [ "$MODE" = quick ]; then PAIRS=1; T=2; SEQ=256M; fi

[ "$(id -u)" -eq 0 ] || { echo "bench/io.sh: needs root (loop devices, drop_caches, cgroups)"; exit 2; }
command -v fio >/dev/null || { echo "bench/io.sh: needs fio (apt-get install fio)"; exit 2; }
[ -x "$RIG" ] || { echo "bench/io.sh: no rig binary at $RIG (make first)"; exit 2; }

WORK=$(mktemp -d /tmp/rig-bench-io.XXXXXX)
LOOPS=()
MOUNTS=()
IMAGES=()
CGROUP=""
HP0=$(cat /proc/sys/vm/nr_hugepages)
cleanup() {
	set +e
	echo "$HP0" > /proc/sys/vm/nr_hugepages
	for m in "${MOUNTS[@]}"; do umount "$m"; done
	for l in "${LOOPS[@]}"; do losetup -d "$l"; done
	for i in "${IMAGES[@]}"; do rm -f "$i"; done
	[ -n "$CGROUP" ] && rmdir "$CGROUP" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# make_dev NAME IMAGE SIZE -> sets DEV and MNT
make_dev() {
	local name=$1 img=$2 size=$3
	# Written whole, not sparse: the first write to a hole of the backing file
	# costs the host an allocation (tmpfs pages, disk blocks), and whichever
	# tool wrote first to fresh space would pay it (rig ran at 0.24 x fio on
	# a sparse RAM image, 0.88 x on a used one).
	IMAGES+=("$img")
	dd if=/dev/zero of="$img" bs=1M count=$(( $(numfmt --from=iec "$size") >> 20 )) \
		conv=fsync status=none
	DEV=$(losetup --find --show --direct-io=on "$img")
	LOOPS+=("$DEV")
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$DEV"
	MNT=$WORK/$name
	mkdir -p "$MNT"
	mount "$DEV" "$MNT"
	MOUNTS+=("$MNT")
	# Warm-up, untimed: write most of the free space once and delete it, so
	# no block group is met for the first time during a measurement (the
	# first writer to fresh groups paid up to 2x; the first pairs showed it).
	local free_mb=$(( $(df --output=avail -B1M "$MNT" | tail -1) - 256 ))
	dd if=/dev/zero of="$MNT/warm-up" bs=1M count="$free_mb" oflag=direct status=none
	rm -f "$MNT/warm-up"
	sync
}

drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# rig_metric MNT YAML_STEPS MODULE METRIC -> prints the value for volume v
rig_metric() {
	local mnt=$1 steps=$2 module=$3 metric=$4 out
	out=$WORK/run-$RANDOM$RANDOM
	cat > "$WORK/plan.yaml" <<PLAN
rig: 1
name: bench
seed: 1
target:
  dirs: [$mnt/rig]
  names: [v]
steps:
$steps
PLAN
	"$RIG" run -q -o "$out" "$WORK/plan.yaml" >/dev/null
	python3 - "$out/results.csv" "$module" "$metric" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["module"] == sys.argv[2] and r["metric"] == sys.argv[3]]
print(rows[-1]["value"])
PY
	rm -rf "$out"
}

# Sequential writes: rig writes a new file and times its allocation, so fio
# gets --fallocate=none (by default it preallocates before its clock starts).
# fio_metric DIR KIND ARGS... -> MB/s (bw) or IOPS. fio's file is kept
# between runs (rig, too, writes its random-I/O file before its clock
# starts; a fresh fio file would pay for converting unwritten extents);
# `write`'s sequential writes (KIND wbw) start from no file, as rig's do;
# seqwrite's (KIND wbwo) overwrite a laid-out file, as fio's --rw=write does.
# seqread lays out a new file at every run and reads it at once; on the
# disk-backed loop the host still holds what was just written, and a fio
# file written long before and pushed out by rig's (rig read 1.9 x fio), so
# fio's read of it (KIND rbwf) starts from a new file too, which fio lays
# out before its clock starts.
fio_metric() {
	local dir=$1 kind=$2
	shift 2
	mkdir -p "$dir"
	case $kind in wbw|rbwf) rm -f "$dir"/b.* ;; esac
	fio --output-format=json --directory="$dir" --name=b "$@" > "$WORK/fio.json"
	python3 - "$WORK/fio.json" "$kind" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
k = sys.argv[2]
side = "write" if k.startswith("w") else "read"
if k.endswith("iops"):
    print(j[side]["iops"])
else:
    print(j[side]["bw_bytes"] / 1e6)
PY
}

median() { python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

ROWS=()
# compare LABEL MNT RIG_STEPS RIG_MODULE RIG_METRIC FIO_KIND FIO_ARGS...
compare() {
	local label=$1 mnt=$2 steps=$3 module=$4 metric=$5 kind=$6
	shift 6
	[[ $label =~ $ONLY ]] || return 0
	local r=() f=() i
	# rig first in even pairs, fio first in odd ones: a drift or a
	# first-comer's cost (fresh file system space) favours neither side.
	for ((i = 0; i < PAIRS; i++)); do
		if ((i % 2)); then
			drop
			f+=("$(fio_metric "$mnt/fio" "$kind" "$@")")
		fi
		drop
		r+=("$(rig_metric "$mnt" "$steps" "$module" "$metric")")
		if ((i % 2 == 0)); then
			drop
			f+=("$(fio_metric "$mnt/fio" "$kind" "$@")")
		fi
	done
	local rm fm
	rm=$(median "${r[@]}")
	fm=$(median "${f[@]}")
	ROWS+=("$(printf '%-44s %12.1f %12.1f %7.3f   rig: %s  fio: %s' "$label" "$rm" "$fm" \
		"$(python3 -c "print($rm / $fm)")" "${r[*]}" "${f[*]}")")
	echo "${ROWS[-1]}"
}

suite() {
	local dev=$1
	local mnt=$MNT
	compare "$dev seq write 1M QD1 (MB/s)" "$mnt" \
		"  - write: { files: 1, size: $SEQ, block: 1M }" write rate wbw \
		--rw=write --bs=1M --size="$SEQ" --ioengine=psync --direct=1 --end_fsync=1 \
		--fallocate=none
	compare "$dev seq read 1M QD1 (MB/s)" "$mnt" \
		"  - write: { files: 1, size: $SEQ, block: 1M }
  - read: { block: 1M }" read rate rbw \
		--rw=read --bs=1M --size="$SEQ" --ioengine=psync --direct=1
	compare "$dev rand read 4K QD32 (IOPS)" "$mnt" \
		"  - randread: { block: 4K, qd: 32, span: 1G, time: ${T}s }" randread iops riops \
		--rw=randread --bs=4k --size=1G --ioengine=io_uring --iodepth=32 --direct=1 \
		--time_based --runtime="$T"
	compare "$dev rand write 4K QD32 (IOPS)" "$mnt" \
		"  - randwrite: { block: 4K, qd: 32, span: 1G, time: ${T}s }" randwrite iops wiops \
		--rw=randwrite --bs=4k --size=1G --ioengine=io_uring --iodepth=32 --direct=1 \
		--time_based --runtime="$T"
	compare "$dev rand read 4K QD1 (IOPS)" "$mnt" \
		"  - randread: { block: 4K, qd: 1, span: 1G, time: ${T}s }" randread iops riops \
		--rw=randread --bs=4k --size=1G --ioengine=psync --direct=1 \
		--time_based --runtime="$T"
	# seqread/seqwrite against fio's same job (issue #15), then with fio's
	# ring set up as rig sets up its own: buffers and file registered with
	# the kernel (no per-request page mapping), buffers in huge pages (one
	# segment per request: with 4 KiB pages a 128 KiB request is 32
	# segments, and the virtio disk under the disk-backed loop then holds
	# fewer requests at once). Huge pages for fio need vm.nr_hugepages,
	# lent for those rows.
	seq_pair "$dev" "$mnt" ""
	echo $((HP0 + 8)) > /proc/sys/vm/nr_hugepages
	seq_pair "$dev" "$mnt" ", fio as rig" --fixedbufs --registerfiles --iomem=shmhuge
	echo "$HP0" > /proc/sys/vm/nr_hugepages
}

# seq_pair DEV MNT TAG FIO_ARGS...: seqread and seqwrite at 128K QD32, one
# pass of T seconds over a laid-out file, wrapping at its end, as fio's
# time_based job does; the write syncs at the end of its pass, fio with
# end_fsync. FIO_ARGS are added to both fio jobs, TAG to both labels.
seq_pair() {
	local dev=$1 mnt=$2 tag=$3
	shift 3
	compare "$dev seq read 128K QD32$tag (MB/s)" "$mnt" \
		"  - seqread: { block: 128K, qd: 32, span: 1G, time: ${T}s }" seqread rate rbwf \
		--rw=read --bs=128k --size=1G --ioengine=io_uring --iodepth=32 --direct=1 \
		--time_based --runtime="$T" "$@"
	compare "$dev seq write 128K QD32$tag (MB/s)" "$mnt" \
		"  - seqwrite: { block: 128K, qd: 32, span: 1G, time: ${T}s }" seqwrite rate wbwo \
		--rw=write --bs=128k --size=1G --ioengine=io_uring --iodepth=32 --direct=1 \
		--time_based --runtime="$T" --end_fsync=1 "$@"
}

echo "rig $("$RIG" --version | cut -d' ' -f2), fio $(fio --version), $(nproc) cores, pairs=$PAIRS"
printf '%-44s %12s %12s %7s\n' test rig fio ratio

make_dev ram /dev/shm/rig-bench-ram.img 3G
suite ram
make_dev disk /var/tmp/rig-bench-disk.img 4G
suite disk

# Accuracy against the kernel's blkio throttle on the disk-backed loop device.
[ "$ACCURACY" = 0 ] && exit 0
RATE=${RATE:-150000000}
majmin=$(lsblk -dno MAJ:MIN "$DEV" | tr -d ' ')
CGROUP=/sys/fs/cgroup/blkio/rig-bench-$$
mkdir "$CGROUP"
echo "$majmin $RATE" > "$CGROUP/blkio.throttle.read_bps_device"
echo "$majmin $RATE" > "$CGROUP/blkio.throttle.write_bps_device"
# Long transfers: the throttle lets about 0.1 s of burst through per busy period.
TSIZE=$(( RATE * ${TSECS:-12} / 1048576 ))M
acc_r=() acc_w=() fio_w=()
for ((i = 0; i < PAIRS; i++)); do
	drop
	acc_w+=("$( (echo $BASHPID > "$CGROUP/cgroup.procs"; rig_metric "$MNT" "  - write: { files: 1, size: $TSIZE, block: 1M }
  - read: { block: 1M }" write rate) )")
	drop
	acc_r+=("$( (echo $BASHPID > "$CGROUP/cgroup.procs"; rig_metric "$MNT" "  - write: { files: 1, size: $TSIZE, block: 1M }
  - read: { block: 1M }" read rate) )")
	drop
	fio_w+=("$( (echo $BASHPID > "$CGROUP/cgroup.procs"; fio_metric "$MNT/fio" wbw --rw=write --bs=1M \
		--size="$TSIZE" --ioengine=psync --direct=1 --end_fsync=1 --fallocate=none) )")
done
rr=$(median "${acc_r[@]}")
rw=$(median "${acc_w[@]}")
fw=$(median "${fio_w[@]}")
echo
echo "accuracy on a blkio throttle of $((RATE / 1000000)) MB/s (disk-backed loop, $TSIZE files):"
printf '  rig seq read  %8.1f MB/s  = %6.3f x throttle   (runs: %s)\n' "$rr" "$(python3 -c "print($rr * 1e6 / $RATE)")" "${acc_r[*]}"
printf '  rig seq write %8.1f MB/s  = %6.3f x fio %.1f  (runs: %s; fio: %s)\n' "$rw" "$(python3 -c "print($rw / $fw)")" "$fw" "${acc_w[*]}" "${fio_w[*]}"
