// mcp.test.mjs - `turninit mcp` with real clients (run by tests/integration/mcp.sh,
// which sets MCPTEST_*): the raw JSON-RPC session, the MCP Inspector CLI, and Claude
// Code against the scripted model of fake-model.mjs. Every server is the real static
// binary as PID 1 of `podman run -i --rm ... IMAGE mcp`.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { startModel, TOOL } from "./fake-model.mjs";

const E = process.env;
const INSPECTOR = `${E.MCPTEST_NPM}/node_modules/@modelcontextprotocol/inspector-cli/build`;
// The agents: as pinned in package-lock.json, or (make mcp-latest) the newest
// releases, named by MCPTEST_CLAUDE/CODEX/GEMINI; a .js file runs under node.
const CLAUDE = E.MCPTEST_CLAUDE || `${E.MCPTEST_NPM}/node_modules/@anthropic-ai/claude-code/cli.js`;
const CODEX = E.MCPTEST_CODEX || `${E.MCPTEST_NPM}/node_modules/@openai/codex/bin/codex.js`;
const GEMINI = E.MCPTEST_GEMINI || `${E.MCPTEST_NPM}/node_modules/@google/gemini-cli/bundle/gemini.js`;
const argv0 = (bin) => bin.endsWith(".js") ? ["node", bin] : [bin];
const SECRET = "sk-ant-api03-turninit-sentinel-NOT-A-KEY";
const SECRET2 = "turninit-sentinel-of-the-harness";
// What every command's environment is under the main manifest: exactly this.
const ENV = ["HOME=/home/agent", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin", "PWD=/work",
	"SHLVL=1", "TERM=dumb", "_=/bin/env"].join("\n") + "\n";
// A sleep that ends only when it is ended (a cancel, the end of the turn), however
// slow the machine; the polls below are bounded by 60 s and more, which a loaded
// machine does not reach.
// Polls (bounded) until no `sleep 1000` is left, then prints how many are.
const NO_SLEEP = "for i in $(seq 600); do n=$(ps -eo args | grep -c '^sleep 1000'); " +
	"[ \"$n\" = 0 ] && break; sleep 0.1; done; echo left=$n";
// Reads stdin: at its end at once, whatever the client's stdin is.
const STDIN = "read -r line; echo \"read=$? [$line]\"";
// Polls (bounded) until a `sleep 1000` runs.
const SLEEP_UP = "for i in $(seq 600); do ps -eo args | grep -q '^sleep 1000' && break; sleep 0.1; done";

// until(what, cond): polls cond every 50 ms until it holds; fails after 60 s.
async function until(what, cond) {
	for (const t0 = Date.now(); !cond(); await new Promise((r) => setTimeout(r, 50)))
		if (Date.now() - t0 > 60000) throw new Error(`not within 60 s: ${what}`);
}

// podman run of README's "Use with any MCP agent", for image, with more podman flags.
function server(image = E.MCPTEST_IMAGE, flags = []) {
	if (image === "bridge") return bridge();
	return ["podman", "run", "-i", "--rm", "--network", "none", ...flags,
		"--tmpfs", "/home/agent:rw,mode=0700,size=64m,U", "-v", `${E.MCPTEST_WORKSPACE}:/work`, image, "mcp"];
}

// The sidecar's agent side: `turninit mcp --socket` as uid 1000 in a container
// that shares the listen container's socket directory (mcp.sh starts that one).
function bridge() {
	return ["podman", "run", "-i", "--rm", "--network", "none", "--user", "1000:1000",
		"-v", `${E.MCPTEST_SOCKDIR}:/run/turninit`, "--entrypoint", "/sbin/turninit",
		E.MCPTEST_IMAGE_BASE, "mcp", "--socket", "/run/turninit/turninit.sock"];
}

// run(cmd, args, opts): resolves to { code, stdout, stderr }; opts.noStdin
// closes the child's stdin at once (an agent that reads a prompt from a pipe).
// The child is killed by its pid at opts.timeout (120 s).
function run(cmd, args, opts = {}) {
	return new Promise((resolve) => {
		const c = execFile(cmd, args, { timeout: 120000, maxBuffer: 1 << 24, killSignal: "SIGKILL", ...opts },
			(err, stdout, stderr) =>
				resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr }));
		if (opts.noStdin) c.stdin.end();
	});
}

// --- the raw session: lines in, lines out ---------------------------------------------
function session(image) {
	const argv = server(image);
	const p = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
	let buf = "", stderr = "";
	const lines = [], waiters = [];
	p.stdout.setEncoding("utf8");
	p.stdout.on("data", (d) => {
		buf += d;
		let i;
		while ((i = buf.indexOf("\n")) >= 0) {
			lines.push(buf.slice(0, i));
			buf = buf.slice(i + 1);
		}
		while (waiters.length && lines.length) waiters.shift()(lines.shift());
	});
	p.stderr.on("data", (d) => (stderr += d));
	const exited = new Promise((resolve) => p.on("exit", (code, sig) => resolve(code ?? 128 + (sig === "SIGINT" ? 2 : 15))));
	const killer = setTimeout(() => p.kill("SIGKILL"), 240000);
	exited.then(() => clearTimeout(killer));
	return {
		p, exited,
		stderr: () => stderr,
		send: (m) => p.stdin.write((typeof m === "string" ? m : JSON.stringify(m)) + "\n"),
		// the next line, parsed; fails after ms
		next: (ms = 90000) => new Promise((resolve, reject) => {
			const t = setTimeout(() => reject(new Error(`no line within ${ms} ms; stderr: ${stderr}`)), ms);
			const take = (l) => { clearTimeout(t); resolve(JSON.parse(l)); };
			if (lines.length) take(lines.shift()); else waiters.push(take);
		}),
		end: () => p.stdin.end(),
	};
}

