#!/usr/bin/env bash
# bench/tree.sh: is rig's `tree` at least as fast as `tar -x` of the same
# tree, and its `enumerate` (cold cache) at least as fast as `du -s`, on the
# same file system? Needs root (loop device, mount, drop_caches).
#
# FILL=1 (the default) fills free memory with clean page cache (a sparse
# file read once, in the work folder) before each timed build, rig's and
# tar's alike, so that both take the pages they write into from the page
# cache's reclaim and neither from free memory. On a virtual machine that
# hands freed memory back to its host (free page reporting: this test
# machine's kernel reports every freed 2 MiB block at once), a page taken
# from free memory is faulted in from the host on first touch: 0.24-0.32
# GB/s here, against 19-23 GB/s for memory touched before (bench/README.md,
# "Free memory on this machine"). Without FILL, tar -x, whose archive is in
# the page cache, takes most pages by reclaim, while rig takes fresh ones:
# at a million files the comparison measured the host, not the writers.
# FILL=0 leaves memory as it is.
#
# What it does: makes an image file under /var/tmp (4 GiB; for more than
# 200,000 files, twice the tree's bytes as `rig plan` estimates them, and
# an inode for every file and directory, mkfs.ext4 -N), attaches it with
# `losetup --find --show --direct-io=on` (without direct I/O the loop device
# caches the image twice and writes run at page-cache speed), makes ext4 with
# lazy_itable_init=0,lazy_journal_init=0 (else a kernel thread zeroes inode
# tables during the measurements) and mounts it. Then PAIRS pairs, in
# alternating order (rig first in odd pairs, tar first in even ones, so a
# drift does not favour one side):
#   rig:  `rig run` of a plan on a `dirs` target on the mount: tree, then
#         enumerate (the runner syncs and drops caches before it, as root);
#         the first run also archives its tree with tar (an exec step after
#         the measured ones). Seconds come from results.csv: tree's time
#         includes its final sync, enumerate's is its walk (order: inode,
#         du's own order, so the comparison is of the walkers alone).
#   tar:  `tar -xf` of that archive (the identical tree: names, sizes,
#         bytes) onto the mount, timed together with a following `sync`;
#         the archive is read into the page cache first, untimed, as rig
#         makes its payload before its clock starts. Then caches dropped
#         (sync; echo 3 > /proc/sys/vm/drop_caches) and `du -s` timed over
#         the extracted tree. Then it is removed.
# Prints each pair, the medians and the ratios (> 1: rig is faster).
#
# Every exit path (success, error, Ctrl-C) runs the trap: unmount what this
# script mounted, `losetup -d` the one device it attached (checked to be
# backed by its own image before anything is written), remove the image and
# the work folder. No other device is touched.
#
# Environment: RIG (default build/rig next to this script), FILES (100000),
# DIRS (FILES x 0.111: 11100, 111000 for a million), DEPTH (3), SIZES
# (inverse-square(1K..20G)), SEED (1), PAIRS (3), THREADS (tree's
# `threads`; not given: tree's default), FILL (1). The archive tar
# extracts is in the work folder too: at 1,000,000 files (15.8 GiB) the run
# needs about 50 GB free under /var/tmp.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
RIG=${RIG:-$here/build/rig}
FILES=${FILES:-100000}
DIRS=${DIRS:-$((FILES * 111 / 1000))}
THREADS=${THREADS:-}
DEPTH=${DEPTH:-3}
SIZES=${SIZES:-inverse-square(1K..20G)}
SEED=${SEED:-1}
PAIRS=${PAIRS:-3}
FILL=${FILL:-1}

die() { echo "bench/tree.sh: $*" >&2; exit 2; }
[[ $EUID -eq 0 ]] || die "needs root (losetup, mount, drop_caches)"
[[ -x $RIG ]] || die "no rig binary at $RIG: run make, or set RIG"
for tool in losetup mkfs.ext4 mount umount tar du awk; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done
RIG=$(cd "$(dirname "$RIG")" && pwd)/$(basename "$RIG")

load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
	echo "bench/tree.sh: warning: load average $load on $(nproc) CPUs; numbers will be noisy" >&2
fi

