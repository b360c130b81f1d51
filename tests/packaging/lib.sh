# shellcheck shell=bash
# What the packaging tests share: TAP lines, a scratch directory, and a
# fresh Debian root from the mirror to install into and run in.
#
# Environment: SR_SRCDIR, SR_PKG_CACHE (apt's and debootstrap's downloads),
# SR_DEBIAN_MIRROR.
set -u
SR_SRCDIR=${SR_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SR_PKG_CACHE=${SR_PKG_CACHE:-$SR_SRCDIR/tests/packaging/cache}
MIRROR=${SR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
# show FILE [LINES]: a log's end, as TAP comments.
show() { sed 's/^/# /' "$1" | tail -n "${2:-40}"; }
finish() { echo "1..$n"; [ "$failed" -eq 0 ]; exit; }

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root (debootstrap, a mount namespace for the fresh root)"
	exit 0
fi

tmp=$(mktemp -d /var/tmp/sr-pkg.XXXXXX)
cleanup() {
	# Whatever a failed step left mounted in the fresh root goes first.
	grep -o " $tmp/[^ ]*" /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# fresh_root: a minimal Debian root of this host's release at $tmp/root.
fresh_root() {
	mkdir -p "$SR_PKG_CACHE/debootstrap"
	debootstrap --variant=minbase --cache-dir="$SR_PKG_CACHE/debootstrap" "$SUITE" "$tmp/root" \
		"$MIRROR" >"$tmp/debootstrap.log" 2>&1 || { show "$tmp/debootstrap.log"; return 1; }
	cp /etc/resolv.conf "$tmp/root/etc/resolv.conf"
}

# in_root CMD...: CMD in the fresh root, in a mount namespace whose root it
# is (pivot_root, not chroot: the kernel refuses user namespaces to a
# chrooted process), with /proc, /sys and /dev.
in_root() {
	unshare --mount --propagation private --fork -- /bin/sh -c '
		r=$1; shift
		mount --bind "$r" "$r" && mount --rbind /dev "$r/dev" && mount --rbind /sys "$r/sys" &&
			mount -t proc proc "$r/proc" || exit 1
		cd "$r" && mkdir -p .old && pivot_root . .old && umount -l /.old && rmdir /.old &&
			exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 "$@"' _ "$tmp/root" "$@"
}

# copy_source DIR: this checkout's files (tracked, and new ones not ignored).
copy_source() {
	mkdir -p "$1"
	if git -C "$SR_SRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$SR_SRCDIR" ls-files -z -c -o --exclude-standard |
			(cd "$SR_SRCDIR" && xargs -0 cp --parents -t "$1")
	else
		cp -a "$SR_SRCDIR/." "$1"
	fi
}
