#!/bin/bash
# workload.sh - no over-blocking: a realistic agent session in a Debian image under
# turninit's default policy (issue 3, "Deliver" 7). Root, podman set up by
# `make setup`, debootstrap installed. Builds localhost/turninit-workload:latest
# with tests/workload/build-image.sh (cached) and seals it with the manifest below,
# signed by tests/vectors/test-trusted.key: uid/gid 1000, HOME /home/agent, workdir
# /work, env.set PATH LANG TERM, env.allow TZ, Landlock writable /home/agent /tmp
# /work; seccomp and limits are the defaults (the keys are omitted).
#
# Each step is its own one-shot `podman run` (timeout 120 s, --pull never,
# --network none, HOME a private tmpfs); /work is a host directory owned by uid
# 1000, so state carries from step to step (git init in one, commit in the next).
# Every step asserts its exact stdout, an empty stderr and status 0. Prints TAP
# ("ok N - NAME", "not ok N - NAME" with the evidence), then "N passed, N
# failed"; writes
# "PASS FAIL" to build/test-results/workload; exits 1 on any failure.
#
# Environment:
#   WORKLOAD_ENTRYPOINT_BYPASS=1  the control run: the same steps with
#       --entrypoint /bin/bash --user 1000:1000 and the manifest's environment, no
#       turninit. A step that fails under turninit and passes here is over-blocked;
#       one that fails here too is a problem of the image or of the step. The two
#       checks that the sandbox is on are left out. Results go to
#       build/test-results/workload-bypass.
#   ITEST_BINARY=PATH        test another turninit than build/turninit
#   WORKLOAD_MANIFEST=FILE   seal FILE instead of the default manifest (to see the
#       suite go red under a stricter policy, e.g. a seccomp.deny naming a syscall
#       a step needs)
# shellcheck disable=SC2016 # '$X' is literal: it runs in the container
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BYPASS=${WORKLOAD_ENTRYPOINT_BYPASS:-0}
VECTORS=$ROOT/tests/vectors
# shellcheck source=tests/integration/lib.sh
source "$HERE/lib.sh"
# A Debian root starts slower than the busybox one, and gcc or a process pool take
# a while on 2 cores: 120 s for every podman call here.
# shellcheck disable=SC2034 # used by lib.sh's prun
PODMAN_RUN=(timeout 120 podman run --rm --pull never --network none --label "$LABEL")

IMG=localhost/turninit-workload
RESULTS=workload
[[ $BYPASS == 1 ]] && RESULTS=workload-bypass
suite_open "$RESULTS" wtest "rootful podman, debootstrap" podman buildah minisign timeout


[[ -r $VECTORS/test-trusted.key && -r $VECTORS/test-trusted.pub ]] || abort "tests/vectors/test-trusted.{key,pub} missing"
mkdir -p "$WORK"
trap cleanup_containers EXIT

T0=$(now_ms)

# --- the image and its manifest -------------------------------------------------
# Debian's bash as the shell (/bin/bash, the default); no seccomp or limits key:
# the defaults are what is tested.
MANIFEST=$WORK/workload.json
if [[ -n ${WORKLOAD_MANIFEST:-} ]]; then
	cp "$WORKLOAD_MANIFEST" "$MANIFEST" || abort "WORKLOAD_MANIFEST=$WORKLOAD_MANIFEST: not readable"
else
	printf '%s\n' '{"turninit":1,"expires":"2099-01-01T00:00:00Z","user":{"uid":1000,"gid":1000},"home":"/home/agent","workdir":"/work","env":{"set":{"PATH":"/usr/local/bin:/usr/bin:/bin","LANG":"C.UTF-8","TERM":"dumb"},"allow":["TZ"]},"landlock":{"writable":["/home/agent","/tmp","/work"]}}' > "$MANIFEST"
fi
t=$(now_ms)
sh "$ROOT/tests/workload/build-image.sh" --tag "$IMG:latest" \
	--trusted-key "$VECTORS/test-trusted.pub" "$BIN" >"$WORK/build.log" 2>&1 \
	|| { cat "$WORK/build.log"; abort "tests/workload/build-image.sh"; }
sed 's/^/# /' "$WORK/build.log"
sh "$ROOT/oci/seal.sh" --image "$IMG:latest" --tag "$IMG:sealed" --manifest "$MANIFEST" \
	--key "$VECTORS/test-trusted.key" --trusted-comment "turninit workload test" \
	>"$WORK/seal.log" 2>&1 || { cat "$WORK/seal.log"; abort "oci/seal.sh"; }
echo "# image built and sealed in $(( $(now_ms) - t )) ms"
SEALED=$IMG:sealed

# The effective policy, kept for diagnosing a failure (build/wtest/verify.json).
timeout 120 podman run --rm --pull never --network none --label "$LABEL" \
	--tmpfs /home/agent:rw,mode=0700,size=64m,U "$SEALED" verify \
	>"$WORK/verify.json" 2>"$WORK/verify.err" || abort "turninit verify: $(cat "$WORK/verify.err")"

