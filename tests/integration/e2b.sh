#!/usr/bin/env bash
# The official e2b SDK (npm) against `sandbox-run serve`, configured as its
# documentation allows for a self-hosted endpoint (E2B_API_URL,
# E2B_SANDBOX_URL, E2B_API_KEY): Sandbox.create, commands.run (buffered,
# streamed with onStdout, a failing one), files.write/read/list,
# setTimeout, getHost(port) reaching a server inside, kill. As root and
# as an unprivileged user.
#
# Needs node and npm, and the npm registry once: the package is installed
# into the build tree (tests/e2b-sdk) and kept there for the next runs.
. "$(dirname "$0")/libtest.sh"
. "$(dirname "$0")/libserve.sh"
. "$(dirname "$0")/libworker.sh"

E2B_VERSION=${SR_E2B_VERSION:-2}
cache="$(cd "$(dirname "$SR_BIN")/.." && pwd)/tests/e2b-sdk"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	skip "the e2b SDK against serve" "node and npm are not installed (Debian: apt-get install nodejs npm)"
	done_testing
	exit 0
fi
if [ ! -f "$cache/node_modules/e2b/package.json" ]; then
	mkdir -p "$cache"
	if ! npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "e2b@$E2B_VERSION" >"$SR_OUT/npm.log" 2>&1; then
		skip "the e2b SDK against serve" "npm install e2b@$E2B_VERSION failed (no registry?): $(tail -1 "$SR_OUT/npm.log")"
		done_testing
		exit 0
	fi
fi
# The user round reads it from the scratch directory.
cp -r "$cache/node_modules" "$SR_TMP/node_modules"
chmod -R a+rX "$SR_TMP/node_modules"
sdk_version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$SR_TMP/node_modules/e2b/package.json")

cat >"$SR_TMP/e2b-test.mjs" <<'EOF'
import { Sandbox, CommandExitError } from 'e2b'
import http from 'node:http'

