#!/usr/bin/env bash
# A --bind source must be the directory the caller meant, not where a
# symbolic link planted on its way points. Security round 2, finding 6
# (low): `agentdir/out -> ~` plus `--bind agentdir/out /out` let the agent
# append to ~/.bashrc. A link is followed only where root owns it and the
# directory holding it, outside the agent's own files (src/lib/hostpath.c);
# any other link is refused (125), saying which path to name instead.
. "$(dirname "$0")/../integration/libtest.sh"

OTHER=54321

# victim_home: a directory of the round's user with a start-up file.
victim_home() {
	local h="$SR_TMP/home-$1-$SR_AS"
	mkdir -p "$h/sub"
	printf 'precious\n' >"$h/bashrc"
	chmod 0644 "$h/bashrc"
	own "$h"
	echo "$h"
}

# link_as WHO TARGET LINK: a symbolic link made by WHO (user: the round's
# user; other: another uid; root).
link_as() {
	case $1 in
	user) as_user ln -s "$2" "$3" ;;
	other) setpriv --reuid=$OTHER --regid=$OTHER --clear-groups -- ln -s "$2" "$3" ;;
	root) ln -s "$2" "$3" ;;
	esac
}

intact() {
	assert_eq "$1" precious "$(cat "$2")"
}

# The review's case: links among the agent's own files (the caller's own,
# or for root a checkout root made: root's), at the end of the source or
# on its way.
t_link_in_agent_dir() {
	local h a="$SR_TMP/agent-$SR_AS"
	h=$(victim_home agent)
	mkdir -p "$a"
	printf '#!/bin/sh\necho pwned >>/out/bashrc; cat /out/bashrc\n' >"$a/agent"
	chmod 0755 "$a" "$a/agent"
	own "$a"
	link_as "$([ "$SR_AS" = root ] && echo root || echo user)" "$h" "$a/out"
	link_as "$([ "$SR_AS" = root ] && echo root || echo user)" "$h" "$a/data"
	sr --net none --bind "$a/out" /out "$a"
	assert_eq "--bind AGENTDIR/out, a link to the caller's home: refused (125)" 125 "$rc"
	assert_match "and says which path to name instead" \
		"$a/out is a symbolic link to $h .*name the path it leads to instead \($h\)" "$errout"
	intact "the home's start-up file is untouched" "$h/bashrc"
	sr --net none --bind "$a/data/sub" /out "$a"
	assert_eq "--bind AGENTDIR/data/sub, a link on the way: refused (125)" 125 "$rc"
	# Not run as the agent, the directory is no agent's: the caller's own
	# link is refused all the same, root's (the system's kind) is not.
	sr --net none --ro-bind "$a/out" /out -- cat /out/bashrc
	if [ "$SR_AS" = root ]; then
		assert_eq "with -- COMMAND, root's link in root's directory: followed" precious "$out"
	else
		assert_eq "with -- COMMAND, the caller's own link: refused too (125)" 125 "$rc"
		assert_no_match "nothing of the home is read" precious "$out"
	fi
	# The caller who means the home names it.
	sr --net none --ro-bind "$h" /out -- cat /out/bashrc
	assert_eq "naming the path the link leads to works" precious "$out"
}

# An agent may write its --bind: a link it leaves there must not redirect
# the next run's --bind beneath it.
t_link_left_by_agent() {
	local h s="$SR_TMP/shared-$SR_AS"
	h=$(victim_home left)
	mkdir -p "$s"
	chmod 0777 "$s"
	own "$s"
	sr --net none --bind "$s" /out -- ln -s "$h" /out/cache
	assert_eq "the agent leaves a link in its bind" 0 "$rc"
	sr --net none --bind "$s/cache" /cache -- sh -c 'echo pwned >>/cache/bashrc; cat /cache/bashrc'
	assert_eq "the next run's --bind through it: refused (125)" 125 "$rc"
	assert_match "and says why" "symbolic link to $h owned by uid [0-9]+" "$errout"
	assert_no_match "the agent saw nothing of the home" precious "$out"
	intact "the home's start-up file is untouched" "$h/bashrc"
	sr --net none --ro-bind "$s/cache/sub" /cache -- true
	assert_eq "a source beneath the link: refused too (125)" 125 "$rc"
}

