#!/usr/bin/env bash
# The Debian package: `dpkg-buildpackage -us -uc -b` builds it, lintian
# finds no error in it, it holds what it must, and in a fresh Debian root
# (debootstrap, from the mirror) `apt-get install ./sandbox-run_*.deb`
# installs it with its dependencies and the example agent runs from it, as
# root and as a user; doctor runs from it too. Needs root (debootstrap, the
# fresh root's mount namespace) and Debian's mirror.
#
# Environment: SR_SRCDIR, SR_PKG_CACHE (the fresh root is made anew each
# time; only apt's downloads are kept there).
. "$(dirname "$0")/lib.sh"

# The build: a copy of the source (dpkg-buildpackage cleans its tree).
copy_source "$tmp/src/sandbox-run"
(cd "$tmp/src/sandbox-run" && DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1
rc=$?
check "dpkg-buildpackage -us -uc -b builds the package" test "$rc" = 0
[ "$rc" = 0 ] || { show "$tmp/build.log"; finish; }
deb=$(ls "$tmp"/src/sandbox-run_*.deb)
check "one .deb: ${deb##*/}" test -f "$deb"

lintian --fail-on error --tag-display-limit 0 "$deb" >"$tmp/lintian.log" 2>&1
rc=$?
check "lintian finds no error" test "$rc" = 0
echo "# lintian: $(grep -c '^E:' "$tmp/lintian.log") errors, $(grep -c '^W:' "$tmp/lintian.log") warnings"
show "$tmp/lintian.log"

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/contents"
for f in /usr/bin/sandbox-run /usr/share/man/man1/sandbox-run.1.gz \
	/usr/share/sandbox-run/profiles/default.ini /usr/share/sandbox-run/profiles/offline.ini \
	/usr/share/bash-completion/completions/sandbox-run \
	/usr/share/zsh/vendor-completions/_sandbox-run \
	/usr/share/fish/vendor_completions.d/sandbox-run.fish \
	/etc/apparmor.d/sandbox-run /usr/share/doc/sandbox-run/examples/echo-agent/agent; do
	check "the package holds $f" grep -qxF "$f" "$tmp/contents"
done
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./etc/apparmor.d/sandbox-run >"$tmp/aa" 2>/dev/null
check "its AppArmor profile is attached to /usr/bin/sandbox-run" \
	grep -q '^profile sandbox-run /usr/bin/sandbox-run ' "$tmp/aa"
dpkg-deb -e "$deb" "$tmp/control"
check "its postinst loads the profile where AppArmor is enabled (dh_apparmor)" \
	grep -q 'apparmor_parser.*sandbox-run\|/etc/apparmor.d/sandbox-run' "$tmp/control/postinst"

# A fresh root, from the mirror: nothing of this host's packages.
fresh_root
rc=$?
check "debootstrap makes a fresh $SUITE root" test "$rc" = 0
[ "$rc" = 0 ] || finish
cp "$deb" "$tmp/root/tmp/"

in_root env DEBIAN_FRONTEND=noninteractive sh -c \
	'apt-get update -qq && apt-get install -y -qq --no-install-recommends /tmp/sandbox-run_*.deb' \
	>"$tmp/install.log" 2>&1
rc=$?
check "apt-get install ./${deb##*/} in the fresh root (with its dependencies)" test "$rc" = 0
[ "$rc" = 0 ] || { show "$tmp/install.log"; finish; }

agent=/usr/share/doc/sandbox-run/examples/echo-agent
out=$(in_root sh -c "echo 'hello from the package' | sandbox-run --net none $agent" 2>"$tmp/run.err")
rc=$?
check "root: the example agent runs from the installed package" \
	test "$rc" = 0 -a "$out" = "You said: hello from the package"
[ "$rc" = 0 ] || show "$tmp/run.err"
out=$(in_root sh -c "useradd -m sr-pkg-user && echo 'hi' |
	setpriv --reuid=sr-pkg-user --regid=sr-pkg-user --init-groups env HOME=/home/sr-pkg-user \
	sandbox-run $agent" 2>"$tmp/run.err")
rc=$?
check "a user: the example agent runs from the installed package, with --net egress" \
	test "$rc" = 0 -a "$out" = "You said: hi"
[ "$rc" = 0 ] || show "$tmp/run.err"
in_root sandbox-run doctor >"$tmp/doctor.log" 2>&1
rc=$?
check "sandbox-run doctor runs from the installed package (status 0 or 1)" test "$rc" -le 1
show "$tmp/doctor.log" 20
in_root bash -c '. /usr/share/bash-completion/completions/sandbox-run &&
	COMP_WORDS=(sandbox-run doc); COMP_CWORD=1; _sandbox_run; echo "${COMPREPLY[*]}"' \
	>"$tmp/compl.log" 2>&1
check "the installed bash completion completes 'doc' to doctor" grep -qx doctor "$tmp/compl.log" ||
	show "$tmp/compl.log"
finish