const rpc = (id, method, params) => ({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
const call = (id, command, more = {}) => rpc(id, "tools/call", { name: "bash", arguments: { command, ...more } });
const textOf = (result) => result.content.map((c) => c.text).join("");

test("r-lifecycle: initialize negotiates the version, ping, initialized is not answered", async () => {
	const s = session();
	s.send(rpc(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }));
	const init = await s.next();
	assert.equal(init.id, 1);
	assert.equal(init.result.protocolVersion, "2025-11-25");
	assert.equal(init.result.serverInfo.name, "turninit");
	assert.deepEqual(init.result.capabilities, { tools: { listChanged: false } });
	s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
	s.send(rpc(2, "initialize", { protocolVersion: "2024-11-05" }));
	assert.equal((await s.next()).result.protocolVersion, "2024-11-05");
	s.send(rpc(3, "initialize", { protocolVersion: "1999-01-01" }));
	assert.equal((await s.next()).result.protocolVersion, "2025-11-25");
	s.send(rpc("p", "ping"));
	assert.deepEqual(await s.next(), { jsonrpc: "2.0", id: "p", result: {} });
	s.end();
	assert.equal(await s.exited, 0, "end of stdin ends the turn: exit 0");
});

test("r-errors: JSON-RPC error codes, and the session goes on", async () => {
	const s = session();
	const cases = [
		["not json", null, -32700],
		["[1,2]", null, -32600],
		[JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" }), 1, -32600],
		[JSON.stringify({ jsonrpc: "2.0", id: 1.5, method: "ping" }), null, -32600],
		[JSON.stringify(rpc(2, "resources/list")), 2, -32601],
		[JSON.stringify(rpc(3, "tools/call", { arguments: {} })), 3, -32602],
		[JSON.stringify(rpc(4, "tools/call", { name: "nope", arguments: {} })), 4, -32602],
		// valid JSON the strict parser refuses: still answered under its id
		[JSON.stringify(call(6, "a\u0000b")), 6, -32602],
		[JSON.stringify({ jsonrpc: "2.0", id: 7 }), 7, -32600],
	];
	for (const [line, id, code] of cases) {
		s.send(line);
		const r = await s.next();
		assert.equal(r.id, id, line);
		assert.equal(r.error.code, code, `${line}: ${JSON.stringify(r)}`);
	}
	s.send({ jsonrpc: "2.0", method: "notifications/whatever" });
	s.send({ jsonrpc: "2.0", id: 9, result: {} });   // a response: nothing to answer
	s.send(call(5, "echo still here"));
	assert.deepEqual((await s.next()).result, { content: [{ type: "text", text: "still here\n" }], isError: false });
	s.end();
	assert.equal(await s.exited, 0);
});

test("r-arguments: invalid arguments are a tool error the model can read", async () => {
	const s = session();
	const cases = [
		[{}, 'the argument "command" is required: a non-empty string'],
		[{ command: "" }, 'the argument "command" is required: a non-empty string'],
		[{ command: "true", timeout: 0 }, 'the argument "timeout" must be an integer of at least 1 (seconds; at most 600 are used)'],
		[{ command: "true", timeout: "5" }, 'the argument "timeout" must be an integer of at least 1 (seconds; at most 600 are used)'],
		[{ command: "true", cwd: "/" }, 'unknown argument "cwd": the tool takes "command" and "timeout"'],
	];
	let id = 0;
	for (const [args, text] of cases) {
		s.send(rpc(++id, "tools/call", { name: "bash", arguments: args }));
		assert.deepEqual((await s.next()).result, { content: [{ type: "text", text }], isError: true }, JSON.stringify(args));
	}
	s.end();
	await s.exited;
});

test("r-cancel: notifications/cancelled ends the command, and the call is not answered", async () => {
	const s = session();
	s.send(call(5, "sleep 1000"));
	s.send(call(6, `${SLEEP_UP}; echo up`));
	assert.equal(textOf((await s.next()).result), "up\n");
	s.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5, reason: "test" } });
	s.send(call(7, NO_SLEEP));
	const r = await s.next();
	assert.equal(r.id, 7, `no answer to the cancelled call: ${JSON.stringify(r)}`);
	assert.equal(textOf(r.result), "left=0\n");
	s.send(rpc(8, "ping"));
	assert.equal((await s.next()).id, 8);
	s.end();
	assert.equal(await s.exited, 0);
});

