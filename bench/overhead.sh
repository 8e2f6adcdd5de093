#!/usr/bin/env bash
# bench/overhead.sh: what share of an experiment's wall time does rig spend
# measuring, and where does the rest go? Runs two seed plans scaled down, on
# loop devices over image files, and prints the time accounting each run
# recorded (time.csv, docs/reports.md): per layout and in total, per step,
# with the measured share and the estimate the run started with. Needs root
# (rig provisions the images: losetup, sgdisk, mkfs, mount).
#
#   enumeration  bench/overhead-enumeration.yaml: configs/enumeration-churn.yaml
#                with 100,000 files and 5 cycles (pause 10 s, enumerate cold,
#                churn 5%) on two ext4 halves of an 8 GB image
#   fill         bench/overhead-fill.yaml: configs/fill-levels-image.yaml with
#                three levels (90%, 95%, 99%), --image-size 1G and
#                --fs-map jhfsx=ext4,hfs+=ext4
#
# After each run `rig report` draws the reports again, so the table includes
# the time the run's own reports took (recorded after them).
#
# The images are rig's: each plan names one under /var/tmp, which must not
# exist when the script starts (it is someone else's then: the script stops).
# Every exit path (success, error, Ctrl-C) runs the trap: a rig still running
# gets SIGINT (it stops between operations and tears down), then whatever is
# still mounted under the script's work folder is unmounted, every loop
# device reading one of the two images is detached (`losetup -j`: no other
# device is touched), the images and the work folder are removed.
#
# Environment: RIG (default build/rig next to this script), ONLY (enumeration
# or fill: one plan), KEEP (a folder to copy the run folders into, for their
# report.html; the images are never kept).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
RIG=${RIG:-$here/build/rig}
ONLY=${ONLY:-}
KEEP=${KEEP:-}
images=(/var/tmp/rig-bench-overhead-enumeration.img /var/tmp/rig-bench-overhead-fill.img)

die() { echo "bench/overhead.sh: $*" >&2; exit 2; }
[[ $EUID -eq 0 ]] || die "needs root (rig provisions loop devices over image files)"
[[ -x $RIG ]] || die "no rig binary at $RIG: run make, or set RIG"
for tool in losetup findmnt umount awk; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done
for img in "${images[@]}"; do
	[[ ! -e $img ]] || die "$img exists and is not this run's: remove it first"
done
RIG=$(cd "$(dirname "$RIG")" && pwd)/$(basename "$RIG")

load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
	echo "bench/overhead.sh: warning: load average $load on $(nproc) CPUs; numbers will be noisy" >&2
fi

work=$(mktemp -d /var/tmp/rig-bench-overhead.XXXXXX)
rigpid=

cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM HUP
	if [[ -n $rigpid ]] && kill -0 "$rigpid" 2>/dev/null; then
		kill -INT "$rigpid"
		wait "$rigpid"
	fi
	local left=0
	# Mount points under the work folder, deepest first.
	while read -r mp; do
		[[ -n $mp ]] || continue
		umount "$mp" || { sleep 2; umount "$mp"; } || left=1
	done < <(findmnt -rn -o TARGET | awk -v w="$work/" 'index($0, w) == 1' | sort -r)
	for img in "${images[@]}"; do
		for dev in $(losetup -j "$img" -n -O NAME 2>/dev/null); do
			losetup -d "$dev" || { echo "bench/overhead.sh: cannot detach $dev" >&2; left=1; }
		done
		[[ $left == 1 ]] || rm -f -- "$img"
	done
	if [[ $left == 0 ]]; then
		rm -rf -- "$work"
	else
		echo "bench/overhead.sh: something is still mounted or attached; left $work" >&2
	fi
	exit "$rc"
}
trap cleanup EXIT INT TERM HUP

# The accounting of one run folder, as Markdown tables.
print_time() {
	local name=$1 csv=$2/time.csv
	awk -F, -v name="$name" '
	function fmt(v) { return v == "" ? "" : sprintf(v >= 100 ? "%.0f" : "%.3g", v) }
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$2 == "cell" {
		step = $6; gsub(/cycle[0-9]+/, "cycle", step); gsub(/sweep[0-9]+/, "sweep", step)
		key = step " " $7
		if (!(key in seen)) { seen[key] = 1; order[++n] = key }
		for (c = col["provision"]; c <= col["other"]; c++) s[key, c] += $c
		cells[key]++
	}
	$2 == "layout_total" || $2 == "total" {
		rows[++m] = ($2 == "total" ? "**total**" : $4) SUBSEP $0
	}
	END {
		printf "\n%s: where the time went (seconds)\n\n", name
		printf "| layout | estimate | wall |"
		for (c = col["provision"]; c <= col["other"]; c++) printf " %s |", hdr(c)
		printf " measured share |\n|---|---|---|"
		for (c = col["provision"]; c <= col["other"]; c++) printf "---|"
		printf "---|\n"
		for (r = 1; r <= m; r++) {
			split(rows[r], p, SUBSEP); split(p[2], f, ",")
			printf "| %s | %s | %s |", p[1], fmt(f[col["estimate"]]), fmt(f[col["wall"]])
			for (c = col["provision"]; c <= col["other"]; c++) printf " %s |", fmt(f[c])
			printf " **%.1f%%** |\n", 100 * f[col["measured_share"]]
		}
		printf "\n| step | cells | wall |"
		for (c = col["setup"]; c <= col["other"]; c++) if (c != col["report"]) printf " %s |", hdr(c)
		printf " measured share |\n|---|---|---|"
		for (c = col["setup"]; c <= col["other"]; c++) if (c != col["report"]) printf "---|"
		printf "---|\n"
		for (k = 1; k <= n; k++) {
			key = order[k]; w = 0
			for (c = col["provision"]; c <= col["other"]; c++) w += s[key, c]
			printf "| %s | %d | %s |", key, cells[key], fmt(w)
			for (c = col["setup"]; c <= col["other"]; c++) if (c != col["report"]) printf " %s |", fmt(s[key, c])
			printf " %.1f%% |\n", (w > 0 ? 100 * s[key, col["measured"]] / w : 0)
		}
	}
	function hdr(c,   k) { for (k in col) if (col[k] == c) return k }
	' "$csv"
}

run_plan() {
	local name=$1 plan=$2
	shift 2
	local out=$work/$name
	echo "bench/overhead.sh: rig run $* $plan" >&2
	local t0 t1
	t0=$(date +%s.%N)
	"$RIG" run -q --yes -o "$out" "$@" "$plan" >&2 &
	rigpid=$!
	wait "$rigpid" || die "rig run of $plan failed (its folder: $out)"
	rigpid=
	t1=$(date +%s.%N)
	"$RIG" report "$out" >/dev/null || die "rig report $out failed"
	awk -v a="$t0" -v b="$t1" -v n="$name" 'BEGIN { printf "\n%s: rig run took %.1f s by the clock of this script\n", n, b - a }'
	print_time "$name" "$out"
	if [[ -n $KEEP ]]; then
		mkdir -p "$KEEP"
		cp -r "$out" "$KEEP/"
	fi
}

echo "bench/overhead.sh: $(uname -sr), $(nproc) CPUs, load $load, rig $("$RIG" version | head -1)"
if [[ -z $ONLY || $ONLY == enumeration ]]; then
	run_plan enumeration "$here/bench/overhead-enumeration.yaml"
fi
if [[ -z $ONLY || $ONLY == fill ]]; then
	run_plan fill "$here/bench/overhead-fill.yaml" --image-size 1G --fs-map jhfsx=ext4,hfs+=ext4
fi