const say = (k, v) => console.log(`${k}=${JSON.stringify(v)}`)
const opts = process.env.SR_NO_EGRESS ? { allowInternetAccess: false } : {}
// A value the SDK encodes three times over in a list's filter.
const tag = `${process.pid} &=%+`
const sbx = await Sandbox.create({ ...opts, timeoutMs: 120_000, metadata: { suite: 'e2b.sh', run: tag } })
say('id', sbx.sandboxId)
say('running', await sbx.isRunning())
const r = await sbx.commands.run('echo hello from e2b; echo to-stderr >&2')
say('stdout', r.stdout)
say('stderr', r.stderr)
say('exitCode', r.exitCode)
const chunks = []
const s = await sbx.commands.run('for i in 1 2 3; do echo chunk$i; sleep 0.2; done', {
  onStdout: (d) => chunks.push([d, Date.now()]),
})
say('chunks', chunks.map((c) => c[0]))
say('spread_ms', chunks[2][1] - chunks[0][1])
say('streamExit', s.exitCode)
try {
  await sbx.commands.run('echo failing >&2; exit 7')
  say('failed', 'no')
} catch (e) {
  say('failed', [e instanceof CommandExitError, e.exitCode, e.stderr, e.message])
}
const w = await sbx.files.write('notes/hello.txt', 'written by the SDK')
say('written', w.path)
say('read', await sbx.files.read('notes/hello.txt'))
say('list', (await sbx.files.list('notes')).map((e) => [e.name, e.type, e.size]))
// A file is not listed as a directory of one: InvalidArgumentError, as envd answers.
try {
  await sbx.files.list('notes/hello.txt')
  say('listFile', 'listed')
} catch (e) {
  say('listFile', e.name)
}
say('catByRun', (await sbx.commands.run('cat /home/user/notes/hello.txt')).stdout)
// envd's environment: the user it runs as; a cwd not there is the caller's mistake.
say('whoEnv', (await sbx.commands.run('echo "$USER $LOGNAME $HOME"')).stdout)
say('userOverride', (await sbx.commands.run('echo "$USER"', { envs: { USER: 'other' } })).stdout)
try {
  await sbx.commands.run('pwd', { cwd: '/no/such/dir' })
  say('missingCwd', 'ran')
} catch (e) {
  say('missingCwd', e.name)
}
// Compressed by the SDK (Content-Encoding: gzip): refused, not written as it came.
try {
  await sbx.files.write('zipped.txt', 'compressed by the SDK', { gzip: true })
  say('gzip', ['written', await sbx.files.read('zipped.txt')])
} catch (e) {
  say('gzip', [e.name, e.message.includes('Content-Encoding: gzip: not supported')])
}
say('gzipLeft', await sbx.files.exists('zipped.txt'))
// Many files in one request (one multipart body): written, each.
const many = Array.from({ length: 300 }, (_, i) => ({ path: `many/f${i}.txt`, data: `file ${i}` }))
say('manyWritten', (await sbx.files.write(many)).length)
say('manyInside', (await sbx.commands.run('ls many | wc -l; cat many/f299.txt')).stdout)
// One path twice in one request (the same file, however named): refused, 400 with envd's
// words; the first written, as envd writes it, the second not.
try {
  await sbx.files.write([{ path: 'twice.txt', data: 'first' }, { path: '/home/user/./twice.txt', data: 'second' }])
  say('twice', ['written', await sbx.files.read('twice.txt')])
} catch (e) {
  say('twice', [e.name, e.message.includes("cannot upload multiple files to the same path '/home/user/twice.txt'"),
    await sbx.files.read('twice.txt')])
}
// More than a request may hold: refused (413), nothing hangs, the sandbox goes on.
{
  const b = 'sr-boundary'
  let body = ''
  for (let i = 0; i <= 10000; i++)
    body += `--${b}\r\nContent-Disposition: form-data; name="file"; filename="over/f${i}"\r\n\r\nx\r\n`
  body += `--${b}--\r\n`
  const res = await fetch(`${process.env.E2B_SANDBOX_URL}/files?path=/home/user/over`, {
    method: 'POST',
    headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'X-API-Key': process.env.E2B_API_KEY,
      'Content-Type': `multipart/form-data; boundary=${b}` },
    body,
  })
  say('overStatus', [res.status, (await res.text()).includes('more than 10000 files')])
  say('afterOver', (await sbx.commands.run('echo alive')).stdout)
}
await sbx.setTimeout(300_000)
const info = await sbx.getInfo()
say('endsIn', Math.round((info.endAt - Date.now()) / 1000))
// A server inside, reached through getHost(port): PORT-ID.localhost:APIPORT.
await sbx.files.write('/tmp/site/index.html', 'hello from inside')
await sbx.commands.run('cd /tmp/site && python3 -m http.server 8321 >/dev/null 2>&1', { background: true })
const host = sbx.getHost(8321)
say('host', host)
const port = Number(host.split(':').pop())
let page = null
for (let i = 0; i < 100 && page === null; i++) {
  page = await new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/index.html', headers: { host } }, (res) => {
      let b = ''
      res.on('data', (d) => (b += d))
      res.on('end', () => resolve(res.statusCode === 200 ? b : null))
    }).on('error', () => resolve(null))
  })
  if (page === null) await new Promise((r) => setTimeout(r, 50))
}
say('page', page)
// Background commands: listed, and killed by pid.
const bg = await sbx.commands.run('sleep 600', { background: true })
say('listed', (await sbx.commands.list()).some((p) => p.pid === bg.pid && p.args.includes('sleep 600')))
say('bgKilled', await sbx.commands.kill(bg.pid))
say('bgEnd', await bg.wait().then(() => 'exit 0', (e) => [e.exitCode, e.message]))
// Go's names, not glibc's: "CPU time limit exceeded", and a number for a real-time signal.
for (const [k, sig] of [['sigXcpu', 'XCPU'], ['sigRt', '40']])
  say(k, await sbx.commands.run(`kill -${sig} $$`).then(() => 'exit 0', (e) => e.message))
