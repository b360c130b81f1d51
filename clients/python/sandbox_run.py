"""A client of `sandbox-run serve` (docs/api.md), standard library only.

Shaped like the agents backend's sandbox providers (E2B, Daytona), so that
sandbox-run is one more provider beside them::

    from sandbox_run import SandboxRunSandbox

    sandbox = SandboxRunSandbox()                       # serve's Unix socket
    sandbox_id = await sandbox.create(template="default", timeout=3600)
    result = await sandbox.run_command("pip install pandas")
    content = await sandbox.read_file("/workspace/data.csv")
    await sandbox.write_file("/workspace/output.txt", "Hello!")
    url = await sandbox.get_preview_url(port=8000)
    await sandbox.delete()

or, deleted however the block ends::

    async with SandboxRunSandbox(template="offline") as sandbox:
        print((await sandbox.run_command("echo hi")).stdout)

Where serve is: ``url`` (``unix:/path`` or ``http://127.0.0.1:PORT``) and
``token`` (or ``token_file``) given, else $SANDBOX_RUN_URL and
$SANDBOX_RUN_TOKEN / $SANDBOX_RUN_TOKEN_FILE, else the Unix socket serve
listens on by default (``serve.sock`` in the state directory).

The HTTP calls block; the provider's coroutines run them in a worker
thread (asyncio.to_thread), so an event loop is never held up. ``Client``
is the blocking layer, for code without asyncio.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional

__all__ = ["Client", "CommandResult", "SandboxRunError", "SandboxRunSandbox", "default_url"]


class SandboxRunError(Exception):
    """An error answered by serve: ``code`` ("not_found", ...), the HTTP status, the message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass
class CommandResult:
    exit_code: int
    stdout: str
    stderr: str
    status: str = "exited"
    wall_ms: float = 0.0
    error: Optional[str] = None
    record: Dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def _state_dir() -> str:
    over = os.environ.get("SANDBOX_RUN_STATE_DIR")
    if over:
        return over
    if os.geteuid() == 0:
        return "/run/sandbox-run"
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "sandbox-run")
    return "/tmp/sandbox-run-%d" % os.getuid()


def default_url() -> str:
    """$SANDBOX_RUN_URL, else serve's default Unix socket."""
    return os.environ.get("SANDBOX_RUN_URL") or "unix:" + os.path.join(_state_dir(), "serve.sock")


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: Optional[float]):
        super().__init__("sandbox-run", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


class Client:
    """The API's resources, blocking. Keep-alive connections, one per call at a time:
    calls from several threads (the provider's coroutines) each get their own."""

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        token_file: Optional[str] = None,
        timeout: Optional[float] = 300.0,
    ):
        self.url = url or default_url()
        if token is None:
            token = os.environ.get("SANDBOX_RUN_TOKEN")
        token_file = token_file or os.environ.get("SANDBOX_RUN_TOKEN_FILE")
        if token is None and token_file:
            with open(token_file) as f:
                token = f.read().strip()
        self.token = token
        self.timeout = timeout
        self._idle: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def _new_connection(self) -> http.client.HTTPConnection:
        if self.url.startswith("unix:"):
            return _UnixConnection(self.url[5:], self.timeout)
        u = urllib.parse.urlsplit(self.url)
        return http.client.HTTPConnection(u.hostname, u.port or 80, timeout=self.timeout)

    def _take(self) -> http.client.HTTPConnection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._new_connection()

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Dict[str, str]] = None,
        raw: bool = False,
    ) -> Any:
        """One request: the answer's JSON (or bytes with raw); an error answered raises."""
        if query:
            path += "?" + urllib.parse.urlencode(query)
        headers = {}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        data = None
        if isinstance(body, (bytes, bytearray)):
            data = bytes(body)
            headers["Content-Type"] = "application/octet-stream"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):
            conn = self._take()
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                payload = resp.read()
                self._give_back(conn)
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A kept-alive connection the server closed meanwhile: once more, on a new one.
                conn.close()
                if attempt:
                    raise
            except BaseException:
                conn.close()
                raise
        if resp.status >= 400:
            try:
                err = json.loads(payload)
                raise SandboxRunError(resp.status, str(err.get("code")), err.get("message", ""))
            except (ValueError, AttributeError):
                raise SandboxRunError(resp.status, "http_%d" % resp.status, payload.decode(errors="replace"))
        if raw:
            return payload
        return json.loads(payload) if payload else None

    def stream(self, path: str, body: Any) -> Iterator[Dict[str, Any]]:
        """The events of a streamed exec (NDJSON), one dict each, as they come."""
        conn = self._new_connection()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
        resp = conn.getresponse()
        try:
            if resp.status >= 400:
                err = json.loads(resp.read() or b"{}")
                raise SandboxRunError(resp.status, str(err.get("code")), err.get("message", ""))
            for line in resp:
                if line.strip():
                    yield json.loads(line)
        finally:
            conn.close()


def _quote(ref: str) -> str:
    return urllib.parse.quote(ref, safe="")


