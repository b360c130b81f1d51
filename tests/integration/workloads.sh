#!/usr/bin/env bash
# What agents run, under the syscall filter (src/gen/seccomp-rules.c) and
# the rest of the sandbox: the example agents, Node, Python, npm install,
# git and gcc must work unchanged. Offline (--net none), as root and as
# an unprivileged caller. A refused call shows in the failure output as
# the tool's own error: "Operation not permitted" (EPERM) or "Function
# not implemented" (ENOSYS).
. "$(dirname "$0")/libtest.sh"

mkdir -p "$SR_TMP/examples"
cp -r "$SR_SRCDIR/examples/." "$SR_TMP/examples/"
chmod -R a+rX "$SR_TMP/examples"

# need CASE TOOL...: false (and a skip) when the host lacks a tool;
# tools/bootstrap installs every one.
need() {
	local what=$1 t
	shift
	for t in "$@"; do
		if ! command -v "$t" >/dev/null; then
			skip "$what" "$t is not installed (tools/bootstrap installs it)"
			return 1
		fi
	done
}

# agent_dir NAME: a fresh directory agent of the round's user; files are
# written into it before `own`.
agent_dir() {
	local d="$SR_TMP/agents/$SR_AS-$1"
	rm -rf "$d"
	mkdir -p "$d"
	echo "$d"
}

t_examples() {
	echo "one two three" >"$SR_TMP/prompt"
	SR_STDIN="$SR_TMP/prompt" sr --net none "$SR_TMP/examples/echo-agent"
	assert_eq "examples/echo-agent" "You said: one two three" "$out"
	SR_STDIN="$SR_TMP/prompt" sr --net none "$SR_TMP/examples/node-agent"
	assert_match "examples/node-agent" '"answer":"I read 3 word\(s\). Reversed: three two one"' "$out"
	SR_STDIN="$SR_TMP/prompt" sr --net none "$SR_TMP/examples/python-agent"
	assert_match "examples/python-agent" '"answer": "ONE TWO THREE"' "$out"
}

t_node() {
	local d
	need "Node.js" node || return
	d=$(agent_dir node)
	# Files, processes, threads, a server on lo, watchers, crypto, DNS.
	cat >"$d/index.js" <<'EOF'
'use strict';
const fs = require('fs'), cp = require('child_process'), os = require('os');
const http = require('http'), zlib = require('zlib'), crypto = require('crypto');
const dns = require('dns'), { Worker } = require('worker_threads');
fs.writeFileSync('a.txt', 'x'.repeat(100000));
fs.copyFileSync('a.txt', 'b.txt');
fs.renameSync('b.txt', 'c.txt');
fs.cpSync('.', '/tmp/copy', { recursive: true });
fs.watch('.').close();
if (cp.execSync('echo child').toString() !== 'child\n') throw new Error('execSync');
if (cp.spawnSync('sh', ['-c', 'exit 4']).status !== 4) throw new Error('spawnSync');
os.cpus(); os.networkInterfaces(); os.totalmem();
crypto.createHash('sha256').update(crypto.randomBytes(64)).digest('hex');
zlib.gunzipSync(zlib.gzipSync(fs.readFileSync('a.txt')));
fs.writeFileSync('/tmp/child.js', 'process.on("message", (m) => { process.send(m); process.exit(0); });');
const child = cp.fork('/tmp/child.js');
child.on('message', () => {
  new Worker('require("worker_threads").parentPort.postMessage(6 * 7)', { eval: true })
    .on('message', () => {
      const server = http.createServer((req, res) => res.end('pong')).listen(0, '127.0.0.1', () => {
        http.get({ host: '127.0.0.1', port: server.address().port }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => {
            server.close();
            dns.lookup('localhost', (err) => {
              if (err || body !== 'pong') throw err || new Error(body);
              fs.promises.readFile('c.txt').then(() => console.log('node: ok'));
            });
          });
        });
      });
    });
});
child.send('ping');
EOF
	echo '{"name": "check", "version": "1.0.0", "main": "index.js"}' >"$d/package.json"
	own "$d"
	sr --net none "$d"
	assert_eq "Node.js: files, child_process (exec, spawn, fork), a worker, http on lo, zlib, crypto, dns" \
		"node: ok" "$out"
}

t_python() {
	local d
	need "Python" python3 || return
	d=$(agent_dir python)
	cat >"$d/main.py" <<'EOF'
import asyncio, hashlib, json, multiprocessing, os, shutil, signal, socket
import sqlite3, ssl, subprocess, sys, tempfile, threading, uuid, zipfile


def square(x):
    return x * x


async def net():
    proc = await asyncio.create_subprocess_exec("true")
    await proc.wait()
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
    writer.close()
    server.close()


if __name__ == "__main__":
    subprocess.run(["true"], check=True)
    assert subprocess.check_output("echo hi", shell=True) == b"hi\n"
    t = threading.Thread(target=print, args=("thread",))
    t.start()
    t.join()
    for method in ("fork", "spawn", "forkserver"):
        with multiprocessing.get_context(method).Pool(2) as pool:
            assert pool.map(square, [1, 2, 3]) == [1, 4, 9], method
    asyncio.run(net())
    db = sqlite3.connect("db.sqlite")
    db.execute("create table t(x)")
    db.execute("insert into t values (1)")
    db.commit()
    d = tempfile.mkdtemp()
    shutil.copy("main.py", d)
    shutil.copytree(d, d + "-copy")
    shutil.rmtree(d)
    with zipfile.ZipFile("z.zip", "w") as z:
        z.writestr("a", "b")
    signal.signal(signal.SIGUSR1, lambda *a: None)
    os.kill(os.getpid(), signal.SIGUSR1)
    ssl.create_default_context()
    socket.getaddrinfo("localhost", 80)
    uuid.uuid4()
    hashlib.sha256(b"x").hexdigest()
    os.sched_getaffinity(0)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "/tmp/venv"], check=True)
    subprocess.run(["/tmp/venv/bin/python", "-c", "import sys; assert sys.prefix == '/tmp/venv'"], check=True)
    print("python: ok")
