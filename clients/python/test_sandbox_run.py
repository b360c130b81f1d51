"""Tests of sandbox_run.py against a running `sandbox-run serve` (tests/integration/python-client.sh
starts one and says where in $SANDBOX_RUN_URL, with $SANDBOX_RUN_TOKEN_FILE on TCP)."""

import asyncio
import time
import unittest
import urllib.request

from sandbox_run import Client, SandboxRunError, SandboxRunSandbox


def ids():
    with Client() as c:
        return {s["id"] for s in c.request("GET", "/v1/sandboxes")["sandboxes"]}


class ProviderTest(unittest.IsolatedAsyncioTestCase):
    async def test_lifecycle(self):
        sandbox = SandboxRunSandbox()
        sandbox_id = await sandbox.create(template="offline", timeout=600)
        self.assertRegex(sandbox_id, "^[0-9a-f]{32}$")
        self.assertIn(sandbox_id, ids())
        r = await sandbox.run_command("echo hello; echo oops >&2; exit 3")
        self.assertEqual((r.exit_code, r.stdout, r.stderr, r.status), (3, "hello\n", "oops\n", "exited"))
        r = await sandbox.run_command(["sh", "-c", 'echo "$GREETING $(pwd)"; cat'], env={"GREETING": "hi"},
                                      cwd="/tmp", stdin="in")
        self.assertEqual(r.stdout, "hi /tmp\nin")
        r = await sandbox.run_command("sleep 10", timeout=0.5)
        self.assertEqual((r.exit_code, r.status), (124, "timeout"))
        r = await sandbox.run_command(["no-such-command"])
        self.assertEqual(r.exit_code, 127)
        self.assertIn("no-such-command", r.error)
        expires = await sandbox.set_timeout(1200)
        self.assertTrue(expires)
        await sandbox.delete()
        self.assertNotIn(sandbox_id, ids())
        await sandbox.delete()  # gone already: fine
        sandbox.client.close()

    async def test_files(self):
        async with SandboxRunSandbox(template="offline") as sandbox:
            info = await sandbox.write_file("/workspace/data/out.txt", "Hello!")
            self.assertEqual(info["size"], 6)
            self.assertEqual(await sandbox.read_file("/workspace/data/out.txt"), "Hello!")
            blob = bytes(range(256)) * 1000
            await sandbox.write_file("data/blob.bin", blob)
            self.assertEqual(await sandbox.read_file("data/blob.bin", binary=True), blob)
            entries = {e["name"]: e for e in await sandbox.list_files("/workspace/data")}
            self.assertEqual(sorted(entries), ["blob.bin", "out.txt"])
            self.assertEqual((entries["blob.bin"]["type"], entries["blob.bin"]["size"]), ("file", 256000))
            r = await sandbox.run_command("cat data/out.txt")
            self.assertEqual(r.stdout, "Hello!")
            await sandbox.delete_file("data")
            with self.assertRaises(SandboxRunError) as e:
                await sandbox.read_file("data/out.txt")
            self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))

    async def test_async_with_deletes(self):
        async with SandboxRunSandbox(template="offline") as sandbox:
            sandbox_id = sandbox.sandbox_id
            self.assertIn(sandbox_id, ids())
        self.assertNotIn(sandbox_id, ids())
        # Also when the block raises.
        with self.assertRaises(RuntimeError):
            async with SandboxRunSandbox(template="offline") as sandbox:
                sandbox_id = sandbox.sandbox_id
                raise RuntimeError("boom")
        self.assertNotIn(sandbox_id, ids())

    async def test_preview_url(self):
        async with SandboxRunSandbox(template="offline") as sandbox:
            await sandbox.write_file("/tmp/site/index.html", "served from the sandbox\n")
            await sandbox.run_command("cd /tmp/site && (python3 -m http.server 8765 >/dev/null 2>&1 &)")
            url = await sandbox.get_preview_url(8765)
            self.assertRegex(url, r"^http://127\.0\.0\.1:\d+$")
            body = None
            for _ in range(100):
                try:
                    body = urllib.request.urlopen(url + "/index.html", timeout=5).read()
                    break
                except OSError:
                    time.sleep(0.05)
            self.assertEqual(body, b"served from the sandbox\n")

    async def test_concurrent_commands(self):
        async with SandboxRunSandbox(template="offline") as sandbox:
            results = await asyncio.gather(*(sandbox.run_command("echo %d" % i) for i in range(8)))
            self.assertEqual([r.stdout for r in results], ["%d\n" % i for i in range(8)])

    async def test_stream_and_snapshot(self):
        async with SandboxRunSandbox(template="offline") as sandbox:
            events = list(sandbox.stream_command("echo a; echo b >&2"))
            self.assertEqual([e["type"] for e in events][0], "start")
            self.assertEqual(events[-1]["type"], "exit")
            self.assertIn({"type": "stdout", "data": "a\n"}, events)
            await sandbox.write_file("kept.txt", "kept")
            name = "py-%d" % time.monotonic_ns()
            meta = await sandbox.snapshot(name)
            self.assertEqual(meta["name"], name)
        async with SandboxRunSandbox(template="offline", from_=name) as copy:
            self.assertEqual(await copy.read_file("kept.txt"), "kept")
        with Client() as c:
            c.request("DELETE", "/v1/snapshots/" + name)

    async def test_errors(self):
        sandbox = SandboxRunSandbox()
        with self.assertRaises(SandboxRunError) as e:
            await sandbox.create(template="offline", memory="lots")
        self.assertEqual(e.exception.status, 400)
        self.assertIn("memory: 'lots' is not a size", e.exception.message)
        sandbox.sandbox_id = "0000dead"
        with self.assertRaises(SandboxRunError) as e:
            await sandbox.run_command("true")
        self.assertEqual((e.exception.status, e.exception.code), (404, "not_found"))
        self.assertIn("exec: no sandbox '0000dead'", e.exception.message)
        sandbox.client.close()


if __name__ == "__main__":
    unittest.main()