let listed = 1
for (let i = 0; i < 100 && listed; i++) {
  listed = (await sbx.commands.list()).filter((p) => p.args.includes('sleep 600')).length
  if (listed) await new Promise((r) => setTimeout(r, 20))
}
say('listedAfter', listed)
say('makeDir', await sbx.files.makeDir('made/deeper'))
// There already: false, as envd's already_exists makes it; a file there: InvalidArgumentError.
say('makeDirAgain', [await sbx.files.makeDir('made/deeper'), await sbx.files.makeDir('made')])
try {
  await sbx.files.makeDir('notes/hello.txt')
  say('makeDirOnFile', 'made')
} catch (e) {
  say('makeDirOnFile', e.name)
}
// Through symbolic links, as envd's os.Stat(): to a directory, there already (false); to a
// file (a relative link), InvalidArgumentError; to nothing, envd's internal error, nothing made.
await sbx.commands.run('cd /home/user && ln -s /tmp dirlink && ln -s /no/such/place dangling && ln -s dangling chain && ln -s notes/hello.txt filelink && ln -s loop loop')
say('makeDirLinkDir', await sbx.files.makeDir('dirlink'))
for (const k of ['dangling', 'chain', 'filelink']) {
  try {
    say(k, ['made', await sbx.files.makeDir(k)])
  } catch (e) {
    say(k, [e.name, e.message.includes('no such file or directory')])
  }
}
try {
  say('loop', ['made', await sbx.files.makeDir('loop')])
} catch (e) {
  say('loop', [e.name, e.message.includes('too many levels of symbolic links')])
}
say('danglingLeft', (await sbx.commands.run('ls -d /no/such/place 2>&1 >/dev/null | wc -l; readlink /home/user/dangling')).stdout)
say('exists', [await sbx.files.exists('made/deeper'), await sbx.files.exists('nothing-here')])
await sbx.files.remove('made')
say('removed', await sbx.files.exists('made'))
// What is not there is removed already, as envd's os.RemoveAll() has it (its parent missing too).
try {
  await sbx.files.remove('made')
  await sbx.files.remove('nothing/here/either')
  say('removeMissing', 'no error')
} catch (e) {
  say('removeMissing', [e.name, e.message])
}
say('listedSandbox', (await Sandbox.list().nextItems()).some((x) => x.sandboxId === sbx.sandboxId))
// Filtered as E2B filters: by metadata (every pair), by state (none is paused).
const mine = (xs) => xs.some((x) => x.sandboxId === sbx.sandboxId)
const byMeta = await Sandbox.list({ query: { metadata: { suite: 'e2b.sh', run: tag } } }).nextItems()
say('listedByMetadata', [mine(byMeta), byMeta.every((x) => x.metadata.run === tag)])
const byOther = await Sandbox.list({ query: { metadata: { suite: 'e2b.sh', run: tag + '!' } } }).nextItems()
say('listedByOther', mine(byOther))
say('listedPaused', (await Sandbox.list({ query: { state: ['paused'] } }).nextItems()).length)
say('listedRunning', mine(await Sandbox.list({ query: { state: ['running', 'paused'] } }).nextItems()))
// Pages as E2B's: newest first, limit of them, then the next page (X-Next-Token).
{
  const newer = await Sandbox.create({ ...opts, timeoutMs: 60_000, metadata: { run: tag } })
  const pages = Sandbox.list({ query: { metadata: { run: tag } }, limit: 1 })
  const page = async () => !pages.hasNext ? 'no more' : [(await pages.nextItems()).map((x) => x.sandboxId === newer.sandboxId ? 'newer' : x.sandboxId === sbx.sandboxId ? 'first' : x.sandboxId), pages.hasNext]
  say('pages', [await page(), await page()])
  await newer.kill()
}
const again = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 20_000 })
say('connected', (await again.commands.run('cat /home/user/notes/hello.txt')).stdout)
// connect's timeout only extends (E2B's): the 300 s of setTimeout stay.
say('endsInAfterConnect', Math.round(((await sbx.getInfo()).endAt - Date.now()) / 1000))
// Paused at its timeout in E2B; here it would end, its work lost: refused, nothing made.
try {
  const p = await Sandbox.create({ ...opts, timeoutMs: 60_000, lifecycle: { onTimeout: 'pause' }, metadata: { suite: 'e2b.sh', run: tag + ' pause' } })
  say('autoPause', 'made')
  await p.kill()
} catch (e) {
  say('autoPause', e.message.includes('not supported'))
}
say('autoPauseLeft', (await Sandbox.list({ query: { metadata: { run: tag + ' pause' } } }).nextItems()).length)
try {
  await sbx.pause()
  say('pause', 'no error')
} catch (e) {
  say('pause', e.message.includes('not supported'))
}
say('killed', await sbx.kill())
say('killedAgain', await Sandbox.kill(sbx.sandboxId))
say('runningAfter', await sbx.isRunning().catch((e) => 'error: ' + e.message))
EOF
chmod a+r "$SR_TMP/e2b-test.mjs"

