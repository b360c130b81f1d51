#!/usr/bin/env bash
# Deployments against a hostile agent (the outside review of deploy,
# invoke and secrets): the code deployed, its install scripts and what
# they print are the attacker's; another deployment of the same user, with
# its own secrets, is the target. As root and as an unprivileged user.
. "$(dirname "$0")/../integration/libtest.sh"

data_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/data-user"; else echo "$SANDBOX_RUN_DATA_DIR"; fi
}

# An install script of one deployment (a malicious package's postinstall)
# writes into the package cache; another deployment's install takes it
# from there (npm install without a lock file, pip's HTTP and wheel
# caches trust what they find), and that deployment's invocations run it
# with their own secrets. Each deployment has a cache of its own.
t_cache_per_deployment() {
	local d
	d=$(make_agent "cache-$SR_AS" 'echo hi')
	sr deploy --name evil --net none \
		--install 'mkdir -p /home/user/.cache/pip && echo POISON >/home/user/.cache/pip/planted' "$d"
	assert_eq "the attacker's deploy works" 0 "$rc"
	sr deploy --name victim --net none \
		--install 'cat /home/user/.cache/pip/planted 2>/dev/null >found; true' "$d"
	assert_eq "the victim's deploy works" 0 "$rc"
	assert_eq "the victim's install does not see what another deployment's install cached" "" \
		"$(cat "$(data_dir)/deployments/victim/versions/1/app/found" 2>/dev/null)"
	sr deploy --name evil --net none \
		--install 'cat /home/user/.cache/pip/planted >found' "$d"
	assert_eq "a redeploy of the same deployment finds its own cache" POISON \
		"$(cat "$(data_dir)/deployments/evil/versions/2/app/found" 2>/dev/null)"
	sr deployments rm evil victim
	check "deployments rm takes the deployment's cache along" \
		test ! -e "$(data_dir)/deployments/evil"
}

for_each_user t_cache_per_deployment
done_testing
