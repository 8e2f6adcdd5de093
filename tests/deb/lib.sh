# shellcheck shell=bash disable=SC2154 # tag: set by the script that sources this
# What the Debian chroot tests share; sourced by bash from tests/deb/chroot-test
# (make deb-test) and tests/deb/setup-test (make setup-test), which set `tag`
# (their name in messages) first, then call:
#
#   deb_need TOOL...      Linux and root (else SKIPPED, exit 0), and the tools
#   deb_new_root CACHE    this machine's release, a fresh folder root under
#                         CACHE, the traps that remove it on every exit path
#   deb_base              the cached minbase base unpacked into root, made
#                         first (debootstrap) when CACHE has none
#   deb_mount_system      /proc, /sys, /dev, /dev/pts (and a /dev/shm of its own)
#   in_root CMD...        CMD in the chroot, in a clean environment
#   deb_install ARCHIVES PKG...  apt-get install, with the .deb files kept in
#                         ARCHIVES from earlier runs, and the new ones kept there
#
# Cleaning up stops what still runs in the chroot, lists the loop devices
# whose backing file is inside it, unmounts what is mounted below it (deepest
# first), detaches those loops, unmounts what they held, and removes it; a
# chroot with anything still mounted in it is never removed
# (tests/deb/cleanup-test checks this).
t0=$(date +%s)
# The test's own output, for the cleanup: a signal's trap runs inside the
# redirections of the command it interrupted (a log file).
exec {deb_stdout}>&1 {deb_stderr}>&2
say() { echo "$tag: [$(($(date +%s) - t0)) s] $*"; }

deb_need() {
	if [ "$(uname -s)" != Linux ]; then
		say "SKIPPED: Linux only (debootstrap, chroot)"
		exit 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		say "SKIPPED: needs root (debootstrap, chroot)"
		exit 0
	fi
	local t
	for t in debootstrap chroot mount umount flock "$@"; do
		command -v "$t" >/dev/null 2>&1 || { say "$t not found (./setup installs debootstrap)" >&2; exit 1; }
	done
}