# /work: a host directory owned by the manifest's uid, fresh for every run.
VOL=$WORK/work
mkdir -p "$VOL"
chown 1000:1000 "$VOL"
chmod 0755 "$VOL"

if [[ $BYPASS == 1 ]]; then
	echo "# control run: --entrypoint /bin/bash --user 1000:1000, no turninit"
fi

# wrun SCRIPT: run the bash command string SCRIPT as one step of the session.
wrun() {
	if [[ $BYPASS == 1 ]]; then
		prun --tmpfs "$HOME_TMPFS" -v "$VOL:/work" --user 1000:1000 -w /work \
			-e HOME=/home/agent -e PATH=/usr/local/bin:/usr/bin:/bin -e LANG=C.UTF-8 -e TERM=dumb \
			--entrypoint /bin/bash "$SEALED" --noprofile --norc -c "$1"
	else
		prun --tmpfs "$HOME_TMPFS" -v "$VOL:/work" "$SEALED" "$1"
	fi
}

# step NAME SCRIPT WANT: a step whose status is 0, stderr empty and stdout WANT.
# The steps are one session: a step ITEST_ONLY does not select still runs,
# unreported, for the state the steps after it need.
step() {
	if ! begin "$1"; then
		wrun "$2"
		return
	fi
	wrun "$2"
	expect_rc 0
	expect_out "$3"
	expect_err ""
	end
}

T1=$(now_ms)

# --- the sandbox is on (otherwise every step below proves nothing) -------------------
if [[ $BYPASS != 1 ]]; then
	step sandbox-is-on \
		'id -u; id -g; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status; stat -f -c %T "$HOME"; pwd' \
		$'1000\n1000\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\ntmpfs\n/work\n'
	# Landlock: /var/tmp is world-writable in Debian (1777), so only Landlock, with
	# /var/tmp outside landlock.writable, makes this touch fail (access(2), which
	# `test -w` uses, is not mediated by Landlock).
	step landlock-is-on \
		'test -w /var/tmp && echo dac-writable; touch /var/tmp/probe 2>&1; echo "touch $?"; touch /work/probe && rm /work/probe && echo work-writable' \
		$'dac-writable\ntouch: cannot touch \'/var/tmp/probe\': Permission denied\ntouch 1\nwork-writable\n'
fi

# --- git: init, commit, log, diff (state carries in /work/proj) ------------------------
step git-init \
	'git init -q -b main proj && cd proj &&
	 git config user.name "Agent Smith" && git config user.email agent@example.invalid &&
	 printf "hello\n" > a.txt && mkdir src && printf "int x;\n" > src/x.c &&
	 git add a.txt src && git status --porcelain' \
	$'A  a.txt\nA  src/x.c\n'
step git-commit \
	'cd proj && git commit -q -m "first commit" && git log --oneline | wc -l && git log --format=%s%n%an' \
	$'1\nfirst commit\nAgent Smith\n'
step git-diff \
	'cd proj && printf "hello\nworld\n" > a.txt && git diff --stat && git status --porcelain' \
	$' a.txt | 1 +\n 1 file changed, 1 insertion(+)\n M a.txt\n'
step git-second-commit \
	'cd proj && git commit -q -am "second" && git log --oneline | wc -l && git fsck --no-progress 2>&1 && git gc -q 2>&1 && git rev-list --count HEAD &&
	 cd .. && git clone -q proj proj-clone 2>&1 && git -C proj-clone log --format=%s' \
	$'2\n2\nsecond\nfirst commit\n'

# --- python3: subprocess, threads, fork and spawn Pools, asyncio, sqlite3 ----------------------------
step python3 \
	'mkdir -p py && cd py && cat > t.py <<"EOF"
import asyncio
import multiprocessing as mp
import sqlite3
import subprocess
import threading


def square(x):
    return x * x


