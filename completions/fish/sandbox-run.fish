# SPDX-License-Identifier: MIT
# fish completion for sandbox-run: verbs, options, profile names, and the
# ids and names of your living sandboxes (from `sandbox-run ls`).

set -l verbs run create exec ls inspect timeout port rm cp snapshot snapshots diff apply doctor export deploy invoke \
    deployments secrets serve help

function __sandbox_run_profiles
    printf '%s\n' default offline tx e2b ci
    set -l conf $XDG_CONFIG_HOME
    test -n "$conf"; or set conf $HOME/.config
    for f in $conf/sandbox-run/profiles/*.ini /usr/share/sandbox-run/profiles/*.ini /usr/local/share/sandbox-run/profiles/*.ini
        basename $f .ini
    end
end

function __sandbox_run_snapshots
    sandbox-run snapshots 2>/dev/null | awk 'NR > 1 { print $1 }'
end

function __sandbox_run_deployments
    sandbox-run deployments 2>/dev/null | awk 'NR > 1 { print $1 }' | sort -u
end

function __sandbox_run_ids
    sandbox-run ls 2>/dev/null | awk 'NR > 1 { print $1; if ($2 != "-") print $2 }'
end

complete -c sandbox-run -f
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a run -d 'Run an agent or a command in a fresh sandbox'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a create -d 'Create a living sandbox'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a exec -d 'Run a command in a living sandbox'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a ls -d 'List your living sandboxes'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a inspect -d 'What a living sandbox is'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a timeout -d "Set a living sandbox's deadline"
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a port -d "Publish a living sandbox's port on 127.0.0.1"
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a rm -d 'End living sandboxes'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a cp -d 'Copy files into or out of a living sandbox'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a snapshot -d "Keep a living sandbox's files as a snapshot"
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a snapshots -d 'List or remove your snapshots'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a diff -d 'What a sandbox changed in /workspace'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a apply -d 'Make those changes in the host directory'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a doctor -d 'Can this host run sandboxes, and how well'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a help -d "The usage, or a verb's own --help"
complete -c sandbox-run -n '__fish_seen_subcommand_from help' -a "$verbs"
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a export -d 'The sandbox as an OCI bundle or Kubernetes objects'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a deploy -d 'Install an agent once as a deployment'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a invoke -d 'Run a deployment once, the prompt on stdin'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a deployments -d 'List, roll back or remove deployments'
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a secrets -d "Set, list or remove a deployment's secrets"
complete -c sandbox-run -n "not __fish_seen_subcommand_from $verbs" -a serve -d "The local HTTP API, E2B's protocols and warm pools"
complete -c sandbox-run -n "not __fish_seen_subcommand_from exec ls inspect timeout port rm cp snapshot snapshots doctor invoke deployments secrets serve help" -F

# run, create, export and deploy (and no verb): the run options.
set -l runlike "not __fish_seen_subcommand_from exec ls inspect timeout port rm cp snapshot snapshots diff apply doctor deployments secrets serve help"
complete -c sandbox-run -n $runlike -s p -l profile -x -a '(__sandbox_run_profiles)' -d 'Profile to start from'
complete -c sandbox-run -n $runlike -l memory -x -d 'Memory limit (512M, 2G, 0)'
complete -c sandbox-run -n $runlike -l cpus -x -d 'CPUs (0.5, 2)'
complete -c sandbox-run -n $runlike -l pids -x -d 'Process limit'
complete -c sandbox-run -n $runlike -l timeout -x -d 'Timeout (90s, 5m, 0)'
complete -c sandbox-run -n $runlike -l disk -x -d 'Disk limit'
complete -c sandbox-run -n $runlike -l net -x -a 'none egress' -d 'Network mode'
complete -c sandbox-run -n $runlike -l net-helper -x -a 'auto slirp4netns pasta' -d 'Egress helper'
complete -c sandbox-run -n $runlike -l allow -x -d 'Egress allowlist entry'
complete -c sandbox-run -n $runlike -l deny -x -d 'Refused destination'
complete -c sandbox-run -n $runlike -l allow-host -x -d 'Port of the host loopback, at 10.0.2.2'
complete -c sandbox-run -n $runlike -l env -x -d 'KEY=VALUE'
complete -c sandbox-run -n $runlike -l env-file -r -F -d 'KEY=VALUE file'
complete -c sandbox-run -n $runlike -l pass-env -x -a '(set -n)' -d 'Copy a variable'
complete -c sandbox-run -n $runlike -l ro-bind -r -F -d 'Read-only host path'
complete -c sandbox-run -n $runlike -l bind -r -F -d 'Writable host path'
complete -c sandbox-run -n $runlike -l workspace -r -a '(__fish_complete_directories)' -d 'Workspace directory'
complete -c sandbox-run -n $runlike -l entry -x -d 'Entry command'
complete -c sandbox-run -n $runlike -l result -r -F -d 'Write the result record'
complete -c sandbox-run -n $runlike -l disk-backing -x -a 'auto disk memory' -d 'Where its writes live'
complete -c sandbox-run -n $runlike -l export -x -d 'Copy PATH[:HOSTDIR] out when it ends'
complete -c sandbox-run -n $runlike -l changes -r -F -d 'Write what changed in /workspace'
complete -c sandbox-run -n $runlike -l strict -d 'Refuse limits that cannot be enforced'
complete -c sandbox-run -n $runlike -l print-config -d 'Print the effective configuration'
complete -c sandbox-run -n $runlike -s q -l quiet -d 'Fewer messages'
complete -c sandbox-run -n $runlike -s v -l verbose -d 'More messages'
complete -c sandbox-run -n $runlike -l version -d 'Print the version'
complete -c sandbox-run -s h -l help -d 'Print help'
complete -c sandbox-run -n '__fish_seen_subcommand_from create' -l name -x -d 'A name for it'
complete -c sandbox-run -n '__fish_seen_subcommand_from create' -l from -x -a '(__sandbox_run_snapshots)' -d 'Snapshot'
complete -c sandbox-run -n '__fish_seen_subcommand_from snapshots' -x -a 'rm (__sandbox_run_snapshots)'
complete -c sandbox-run -n '__fish_seen_subcommand_from invoke' -x -a '(__sandbox_run_deployments)'
complete -c sandbox-run -n '__fish_seen_subcommand_from deployments' -x -a 'rollback rm log (__sandbox_run_deployments)'
complete -c sandbox-run -n '__fish_seen_subcommand_from secrets' -x -a 'set ls rm (__sandbox_run_deployments)'
complete -c sandbox-run -n '__fish_seen_subcommand_from deploy export' -l name -x -d 'A name for it'
complete -c sandbox-run -n '__fish_seen_subcommand_from deploy' -l install -x -d 'The install step'
complete -c sandbox-run -n '__fish_seen_subcommand_from deploy' -l install-timeout -x -d 'How long it may take'
complete -c sandbox-run -n '__fish_seen_subcommand_from deploy' -l keep -x -d 'Versions kept'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l oci -r -a '(__fish_complete_directories)' -d 'Write an OCI bundle'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l k8s -d 'Print Kubernetes objects'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l image -x -d 'The image'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l namespace -x -d 'Their namespace'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l secret -x -d 'Variable from the Secret'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l secret-name -x -d 'The Secret'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l runtime-class -x -d 'Runtime class'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l seccomp-profile -r -F -d 'Write the seccomp profile'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l agent-sandbox -d 'agent-sandbox objects'
complete -c sandbox-run -n '__fish_seen_subcommand_from export' -l warm -x -d 'Warm pool size'

complete -c sandbox-run -n '__fish_seen_subcommand_from exec' -s i -l interactive -d 'Keep stdin open'
complete -c sandbox-run -n '__fish_seen_subcommand_from exec' -s t -l tty -d 'A terminal'
complete -c sandbox-run -n '__fish_seen_subcommand_from exec' -l env -x -d 'KEY=VALUE'
complete -c sandbox-run -n '__fish_seen_subcommand_from exec' -l workdir -x -d 'Working directory'
complete -c sandbox-run -n '__fish_seen_subcommand_from exec' -l timeout -x -d 'Timeout'
complete -c sandbox-run -n '__fish_seen_subcommand_from exec' -l result -r -F -d 'Result record'
complete -c sandbox-run -n '__fish_seen_subcommand_from exec inspect timeout port snapshot rm' -x -a '(__sandbox_run_ids)'
complete -c sandbox-run -n '__fish_seen_subcommand_from diff apply' -a '(__sandbox_run_ids)'
complete -c sandbox-run -n '__fish_seen_subcommand_from diff' -l stat -d 'Lines added and removed per file'
complete -c sandbox-run -n '__fish_seen_subcommand_from diff' -l patch -d 'A unified diff'
complete -c sandbox-run -n '__fish_seen_subcommand_from diff' -l json -d 'The changes as JSON'
complete -c sandbox-run -n '__fish_seen_subcommand_from apply' -l to -r -a '(__fish_complete_directories)' -d 'Another directory'
complete -c sandbox-run -n '__fish_seen_subcommand_from apply' -l force -d 'Apply over conflicts'
complete -c sandbox-run -n '__fish_seen_subcommand_from diff apply' -l idle-timeout -r -d 'Give up when nothing comes from the sandbox'
complete -c sandbox-run -n '__fish_seen_subcommand_from cp' -x -a '(__sandbox_run_ids | sed "s/\$/:/"; __fish_complete_path)'
complete -c sandbox-run -n '__fish_seen_subcommand_from cp' -l max-size -x -d 'Most written on the host'
complete -c sandbox-run -n '__fish_seen_subcommand_from cp' -l idle-timeout -x -d 'Give up when nothing moves'
complete -c sandbox-run -n '__fish_seen_subcommand_from snapshot' -l idle-timeout -x -d 'Give up when nothing is written'
complete -c sandbox-run -n '__fish_seen_subcommand_from rm' -s f -l force -d 'Kill at once'
complete -c sandbox-run -n '__fish_seen_subcommand_from ls doctor snapshots deployments secrets' -l json -d 'JSON output'

# serve: the local API.
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l listen -d 'unix:PATH or [ADDR:]PORT'
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -r -l token-file -d "The token's file"
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l warm -d 'N per deployment, PROFILE=N of a profile'
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l e2b-profile -a '(__sandbox_run_profiles)' -d "The profile of E2B's base template"
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l max-sandboxes -d 'Live sandboxes at most'
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l max-connections -d 'Connections at most'
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l max-processes -d 'Processes running at most'
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l client-timeout -d "A slow client's timeout"
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l idle-timeout -d "A stopped worker's timeout"
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l max-body -d 'JSON bodies at most'
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l max-upload -d 'Uploads at most'
complete -c sandbox-run -n '__fish_seen_subcommand_from serve' -x -l max-output -d 'Output kept at most'