field() {
	sed -n "s/^$1=//p" <<<"$out"
}

# sdk_run [SERVE-ARG...] -- [VAR=VALUE...] SCRIPT: serve as the round's
# user on 127.0.0.1 (with SERVE-ARGs), and node SCRIPT (in $SR_TMP) as
# that user against it, configured as the SDK's documentation allows for
# a self-hosted endpoint, with VARs; its output in $out, its status in
# $rc. 1 (not_ok said) when serve did not start.
sdk_run() {
	local serve_args=() noegress=""
	while [ "$1" != -- ]; do
		serve_args+=("$1")
		shift
	done
	shift
	start_serve --listen 127.0.0.1:0 "${serve_args[@]}" || return 1
	have_egress || noegress=1
	out=$(cd "$SR_TMP" && as_user env E2B_API_URL="$URL" E2B_SANDBOX_URL="$URL" \
		E2B_API_KEY="$TOKEN" SR_NO_EGRESS="$noegress" "${@:1:$#-1}" \
		timeout 120 node "${!#}" 2>&1)
	rc=$?
}

# sdk_end: the script's last lines when it failed; serve stopped, and nothing left of it.
sdk_end() {
	if [ "$rc" != 0 ]; then sed 's/^/# /' <<<"$out" | tail -20; fi
	stop_serve
	assert_eq "serve ends, nothing left" "0 " "$serve_rc $(ls "$(state_dir)")"
}