if __name__ == "__main__":
    out = subprocess.run(["echo", "hi"], capture_output=True, text=True, check=True)
    print("subprocess", repr(out.stdout))
    parts = [0] * 4

    def work(i):
        parts[i] = sum(range(i * 1000, (i + 1) * 1000))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("threads", sum(parts))
    for method in ("fork", "spawn"):
        with mp.get_context(method).Pool(2) as pool:
            print("pool", method, pool.map(square, range(10)))
    async def child():
        proc = await asyncio.create_subprocess_exec(
            "echo", "async", stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        return out.decode().strip(), proc.returncode

    print("asyncio", asyncio.run(child()))
    db = sqlite3.connect("t.db")
    db.execute("create table t (x integer)")
    db.executemany("insert into t values (?)", [(i,) for i in range(10)])
    db.commit()
    print("sqlite3", db.execute("select sum(x) from t").fetchone()[0])
    db.close()
    lock = mp.Lock()
    with lock:
        print("semaphore ok")
EOF
	python3 t.py' \
	$'subprocess \'hi\\n\'\nthreads 7998000\npool fork [0, 1, 4, 9, 16, 25, 36, 49, 64, 81]\npool spawn [0, 1, 4, 9, 16, 25, 36, 49, 64, 81]\nasyncio (\'async\', 0)\nsqlite3 45\nsemaphore ok\n'

# --- C: compile and run --------------------------------------------------------------------
step gcc-hello \
	'mkdir -p c && cd c &&
	 printf "#include <stdio.h>\nint main(void)\n{\n\tputs(\"hello from gcc\");\n\treturn 0;\n}\n" > hello.c &&
	 gcc -O2 -Wall -o hello hello.c && ./hello' \
	$'hello from gcc\n'

# --- make -j2: four independent targets ------------------------------------------------------
step make-j2 \
	'mkdir -p mk && cd mk &&
	 printf "all: a.out b.out c.out d.out\n%%.out: %%.c\n\tgcc -O2 -o \$@ \$<\n" > Makefile &&
	 for t in a b c d; do printf "#include <stdio.h>\nint main(void) { puts(\"%s\"); return 0; }\n" $t > $t.c; done &&
	 make -s -j2 && for t in a b c d; do ./$t.out; done' \
	$'a\nb\nc\nd\n'

# --- tar and gzip a tree, extract elsewhere, compare ---------------------------------------------
step tar-gzip \
	'mkdir -p tg/tree/sub/deeper && cd tg &&
	 for i in 1 2 3; do seq 1 $((i * 100)) > tree/f$i.txt; done &&
	 printf x > tree/sub/deeper/x && ln -s f1.txt tree/link && chmod 0750 tree/sub &&
	 tar czf t.tgz tree && gzip -t t.tgz && mkdir out && tar xzf t.tgz -C out &&
	 diff -r tree out/tree && echo same &&
	 tar cJf t.txz tree && mkdir outx && tar xJf t.txz -C outx && diff -r tree outx/tree && echo same-xz &&
	 gzip -k tree/f3.txt && gunzip -c tree/f3.txt.gz | cmp - tree/f3.txt && echo gzip-roundtrip &&
	 tar tzf t.tgz | sort | head -n 3' \
	$'same\nsame-xz\ngzip-roundtrip\ntree/\ntree/f1.txt\ntree/f2.txt\n'

# --- find | xargs ------------------------------------------------------------------------------
step find-xargs \
	'mkdir -p fx/a/b && seq 1 10 > fx/one && seq 1 20 > fx/a/two && seq 1 30 > fx/a/b/three &&
	 find fx -type f | xargs wc -l | awk "\$2 == \"total\" { print \$1 }" &&
	 find fx -type f -print0 | xargs -0 -n 1 -P 2 wc -l | awk "{ s += \$1 } END { print s }"' \
	$'60\n60\n'

# --- background jobs and wait -------------------------------------------------------------------
step background-wait \
	'sleep 0.2 & p=$!; wait $p; echo $?
	 (exit 3) & wait $!; echo $?
	 sleep 30 & kill $!; wait $!; echo $?
	 for i in 1 2 3; do sleep 0.1 & done; wait; echo all' \
	$'0\n3\n143\nall\n'

# --- a pipeline of 5 processes; SIGPIPE at its default ----------------------------------------------
step pipeline-5 \
	'seq 1 1000 | grep 7 | sort -rn | head -n 3 | tr "\n" " "; echo "${PIPESTATUS[*]}"
	 yes | head -n 2; echo "${PIPESTATUS[*]}"' \
	$'997 987 979 0 0 0 0 0\ny\ny\n141 0\n'

# --- beyond the issue's list: what every session does in passing -----------------------------------
step dev-null-and-tty \
	'echo x > /dev/null && command -v git > /dev/null && ls /nonexistent 2> /dev/null; echo "ls $?"
	 head -c 4 /dev/zero | od -An -tx1 | tr -d " "; tty; true' \
	$'ls 2\n00000000\nnot a tty\n'
step procps-and-timeout \
	'ps -o comm= -p $$; timeout 1 sleep 10; echo "timeout $?"; nproc > /dev/null && echo nproc' \
	$'bash\ntimeout 124\nnproc\n'
step home-and-tmp-writable \
	'echo h > "$HOME/.x" && cat "$HOME/.x" && d=$(mktemp -d) && echo t > "$d/f" && cat "$d/f" && rm -r "$d" && echo s > /dev/shm/f && cat /dev/shm/f && rm /dev/shm/f' \
	$'h\nt\ns\n'

echo "# session ran in $(( $(now_ms) - T1 )) ms ($((PASS + FAIL)) steps); suite in $(( $(now_ms) - T0 )) ms"
if [[ $FAIL -ne 0 && $BYPASS != 1 ]]; then
	echo "# to tell over-blocking from an image problem: WORKLOAD_ENTRYPOINT_BYPASS=1 bash tests/integration/workload.sh"
	echo "# the effective policy: build/wtest/verify.json"
fi
results