test("r-progress: a call with a progressToken gets notifications/progress with its last line", async () => {
	const s = session();
	// The command runs until the first notification has come: then the file
	// it waits for is made in the workspace (its /work), however slow the machine.
	const name = `.progress-go-${process.pid}`, go = join(E.MCPTEST_WORKSPACE, name);
	rmSync(go, { force: true });
	s.send(rpc(1, "tools/call", { name: "bash",
		arguments: { command: `echo one; until [ -e ./${name} ]; do sleep 0.1; done; echo two` },
		_meta: { progressToken: "tok" } }));
	const seen = [];
	let m;
	while (!("id" in (m = await s.next()))) {
		seen.push(m);
		writeFileSync(go, "");
	}
	rmSync(go, { force: true });
	assert.equal(textOf(m.result), "one\ntwo\n");
	assert.ok(seen.length >= 1, "at least one progress notification before the end");
	seen.forEach((n, i) => {
		assert.equal(n.method, "notifications/progress");
		assert.equal(n.params.progressToken, "tok");
		assert.equal(n.params.progress, i + 1);
		assert.equal(n.params.message, "one");
	});
	s.end();
	await s.exited;
});

test("r-progress-not-after-timeout: a call whose timeout fires gets no progress, only its result, in both modes", async () => {
	for (const image of [E.MCPTEST_IMAGE, "bridge"]) {
		const s = session(image);
		// the timeout and the first progress fall due at the same moment (2 s);
		// through the bridge, the server's answer comes after it
		s.send(rpc(1, "tools/call", { name: "bash", arguments: { command: "sleep 30", timeout: 2 },
			_meta: { progressToken: "tok" } }));
		const m = await s.next();
		assert.equal(m.id, 1, `${image}: the result first, no notification: ${JSON.stringify(m)}`);
		assert.equal(textOf(m.result), "[timed out after 2 s: the command was stopped (SIGTERM, then SIGKILL)]\n");
		s.end();
		await s.exited;
	}
});

test("r-concurrency: calls past limits.concurrency wait for a slot", async () => {
	const s = session(E.MCPTEST_IMAGE_SMALL);   // concurrency 2
	const t0 = Date.now();
	for (const id of [1, 2, 3]) s.send(call(id, `sleep 1; echo ${id}`));
	const got = {};
	for (let i = 0; i < 3; i++) {
		const r = await s.next();
		got[r.id] = [textOf(r.result), Date.now() - t0];
	}
	assert.deepEqual(Object.keys(got).sort(), ["1", "2", "3"]);
	for (const id of [1, 2, 3]) assert.equal(got[id][0], `${id}\n`);
	assert.ok(got[3][1] >= 2000, `the third waited for a slot: ${got[3][1]} ms`);
	s.end();
	await s.exited;
});

test("r-sigint: SIGINT ends the turn: the running call is answered, exit 130", async () => {
	const s = session();
	s.send(call(1, "echo started; sleep 1000"));
	s.send(call(2, SLEEP_UP));
	await s.next();
	s.p.kill("SIGINT");
	const r = await s.next();
	assert.equal(r.id, 1);
	assert.equal(r.result.isError, true);
	assert.equal(textOf(r.result), "started\n[stopped: the session ended while it ran (SIGTERM, then SIGKILL)]\n");
	assert.equal(await s.exited, 130);
});

// --- the MCP Inspector CLI ------------------------------------------------------------
// Version 1.0.3 looks up ../package.json from its current directory: run from build/.
async function inspector(args, image, flags) {
	const s = server(image, flags);
	const r = await run("node", ["index.js", s[0], ...args, "--", ...s.slice(1)], { cwd: INSPECTOR });
	return { ...r, json: r.code === 0 ? JSON.parse(r.stdout) : null };
}
const inspectCall = (command, more = [], image, flags) =>
	inspector(["--method", "tools/call", "--tool-name", "bash", "--tool-arg", `command=${command}`, ...more], image, flags);

test("i-tools-list: one tool, bash, described from the manifest", async () => {
	const r = await inspector(["--method", "tools/list"]);
	assert.equal(r.code, 0, r.stderr);
	assert.equal(r.json.tools.length, 1);
	const t = r.json.tools[0];
	assert.equal(t.name, "bash");
	assert.deepEqual(t.inputSchema.required, ["command"]);
	assert.equal(t.inputSchema.properties.timeout.maximum, 600);
	for (const fact of ["bash --noprofile --norc -c", "starts in /work", "HOME is /home/agent",
		"PATH, LANG, TERM, HOME", "TZ, LC_*", "after 600 seconds", "longer than 30000 bytes", "Up to 8 calls"])
		assert.ok(t.description.includes(fact), `description says "${fact}": ${t.description}`);
	assert.equal(t.outputSchema, undefined);
});

test("i-echo: echo hi", async () => {
	const r = await inspectCall("echo hi");
	assert.deepEqual(r.json, { content: [{ type: "text", text: "hi\n" }], isError: false });
});

test("i-stderr: stderr comes back with stdout", async () => {
	const r = await inspectCall("echo to-stdout; sleep 0.2; echo to-stderr >&2");
	assert.deepEqual(r.json, { content: [{ type: "text", text: "to-stdout\nto-stderr\n" }], isError: false });
});

test("i-exit-3: exit 3 is an error with its code", async () => {
	const r = await inspectCall("echo bye; exit 3");
	assert.deepEqual(r.json, { content: [{ type: "text", text: "bye\n[exit code 3]\n" }], isError: true });
});

test("i-timeout: a timeout is said in words", async () => {
	const r = await inspectCall("sleep 30", ["timeout=1"]);
	assert.deepEqual(r.json, { content: [{ type: "text",
		text: "[timed out after 1 s: the command was stopped (SIGTERM, then SIGKILL)]\n" }], isError: true });
	const m = await inspectCall("sleep 30", [], E.MCPTEST_IMAGE_SMALL);   // limits.timeout_s 3
	assert.equal(m.json.content[0].text, "[timed out after 3 s: the command was stopped (SIGTERM, then SIGKILL)]\n");
});

