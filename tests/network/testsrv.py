#!/usr/bin/env python3
"""testsrv.py - the network suite's HTTPS test server (tests/integration/network.sh).

Runs in a container of the suite's own internal network, never anywhere else.

usage: testsrv.py ROOT CERT KEY PORT

  ROOT  a directory served as static files over HTTPS: a pip "simple" index
        (PEP 503) with the wheel the suite builds, and anything else it puts
        there; ROOT/git/NAME.git are bare repositories, served by git's smart
        HTTP protocol (`git http-backend`, as CGI) under /git/
  CERT  the server's certificate (PEM), signed by the suite's test CA
  KEY   its private key (PEM)
  PORT  the TCP port to listen on, on every address of the container

Prints "listening on PORT" on stdout once the socket is bound, then one line per
request on stderr. Each response closes its connection (HTTP/1.0).
"""

import http.server
import os
import ssl
import subprocess
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files from ROOT, and /git/ through `git http-backend`."""

    def do_GET(self):
        if self.path.startswith("/git/"):
            self.git()
        else:
            super().do_GET()

    def do_POST(self):
        if self.path.startswith("/git/"):
            self.git()
        else:
            self.send_error(405)

    def body(self):
        """The request's body: Content-Length, or chunked (git's larger pushes)."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def git(self):
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": os.path.join(self.directory, "git"),
            "GIT_HTTP_EXPORT_ALL": "1",
            # the repositories belong to another uid than the server's
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.directory",
            "GIT_CONFIG_VALUE_0": "*",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path[len("/git"):],
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "REMOTE_ADDR": self.client_address[0],
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.0",
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        data = self.body() if self.command == "POST" else b""
        env["CONTENT_LENGTH"] = str(len(data))
        out = subprocess.run(["git", "http-backend"], input=data, env=env,
                             stdout=subprocess.PIPE, check=False).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.split("\n\n")[1])
    root, cert, key, port = sys.argv[1:]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    def handler(*args, **kw):
        return Handler(*args, directory=root, **kw)

    srv = http.server.ThreadingHTTPServer(("", int(port)), handler)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(f"listening on {port}", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
