// pi.test.mjs - pi's bash tool with the turninit operations of clients/pi, in
// real podman containers (issue 8). Run by tests/integration/pi.sh, which
// installs the pinned pi package, builds and seals the image and makes the
// workspace; it copies this file to build/pi-npm/test/ next to index.js.
//
// Environment (from pi.sh): PITEST_IMAGE (sealed, env.allow TZ and LC_*),
// PITEST_IMAGE_SMALL (limits.output_bytes 1000), PITEST_IMAGE_WIDE (env.allow
// admits every name turninit ever admits), PITEST_WORKSPACE (a host
// directory owned by uid 1000, mounted at /work), PITEST_LABEL (KEY=VALUE put on
// every container, for the checks and the cleanup), PITEST_README (clients/pi/README.md,
// whose pi extension example is loaded).

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, afterEach, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
	createAgentSession,
	createBashTool,
	DefaultResourceLoader,
	SessionManager,
} from "@earendil-works/pi-coding-agent";
import { createTurninitBashOperations } from "../index.js";

const IMAGE = process.env.PITEST_IMAGE;
const IMAGE_SMALL = process.env.PITEST_IMAGE_SMALL;
const IMAGE_WIDE = process.env.PITEST_IMAGE_WIDE;
const WS = process.env.PITEST_WORKSPACE;
const LABEL = process.env.PITEST_LABEL;
assert.ok(IMAGE && IMAGE_SMALL && IMAGE_WIDE && WS && LABEL, "run through tests/integration/pi.sh");
const HERE = path.dirname(fileURLToPath(import.meta.url));

// Per test: generous for podman on a busy machine; the issue's own bounds are
// asserted inside the tests.
const T = { timeout: 120000 };

const made = [];
afterEach(async () => {
	await Promise.all(made.splice(0).map((o) => o.dispose()));
});
after(() => {
	spawnSync("sh", ["-c", `ids=$(podman ps -aq --filter label=${LABEL}); [ -z "$ids" ] || podman rm -f -t 0 $ids`], {
		stdio: "ignore",
		timeout: 60000,
	});
});

function ops(extra = {}) {
	const o = createTurninitBashOperations({
		image: IMAGE,
		workspace: { hostPath: WS, containerPath: "/work" },
		podmanArgs: ["--label", LABEL],
		env: ["TZ", "LC_*"],
		...extra,
	});
	made.push(o);
	return o;
}

// run: the bash tool's execute(), as pi's agent loop calls it.
function run(tool, command, { timeout, signal, onUpdate } = {}) {
	return tool.execute("call-1", timeout === undefined ? { command } : { command, timeout }, signal, onUpdate);
}

function text(result) {
	assert.equal(result.content.length, 1);
	assert.equal(result.content[0].type, "text");
	return result.content[0].text;
}

// containers: the ids of this run's containers that exist now (any state).
function containers() {
	const r = spawnSync("podman", ["ps", "-aq", "--filter", `label=${LABEL}`], { encoding: "utf8", timeout: 60000 });
	assert.equal(r.status, 0, `podman ps: ${r.stderr}`);
	return r.stdout.split("\n").filter(Boolean);
}

// rejectsWith: P rejects with an Error whose message matches RE.
async function rejectsWith(p, re) {
	await assert.rejects(p, (e) => {
		assert.ok(e instanceof Error, `not an Error: ${e}`);
		assert.match(e.message, re);
		return true;
	});
}

// elapsed: run F(); its value or error, and the milliseconds it took.
async function elapsed(f) {
	const t0 = Date.now();
	try {
		return { value: await f(), ms: Date.now() - t0 };
	} catch (error) {
		return { error, ms: Date.now() - t0 };
	}
}

test("echo hi gives hi and a newline, as with pi's local backend", T, async () => {
	const result = await run(createBashTool(WS, { operations: ops() }), "echo hi");
	assert.equal(text(result), "hi\n");
	assert.equal(result.details, undefined);
	const local = await run(createBashTool(WS), "echo hi");
	assert.deepEqual(result, local);
});