# Another user's link, in that user's directory: not the caller's to follow.
t_link_of_another_user() {
	local h d="$SR_TMP/other-$SR_AS"
	h=$(victim_home other)
	mkdir -p "$d"
	chown "$OTHER:$OTHER" "$d"
	link_as other "$h" "$d/link"
	sr --net none --ro-bind "$d/link" /x -- cat /x/bashrc
	assert_eq "another user's link: refused (125)" 125 "$rc"
	assert_match "and says whose" "owned by uid $OTHER" "$errout"
	assert_no_match "nothing of the home is read" precious "$out"
}

# Root's links in root's directories, outside the agent's files, are the
# system's layout (/var/run -> /run): followed.
t_root_link_followed() {
	local d="$SR_TMP/system-$SR_AS"
	mkdir -p "$d/real"
	echo layout >"$d/real/file"
	chmod -R a+rX "$d"
	link_as root real "$d/link"
	sr --net none --ro-bind "$d/link" /x -- cat /x/file
	assert_eq "root's link in root's directory: followed" layout "$out"
	sr --net none --ro-bind "$d/link/file" /x -- cat /x
	assert_eq "also on the way to a file" layout "$out"
}

# The agent, --workspace DIR and deploy's AGENT are host paths the caller
# names too (outside review: root's `--workspace /tmp/x/uo/link`, a link
# another user made in a directory of theirs, gave the agent root's 0700
# directory): another user's link on their way is refused, as a bind's.
t_workspace_link_of_another_user() {
	local s="$SR_TMP/secret-$SR_AS" d="$SR_TMP/otherws-$SR_AS"
	mkdir -p "$s" "$d"
	printf 'topsecret\n' >"$s/key"
	printf '#!/bin/sh\ncat /workspace/key\n' >"$s/agent"
	chmod 0600 "$s/key"
	chmod 0755 "$s/agent"
	tar -C "$s" -cf "$s/a.tar" key agent
	own "$s"
	chmod 0700 "$s"
	chown "$OTHER:$OTHER" "$d"
	link_as other "$s" "$d/ws"
	link_as other "$s/a.tar" "$d/a.tar"
	link_as other "$s/agent" "$d/agent"
	sr --net none --workspace "$d/ws" -- cat /workspace/key
	assert_eq "--workspace through another user's link: refused (125)" 125 "$rc"
	assert_match "in a bind's words: whose link, and what to name instead" \
		"^sandbox-run: workspace $d/ws: $d/ws is a symbolic link to $s owned by uid $OTHER .*instead \($s\)" \
		"$errout"
	assert_no_match "nothing of the directory is read" topsecret "$out"
	sr --net none "$d/ws"
	assert_eq "an AGENT directory through it: refused (125)" 125 "$rc"
	assert_match "saying so" "^sandbox-run: agent $d/ws: .* owned by uid $OTHER" "$errout"
	assert_no_match "nothing of the directory is read" topsecret "$out"
	sr --net none "$d/a.tar"
	assert_eq "an AGENT archive through it: refused (125)" 125 "$rc"
	assert_no_match "nothing of the archive is read" topsecret "$out"
	sr --net none "$d/agent"
	assert_eq "an executable-file AGENT through it: refused (125)" 125 "$rc"
	sr deploy --name lk --net none "$d/ws"
	assert_eq "deploy AGENT through it: refused (125)" 125 "$rc"
	assert_match "saying so" "agent $d/ws: .* owned by uid $OTHER" "$errout"
	sr deployments
	assert_no_match "and nothing is deployed" lk "$out"
	sr --net none --workspace "$s" -- cat /workspace/key
	assert_eq "naming the directory itself works" topsecret "$out"
	sr deployments rm lk
}

for_each_user t_link_in_agent_dir t_link_left_by_agent t_link_of_another_user t_root_link_followed \
	t_workspace_link_of_another_user
done_testing