EOF
	own "$d"
	sr --net none "$d"
	assert_eq "Python: subprocess, threads, multiprocessing (fork, spawn, forkserver), asyncio, sqlite3, venv" \
		"$(printf 'thread\npython: ok')" "$out"
}

t_npm() {
	local d
	need "npm install" node npm || return
	d=$(agent_dir npm)
	# A package packed to a tarball (npm pack) and one by directory: no registry.
	mkdir -p "$d/dep-tgz" "$d/dep-dir" "$d/app"
	echo '{"name": "dep-tgz", "version": "1.0.0", "main": "index.js"}' >"$d/dep-tgz/package.json"
	echo 'module.exports = 6 * 7;' >"$d/dep-tgz/index.js"
	echo '{"name": "dep-dir", "version": "2.0.0", "main": "index.js"}' >"$d/dep-dir/package.json"
	echo 'module.exports = "dir";' >"$d/dep-dir/index.js"
	cat >"$d/app/package.json" <<'EOF'
{"name": "app", "version": "1.0.0", "private": true, "scripts": {"start": "node show.js"}}
EOF
	echo 'console.log(require("dep-tgz"), require("dep-dir"));' >"$d/app/show.js"
	cat >"$d/agent" <<'EOF'
#!/bin/sh
set -e
npm_flags="--offline --no-audit --no-fund --loglevel=error"
cd dep-tgz
npm pack --silent --pack-destination /tmp >/dev/null
cd ../app
npm install $npm_flags /tmp/dep-tgz-1.0.0.tgz >/dev/null
npm install $npm_flags ../dep-dir >/dev/null
npm run --silent start
npm ls --parseable | wc -l
EOF
	chmod 0755 "$d/agent"
	own "$d"
	sr --net none "$d"
	assert_eq "npm pack, npm install of a tarball and of a directory, npm run, npm ls (offline)" \
		"$(printf '42 dir\n3')" "$out"
}

t_git() {
	local d
	need "git" git || return
	d=$(agent_dir git)
	cat >"$d/agent" <<'EOF'
#!/bin/sh
set -e
cd /tmp
git init -q -b main repo
cd repo
git config user.email agent@sandbox
git config user.name agent
echo one >file
git add file
git commit -qm one
echo two >>file
git diff --stat | tail -1
git commit -qam two
git checkout -qb topic
git log --oneline | wc -l
git status --porcelain | wc -l
git gc -q
git clone -q /tmp/repo /tmp/clone
git -C /tmp/clone log -1 --format=%s
EOF
	chmod 0755 "$d/agent"
	own "$d"
	sr --net none "$d"
	assert_eq "git: init, commit, diff, log, branch, status, gc, clone" \
		"$(printf ' 1 file changed, 1 insertion(+)\n2\n0\ntwo')" "$out"
}

t_gcc() {
	local d
	need "gcc" gcc || return
	d=$(agent_dir gcc)
	# The host's read-only /usr has the compiler; objects and binary go to /tmp.
	cat >"$d/hello.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void *twice(void *arg)
{
	*(int *)arg *= 2;
	return arg;
}

int main(void)
{
	int n = 21, status;
	pthread_t t;
	pid_t pid;

	pthread_create(&t, NULL, twice, &n);
	pthread_join(t, NULL);
	pid = fork();
	if (pid == 0)
		execlp("true", "true", (char *)NULL), _exit(127);
	waitpid(pid, &status, 0);
	printf("c: %d %d\n", n, WEXITSTATUS(status));
	return 0;
}
EOF
	own "$d"
	sr --net none --workspace "$d" -- sh -c 'gcc -O2 -Wall -pthread -o /tmp/hello hello.c && /tmp/hello && make -s -f /dev/null --eval="all: ; @echo make: ok"'
	assert_eq "gcc: compile, link and run a threaded C program; make" "$(printf 'c: 42 0\nmake: ok')" "$out"
}

t_shell() {
	sr --net none -- sh -c 'set -e
mkdir -p d/e; echo x >d/e/f; cp -a d d2; ln -s d2 l; ls -l l/ >/dev/null
tar czf /tmp/t.tgz d; tar xzf /tmp/t.tgz -C d2; xz -k d/e/f; find . -name f | sort | wc -l
touch -d @0 d/e/f; chmod 600 d/e/f; mkfifo p; rm p; flock /tmp/lock true
ps ax >/dev/null; df / >/dev/null; du -s . >/dev/null; sleep 0.01; timeout 5 true
bash -c "sleep 0 & wait; read -t 0.01 x </dev/null || true"; echo shell: ok'
	assert_eq "shell tools: coreutils, tar, xz, find, ps, flock, mkfifo, bash job control" \
		"$(printf '3\nshell: ok')" "$out"
}

for_each_user t_examples t_node t_python t_npm t_git t_gcc t_shell
done_testing