work=$(mktemp -d /var/tmp/rig-bench-tree.XXXXXX)
img=$work/ext4.img
mnt=$work/mnt
dev=
mounted=0

cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM HUP
	if [[ $mounted == 1 ]]; then
		umount "$mnt" || { sleep 2; umount "$mnt"; }
		[[ $? == 0 ]] && mounted=0
	fi
	if [[ -n $dev && $mounted == 0 ]]; then
		losetup -d "$dev" || echo "bench/tree.sh: cannot detach $dev" >&2
	fi
	if [[ $mounted == 0 ]]; then
		rm -rf -- "$work"
	else
		echo "bench/tree.sh: $mnt is still mounted on $dev; left $work" >&2
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

threads_key=${THREADS:+, threads: $THREADS}
tree_step="tree: { files: $FILES, dirs: $DIRS, depth: $DEPTH, sizes: \"$SIZES\"$threads_key }"

mkdir "$mnt"
size=4G
inodes=()
if ((FILES > 200000)); then
	# Twice the tree's bytes (rig plan's estimate with this seed), and inodes
	# for every entry with a tenth to spare.
	printf 'rig: 1\nname: size\nseed: %s\ntarget:\n  dirs: ["%s"]\nsteps:\n  - %s\n' \
		"$SEED" "$mnt" "$tree_step" > "$work/size.yaml"
	gib=$("$RIG" plan "$work/size.yaml" 2>/dev/null | awk '/total +writes/ { print $3; exit }')
	[[ -n $gib ]] || die "cannot read the tree's size from rig plan"
	size=$(awk -v g="$gib" 'BEGIN { printf "%dG", 2 * g + 4 }')
	inodes=(-N $(((FILES + DIRS) * 11 / 10 + 1000)))
fi
truncate -s "$size" "$img"
dev=$(losetup --find --show --direct-io=on "$img")
[[ $dev == /dev/loop* ]] || die "losetup gave '$dev'"
back=$(losetup --noheadings --output BACK-FILE "$dev" | sed 's/[[:space:]]*$//')
[[ $back == "$img" ]] || die "$dev is backed by '$back', not $img"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "${inodes[@]}" "$dev"
mount "$dev" "$mnt"
mounted=1
echo "bench/tree.sh: ext4 on $dev ($img, $size, direct-io, $(df --output=itotal "$mnt" | tail -1) inodes), mounted on $mnt"
echo "bench/tree.sh: $FILES files, $DIRS dirs, depth $DEPTH, sizes $SIZES, seed $SEED, threads ${THREADS:-default}, fill $FILL; rig $RIG; load $load"

archive=$work/tree.tar
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# With FILL=1: read a sparse file as big as free memory less 1 GiB into
# the page cache (untimed), so the build that follows takes its pages by
# reclaim (see the top). The file stays (a removed file's pages are freed
# at once); the cleanup removes it with the work folder. Nothing to sync:
# the file is only read, and both builds sync before their clocks start.
fill_cache() {
	[[ $FILL == 1 ]] || return 0
	local free_kib
	free_kib=$(awk '/^MemFree:/ { print $2 }' /proc/meminfo)
	((free_kib > 2 * 1048576)) || return 0
	truncate -s "$(((free_kib - 1048576) * 1024))" "$work/ballast"
	cat "$work/ballast" > /dev/null
}

# value of metric $2 of module $1 in results.csv $3 (fields 5, 16, 17)
metric() { awk -F, -v m="$1" -v k="$2" '$5 == m && $16 == k { print $17 }' "$3"; }

