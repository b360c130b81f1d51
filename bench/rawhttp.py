"""A lean HTTP/1.1 client for the benches, over serve's Unix socket.

One kept connection; a request written whole in one send; the answer
read up to its Content-Length (serve sends one with every answer these
benches ask for), its headers split but not otherwise parsed. Python's
http.client spends 0.15-0.25 ms a request on this VM on its side alone
(its headers go through the email package): a cost of that client, not of
the server the benches time. bench/serve.sh times both.
"""
import json
import socket


class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.buf = b""

    def _fill(self):
        data = self.s.recv(65536)
        if not data:
            raise ConnectionError("serve closed the connection")
        self.buf += data

    def request(self, method, path, body=None):
        """(status, headers with lower-case names, body bytes)."""
        if body is None:
            body = b""
        elif not isinstance(body, bytes):
            body = json.dumps(body).encode()
        self.s.sendall(b"%s %s HTTP/1.1\r\nHost: sr\r\nContent-Length: %d\r\n\r\n%s"
                       % (method.encode(), path.encode(), len(body), body))
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" not in headers:
            raise ValueError("an answer without Content-Length: %s" % lines[0])
        n = int(headers["content-length"])
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return int(lines[0].split()[1]), headers, data