test("i-signal: a signal is said by name", async () => {
	const r = await inspectCall("echo x; kill -KILL $$");
	assert.deepEqual(r.json, { content: [{ type: "text", text: "x\n[killed by signal 9 (SIGKILL)]\n" }], isError: true });
});

test("i-unknown-tool: an unknown tool is a JSON-RPC error", async () => {
	const r = await inspector(["--method", "tools/call", "--tool-name", "nope"]);
	assert.notEqual(r.code, 0);
	assert.match(r.stderr, /Unknown tool: nope/);
});

test("i-utf8-tabs: UTF-8 and tabs come through, an invalid byte as U+FFFD", async () => {
	const r = await inspectCall("printf 'caf\\303\\251\\tx\\ty\\n\\342\\202\\254 \\377 end\\n'");
	assert.deepEqual(r.json, { content: [{ type: "text", text: "café\tx\ty\n€ \uFFFD end\n" }], isError: false });
});

test("i-env: the exact environment", async () => {
	const r = await inspectCall("env | sort");
	assert.deepEqual(r.json, { content: [{ type: "text", text: ENV }], isError: false });
});

test("i-env-container: what the manifest allows of the container's own environment, nothing else", async () => {
	const r = await inspectCall("env | sort", [], E.MCPTEST_IMAGE,
		["-e", "TZ=Europe/Paris", "-e", `ANTHROPIC_API_KEY=${SECRET}`, "-e", "BASH_ENV=/tmp/x", "-e", "LC_ALL=C"]);
	const want = ENV.replace("LANG=C.UTF-8\n", "LANG=C.UTF-8\nLC_ALL=C\n").replace("TERM=dumb\n", "TERM=dumb\nTZ=Europe/Paris\n");
	assert.deepEqual(r.json, { content: [{ type: "text", text: want }], isError: false });
});

test("i-cut: output past limits.result_bytes keeps its head and tail", async () => {
	const r = await inspectCall("seq 1 3000", [], E.MCPTEST_IMAGE_SMALL);   // result_bytes 1000
	const all = Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join("");
	const head = all.slice(0, 500), tail = all.slice(-500);
	const cut = all.length - 1000;
	const nl = head.endsWith("\n") ? "" : "\n";
	assert.equal(r.json.content[0].text,
		`${head}${nl}[... ${cut} bytes of output cut here: a result keeps the first 500 and the last 500 bytes ...]\n${tail}`);
	assert.equal(r.json.isError, false);
});

// --- the sidecar bridge, with the Inspector --------------------------------------------
test("b-tools-list: the bridge describes the listen server's manifest", async () => {
	const [direct, bridged] = await Promise.all([inspector(["--method", "tools/list"]),
		inspector(["--method", "tools/list"], "bridge")]);
	assert.equal(bridged.code, 0, bridged.stderr);
	assert.deepEqual(bridged.json, direct.json);
});

test("b-results: the same results through the bridge", async () => {
	for (const [command, text, isError] of [["echo hi", "hi\n", false], ["echo bye; exit 3", "bye\n[exit code 3]\n", true],
		["env | sort", ENV, false], ["echo x; kill -KILL $$", "x\n[killed by signal 9 (SIGKILL)]\n", true]]) {
		const r = await inspectCall(command, [], "bridge");
		assert.deepEqual(r.json, { content: [{ type: "text", text }], isError }, command);
	}
	const t = await inspectCall("sleep 30", ["timeout=1"], "bridge");
	assert.equal(t.json.content[0].text, "[timed out after 1 s: the command was stopped (SIGTERM, then SIGKILL)]\n");
});

test("b-cancel: a cancel through the bridge ends the command in the listen container", async () => {
	const s = session("bridge");
	s.send(call(5, "sleep 1000"));
	s.send(call(6, `${SLEEP_UP}; echo up`));
	assert.equal(textOf((await s.next()).result), "up\n");
	s.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 5 } });
	s.send(call(7, NO_SLEEP));
	const r = await s.next();
	assert.equal(r.id, 7, JSON.stringify(r));
	assert.equal(textOf(r.result), "left=0\n");
	s.end();
	assert.equal(await s.exited, 0);
});

test("b-end-answers: at the end of stdin the bridge answers what still runs, as turninit mcp does", async () => {
	for (const image of [E.MCPTEST_IMAGE, "bridge"]) {
		const s = session(image);
		s.send(call(1, "echo started; sleep 1000"));
		s.send(call(2, SLEEP_UP));
		await s.next();
		s.end();
		const r = await s.next();
		assert.equal(r.id, 1, image);
		assert.deepEqual(r.result, { content: [{ type: "text",
			text: "started\n[stopped: the session ended while it ran (SIGTERM, then SIGKILL)]\n" }], isError: true }, image);
		assert.equal(await s.exited, 0, image);
	}
});