run_rig() { # $1: pair number; sets rig_tree, rig_enum, rig_entries
	local out=$work/out$1 plan=$work/plan$1.yaml
	{
		echo "rig: 1"
		echo "name: bench-tree"
		echo "seed: $SEED"
		echo "target:"
		echo "  dirs: [\"$mnt/rig\"]"
		echo "steps:"
		echo "  - $tree_step"
		# du -s on this very tree, cold as enumerate is: the same tree,
		# the same layout on disk, so the comparison is of the walkers alone.
		# Before enumerate in even pairs, after it in odd ones: the host may
		# cache what the loop device read first.
		local du_step="  - exec: { run: [sh, -c, \"sync; echo 3 > /proc/sys/vm/drop_caches; t0=\$(date +%s%N); du -s {dir}/tree > /dev/null; t1=\$(date +%s%N); echo du_ns=\$((t1 - t0))\"], parse: key=value }"
		(( $1 % 2 )) || echo "$du_step"
		echo "  - enumerate: { order: inode }"
		(( $1 % 2 )) && echo "$du_step"
		if [[ ! -e $archive ]]; then
			echo "  - exec: { run: [tar, -cf, \"$archive\", -C, \"{dir}\", tree] }"
		fi
	} > "$plan"
	fill_cache
	"$RIG" run -q -o "$out" "$plan" > "$work/rig$1.log" 2>&1 ||
		{ cat "$work/rig$1.log" >&2; die "rig run failed"; }
	rig_tree=$(metric tree seconds "$out/results.csv")
	rig_enum=$(metric enumerate seconds "$out/results.csv")
	rig_entries=$(metric enumerate entries "$out/results.csv")
	rig_bytes=$(metric tree bytes "$out/results.csv")
	same_du=$(awk -v n="$(metric exec du_ns "$out/results.csv")" 'BEGIN { printf "%.3f", n / 1e9 }')
	[[ -n $rig_tree && -n $rig_enum ]] || die "no tree/enumerate seconds in $out/results.csv"
}

run_tar() { # sets tar_x, du_s
	local dst=$mnt/x
	mkdir "$dst"
	cat "$archive" > /dev/null # into the page cache, untimed
	fill_cache
	sync
	local t0 t1
	t0=$(now)
	tar -xf "$archive" -C "$dst"
	sync
	t1=$(now)
	tar_x=$(secs "$t0" "$t1")
	drop_caches
	t0=$(now)
	du -s "$dst/tree" > /dev/null
	t1=$(now)
	du_s=$(secs "$t0" "$t1")
	rm -rf "$dst"
	sync
}

declare -a R_TREE R_ENUM T_X T_DU S_DU
for ((p = 1; p <= PAIRS; p++)); do
	if ((p % 2 == 1)); then
		run_rig "$p"
		run_tar
	else
		run_tar
		run_rig "$p"
	fi
	R_TREE+=("$rig_tree") R_ENUM+=("$rig_enum") T_X+=("$tar_x") T_DU+=("$du_s") S_DU+=("$same_du")
	printf 'pair %d: rig tree %.3f s, tar -x %.3f s; rig enumerate %.3f s, du -s %.3f s (on rig'"'"'s tree %.3f s); load %s\n' \
		"$p" "$rig_tree" "$tar_x" "$rig_enum" "$du_s" "$same_du" "$(cut -d' ' -f1 /proc/loadavg)"
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
m_tree=$(median "${R_TREE[@]}")
m_tar=$(median "${T_X[@]}")
m_enum=$(median "${R_ENUM[@]}")
m_du=$(median "${T_DU[@]}")
m_sdu=$(median "${S_DU[@]}")
echo
echo "tree: $FILES files, $rig_entries entries, $rig_bytes bytes (identical in both)"
awk -v f="$FILES" -v e="$rig_entries" -v rt="$m_tree" -v tx="$m_tar" -v re="$m_enum" -v du="$m_du" -v sdu="$m_sdu" '
BEGIN {
	printf "%-24s %10s %14s\n", "median of pairs", "seconds", "rate"
	printf "%-24s %10.3f %10.0f files/s\n", "rig tree", rt, f / rt
	printf "%-24s %10.3f %10.0f files/s\n", "tar -x (+ sync)", tx, f / tx
	printf "%-24s %10.3f %10.0f entries/s\n", "rig enumerate (cold)", re, e / re
	printf "%-24s %10.3f %10.0f entries/s\n", "du -s (cold)", du, e / du
	printf "%-24s %10.3f %10.0f entries/s\n", "du -s, rig'"'"'s tree", sdu, e / sdu
	printf "ratio tar -x / rig tree:      %.2f  (> 1: rig faster)\n", tx / rt
	printf "ratio du -s / rig enumerate:  %.2f  (> 1: rig faster; du on the tar tree)\n", du / re
	printf "same tree, du -s / enumerate: %.2f  (> 1: rig faster; the fair comparison)\n", sdu / re
}'
