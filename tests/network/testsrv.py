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

The credential gateway's end of the suite, driven by two variables:

  TESTSRV_TOKEN  a bearer token: each path under /auth/ (but /auth/basic/)
                 needs "Authorization: Bearer TOKEN", else 401 with
                 WWW-Authenticate: Bearer
  TESTSRV_BASIC  "USER:PASSWORD": /auth/basic/ and /simple-private/ need
                 "Authorization: Basic" of it (RFC 7617), else 401 with
                 WWW-Authenticate: Basic
An unset variable refuses every request of its paths (401). Behind them:

  /auth/git/NAME.git   ROOT/auth/git/NAME.git by smart HTTP, push included
                       (the repositories' config says http.receivepack true)
  /simple-private/     ROOT/simple-private/, a pip index (files under it too)
  /echo, /auth/echo    200, the request's head as the body, and the header
                       X-Echo-Authorization: the Authorization received
                       (empty when none); with ?chunked=1 (any place in the
                       query) the body is sent chunked, CHUNK bytes a chunk,
                       so that a value in it straddles chunk boundaries
  /redirect?to=URL     302 with Location: URL (URL percent-decoded) and a body
                       "see URL"

Prints "listening on PORT" on stdout once the socket is bound, then one line per
request on stderr: the address, the request line, the status, then
host=HOST (the Host field) and authorization=none|bearer-ok|bearer-wrong|
basic-ok|basic-wrong|other (never the value). Each response closes its
connection (HTTP/1.0, HTTP/1.1 for a chunked one).
"""

import base64
import hmac
import http.server
import os
import ssl
import subprocess
import sys
import urllib.parse

CHUNK = 7   # bytes of an echo chunk: a prime, so that no value of 8 bytes or
            # more fits in one chunk, and its base64 straddles too


def expected():
    """The Authorization values the server takes: (bearer, basic), None unset."""
    token = os.environ.get("TESTSRV_TOKEN") or None
    basic = os.environ.get("TESTSRV_BASIC") or None
    return (f"Bearer {token}" if token else None,
            "Basic " + base64.b64encode(basic.encode()).decode() if basic else None)


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files from ROOT, /git/ and /auth/git/ through `git http-backend`,
    the echo and redirect endpoints, and the paths behind a credential."""

    def do_GET(self):
        self.route()

    def do_POST(self):
        self.route()

    def do_HEAD(self):
        self.route()

    def route(self):
        path = self.path.partition("?")[0]
        need = self.needs(path)
        if need and not self.authorized(need):
            return self.unauthorized(need)
        if path in ("/echo", "/auth/echo"):
            return self.echo()
        if path == "/redirect":
            return self.redirect()
        if path.startswith("/git/"):
            return self.git("git")
        if path.startswith("/auth/git/"):
            return self.git("auth/git")
        if self.command == "POST":
            return self.send_error(405)
        if self.command == "HEAD":
            return super().do_HEAD()
        return super().do_GET()

    @staticmethod
    def needs(path):
        """Which credential a path needs: "basic", "bearer" or None."""
        if path.startswith("/auth/basic/") or path.startswith("/simple-private/"):
            return "basic"
        if path.startswith("/auth/"):
            return "bearer"
        return None

    def auth_class(self):
        """What the Authorization received is, for the log (never its value)."""
        got = self.headers.get("Authorization") if hasattr(self, "headers") else None
        if got is None:
            return "none"
        bearer, basic = expected()
        for want, name in ((bearer, "bearer"), (basic, "basic")):
            if got.lower().startswith(name + " "):
                ok = want is not None and hmac.compare_digest(got.encode(), want.encode())
                return f"{name}-{'ok' if ok else 'wrong'}"
        return "other"

    def authorized(self, need):
        return self.auth_class() == f"{need}-ok"

    def unauthorized(self, need):
        body = f"401: this path needs Authorization: {need.capitalize()}\n".encode()
        self.send_response(401)
        realm = 'Basic realm="testsrv"' if need == "basic" else 'Bearer realm="testsrv"'
        self.send_header("WWW-Authenticate", realm)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def echo(self):
        head = self.requestline + "\r\n" + "".join(
            f"{n}: {v}\r\n" for n, v in self.headers.items()) + "\r\n"
        body = head.encode("latin-1")
        query = urllib.parse.parse_qs(self.path.partition("?")[2])
        chunked = query.get("chunked") == ["1"]
        if chunked:
            # chunked is HTTP/1.1's (RFC 9112 section 6.1: a Transfer-Encoding
            # in an HTTP/1.0 message is faulty framing)
            self.protocol_version = "HTTP/1.1"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("X-Echo-Authorization", self.headers.get("Authorization", ""))
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
        else:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        if not chunked:
            self.wfile.write(body)
            return
        for i in range(0, len(body), CHUNK):
            piece = body[i:i + CHUNK]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def redirect(self):
        query = urllib.parse.parse_qs(self.path.partition("?")[2])
        to = query.get("to", [""])[0]
        if not to:
            return self.send_error(400, "no ?to=URL")
        body = ("see %s\n" % to).encode()
        self.send_response(302)
        self.send_header("Location", to)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_request(self, code="-", size="-"):
        if isinstance(code, http.HTTPStatus):
            code = code.value
        host = self.headers.get("Host", "") if hasattr(self, "headers") else ""
        self.log_message('"%s" %s host=%s authorization=%s',
                         self.requestline, str(code), host, self.auth_class())

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

    def git(self, under):
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": os.path.join(self.directory, under),
            "GIT_HTTP_EXPORT_ALL": "1",
            # the repositories belong to another uid than the server's
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.directory",
            "GIT_CONFIG_VALUE_0": "*",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path[len("/" + under):],
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "REMOTE_ADDR": self.client_address[0],
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.0",
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
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