test("b-end-then-signal: the end of stdin, then SIGTERM: the call is still answered, exit 0", async () => {
	for (const [i, image] of [E.MCPTEST_IMAGE, "bridge"].entries()) {
		const s = session(image);
		// The command outlives SIGTERM (its trap makes a file in the workspace,
		// its /work, and it sleeps again): SIGTERM is sent once the end of
		// stdin has reached it, however slow the machine.
		const name = `.end-term-${process.pid}-${i}`, mark = join(E.MCPTEST_WORKSPACE, name);
		rmSync(mark, { force: true });
		s.send(call(1, `trap ': > ./${name}' TERM; echo started; while :; do sleep 1000 & wait; done 2>/dev/null`));
		s.send(call(2, SLEEP_UP));
		await s.next();
		s.end();
		await until(`the end of stdin reached the command (${image})`, () => existsSync(mark));
		rmSync(mark, { force: true });
		s.p.kill("SIGTERM");
		const r = await s.next(60000);
		assert.equal(r.id, 1, image);
		assert.equal(textOf(r.result), "started\n[stopped: the session ended while it ran (SIGTERM, then SIGKILL)]\n", image);
		assert.equal(await s.exited, 0, image);
	}
});

test("b-long-line: a line past 1048576 bytes is an error with id null, in both modes", async () => {
	for (const image of [E.MCPTEST_IMAGE, "bridge"]) {
		const s = session(image);
		s.send(call(1, "echo " + "x".repeat(1200000)));
		const r = await s.next();
		assert.equal(r.id, null, image);
		assert.equal(r.error.code, -32600, image);
		s.send(rpc(2, "ping"));
		assert.equal((await s.next()).id, 2, image);
		s.end();
		assert.equal(await s.exited, 0, image);
	}
});

test("b-refused-caller: a bridge whose uid the server does not admit says why, exit 125", async () => {
	const argv = bridge();
	argv[argv.indexOf("1000:1000")] = "4242:4242";   // callers.uids is [1000]
	const r = await run(argv[0], argv.slice(1), { timeout: 60000 });
	assert.equal(r.code, 125);
	assert.match(r.stderr, /^turninit: mcp: the server refused info: .*uid 4242.*callers\.uids/m);
	assert.equal(r.stdout, "");
});

test("b-refused-server: the bridge refuses a server of another uid, and says so", async () => {
	const argv = bridge();
	argv.splice(argv.indexOf("mcp") + 1, 0, "--server-uid", "4242");
	const r = await run(argv[0], argv.slice(1), { timeout: 60000 });
	assert.equal(r.code, 125);
	assert.match(r.stderr, /runs as uid 0, not uid 4242/);
});

// --- Claude Code, headless, against the fake model -------------------------------------
// The steps every agent's session takes first: echo, stderr, exit 3, a
// timeout, UTF-8 and tabs, the exact environment.
const COMMON_STEPS = [
	{ command: "echo hi" },
	{ command: "echo to-stdout; sleep 0.2; echo to-stderr >&2" },
	{ command: "echo bye; exit 3" },
	{ command: "sleep 30", timeout: 1 },
	{ command: "printf 'caf\\303\\251\\tx\\ty\\n'" },
	{ command: "env | sort" },
];
const SCRIPTS = {
	basic: [
		...COMMON_STEPS,
		{ tool: "mcp__turninit__nope", input: { command: "echo never" } },
		{ command: STDIN },
	],
	cancel: [{ command: "sleep 1000" }, { command: NO_SLEEP }],
	readme: [{ command: "echo from the README line; pwd" }],
};

let model;
const claudeHome = mkdtempSync(join(E.TMPDIR || "/tmp", "claude-home."));

// claude -p with the fake model; the harness's environment holds two sentinels.
function claude(args, { cwd = claudeHome, env = {} } = {}) {
	const [cmd, ...pre] = argv0(CLAUDE);
	return run(cmd, [...pre, ...args], {
		cwd, timeout: 180000,
		env: {
			PATH: E.PATH, HOME: claudeHome, TMPDIR: E.TMPDIR,
			ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: SECRET, TURNINIT_HARNESS_SECRET: SECRET2,
			DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1", DISABLE_ERROR_REPORTING: "1",
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", ...env,
		},
	});
}

function mcpConfig(image = E.MCPTEST_IMAGE) {
	const f = join(claudeHome, `mcp-${Date.now()}.json`);
	const argv = server(image);
	writeFileSync(f, JSON.stringify({ mcpServers: { turninit: { command: argv[0], args: argv.slice(1) } } }));
	return f;
}

const headless = (script, more = [], opts) => claude(["-p", `TURNINIT-SCRIPT ${script}`, "--output-format", "json",
	"--mcp-config", mcpConfig(), "--strict-mcp-config", "--allowedTools", TOOL, ...more], opts);

// What Claude Code sent back to the model for a step: the tool_result's text.
function sentBack(block) {
	const c = typeof block.content === "string" ? block.content : block.content.map((b) => b.text).join("");
	return { text: c, is_error: block.is_error === true };
}

// One Claude Code session runs the basic script; each test asserts on one step.
let basicRun;
const basic = () => (basicRun ??= (async () => {
	model ??= await startModel(SCRIPTS);
	return headless("basic");
})());
after(() => model?.close());

test("c-session: claude -p ran every step and ended", async () => {
	const r = await basic();
	assert.equal(r.code, 0, r.stderr + r.stdout);
	const out = JSON.parse(r.stdout);
	assert.equal(out.result, "done");
	assert.equal(model.results.anthropic.basic.length, SCRIPTS.basic.length);
});

