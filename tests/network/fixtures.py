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
  www/simple-private/  a pip index of one project, turninit-private, whose
                       one file, www/simple-private/files/turninit_private-1.0-
                       py3-none-any.whl, is a wheel of the module
                       turninit_private (VALUE = "private 1.0"): the server
                       serves it behind Basic (testsrv.py)
  www/auth/git/push.git
                       a bare repository of one commit, with README:
                       "pushed through the gateway\\n", that takes pushes
                       (http.receivepack true): the server serves it behind
                       a bearer token
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


def wheel(www, project, value, index, files_dir, href):
    """A wheel of the module project (VALUE = value) in www/files_dir, and a
    pip simple index of it in www/index whose link is href + the file name."""
    module = project.replace("-", "_")
    files = {
        f"{module}/__init__.py": f'VALUE = "{value}"\n'.encode(),
        f"{module}-1.0.dist-info/METADATA":
            f"Metadata-Version: 2.1\nName: {project}\nVersion: 1.0\n".encode(),
        f"{module}-1.0.dist-info/WHEEL":
            b"Wheel-Version: 1.0\nGenerator: turninit-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{n},{record_hash(b)},{len(b)}\n" for n, b in files.items())
    record += f"{module}-1.0.dist-info/RECORD,,\n"
    files[f"{module}-1.0.dist-info/RECORD"] = record.encode()
    name = f"{module}-1.0-py3-none-any.whl"
    os.makedirs(f"{www}/{files_dir}", exist_ok=True)
    with zipfile.ZipFile(f"{www}/{files_dir}/{name}", "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in files.items():
            z.writestr(n, b)
    with open(f"{www}/{files_dir}/{name}", "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    os.makedirs(f"{www}/{index}/{project}")
    with open(f"{www}/{index}/index.html", "w") as f:
        f.write(f'<!DOCTYPE html>\n<html><body><a href="{project}/">{project}</a></body></html>\n')
    with open(f"{www}/{index}/{project}/index.html", "w") as f:
        f.write(f'<!DOCTYPE html>\n<html><body><a href="{href}{name}#sha256={sha}">{name}</a></body></html>\n')


def repo(d, bare, readme, work):
    """A bare repository at bare of one commit, whose README says readme."""
    work = f"{d}/{work}"
    os.makedirs(work)
    with open(f"{work}/README", "w") as f:
        f.write(readme)
    env = ["-c", "user.name=turninit tests", "-c", "user.email=tests@test.internal",
           "-c", "init.defaultBranch=main"]
    run("git", *env, "init", "-q", cwd=work)
    run("git", *env, "add", "README", cwd=work)
    run("git", *env, "commit", "-q", "-m", "probe", cwd=work)
    run("git", "clone", "-q", "--bare", work, bare)
    run("git", "update-server-info", cwd=bare)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    d, names = sys.argv[1], sys.argv[2:]
    www = f"{d}/www"
    os.makedirs(f"{www}/git", exist_ok=True)
    certs(d, names)
    with open(f"{www}/hello.txt", "w") as f:
        f.write("hello from the test server\n")
    wheel(www, "turninit-probe", "probe 1.0", "simple", "packages", "../../packages/")
    wheel(www, "turninit-private", "private 1.0", "simple-private", "simple-private/files", "../files/")
    repo(d, f"{www}/git/probe.git", "cloned through the proxy\n", "probe-work")
    repo(d, f"{www}/auth/git/push.git", "pushed through the gateway\n", "push-work")
    run("git", "config", "http.receivepack", "true", cwd=f"{www}/auth/git/push.git")


if __name__ == "__main__":
    main()