class SandboxRunSandbox:
    """One sandbox, as the agents backend's providers have it."""

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        token_file: Optional[str] = None,
        template: Optional[str] = None,
        timeout: Optional[float] = None,
        **options: Any,
    ):
        self.client = Client(url, token, token_file)
        self.sandbox_id: Optional[str] = None
        self._template = template
        self._timeout = timeout
        self._options = options

    # -- lifecycle --

    def _create(self, template: Optional[str], timeout: Optional[float], options: Dict[str, Any]) -> str:
        # "from" is a Python keyword: from_ stands for it.
        body: Dict[str, Any] = {k.rstrip("_"): v for k, v in options.items()}
        if template:
            body["profile"] = template
        if timeout is not None:
            body["timeout"] = timeout
        self.sandbox_id = self.client.request("POST", "/v1/sandboxes", body)["id"]
        return self.sandbox_id

    async def create(self, template: Optional[str] = None, timeout: Optional[float] = None, **options: Any) -> str:
        """Makes the sandbox: template is a profile (default, offline, tx, e2b, ci, or a file),
        timeout its lifetime in seconds (0: none); other keys as POST /v1/sandboxes takes them
        (memory, cpus, net, env, workspace, from, ...). Returns its id."""
        return await asyncio.to_thread(self._create, template or self._template,
                                       self._timeout if timeout is None else timeout,
                                       {**self._options, **options})

    def _path(self, tail: str = "") -> str:
        if not self.sandbox_id:
            raise SandboxRunError(0, "no_sandbox", "create() the sandbox first")
        return "/v1/sandboxes/" + _quote(self.sandbox_id) + tail

    async def delete(self) -> None:
        """Removes the sandbox and everything in it (a sandbox already gone is fine)."""
        if not self.sandbox_id:
            return

        def rm() -> None:
            try:
                self.client.request("DELETE", self._path())
            except SandboxRunError as e:
                if e.status != 404:
                    raise
            self.sandbox_id = None

        await asyncio.to_thread(rm)

    async def set_timeout(self, timeout: float) -> Optional[str]:
        """A new lifetime, seconds from now (0: none); returns when it now expires."""
        r = await asyncio.to_thread(self.client.request, "POST", self._path("/timeout"), {"timeout": timeout})
        return r.get("expires")

    async def info(self) -> Dict[str, Any]:
        return await asyncio.to_thread(self.client.request, "GET", self._path())

    async def snapshot(self, name: str) -> Dict[str, Any]:
        """Keeps the sandbox's files and configuration as NAME (create(from_=NAME) starts from it)."""
        return await asyncio.to_thread(self.client.request, "POST", self._path("/snapshots"), {"name": name})

    # -- commands --

    async def run_command(
        self,
        command: Any,
        timeout: Optional[float] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        stdin: Optional[str] = None,
    ) -> CommandResult:
        """Runs command (a shell string, or an argv list) and waits for its end."""
        body: Dict[str, Any] = {"cmd": command} if isinstance(command, str) else {"argv": list(command)}
        if timeout is not None:
            body["timeout"] = timeout
        if env:
            body["env"] = env
        if cwd:
            body["cwd"] = cwd
        if stdin is not None:
            body["stdin"] = stdin
        r = await asyncio.to_thread(self.client.request, "POST", self._path("/exec"), body)
        return CommandResult(
            exit_code=r["exit_code"], stdout=r.get("stdout", ""), stderr=r.get("stderr", ""),
            status=r.get("status", ""), wall_ms=r.get("wall_ms", 0.0), error=r.get("error"),
            record=r.get("record") or {})

    execute = run_command

    def stream_command(self, command: Any, **kw: Any) -> Iterator[Dict[str, Any]]:
        """The events of command as they come (blocking): start, stdout, stderr, exit."""
        body: Dict[str, Any] = {"cmd": command} if isinstance(command, str) else {"argv": list(command)}
        body.update(kw)
        body["stream"] = True
        return self.client.stream(self._path("/exec"), body)

    # -- files --

    async def read_file(self, path: str, binary: bool = False) -> Any:
        data = await asyncio.to_thread(self.client.request, "GET", self._path("/files"), None,
                                       {"path": path}, True)
        return data if binary else data.decode()

    async def write_file(self, path: str, content: Any) -> Dict[str, Any]:
        """Writes content (str or bytes) to path, its directories made as needed."""
        data = content.encode() if isinstance(content, str) else bytes(content)
        return await asyncio.to_thread(self.client.request, "PUT", self._path("/files"), data, {"path": path})

    async def list_files(self, path: str = "/workspace") -> List[Dict[str, Any]]:
        """Entries of a directory: name, path, type (file, dir, symlink, other), size, mode, mtime_ns."""
        r = await asyncio.to_thread(self.client.request, "GET", self._path("/files"), None,
                                    {"path": path, "list": "1"})
        return r["entries"]

    async def delete_file(self, path: str) -> None:
        await asyncio.to_thread(self.client.request, "DELETE", self._path("/files"), None, {"path": path})

    # -- previews --

    async def get_preview_url(self, port: int) -> str:
        """The URL that reaches port of the sandbox (published on this host's 127.0.0.1)."""
        r = await asyncio.to_thread(self.client.request, "POST", self._path("/ports/%d" % int(port)))
        return r["url"]

    # -- async with --

    async def __aenter__(self) -> "SandboxRunSandbox":
        if not self.sandbox_id:
            await self.create()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.delete()
        finally:
            self.client.close()
