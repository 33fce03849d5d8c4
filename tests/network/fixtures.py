#!/usr/bin/env python3
"""fixtures.py - what the network suite's HTTPS server serves, made at test time.

usage: fixtures.py DIR NAME...

Writes, in DIR (made if missing), with openssl, git and Python's zipfile:
  ca.pem, ca.key       a test CA, valid for 2 days, made now
  srv.pem, srv.key     the server's certificate, signed by it, for the DNS
                       names NAME... (the first is its subject)
  www/hello.txt        "hello from the test server\\n"
  www/simple/          a pip "simple" index (PEP 503) of one project,
                       turninit-probe, whose one file is
  www/packages/turninit_probe-1.0-py3-none-any.whl
                       a wheel of the module turninit_probe (VALUE = "probe 1.0")
  www/git/probe.git    a bare repository of one commit, with README:
                       "cloned through the proxy\\n"
Nothing here is a secret outside the suite: the CA's key is thrown away with DIR.
Exits non-zero, with the failing tool's output, on any error.
"""

import base64
import hashlib
import os
import subprocess
import sys
import zipfile


def run(*argv, cwd=None):
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def certs(d, names):
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-nodes", "-days", "2", "-subj", "/CN=turninit network suite test CA",
        "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-subj", f"/CN={names[0]}", "-keyout", f"{d}/srv.key", "-out", f"{d}/srv.csr")
    with open(f"{d}/srv.ext", "w") as f:
        f.write("subjectAltName=" + ",".join("DNS:" + n for n in names) + "\n"
                "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", f"{d}/srv.csr", "-CA", f"{d}/ca.pem",
        "-CAkey", f"{d}/ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", f"{d}/srv.ext", "-out", f"{d}/srv.pem")
    os.chmod(f"{d}/srv.key", 0o644)  # read by the server container's root


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def wheel(www):
    files = {
        "turninit_probe/__init__.py": b'VALUE = "probe 1.0"\n',
        "turninit_probe-1.0.dist-info/METADATA":
            b"Metadata-Version: 2.1\nName: turninit-probe\nVersion: 1.0\n",
        "turninit_probe-1.0.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: turninit-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{n},{record_hash(b)},{len(b)}\n" for n, b in files.items())
    record += "turninit_probe-1.0.dist-info/RECORD,,\n"
    files["turninit_probe-1.0.dist-info/RECORD"] = record.encode()
    name = "turninit_probe-1.0-py3-none-any.whl"
    os.makedirs(f"{www}/packages")
    with zipfile.ZipFile(f"{www}/packages/{name}", "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in files.items():
            z.writestr(n, b)
    with open(f"{www}/packages/{name}", "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    os.makedirs(f"{www}/simple/turninit-probe")
    with open(f"{www}/simple/index.html", "w") as f:
        f.write('<!DOCTYPE html>\n<html><body><a href="turninit-probe/">turninit-probe</a></body></html>\n')
    with open(f"{www}/simple/turninit-probe/index.html", "w") as f:
        f.write(f'<!DOCTYPE html>\n<html><body><a href="../../packages/{name}#sha256={sha}">{name}</a></body></html>\n')


def repo(www, d):
    work = f"{d}/probe-work"
    os.makedirs(work)
    with open(f"{work}/README", "w") as f:
        f.write("cloned through the proxy\n")
    env = ["-c", "user.name=turninit tests", "-c", "user.email=tests@test.internal",
           "-c", "init.defaultBranch=main"]
    run("git", *env, "init", "-q", cwd=work)
    run("git", *env, "add", "README", cwd=work)
    run("git", *env, "commit", "-q", "-m", "probe", cwd=work)
    run("git", "clone", "-q", "--bare", work, f"{www}/git/probe.git")
    run("git", "update-server-info", cwd=f"{www}/git/probe.git")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    d, names = sys.argv[1], sys.argv[2:]
    www = f"{d}/www"
    os.makedirs(f"{www}/git", exist_ok=True)
    certs(d, names)
    with open(f"{www}/hello.txt", "w") as f:
        f.write("hello from the test server\n")
    wheel(www)
    repo(www, d)


if __name__ == "__main__":
    main()