# This machine's release and architecture, the mirror (RIG_DEB_MIRROR, or the
# first of this machine's apt sources); the cached base CACHE/SUITE-ARCH.tar.gz;
# root, a fresh folder in CACHE (so that hard links to the cache work).
deb_new_root() {
	suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	[ -n "$suite" ] || { say "no VERSION_CODENAME in /etc/os-release" >&2; exit 1; }
	arch=$(dpkg --print-architecture)
	mirror=${RIG_DEB_MIRROR:-}
	# Either file may be missing (a debootstrapped Debian has only
	# sources.list; Debian 12's installer writes only debian.sources): with
	# pipefail, cat's failure would end the script here without a word.
	if [ -z "$mirror" ]; then
		mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
			sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/*$/\1/p' | head -n 1 || true)
	fi
	if [ -z "$mirror" ]; then
		mirror=$(sed -n 's/^deb[[:space:]]\{1,\}\(http[^[:space:]]*\/debian\)\/*[[:space:]].*/\1/p' \
			/etc/apt/sources.list 2>/dev/null | head -n 1 || true)
	fi
	mirror=${mirror:-http://deb.debian.org/debian}

	mkdir -p "$1"
	cache=$(cd "$1" && pwd)
	base=$cache/$suite-$arch.tar.gz
	root=$(mktemp -d "$cache/root.XXXXXX")
	chmod 755 "$root"
	trap deb_cleanup EXIT
	trap deb_on_signal INT TERM HUP
}

deb_mounts_below() { # the mount points below root, the last mounted first
	awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts | tac
}

# The processes whose root is the chroot or a folder in it (started by this
# test, or by what it ran there): TERM, then KILL after 10 s.
deb_stop_root_procs() {
	local p r pids=() i
	for p in /proc/[0-9]*; do
		r=$(readlink "$p/root" 2>/dev/null) || continue
		case $r in "$root" | "$root"/*) pids+=("${p#/proc/}") ;; esac
	done
	((${#pids[@]})) || return 0
	say "stopping what still runs in the chroot: ${pids[*]}" >&2
	kill -TERM "${pids[@]}" 2>/dev/null || true
	for ((i = 0; i < 20; i++)); do
		kill -0 "${pids[@]}" 2>/dev/null || return 0
		sleep 0.5
	done
	kill -KILL "${pids[@]}" 2>/dev/null || true
	sleep 0.5
}

# Loop devices backed by a file inside the chroot, read before anything is
# unmounted: a lazy unmount of the file system that holds the file (a FUSE
# disk) turns its path into one relative to that mount ("/disk"), which
# matches nothing here.
deb_loops_below() {
	command -v losetup >/dev/null 2>&1 || return 0
	local dev file
	while read -r dev file; do
		case $file in "$root"/*) echo "$dev $file" ;; esac
	done < <(losetup -n -l -O NAME,BACK-FILE 2>/dev/null)
}

deb_unmount_below() { # [-l]: lazily what a plain unmount cannot
	local m
	while read -r m; do
		[ -n "$m" ] || continue
		umount "$m" 2>/dev/null || { [ "${1-}" = -l ] && umount -l "$m"; } || true
	done < <(deb_mounts_below)
}

deb_cleanup() {
	local rc=$? loops dev file
	trap '' INT TERM HUP
	exec 1>&"$deb_stdout" 2>&"$deb_stderr"
	deb_stop_root_procs
	loops=$(deb_loops_below)
	# The loops' partitions first (mounted last), then each loop by its
	# exact name, then what the loops held open.
	deb_unmount_below
	while read -r dev file; do
		[ -n "$dev" ] || continue
		say "detaching $dev (backed by $file)" >&2
		partx -d "$dev" 2>/dev/null || true
		losetup -d "$dev" || true
	done <<<"$loops"
	deb_unmount_below -l
	# Never remove a tree with something mounted in it.
	if grep -q " $root/" /proc/self/mounts; then
		say "still mounted under $root; not removing it:" >&2
		grep " $root/" /proc/self/mounts >&2
		exit 1
	fi
	rm -rf --one-file-system "$root" "$root".*
	say "$( ((rc == 0)) && echo ok || echo FAILED) in $(($(date +%s) - t0)) s; removed $root"
	exit "$rc"
}

# A signal stops the command running (in the background, so that the
# trap runs at once), then the EXIT trap cleans up.
child=
deb_on_signal() {
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	exit 130
}
deb_run() { # CMD... in the background, waited for
	"$@" &
	child=$!
	local rc=0
	wait "$child" || rc=$?
	child=
	return "$rc"
}

# A command inside the chroot, in a clean environment (VAR=VALUE words
# before the command add to it).
in_root() {
	deb_run chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
apt_get() { in_root apt-get -q -y -o Dpkg::Use-Pty=0 "$@"; }

# The base: unpacked from the cache, or debootstrapped (and then cached, with
# its apt lists). One run makes it while another waits (a lock in CACHE).
deb_base() {
	if [ ! -f "$base" ]; then
		exec 9>"$cache/.base.lock"
		flock 9
		if [ ! -f "$base" ]; then
			say "first run: debootstrap --variant=minbase $suite from $mirror (about a minute)"
			deb_run debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.log" 2>&1 || {
				tail -n 20 "$root.log" >&2
				exit 1
			}
			apt_get update
			apt_get clean
			tar -czf "$root.tar.gz" -C "$root" . && mv "$root.tar.gz" "$base"
			exec 9>&-
			say "cached the base as $base ($(du -h "$base" | cut -f1))"
			return
		fi
		exec 9>&-
	fi
	say "unpacking the cached $suite base ($base)"
	tar -xzf "$base" -C "$root"
}

deb_mount_system() {
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	mount -t proc proc "$root/proc"
	mount --bind /sys "$root/sys"
	mount --make-private "$root/sys"
	mount --bind /dev "$root/dev"
	mount --make-private "$root/dev"
	mount --bind /dev/pts "$root/dev/pts"
	mount --make-private "$root/dev/pts"
	# Not the folder below this machine's /dev/shm.
	mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
}

# .deb files between a cache folder and the chroot's apt cache: hard links
# when they are on one file system (the files are never changed), or copies.
deb_copy_debs() { # FROM TO
	local debs=()
	mapfile -t debs < <(find "$1" -maxdepth 1 -name '*.deb')
	((${#debs[@]})) || return 0
	cp -ln -t "$2" -- "${debs[@]}" 2>/dev/null || cp -n -t "$2" -- "${debs[@]}"
}

# apt-get install PKG... with the packages an earlier run fetched (kept in
# ARCHIVES); when the cached apt lists are stale, apt-get update and again.
deb_install() {
	local archives=$1
	shift
	mkdir -p "$archives"
	deb_copy_debs "$archives" "$root/var/cache/apt/archives"
	say "apt-get install $*"
	if ! apt_get install --no-install-recommends "$@"; then
		say "the cached apt lists are stale: apt-get update, and again"
		apt_get update
		apt_get install --no-install-recommends "$@"
	fi
	deb_copy_debs "$root/var/cache/apt/archives" "$archives"
}
