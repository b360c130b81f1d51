#!/usr/bin/env bash
# Shell completion (completions/): bash's, driven as bash drives it
# (COMP_WORDS, COMP_CWORD, then COMPREPLY), for verbs, options, profile
# names and the ids and names of living sandboxes; zsh's and fish's are
# parsed by their shells where installed (CI's packaging stage installs
# both).
. "$(dirname "$0")/libtest.sh"

# A copy the round's user may read: a clone made with mktemp -d is root's alone.
COMP="$SR_TMP/completions"
cp -r "$SR_SRCDIR/completions" "$COMP" && chmod -R a+rX "$COMP"

# complete WORD...: what bash completion offers for the last word, one per
# line, sorted; sandbox-run is found on PATH as the binary under test, and
# the current directory is an empty one (a word may complete to a file).
complete_words() {
	(cd "$SR_TMP/cwd" && as_user env PATH="$SR_TMP/bin:$PATH" XDG_CONFIG_HOME="$SR_TMP/xdg-$SR_AS" \
		bash --norc --noprofile -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_sandbox_run
		printf "%s\n" "${COMPREPLY[@]}" | sort -u' _ "$COMP/bash/sandbox-run" sandbox-run "$@")
}

# has_line TEXT LINE: TEXT has LINE as one of its lines.
has_line() { grep -qxF -- "$2" <<<"$1"; }

# Every verb of the binary: the verb table in main.c, so that a new verb
# without completions fails here.
VERBS=$(sed -n 's/^[[:space:]]*{"\([a-z-]*\)", sr_verb_[a-z_]*},.*/\1/p' "$SR_SRCDIR/src/cli/main.c")

mkdir -p "$SR_TMP/bin" "$SR_TMP/cwd"
ln -sf "$SR" "$SR_TMP/bin/sandbox-run"

t_verbs() {
	local got
	got=$(complete_words "")
	for v in $VERBS; do
		check "bash: '$v' is offered as a verb" has_line "$got" "$v"
	done
	assert_eq "bash: 'do' completes to doctor" doctor "$(complete_words do)"
	assert_eq "bash: 'exe' completes to exec" exec "$(complete_words exe)"
	assert_eq "bash: 'de' to the deploy verbs" "deploy
deployments" "$(complete_words de)"
}

t_options() {
	assert_match "bash: run options" "--memory" "$(complete_words run --me)"
	assert_match "bash: options without a verb" "--net-helper" "$(complete_words --net)"
	assert_eq "bash: --net's modes" "egress
none" "$(complete_words --net "")"
	assert_eq "bash: doctor's options" "--json" "$(complete_words doctor --j)"
	assert_match "bash: exec's options" "--workdir" "$(complete_words exec --w)"
	assert_match "bash: create has --name" "--name" "$(complete_words create --na)"
	assert_eq "bash: cp's options" "--idle-timeout" "$(complete_words cp --id)"
	assert_eq "bash: --disk-backing's kinds" "auto
disk
memory" "$(complete_words --disk-backing "")"
	assert_match "bash: run has --export" "--export" "$(complete_words run --exp)"
	assert_eq "bash: diff's options" "--patch" "$(complete_words diff --pa)"
	assert_eq "bash: apply's options" "--force" "$(complete_words apply --fo)"
	assert_eq "bash: export's options" "--oci" "$(complete_words export --oc)"
	assert_eq "bash: snapshots' action" "rm" "$(complete_words snapshots "")"
	assert_eq "bash: secrets' actions" "ls
rm
set" "$(complete_words secrets "")"
	assert_match "bash: deploy's options" "--install-timeout" "$(complete_words deploy --inst)"
}

t_profiles() {
	local got
	mkdir -p "$SR_TMP/xdg-$SR_AS/sandbox-run/profiles"
	echo "[limits]" >"$SR_TMP/xdg-$SR_AS/sandbox-run/profiles/mine.ini"
	own "$SR_TMP/xdg-$SR_AS"
	got=$(complete_words -p "")
	for p in default offline tx e2b ci mine; do
		check "bash: profile '$p' is offered after -p" has_line "$got" "$p"
	done
	assert_eq "bash: --profile of" offline "$(complete_words --profile of)"
}

t_ids() {
	local id got
	sr create --net none --name "compl-$SR_AS"
	if [ "$rc" != 0 ]; then
		not_ok "create a living sandbox to complete"
		return
	fi
	id=$out
	got=$(complete_words exec "")
	check "bash: exec offers the sandbox's id" has_line "$got" "${id:0:12}"
	check "bash: exec offers its name" has_line "$got" "compl-$SR_AS"
	assert_match "bash: rm offers it too" "compl-$SR_AS" "$(complete_words rm -f "")"
	assert_match "bash: cp offers ID: for the sandbox's side" "compl-$SR_AS:" "$(complete_words cp "")"
	assert_eq "bash: inspect's prefix completes" "compl-$SR_AS" "$(complete_words inspect compl-)"
	sr rm -f "$id"
	assert_eq "bash: gone from the completion once removed" "" "$(complete_words rm compl-)"
}

check "the verb table is read (run, exec, export among $(wc -w <<<"$VERBS"))" \
	test "$(grep -cxE 'run|exec|export' <<<"$VERBS")" = 3
check "bash parses the bash completion" bash -n "$COMP/bash/sandbox-run"
for_each_user t_verbs t_options t_profiles t_ids

if command -v zsh >/dev/null; then
	check "zsh parses the zsh completion" zsh -n "$COMP/zsh/_sandbox-run"
fi
# zsh's: each verb described, and among the words taken as the verb (the
# case pattern before "verb=$words[i]", over however many lines).
zsh_verbs=$(sed -n '/^    run|create|/,/) verb=\$words\[i\]/p' "$COMP/zsh/_sandbox-run" |
	tr -d ' \\\n' | sed 's/).*//' | tr '|' '\n')
for v in $VERBS; do
	check "zsh: '$v' is described" grep -q "^  '$v:" "$COMP/zsh/_sandbox-run"
	check "zsh: '$v' is recognised" has_line "$zsh_verbs" "$v"
done
if command -v fish >/dev/null; then
	check "fish parses the fish completion" fish --no-execute "$COMP/fish/sandbox-run.fish"
	fish_complete() {
		(cd "$SR_TMP/cwd" && PATH="$SR_TMP/bin:$PATH" fish -c 'source $argv[1]; complete -C"$argv[2]"' \
			"$COMP/fish/sandbox-run.fish" "$1" | cut -f1)
	}
	got=$(fish_complete 'sandbox-run ')
	for v in $VERBS; do
		check "fish: '$v' is offered as a verb" has_line "$got" "$v"
	done
	assert_eq "fish: 'do' completes to doctor" doctor "$(fish_complete 'sandbox-run do')"
	assert_eq "fish: export's --oci" --oci "$(fish_complete 'sandbox-run export --oc')"
	assert_eq "fish: --net's modes" "egress
none" "$(fish_complete 'sandbox-run --net ')"
	assert_eq "fish: doctor's --json" --json "$(fish_complete 'sandbox-run doctor --j')"
	assert_eq "fish: cp's --max-size" --max-size "$(fish_complete 'sandbox-run cp --max')"
	assert_eq "fish: diff's --stat" --stat "$(fish_complete 'sandbox-run diff --st')"
	assert_eq "fish: --disk-backing's kinds" "auto
disk
memory" "$(fish_complete 'sandbox-run --disk-backing ')"
fi
done_testing