test("c-echo: what the model is sent for echo hi", async () => {
	await basic();
	assert.deepEqual(sentBack(model.results.anthropic.basic[0]), { text: "hi\n", is_error: false });
});

test("c-stderr", async () => {
	await basic();
	assert.deepEqual(sentBack(model.results.anthropic.basic[1]), { text: "to-stdout\nto-stderr\n", is_error: false });
});

// Claude Code sends the text of a result with isError true without its last newline.
test("c-exit-3", async () => {
	await basic();
	assert.deepEqual(sentBack(model.results.anthropic.basic[2]), { text: "bye\n[exit code 3]", is_error: true });
});

test("c-timeout", async () => {
	await basic();
	assert.deepEqual(sentBack(model.results.anthropic.basic[3]),
		{ text: "[timed out after 1 s: the command was stopped (SIGTERM, then SIGKILL)]", is_error: true });
});

test("c-utf8-tabs", async () => {
	await basic();
	assert.deepEqual(sentBack(model.results.anthropic.basic[4]), { text: "café\tx\ty\n", is_error: false });
});

test("c-env: the exact environment, nothing of Claude Code's", async () => {
	await basic();
	const got = sentBack(model.results.anthropic.basic[5]);
	assert.deepEqual(got, { text: ENV, is_error: false });
	assert.ok(!got.text.includes(SECRET) && !got.text.includes(SECRET2));
});

test("c-unknown-tool: Claude Code answers a tool it does not have itself", async () => {
	await basic();
	const got = sentBack(model.results.anthropic.basic[6]);
	assert.equal(got.is_error, true);
	assert.match(got.text, /No such tool available: mcp__turninit__nope/);
});

test("c-cancel: Claude Code's tool timeout cancels the call, and nothing is left running", async () => {
	await basic();
	const r = await headless("cancel", [], { env: { MCP_TOOL_TIMEOUT: "3000" } });
	assert.equal(r.code, 0, r.stderr + r.stdout);
	const [cancelled, check] = model.results.anthropic.cancel.map(sentBack);
	console.log(`# Claude Code sent the model, for the cancelled call: ${JSON.stringify(cancelled)}`);
	assert.equal(cancelled.is_error, true);
	assert.match(cancelled.text, /timed out|cancel/i);
	assert.deepEqual(check, { text: "left=0\n", is_error: false });
});

test("c-stdin: stdin is at its end", async () => {
	await basic();
	assert.deepEqual(sentBack(model.results.anthropic.basic[7]), { text: "read=1 []\n", is_error: false });
});

test("c-disallowed-bash: --disallowedTools Bash leaves the model only turninit's shell", async () => {
	await basic();
	const from = model.requests.anthropic.length;
	const r = await headless("readme", ["--disallowedTools", "Bash"]);
	assert.equal(r.code, 0, r.stderr + r.stdout);
	const offered = model.requests.anthropic.slice(from).filter((q) => (q.tools || []).some((t) => t.name === TOOL));
	assert.ok(offered.length > 0);
	for (const q of offered) assert.ok(!q.tools.some((t) => t.name === "Bash"), "Bash not offered");
	const before = model.requests.anthropic.slice(0, from).filter((q) => (q.tools || []).some((t) => t.name === TOOL));
	assert.ok(before.some((q) => q.tools.some((t) => t.name === "Bash")), "without it, Bash is offered");
});

test("c-readme: README's claude mcp add line works as written", async () => {
	await basic();
	const readme = readFileSync(E.MCPTEST_README, "utf8");
	const m = /^ {4}(claude mcp add turninit -- podman run .*(?:\\\n {8}.*)*)$/m.exec(readme);
	assert.ok(m, "README has the claude mcp add line");
	// docs/mcp.md gives Claude Code the same line, twice (top and "Claude Code")
	const doc = readFileSync(E.MCPTEST_DOCS, "utf8");
	const claudeSection = doc.slice(doc.indexOf("\n### Claude Code"));
	assert.ok(claudeSection.includes(`    ${m[1]}\n`), "docs/mcp.md's Claude Code line is README's");
	const line = m[1].replace(/\\\n\s*/g, " ").replace("IMAGE", E.MCPTEST_IMAGE);
	const project = mkdtempSync(join(E.TMPDIR || "/tmp", "project."));
	chmodSync(project, 0o755);   // uid 1000 enters /work
	// "$PWD:/work": the project directory is the workspace
	const add = await run("sh", ["-c", line.replace(/^claude /, `${argv0(CLAUDE).join(" ")} `)], {
		cwd: project, env: { PATH: E.PATH, HOME: claudeHome, DISABLE_AUTOUPDATER: "1" },
	});
	assert.equal(add.code, 0, add.stderr + add.stdout);
	const r = await claude(["-p", "TURNINIT-SCRIPT readme", "--output-format", "json", "--allowedTools", TOOL],
		{ cwd: project });
	assert.equal(r.code, 0, r.stderr + r.stdout);
	assert.deepEqual(sentBack(model.results.anthropic.readme.at(-1)), { text: "from the README line\n/work\n", is_error: false });
});

