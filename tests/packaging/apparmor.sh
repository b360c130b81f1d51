#!/usr/bin/env bash
# The AppArmor profile (apparmor/sandbox-run.in, docs/doctor.md): parsed by
# an AppArmor 4 parser (parse only: -Q -K, no kernel needed), and narrow:
# user namespaces for the installed binary alone, nothing for what it runs.
#
# The profile needs abi 4.0 (`userns,`), which Debian 12's parser (3.0)
# predates: where the host's parser does not know abi 4.0, Debian 13's is
# fetched (apt-get download, into SR_PKG_CACHE) and run with its own C
# library. Environment: SR_SRCDIR, SR_BUILDDIR (where apparmor/sandbox-run
# was generated), SR_PKG_CACHE.
set -u
SR_SRCDIR=${SR_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SR_BUILDDIR=${SR_BUILDDIR:-$SR_SRCDIR}
SR_PKG_CACHE=${SR_PKG_CACHE:-$SR_BUILDDIR/tests/packaging/cache}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# PARSER...: the command that runs an AppArmor 4 parser, as an array.
find_parser() {
	if command -v apparmor_parser >/dev/null && [ -e /etc/apparmor.d/abi/4.0 ]; then
		PARSER=(apparmor_parser)
		return 0
	fi
	local root="$SR_PKG_CACHE/apparmor4" apt
	if [ ! -x "$root/usr/sbin/apparmor_parser" ]; then
		mkdir -p "$SR_PKG_CACHE/apt/lists/partial" "$SR_PKG_CACHE/apt/archives/partial" "$root"
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
			>"$SR_PKG_CACHE/apt/sources.list"
		apt=(-o Dir::Etc::SourceList="$SR_PKG_CACHE/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
			-o Dir::State::Lists="$SR_PKG_CACHE/apt/lists" -o Dir::Cache="$SR_PKG_CACHE/apt"
			-o Debug::NoLocking=1)
		apt-get "${apt[@]}" update -qq >"$tmp/apt.log" 2>&1 &&
			(cd "$SR_PKG_CACHE/apt/archives" &&
				apt-get "${apt[@]}" download apparmor/trixie libc6/trixie >>"$tmp/apt.log" 2>&1) || {
			sed 's/^/# /' "$tmp/apt.log"
			return 1
		}
		for deb in "$SR_PKG_CACHE"/apt/archives/apparmor_*.deb "$SR_PKG_CACHE"/apt/archives/libc6_*.deb; do
			dpkg-deb -x "$deb" "$root" || return 1
		done
	fi
	PARSER=("$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path
		"$root/usr/lib/x86_64-linux-gnu" "$root/usr/sbin/apparmor_parser"
		--base "$root/etc/apparmor.d" -I "$root/etc/apparmor.d")
}

profile="$SR_BUILDDIR/apparmor/sandbox-run"
if ! find_parser; then
	not_ok "an AppArmor 4 parser: the host's, or Debian 13's from the mirror"
	echo "1..$n"
	exit 1
fi
version=$("${PARSER[@]}" --version 2>/dev/null | head -n 1)
ok "an AppArmor 4 parser: $version"

check "the profile parses (apparmor_parser -Q -K)" \
	"${PARSER[@]}" -Q -K "$profile" 2>"$tmp/err"
grep -v 'Cache read/write disabled' "$tmp/err" | sed 's/^/# /'
sed 's/allow dbus,/allow dbus,\n  allow no_such_rule,/' "$profile" >"$tmp/broken"
check "and the parser does check: a broken copy is refused" \
	bash -c '! "$@" -Q -K "$0" 2>/dev/null' "$tmp/broken" "${PARSER[@]}"

# Narrow: only the profile attached to the binary may make user namespaces.
bin=$(sed -n 's/^profile sandbox-run \([^ ]*\) .*/\1/p' "$profile")
check "attached to the installed binary alone ($bin)" test "${bin##*/}" = sandbox-run -a "${bin#/}" != "$bin"
check "no profile of it is unconfined" bash -c '! grep -q "flags=(.*unconfined" "$0"' "$profile"
check "user namespaces allowed once, in the sandbox-run profile" \
	test "$(grep -c '^ *allow userns,' "$profile")" = 1
check "what it runs is stacked with unpriv_sandbox-run" \
	grep -q '^ *allow px /\*\* -> sandbox-run//&unpriv_sandbox-run,' "$profile"
unpriv=$(sed -n '/^profile unpriv_sandbox-run/,/^}/p' "$profile")
check "unpriv_sandbox-run: no capability" grep -q '^ *audit deny capability,' <<<"$unpriv"
check "unpriv_sandbox-run: no user namespace" grep -q '^ *audit deny userns,' <<<"$unpriv"
check "unpriv_sandbox-run: no mount" grep -q '^ *audit deny mount,' <<<"$unpriv"
check "unpriv_sandbox-run: its children stay in it" \
	grep -q '^ *allow pix /\*\* -> &unpriv_sandbox-run,' <<<"$unpriv"
check "the network helpers keep sandbox-run's profile (they need its namespaces' capabilities)" \
	grep -q '^ *allow ix /{usr/,}bin/slirp4netns,' "$profile"

echo "1..$n"
[ "$failed" -eq 0 ]