t_sdk() {
	sdk_run -- e2b-test.mjs || return
	assert_eq "the script ran to its end (e2b $sdk_version)" 0 "$rc"
	assert_match "Sandbox.create: an id" '^"[0-9a-f]{32}"$' "$(field id)"
	assert_eq "isRunning" true "$(field running)"
	assert_eq "commands.run: stdout" '"hello from e2b\n"' "$(field stdout)"
	assert_eq "commands.run: stderr" '"to-stderr\n"' "$(field stderr)"
	assert_eq "commands.run: exitCode" 0 "$(field exitCode)"
	assert_eq "commands.run with onStdout: each chunk as it came" '["chunk1\n","chunk2\n","chunk3\n"]' "$(field chunks)"
	assert_match "streamed, not buffered: 0.4 s between the first and the last" '^([3-9][0-9]{2}|[12][0-9]{3})$' "$(field spread_ms)"
	assert_eq "a failing command: CommandExitError, its code, stderr and message (envd's)" '[true,7,"failing\n","exit status 7"]' "$(field failed)"
	assert_eq "files.write: relative to the home" '"/home/user/notes/hello.txt"' "$(field written)"
	assert_eq "files.read" '"written by the SDK"' "$(field read)"
	assert_eq "files.list: name, type, size" '[["hello.txt","file",18]]' "$(field list)"
	assert_eq "files.list of a file: InvalidArgumentError, as in E2B" '"InvalidArgumentError"' "$(field listFile)"
	assert_eq "what files.write wrote, commands see" '"written by the SDK"' "$(field catByRun)"
	assert_eq "commands have USER and LOGNAME, as envd sets them" '"user user /home/user\n"' "$(field whoEnv)"
	assert_eq "which envs replace" '"other\n"' "$(field userOverride)"
	assert_eq "a cwd that is not there: InvalidArgumentError, as envd's" '"InvalidArgumentError"' "$(field missingCwd)"
	assert_eq "files.write with gzip: refused, saying why" '["InvalidArgumentError",true]' "$(field gzip)"
	assert_eq "and nothing written" false "$(field gzipLeft)"
	assert_eq "files.write of 300 files in one request: all written" 300 "$(field manyWritten)"
	assert_eq "and all inside" '"300\nfile 299"' "$(field manyInside)"
	assert_eq "files.write naming one path twice: 400 as envd's, the first written" '["InvalidArgumentError",true,"first"]' "$(field twice)"
	assert_eq "a body of more than 10,000 files: 413, saying why" '[413,true]' "$(field overStatus)"
	assert_eq "and the sandbox goes on" '"alive\n"' "$(field afterOver)"
	assert_match "setTimeout: the new end" '^(29[0-9]|300)$' "$(field endsIn)"
	assert_match "getHost: PORT-ID.localhost:PORT" '^"8321-[0-9a-f]{32}\.localhost:[0-9]+"$' "$(field host)"
	assert_eq "and it reaches the server inside" '"hello from inside"' "$(field page)"
	assert_eq "commands.run in the background, then commands.list" true "$(field listed)"
	assert_eq "commands.kill(pid)" true "$(field bgKilled)"
	assert_eq "and its wait(): CommandExitError, -1, 'signal: killed' (envd's)" '[-1,"signal: killed"]' "$(field bgEnd)"
	assert_eq "a signal's name as Go has it" '"signal: CPU time limit exceeded"' "$(field sigXcpu)"
	assert_eq "a real-time signal's number, as Go says it" '"signal: signal 40"' "$(field sigRt)"
	assert_eq "and it is gone" 0 "$(field listedAfter)"
	assert_eq "files.makeDir" true "$(field makeDir)"
	assert_eq "files.makeDir of a directory there already: false, as in E2B" '[false,false]' "$(field makeDirAgain)"
	assert_eq "files.makeDir where a file is: InvalidArgumentError" '"InvalidArgumentError"' "$(field makeDirOnFile)"
	assert_eq "files.makeDir of a link to a directory: there already, false" false "$(field makeDirLinkDir)"
	assert_eq "files.makeDir of a link to nothing: envd's internal error (SandboxError)" '["SandboxError",true]' "$(field dangling)"
	assert_eq "files.makeDir of a link to itself: envd's internal error, too many levels" '["SandboxError",true]' "$(field loop)"
	assert_eq "and of a link to that link" '["SandboxError",true]' "$(field chain)"
	assert_eq "of a link to a file: InvalidArgumentError" '["InvalidArgumentError",false]' "$(field filelink)"
	assert_eq "and nothing made, the link left as it was" '"1\n/no/such/place\n"' "$(field danglingLeft)"
	assert_eq "files.exists" '[true,false]' "$(field exists)"
	assert_eq "files.remove" false "$(field removed)"
	assert_eq "files.remove of what is not there: no error, as in E2B" '"no error"' "$(field removeMissing)"
	assert_eq "Sandbox.list" true "$(field listedSandbox)"
	assert_eq "Sandbox.list by its metadata: it, and only what has that metadata" '[true,true]' "$(field listedByMetadata)"
	assert_eq "Sandbox.list by other metadata: not it" false "$(field listedByOther)"
	assert_eq "Sandbox.list of paused ones: none" 0 "$(field listedPaused)"
	assert_eq "Sandbox.list of running and paused ones: it" true "$(field listedRunning)"
	assert_eq "Sandbox.list with limit 1: the newer, then the first, then no more" \
		'[[["newer"],true],[["first"],false]]' "$(field pages)"
	assert_eq "Sandbox.connect, then a command" '"written by the SDK"' "$(field connected)"
	assert_match "connect with timeoutMs 20 s: the sandbox keeps its 300 s" '^(2[5-9][0-9]|300)$' "$(field endsInAfterConnect)"
	assert_eq "Sandbox.create with onTimeout 'pause': not supported, said at once" true "$(field autoPause)"
	assert_eq "and no sandbox made" 0 "$(field autoPauseLeft)"
	assert_eq "pause: not supported, said at once" true "$(field pause)"
	assert_eq "kill" true "$(field killed)"
	assert_eq "kill of one gone: false" false "$(field killedAgain)"
	assert_eq "isRunning after kill: false" false "$(field runningAfter)"
	sdk_end
}