// --- Codex CLI and Gemini CLI, headless, against the fake model --------------------------
// Each agent runs one session of the agent script with the configuration
// docs/mcp.md gives for it, taken from the page; each test asserts on what the
// agent sent back to the model for one step. The project directory (/work) is
// the workspace; the agent's environment holds sentinels that no command may see.
const AGENT_SCRIPT = [
	...COMMON_STEPS,
	{ command: STDIN },
	// what Gemini CLI adds to every call, and tells the model to set
	{ command: "echo waited", wait_for_previous: true },
];
const AGENT_WANT = [
	["echo", "hi\n", false],
	["stderr", "to-stdout\nto-stderr\n", false],
	["exit-3", "bye\n[exit code 3]\n", true],
	["timeout", "[timed out after 1 s: the command was stopped (SIGTERM, then SIGKILL)]\n", true],
	["utf8-tabs", "café\tx\ty\n", false],
	["env", ENV, false],
	["stdin", "read=1 []\n", false],
	["wait-for-previous", "waited\n", false],
];
Object.assign(SCRIPTS, { agent: AGENT_SCRIPT, "agent-cancel": [{ command: "sleep 1000" }, { command: NO_SLEEP }],
	"agent-shell": [{ command: "echo offered" }] });
const AGENT_SECRET = "turninit-sentinel-agent-api-key-NOT-A-KEY";

// The configuration block of docs/mcp.md under a heading, for this suite's
// image and workspace.
function docsBlock(heading, lang) {
	const doc = readFileSync(E.MCPTEST_DOCS, "utf8");
	const at = doc.indexOf(`\n### ${heading}`);
	assert.ok(at >= 0, `docs/mcp.md has "### ${heading}"`);
	const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(doc.slice(at));
	assert.ok(m, `docs/mcp.md has a ${lang} block under ${heading}`);
	assert.ok(m[1].includes('"/path/to/project:/work", "IMAGE", "mcp"'), m[1]);
	return m[1].replace("/path/to/project", E.MCPTEST_WORKSPACE).replace('"IMAGE"', `"${E.MCPTEST_IMAGE}"`);
}

function agentHome(name) {
	return mkdtempSync(join(E.TMPDIR || "/tmp", `${name}-home.`));
}

// How each agent shows the model a result: { text, is_error } (is_error
// undefined where the agent shows no flag).
const AGENTS = {
	codex: {
		wire: "responses",
		// output: [{ "Wall time: S seconds\nOutput:" }, { TEXT }], or a string of its own
		seen(item) {
			if (typeof item.output === "string") return { text: item.output, is_error: undefined };
			assert.match(item.output[0].text, /^Wall time: [0-9.]+ seconds\nOutput:$/);
			return { text: item.output.slice(1).map((c) => c.text).join(""), is_error: undefined };
		},
		// codex exec with config.toml (the docs block, and more), the model
		// provider on the command line
		async run(script, { config = docsBlock("Codex CLI", "toml"), more = [] } = {}) {
			const home = agentHome("codex");
			writeFileSync(join(home, "config.toml"), config);
			const [cmd, ...pre] = argv0(CODEX);
			const r = await run(cmd, [...pre, "exec", "--skip-git-repo-check", "-m", "fake-model",
				"-c", 'model_provider="turninit-fake"',
				"-c", `model_providers.turninit-fake={name="fake",base_url="${model.url}/v1",wire_api="responses",env_key="TURNINIT_FAKE_KEY"}`,
				...more, `TURNINIT-SCRIPT ${script}`], {
				cwd: E.MCPTEST_WORKSPACE, timeout: 180000, noStdin: true,
				env: { PATH: E.PATH, HOME: home, CODEX_HOME: home, TMPDIR: E.TMPDIR,
					TURNINIT_FAKE_KEY: AGENT_SECRET, TURNINIT_HARNESS_SECRET: SECRET2 },
			});
			return { ...r, ended: r.code === 0 && /^done$/m.test(r.stdout) };
		},
		offered: (q) => (q.tools || []).flatMap((t) => t.type === "namespace" ? (t.tools || []).map((f) => `${t.name}.${f.name}`) : [t.name]),
		shell: ["exec_command", "write_stdin", "shell", "local_shell"],
		noShell: { more: ["-c", "features.shell_tool=true"] },
		cancel: { more: ["-c", "mcp_servers.turninit.tool_timeout_sec=3"] },
	},
	gemini: {
		wire: "gemini",
		// success: output "<untrusted_context>\nTEXT\n</untrusted_context>";
		// isError: error "MCP tool 'bash' reported tool error ... with response: JSON"
		seen(fr) {
			const r = fr.response;
			if (r.output !== undefined) {
				const m = /^<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>$/.exec(r.output);
				assert.ok(m, r.output);
				return { text: m[1], is_error: false };
			}
			const m = / with response: (\[[\s\S]*\])$/.exec(r.error);
			if (!m) return { text: r.error, is_error: true };
			const inner = JSON.parse(m[1])[0].functionResponse.response;
			return { text: inner.content ? inner.content.map((c) => c.text).join("") : JSON.stringify(inner), is_error: true };
		},
		// gemini -p with ~/.gemini/settings.json: the docs block, with the
		// auth a Gemini API key's login writes
		async run(script, { edit = (s) => s, args = [] } = {}) {
			const home = agentHome("gemini");
			const settings = edit(JSON.parse(docsBlock("Gemini CLI", "json")));
			settings.security = { auth: { selectedType: "gemini-api-key" } };
			mkdirSync(join(home, ".gemini"));
			writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify(settings, null, 2));
			const [cmd, ...pre] = argv0(GEMINI);
			const r = await run(cmd, [...pre, "--skip-trust", "-m", "gemini-2.5-flash", "-o", "json", ...args,
				"-p", `TURNINIT-SCRIPT ${script}`], {
				cwd: E.MCPTEST_WORKSPACE, timeout: 180000, noStdin: true,
				env: { PATH: E.PATH, HOME: home, TMPDIR: E.TMPDIR, GEMINI_API_KEY: AGENT_SECRET,
					GOOGLE_GEMINI_BASE_URL: model.url, TURNINIT_HARNESS_SECRET: SECRET2, NO_COLOR: "1" },
			});
			let out = null;
			try { out = JSON.parse(r.stdout); } catch { /* below */ }
			return { ...r, ended: r.code === 0 && out?.response === "done" };
		},
		offered: (q) => (q.tools || []).flatMap((t) => t.functionDeclarations || []).map((f) => f.name),
		shell: ["run_shell_command"],
		// headless, Gemini CLI offers no tool that asks first: the shell is
		// offered only with --approval-mode yolo, so both runs use it
		withLine: { args: ["--approval-mode", "yolo"] },
		noShell: { args: ["--approval-mode", "yolo"], edit: (s) => { delete s.tools; return s; } },
		cancel: { edit: (s) => { s.mcpServers.turninit.timeout = 3000; return s; } },
	},
};