test("exit 3 throws a message ending Command exited with code 3", T, async () => {
	const tool = createBashTool(WS, { operations: ops() });
	await assert.rejects(run(tool, "echo out; echo err >&2; exit 3"), (e) => {
		assert.match(e.message, /Command exited with code 3$/);
		assert.match(e.message, /^out\nerr\n|^err\nout\n/);
		return true;
	});
});

test("a command killed by signal 9 exits with 128+9", T, async () => {
	const tool = createBashTool(WS, { operations: ops() });
	// pi's local backend resolves exitCode null here, which the tool reports as success.
	await rejectsWith(run(tool, "kill -KILL $$"), /^\(no output\)\n\nCommand exited with code 137$/);
	await rejectsWith(run(tool, "echo x; kill -TERM $$"), /^x\n\n\nCommand exited with code 143$/);
});

// The bounds tell a timeout from a command that ran out its sleep of 1000 s,
// not the machine's speed: a loaded machine takes seconds to start a
// container; the time seen is printed.
test("sleep 1000 with timeout 1, a container per call: timed out, no container left", T, async () => {
	const tool = createBashTool(WS, { operations: ops({ perCall: true }) });
	const r = await elapsed(() => run(tool, "sleep 1000", { timeout: 1 }));
	assert.ok(r.error, "the call must throw");
	assert.equal(r.error.message, "Command timed out after 1 seconds");
	assert.ok(r.ms < 60000, `took ${r.ms} ms`);
	assert.ok(r.ms >= 950, `took ${r.ms} ms`); // not before the timeout (clock granularity aside)
	assert.deepEqual(containers(), []);
	console.log(`# per call: sleep 1000 with timeout 1 threw after ${r.ms} ms`);
});

test("sleep 1000 with timeout 1 in a turn's container: timed out, killed, no container after the turn", T, async () => {
	const o = ops();
	const tool = createBashTool(WS, { operations: o });
	assert.equal(text(await run(tool, "echo warm")), "warm\n");
	const r = await elapsed(() => run(tool, "echo before; sleep 1000", { timeout: 1 }));
	assert.ok(r.error, "the call must throw");
	assert.equal(r.error.message, "before\n\n\nCommand timed out after 1 seconds");
	assert.ok(r.ms < 60000, `took ${r.ms} ms`);
	// The same container goes on; nothing of the command is left in it.
	assert.equal(containers().length, 1);
	assert.equal(text(await run(tool, "ps -o args | grep -c '^sleep 1000' || true")), "0\n");
	await o.endTurn();
	assert.deepEqual(containers(), []);
	console.log(`# per turn: sleep 1000 with timeout 1 threw after ${r.ms} ms`);
});

test("an AbortSignal aborts the command", T, async () => {
	const o = ops();
	const tool = createBashTool(WS, { operations: o });
	const ac = new AbortController();
	let abortedAt = 0;
	const onUpdate = (u) => {
		if (!abortedAt && u.content[0]?.text?.includes("started")) {
			abortedAt = Date.now();
			ac.abort();
		}
	};
	const r = await elapsed(() => run(tool, "echo started; sleep 1000; echo never", { signal: ac.signal, onUpdate }));
	assert.ok(abortedAt, "the command's output never arrived");
	assert.ok(r.error, "the call must throw");
	assert.equal(r.error.message, "started\n\n\nCommand aborted");
	const lag = Date.now() - abortedAt;
	assert.ok(lag < 60000, `rejected ${lag} ms after the abort`);
	console.log(`# aborted: rejected ${lag} ms after the abort`);
	assert.equal(text(await run(tool, "ps -o args | grep -c '^sleep 1000' || true")), "0\n");
	// Aborted before it starts: nothing runs.
	await o.endTurn();
	const r2 = await elapsed(() => run(tool, "touch /work/must-not-exist", { signal: AbortSignal.abort() }));
	assert.equal(r2.error?.message, "Command aborted");
	assert.deepEqual(containers(), []);
	assert.throws(() => statSync(path.join(WS, "must-not-exist")), { code: "ENOENT" });
	console.log(`# abort: rejected ${lag} ms after the abort`);
});