# The SDK's calls whose worker in the sandbox the agent stops: files.write
# (envd's POST /files) and files.makeDir (MakeDir) hung for good. Now, with
# serve --idle-timeout 2s, they fail in seconds, as the SDK reads it: a
# SandboxError of 504 and a TimeoutError (Connect's deadline_exceeded).
cat >"$SR_TMP/e2b-stopped.mjs" <<'EOF'
import { Sandbox } from 'e2b'
import fs from 'node:fs'

const say = (k, v) => console.log(`${k}=${JSON.stringify(v)}`)
const opts = process.env.SR_NO_EGRESS ? { allowInternetAccess: false } : {}
const sbx = await Sandbox.create({ ...opts, timeoutMs: 120_000 })
await sbx.files.write('/tmp/stopper.py', fs.readFileSync(process.env.STOPPER, 'utf8'))
// The stopper (libworker.sh) in the background, until it says it is ready.
const stopper = async (mode) => {
  let out = ''
  let ready
  const started = new Promise((r) => (ready = r))
  const h = await sbx.commands.run(`python3 /tmp/stopper.py ${mode}`, {
    background: true,
    onStdout: (d) => {
      out += d
      if (out.includes('ready')) ready()
    },
  })
  await started
  return async () => {
    await h.wait().catch(() => {})
    return out.split('\n')[1]
  }
}
const attempt = async (name, f) => {
  const t0 = Date.now()
  try {
    await f()
    say(name, 'no error')
  } catch (e) {
    say(name, [e.name, e.message.includes('its worker is stopped or gone')])
  }
  say(name + 'Ms', Date.now() - t0)
}
let done = await stopper('stop')
// Large enough that the worker lives a while: the stopper, a loop over /proc, finds it.
await attempt('write', () => sbx.files.write('big', new Uint8Array(200_000_000)))
say('writeStopper', await done())
done = await stopper('all')
// 1,000 levels to make: its worker lives long enough for the stopper's loop to meet it.
await attempt('makeDir', () => sbx.files.makeDir('made' + '/d'.repeat(1000)))
say('makeDirStopper', (await done()).startsWith('stopped'))
say('after', (await sbx.commands.run('echo alive')).stdout)
await sbx.kill()
EOF
chmod a+r "$SR_TMP/e2b-stopped.mjs"

t_sdk_stopped() {
	sdk_run --idle-timeout 2s -- STOPPER="$SR_TMP/stopper.py" e2b-stopped.mjs || return
	assert_eq "the script ran to its end (e2b $sdk_version)" 0 "$rc"
	assert_eq "the agent stops files.write's worker" '"stopped a worker"' "$(field writeStopper)"
	assert_eq "files.write: a SandboxError (504), saying why" '["SandboxError",true]' "$(field write)"
	check "within seconds of --idle-timeout ($(field writeMs) ms)" test "$(field writeMs)" -lt 15000
	assert_eq "the agent stops files.makeDir's worker" true "$(field makeDirStopper)"
	assert_eq "files.makeDir: a TimeoutError (deadline_exceeded), saying why" \
		'["TimeoutError",true]' "$(field makeDir)"
	check "within seconds of --idle-timeout ($(field makeDirMs) ms)" test "$(field makeDirMs)" -lt 15000
	assert_eq "and the sandbox goes on" '"alive\n"' "$(field after)"
	sdk_end
}

for_each_user t_sdk t_sdk_stopped
done_testing