for (const [name, agent] of Object.entries(AGENTS)) {
	let session;
	const agentRun = () => (session ??= (async () => {
		model ??= await startModel(SCRIPTS);
		return agent.run("agent");
	})());
	const sent = () => model.results[agent.wire].agent.map(agent.seen);

	test(`${name}-session: every step ran with the docs/mcp.md configuration, and the session ended`, async () => {
		const r = await agentRun();
		assert.ok(r.ended, `${name} exit ${r.code}: ${r.stderr.slice(-2000)}\n${r.stdout.slice(-2000)}`);
		assert.equal(model.results[agent.wire].agent.length, AGENT_SCRIPT.length);
	});

	AGENT_WANT.forEach(([what, text, isError], i) => {
		test(`${name}-${what}`, async () => {
			await agentRun();
			const got = sent()[i];
			assert.equal(got.text, text, JSON.stringify(model.results[agent.wire].agent[i]));
			if (got.is_error !== undefined) assert.equal(got.is_error, isError);
			if (what === "env")
				for (const secret of [AGENT_SECRET, SECRET2]) assert.ok(!got.text.includes(secret));
		});
	});

	test(`${name}-cancel: the agent's own tool timeout cancels the call, and nothing is left running`, async () => {
		await agentRun();
		const r = await agent.run("agent-cancel", agent.cancel);
		assert.ok(r.ended, `${name} exit ${r.code}: ${r.stderr.slice(-2000)}`);
		const [cancelled, check] = model.results[agent.wire]["agent-cancel"].map(agent.seen);
		console.log(`# ${name} sent the model, for the cancelled call: ${JSON.stringify(cancelled)}`);
		assert.match(cancelled.text, /timed out/i);
		assert.equal(check.text, "left=0\n");
	});

	test(`${name}-no-shell: with the docs/mcp.md configuration the model has no other shell`, async () => {
		await agentRun();
		const seen = (from) => model.requests[agent.wire].slice(from).map(agent.offered)
			.filter((tools) => tools.some((t) => /turninit.*bash|bash$/.test(t)));
		let from = 0;
		if (agent.withLine) {
			from = model.requests[agent.wire].length;
			const r = await agent.run("agent-shell", agent.withLine);
			assert.ok(r.ended, `${name} exit ${r.code}: ${r.stderr.slice(-2000)}`);
		}
		const docs = seen(from);
		assert.ok(docs.length > 0, "the tool was offered");
		for (const tools of docs) for (const sh of agent.shell) assert.ok(!tools.includes(sh), `${sh} offered: ${tools}`);
		from = model.requests[agent.wire].length;
		const r = await agent.run("agent-shell", agent.noShell);
		assert.ok(r.ended, `${name} exit ${r.code}: ${r.stderr.slice(-2000)}`);
		const without = seen(from);
		assert.ok(without.length > 0 && without.every((tools) => agent.shell.some((sh) => tools.includes(sh))),
			`without the line, the agent's own shell is offered: ${without[0]}`);
	});
}

// Gemini's wait_for_previous, with no client: the reproducer of the report.
test("r-client-arguments: an argument a client adds of its own is ignored; others are still refused", async () => {
	const s = session();
	s.send(rpc(0, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } }));
	await s.next();
	s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
	s.send(call(1, "echo waited", { wait_for_previous: true }));
	assert.deepEqual((await s.next()).result, { content: [{ type: "text", text: "waited\n" }], isError: false });
	s.send(call(2, "echo never > never", { wait_for_previous: true, cwd: "/tmp" }));
	assert.deepEqual((await s.next()).result, { content: [{ type: "text",
		text: 'unknown argument "cwd": the tool takes "command" and "timeout"' }], isError: true });
	s.send(call(3, "test -e never; echo never=$?; env | sort", { wait_for_previous: "x" }));
	assert.deepEqual((await s.next()).result, { content: [{ type: "text", text: "never=1\n" + ENV }], isError: false });
	s.end();
	assert.equal(await s.exited, 0);
});