// The local backend's result and ours for the same command: equal but for the
// temp file of the full output, whose name is random (its bytes must be equal).
async function sameAsLocal(command) {
	const ours = await run(createBashTool(WS, { operations: ops() }), command);
	const local = await run(createBashTool(WS), command);
	const oursPath = ours.details?.fullOutputPath;
	const localPath = local.details?.fullOutputPath;
	assert.ok(oursPath && localPath, "both results must name a full output file");
	assert.equal(ours.details.truncation.truncated, true);
	assert.equal(text(ours).replaceAll(oursPath, "FULL"), text(local).replaceAll(localPath, "FULL"));
	assert.deepEqual(ours.details.truncation, local.details.truncation);
	const full = readFileSync(oursPath);
	assert.equal(full.length, 204800);
	assert.ok(full.equals(readFileSync(localPath)), "full output files differ");
	return ours;
}

test("a 200 KB output of 2048 lines is truncated as by pi's local backend", T, async () => {
	const r = await sameAsLocal("yes $(printf %099d 7) | head -n 2048");
	assert.match(text(r), /\[Showing lines \d+-2049 of 2049 \(50\.0KB limit\)\. Full output: /);
});

test("a 200 KB output of one line is truncated as by pi's local backend", T, async () => {
	const r = await sameAsLocal("head -c 204800 /dev/zero | tr '\\0' a");
	assert.match(text(r), /\[Showing last 50\.0KB of line 1 \(line is 200\.0KB\)\. Full output: /);
});

test("output beyond the manifest's output_bytes is dropped, with a note", T, async () => {
	const tool = createBashTool(WS, { operations: ops({ image: IMAGE_SMALL }) });
	const t = text(await run(tool, "head -c 5000 /dev/zero | tr '\\0' b; echo; echo end"));
	assert.equal(t, `${"b".repeat(1000)}\n[turninit: output beyond the image manifest's limits.output_bytes was dropped]\n`);
});

// The image's manifest admits every name here: what keeps the canary out is that
// the operations send only the names they were configured with.
test("the host's environment does not reach the command: a canary token, HOME, a login profile", T, async () => {
	const canary = `sk-ant-canary-${process.pid}-${Date.now()}`;
	const saved = { key: process.env.ANTHROPIC_API_KEY, tz: process.env.TZ, lc: process.env.LC_PITEST, env: process.env.BASH_ENV };
	process.env.ANTHROPIC_API_KEY = canary;
	process.env.TZ = "UTC";
	process.env.LC_PITEST = "lc-value";
	process.env.BASH_ENV = path.join(WS, "profile.sh");
	writeFileSync(path.join(WS, "profile.sh"), "echo PROFILE-RAN\n");
	try {
		const o = ops({ image: IMAGE_WIDE });
		// What pi hands to exec: its whole environment, canary included.
		let given;
		const tool = createBashTool(WS, {
			operations: {
				exec: (command, cwd, options) => {
					given = options.env;
					return o.exec(command, cwd, options);
				},
			},
		});
		const out = text(
			await run(
				tool,
				"env | sort; echo ---; id -u; echo ---; ls -A \"$HOME\"; echo ---; cat /proc/1/environ 2>&1 | tr '\\0' '\\n' | grep -c sk-ant || true",
			),
		);
		assert.equal(given?.ANTHROPIC_API_KEY, canary, "pi did not pass its environment to exec");
		assert.ok(!out.includes(canary), "the canary reached the command");
		assert.ok(!out.includes("PROFILE-RAN"), "BASH_ENV was sourced");
		const [env, uid, home, proc1] = out.split("---\n");
		assert.deepEqual(env.trimEnd().split("\n"), [
			"HOME=/home/agent",
			"LANG=C.UTF-8",
			"LC_PITEST=lc-value",
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"PWD=/work",
			"SHLVL=1",
			"TERM=dumb",
			"TZ=UTC",
			"_=/bin/env",
		]);
		assert.equal(uid, "1000\n");
		assert.equal(home, "");
		assert.equal(proc1, "0\n");
	} finally {
		for (const [k, v] of [
			["ANTHROPIC_API_KEY", saved.key],
			["TZ", saved.tz],
			["LC_PITEST", saved.lc],
			["BASH_ENV", saved.env],
		]) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
		rmSync(path.join(WS, "profile.sh"), { force: true });
	}
});

test("three parallel calls all succeed, in one container per turn", T, async () => {
	const tool = createBashTool(WS, { operations: ops() });
	const results = await Promise.all(
		[1, 2, 3].map((n) => run(tool, `sleep 1; echo call ${n}; hostname`)),
	);
	const lines = results.map((r) => text(r).split("\n"));
	assert.deepEqual(
		lines.map((l) => l[0]),
		["call 1", "call 2", "call 3"],
	);
	assert.equal(new Set(lines.map((l) => l[1])).size, 1, "one container for the turn");
	assert.equal(containers().length, 1);
});

test("three parallel calls all succeed, a container per call", T, async () => {
	const tool = createBashTool(WS, { operations: ops({ perCall: true }) });
	const results = await Promise.all(
		[1, 2, 3].map((n) => run(tool, `sleep 1; echo call ${n}; hostname`)),
	);
	const lines = results.map((r) => text(r).split("\n"));
	assert.deepEqual(
		lines.map((l) => l[0]),
		["call 1", "call 2", "call 3"],
	);
	assert.equal(new Set(lines.map((l) => l[1])).size, 3, "a container for each call");
	assert.deepEqual(containers(), []);
});

test("more parallel calls than limits.concurrency wait for a slot", T, async () => {
	const tool = createBashTool(WS, { operations: ops() });
	const results = await Promise.all(
		Array.from({ length: 12 }, (_, n) => run(tool, `sleep 1; echo ${n}`)),
	);
	assert.deepEqual(
		results.map((r) => text(r)),
		Array.from({ length: 12 }, (_, n) => `${n}\n`),
	);
});

test("files written in the workspace volume are on the host; pi's cwd maps into it", T, async () => {
	const o = ops();
	const tool = createBashTool(WS, { operations: o });
	assert.equal(text(await run(tool, "mkdir -p sub/deeper && echo data > sub/out.txt && pwd")), "/work\n");
	assert.equal(readFileSync(path.join(WS, "sub/out.txt"), "utf8"), "data\n");
	assert.equal(statSync(path.join(WS, "sub/out.txt")).uid, 1000);
	const sub = createBashTool(path.join(WS, "sub", "deeper"), { operations: o });
	assert.equal(text(await run(sub, "pwd; cat ../out.txt")), "/work/sub/deeper\ndata\n");
	await o.endTurn();
	assert.deepEqual(containers(), []);
	assert.equal(readFileSync(path.join(WS, "sub/out.txt"), "utf8"), "data\n");
	rmSync(path.join(WS, "sub"), { recursive: true, force: true });
});

test("a cwd outside the workspace or missing is refused before anything runs", T, async () => {
	const o = ops();
	const outside = path.join(tmpdir(), `pitest-outside-${process.pid}`);
	mkdirSync(outside, { recursive: true });
	await rejectsWith(run(createBashTool(outside, { operations: o }), "true"), /is outside the workspace/);
	rmSync(outside, { recursive: true, force: true });
	// The message of pi's local backend.
	const missing = path.join(WS, "no-such-dir");
	await rejectsWith(
		run(createBashTool(missing, { operations: o }), "true"),
		new RegExp(`^Working directory does not exist: ${missing}\nCannot execute bash commands\.$`),
	);
	assert.deepEqual(containers(), []);
});

test("endTurn removes the turn's container; the next call starts a new one", T, async () => {
	const logged = [];
	const o = ops({ onStderr: (line) => logged.push(line) });
	const tool = createBashTool(WS, { operations: o });
	const h1 = text(await run(tool, "hostname"));
	assert.equal(containers().length, 1);
	await o.endTurn();
	assert.deepEqual(containers(), []);
	// turninit's log, a line at a time, never in the command's output.
	assert.ok(logged.some((l) => /^turninit: serve: ready, reading requests on stdin; landlock: ABI \d+ enforced$/.test(l)), `stderr lines: ${logged}`);
	const h2 = text(await run(tool, "hostname"));
	assert.notEqual(h1, h2);
	await o.dispose();
	assert.deepEqual(containers(), []);
	await rejectsWith(o.exec("true", WS, { onData() {} }), /exec after dispose/);
});

test("serveArgs --audit-log: auditHeads() holds each exit's head, the digest of its log line", T, async () => {
	const logdir = mkdtempSync(path.join(tmpdir(), "turninit-pi-audit-"));
	try {
		const o = ops({
			podmanArgs: ["--label", LABEL, "-v", `${logdir}:/var/log/turninit`],
			serveArgs: ["--audit-log", "/var/log/turninit/audit.jsonl"],
		});
		const tool = createBashTool(WS, { operations: o });
		await run(tool, "echo one");
		await run(tool, "echo two");
		await o.endTurn();
		const heads = o.auditHeads();
		assert.equal(heads.length, 2);
		const lines = readFileSync(path.join(logdir, "audit.jsonl"), "utf8").split("\n").filter(Boolean);
		const exits = lines.filter((l) => JSON.parse(l).event === "exit");
		const b2 = (l) => spawnSync("b2sum", ["-l", "256"], { input: `${l}\n`, encoding: "utf8" }).stdout.split(" ")[0];
		assert.deepEqual(heads.map((h) => h.head), exits.map(b2));
		assert.ok(heads.every((h) => h.container.startsWith("turninit-pi-")));
	} finally {
		rmSync(logdir, { recursive: true, force: true });
	}
});

test("a missing image is a clear error", T, async () => {
	const tool = createBashTool(WS, { operations: ops({ image: `${IMAGE}-missing` }) });
	await rejectsWith(run(tool, "true"), /ended before the command did \(podman exited 125\)[^]*image not known/);
	assert.deepEqual(containers(), []);
});

test("a process that exits without endTurn leaves no container", T, async () => {
	const script = path.join(HERE, "exit-without-endturn.mjs");
	for (const how of ["exit", "kill"]) {
		const child = spawn(process.execPath, [script, how], {
			stdio: ["ignore", "pipe", "inherit"],
			env: { ...process.env },
		});
		let out = "";
		child.stdout.on("data", (d) => {
			out += d;
			if (how === "kill" && out.includes("running")) child.kill("SIGKILL");
		});
		const code = await new Promise((resolve) => child.on("close", (c, s) => resolve(c ?? s)));
		assert.match(out, /running/, `${how}: the child did not run its command`);
		assert.equal(code, how === "exit" ? 0 : "SIGKILL");
		// exit: the exit hook removed it already. kill: the end of its stdin ends the turn.
		const deadline = Date.now() + (how === "exit" ? 0 : 60000);
		while (containers().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
		assert.deepEqual(containers(), [], `${how}: a container was left`);
	}
});

// replaceOnce: TEXT with its one occurrence of FROM replaced (the README's
// example must still hold it).
function replaceOnce(text, from, to) {
	assert.equal(text.split(from).length, 2, `README's example must contain ${from} once`);
	return text.replace(from, to);
}

test("README's extension, loaded by pi, runs the bash tool and !commands in turninit", T, async () => {
	const readme = readFileSync(process.env.PITEST_README, "utf8");
	const section = readme.split("\n## Using turninit with pi\n")[1]?.split("\n## ")[0];
	assert.ok(section, "clients/pi/README.md has no section Using turninit with pi");
	const m = section.match(/\n```ts\n([^]*?)\n```\n/);
	assert.ok(m, "no ts example in the section");
	// The test's image and label in place of README's.
	let code = replaceOnce(m[1], '"localhost/agent-turn:1"', JSON.stringify(IMAGE));
	code = replaceOnce(code, "podmanArgs: [", `podmanArgs: ["--label", ${JSON.stringify(LABEL)}, `);
	const extDir = path.join(HERE, "..", "readme-ext");
	rmSync(extDir, { recursive: true, force: true });
	mkdirSync(extDir);
	writeFileSync(path.join(extDir, "index.ts"), code);
	const agentDir = mkdtempSync(path.join(tmpdir(), "pi-agent-"));

	const saved = process.cwd();
	process.chdir(WS); // the example's workspace is pi's cwd
	let session;
	try {
		const loader = new DefaultResourceLoader({ cwd: WS, agentDir, additionalExtensionPaths: [extDir] });
		await loader.reload();
		const loaded = loader.getExtensions();
		assert.deepEqual(loaded.errors, []);
		assert.equal(loaded.extensions.length, 1);
		({ session } = await createAgentSession({
			cwd: WS,
			agentDir,
			resourceLoader: loader,
			sessionManager: SessionManager.inMemory(),
		}));
		const errors = [];
		session.extensionRunner.onError((e) => errors.push(e));

		// The model's bash tool is the extension's.
		const bash = session.agent.state.tools.find((t) => t.name === "bash");
		assert.ok(bash, "no bash tool");
		const r = await bash.execute("call-1", { command: "id -u; pwd; echo $HOME; echo $ANTHROPIC_API_KEY" });
		assert.equal(text(r), "1000\n/work\n/home/agent\n\n");
		assert.equal(containers().length, 1);

		// A !command of the user.
		const handled = await session.extensionRunner.emitUserBash({
			type: "user_bash",
			command: "hostname",
			excludeFromContext: false,
			cwd: WS,
		});
		assert.ok(handled?.operations, "user_bash gave no operations");
		const user = await session.executeBash("echo from-user; id -u", undefined, { operations: handled.operations });
		assert.equal(user.output, "from-user\n1000\n");
		assert.equal(user.exitCode, 0);
		assert.equal(containers().length, 1, "the !command ran in the turn's container");

		// agent_end ends the turn; session_shutdown disposes.
		await session.extensionRunner.emit({ type: "agent_end", messages: [] });
		assert.deepEqual(containers(), []);
		assert.equal(text(await bash.execute("call-2", { command: "echo again" })), "again\n");
		await session.extensionRunner.emit({ type: "session_shutdown", reason: "quit" });
		assert.deepEqual(containers(), []);
		await rejectsWith(bash.execute("call-3", { command: "true" }), /exec after dispose/);
		assert.deepEqual(errors, []);
	} finally {
		process.chdir(saved);
		session?.dispose();
		rmSync(agentDir, { recursive: true, force: true });
	}
});

// pi's RPC protocol has a bash command of its own (pi --mode rpc, {"type":
// "bash"}): pi runs it with its local backend and emits no event an extension
// could take it with (pi 0.74.2, AgentSession.executeBash without operations).
// clients/pi/README.md says so; this test holds the README to it: the command
// runs on the host as pi's own process, with pi's HOME, and no container
// starts. If pi ever routes it through extensions, this fails and the README
// changes with it.
test("pi's RPC bash command runs on the host, outside the extension, as the README says", T, async () => {
	const extDir = path.join(HERE, "..", "readme-ext");
	assert.ok(statSync(path.join(extDir, "index.ts")).isFile(), "the README test writes the extension first");
	const readme = readFileSync(process.env.PITEST_README, "utf8");
	assert.match(readme, /RPC mode's `bash` command[^]*runs on the host/, "the README says where RPC bash runs");
	const agentDir = mkdtempSync(path.join(tmpdir(), "pi-agent-"));
	const cli = path.join(HERE, "..", "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");
	const child = spawn(process.execPath, [cli, "--mode", "rpc", "--no-session", "-e", extDir], {
		cwd: WS,
		env: { ...process.env, PI_CODING_AGENT_DIR: agentDir },
		stdio: ["pipe", "pipe", "pipe"],
	});
	try {
		let out = "";
		const answered = new Promise((resolve, reject) => {
			child.stdout.on("data", (d) => {
				out += d;
				const line = out.split("\n").find((l) => l.includes('"command":"bash"'));
				if (line) resolve(JSON.parse(line));
			});
			child.on("exit", (code) => reject(new Error(`pi exited ${code} before answering: ${out}`)));
		});
		child.stdin.write(JSON.stringify({ id: "1", type: "bash", command: "id -u; echo $HOME; hostname" }) + "\n");
		const r = await Promise.race([answered, new Promise((_, rej) => setTimeout(() => rej(new Error("no answer in 60 s")), 60000))]);
		assert.equal(r.success, true);
		const [uid, home, host] = r.data.output.split("\n");
		assert.equal(uid, String(process.getuid()));
		assert.equal(home, process.env.HOME);
		assert.equal(host, spawnSync("hostname", { encoding: "utf8" }).stdout.trim());
		assert.deepEqual(containers(), [], "no container started for RPC bash");
	} finally {
		child.stdin.end();
		child.kill("SIGTERM");
		rmSync(agentDir, { recursive: true, force: true });
	}
});
