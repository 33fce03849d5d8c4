// turninit-pi - the pi coding agent's BashOperations, run in turninit containers.
//
// createTurninitBashOperations(options) returns the object pi's
// createBashTool(cwd, { operations }) takes. Each command goes as an exec request
// to `turninit serve` in a `podman run -i --rm IMAGE serve` container, which runs
// it with the image's signed manifest: its environment allowlist, a private tmpfs
// HOME, its uid, Landlock and seccomp. One container lives for a turn (until
// endTurn()), or for one call (perCall: true). The protocol is docs/protocol.md
// of the turninit repository; the choices are in its README ("Using turninit
// with pi") and docs/design.md.
//
// No dependencies: pi is only a test dependency (package.json).

import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";

// After the end of stdin, how long turninit gets to exit on its own before the
// container is removed with `podman rm -f`. turninit exits at once when nothing
// runs; a command still running at the end of a turn is killed with the container.
const STOP_GRACE_MS = 1000;
// How long a killed command (timeout, abort) may take to report its exit before
// the whole container is removed: the kill is a SIGKILL, so this only fires when
// the container itself is stuck.
const KILL_WAIT_MS = 10000;
// Bound of every podman call made to remove a container.
const PODMAN_RM_TIMEOUT_MS = 30000;
// Largest timeout_s a manifest can allow (limits.timeout_s, docs/manifest.md).
const TIMEOUT_S_MAX = 86400;
// Bytes of podman's stderr kept for error messages.
const STDERR_TAIL = 4096;

const TRUNCATED_NOTE =
	"\n[turninit: output beyond the image manifest's limits.output_bytes was dropped]\n";

// Containers of every operations object that are running now: removed
// synchronously when the process exits (normally or by process.exit()).
const liveTurns = new Set();
let exitHookInstalled = false;

function installExitHook() {
	if (exitHookInstalled) return;
	exitHookInstalled = true;
	process.on("exit", () => {
		for (const turn of liveTurns) turn.removeSync();
	});
}

function fail(message) {
	throw new TypeError(`turninit-pi: ${message}`);
}

function checkOptions(options) {
	if (options === null || typeof options !== "object") fail("options must be an object");
	const known = new Set(["image", "workspace", "podmanArgs", "serveArgs", "env", "perCall", "home", "network", "podman", "namePrefix", "onStderr"]);
	for (const k of Object.keys(options)) if (!known.has(k)) fail(`unknown option ${k}`);
	const {
		image,
		workspace,
		podmanArgs = [],
		serveArgs = [],
		env = [],
		perCall = false,
		home = "/home/agent",
		network = "none",
		podman = "podman",
		namePrefix = "turninit-pi",
		onStderr,
	} = options;
	if (typeof image !== "string" || image === "") fail("image must be a non-empty string");
	if (!Array.isArray(podmanArgs) || !podmanArgs.every((a) => typeof a === "string"))
		fail("podmanArgs must be an array of strings");
	if (!Array.isArray(serveArgs) || !serveArgs.every((a) => typeof a === "string"))
		fail("serveArgs must be an array of strings");
	// As the manifest's env.allow: a name, or a prefix and "*"; "*" alone is refused.
	if (!Array.isArray(env) || !env.every((n) => typeof n === "string" && /^[A-Za-z_][A-Za-z0-9_]*\*?$/.test(n)))
		fail("env must be an array of variable names (a trailing * matches a prefix; * alone is refused)");
	if (typeof perCall !== "boolean") fail("perCall must be a boolean");
	if (home !== null && (typeof home !== "string" || !home.startsWith("/")))
		fail("home must be an absolute path (the manifest's home) or null");
	if (network !== null && typeof network !== "string") fail("network must be a string or null");
	if (typeof podman !== "string" || podman === "") fail("podman must be a command name or path");
	if (typeof namePrefix !== "string" || !/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(namePrefix))
		fail("namePrefix must be a valid container name");
	if (onStderr !== undefined && typeof onStderr !== "function") fail("onStderr must be a function");
	let ws = null;
	if (workspace !== undefined && workspace !== null) {
		if (typeof workspace !== "object") fail("workspace must be { hostPath, containerPath, mountOptions? }");
		const { hostPath, containerPath = "/work", mountOptions = "" } = workspace;
		if (typeof hostPath !== "string" || hostPath === "") fail("workspace.hostPath must be a path");
		if (typeof containerPath !== "string" || !containerPath.startsWith("/") || containerPath.includes(":"))
			fail("workspace.containerPath must be an absolute path without ':'");
		if (typeof mountOptions !== "string") fail("workspace.mountOptions must be a string");
		if (hostPath.includes(":")) fail("workspace.hostPath must not contain ':' (podman -v syntax)");
		const hostAbs = path.resolve(hostPath);
		let hostReal = hostAbs;
		try {
			hostReal = realpathSync(hostAbs);
		} catch {
			// Checked again when a command runs: pi's cwd must exist then.
		}
		ws = { hostAbs, hostReal, containerPath: path.posix.normalize(containerPath), mountOptions };
	}
	return {
		image, ws, podmanArgs: [...podmanArgs], serveArgs: [...serveArgs], env: [...env], perCall, home, network, podman,
		namePrefix, onStderr, heads: [],
	};
}

// The podman arguments of one turn's container.
function podmanRunArgs(cfg, name) {
	const args = ["run", "-i", "--rm", "--pull", "never", "--name", name, "--label", "turninit-pi=1"];
	if (cfg.network !== null) args.push("--network", cfg.network);
	if (cfg.home !== null) args.push("--tmpfs", `${cfg.home}:rw,mode=0700,size=64m,U`);
	if (cfg.ws) {
		const opt = cfg.ws.mountOptions ? `:${cfg.ws.mountOptions}` : "";
		args.push("-v", `${cfg.ws.hostAbs}:${cfg.ws.containerPath}${opt}`);
	}
	args.push(...cfg.podmanArgs, cfg.image, "serve", ...cfg.serveArgs);
	return args;
}

// mapCwd: pi's working directory (a host path) as a path in the container, or
// undefined (the manifest's workdir) when there is no workspace. Throws what pi's
// local backend throws for a missing directory, and a clear error for a directory
// outside the workspace, which the container cannot see.
function mapCwd(ws, cwd) {
	if (!ws) return undefined;
	if (typeof cwd !== "string" || !existsSync(cwd)) {
		throw new Error(`Working directory does not exist: ${cwd}\nCannot execute bash commands.`);
	}
	const abs = path.resolve(cwd);
	let real = abs;
	try {
		real = realpathSync(abs);
	} catch {
		// keep the resolved path
	}
	for (const [root, dir] of [
		[ws.hostAbs, abs],
		[ws.hostReal, real],
	]) {
		const rel = path.relative(root, dir);
		if (rel === "") return ws.containerPath;
		if (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel)) {
			return path.posix.join(ws.containerPath, ...rel.split(path.sep));
		}
	}
	throw new Error(
		`turninit: working directory ${cwd} is outside the workspace ${ws.hostAbs} (mounted at ${ws.containerPath}); ` +
			"commands cannot run there",
	);
}

// pickEnv: the entries of pi's environment whose names were configured; nothing
// else of it is sent. The manifest's env.allow filters them once more in turninit.
function pickEnv(patterns, env) {
	const source = env ?? process.env;
	const out = {};
	for (const p of patterns) {
		if (p.endsWith("*")) {
			const prefix = p.slice(0, -1);
			for (const [k, v] of Object.entries(source)) {
				if (k.startsWith(prefix) && typeof v === "string") out[k] = v;
			}
		} else if (typeof source[p] === "string") {
			out[p] = source[p];
		}
	}
	return out;
}

// within: P's settling or MS milliseconds, whichever comes first; true if P settled.
function within(p, ms) {
	let timer;
	return Promise.race([
		p.then(() => true),
		new Promise((resolve) => {
			timer = setTimeout(() => resolve(false), ms);
		}),
	]).finally(() => clearTimeout(timer));
}

// One container: `podman run -i --rm IMAGE serve`, its stdin the request stream,
// its stdout the event stream. exec() sends a request and gives a handle whose
// `done` never rejects: it resolves to { exitCode, timedOut, durationMs } or
// { error }.
class Turn {
	constructor(cfg) {
		this.cfg = cfg;
		this.name = `${cfg.namePrefix}-${process.pid}-${randomBytes(6).toString("hex")}`;
		this.cmds = new Map(); // id -> command state
		this.seq = 0;
		this.ended = false;
		this.endReason = "";
		this.stderrTail = "";
		this.stopping = null;
		this.outBuf = "";
		installExitHook();
		liveTurns.add(this);

		const child = spawn(cfg.podman, podmanRunArgs(cfg, this.name), {
			stdio: ["pipe", "pipe", "pipe"],
		});
		this.child = child;
		this.exited = new Promise((resolve) => {
			let done = false;
			const finish = (why) => {
				if (done) return;
				done = true;
				this.onEnd(why);
				resolve();
			};
			child.once("error", (e) => finish(`cannot run ${cfg.podman}: ${e.message}`));
			child.once("close", (code, sig) => finish(sig ? `podman killed by ${sig}` : `podman exited ${code}`));
			// A process that inherited podman's stdout could hold "close" back.
			child.once("exit", (code, sig) => {
				setTimeout(() => finish(sig ? `podman killed by ${sig}` : `podman exited ${code}`), 1000).unref();
			});
		});
		child.stdin.on("error", () => {
			// EPIPE once the container is gone: the exit handler reports it.
		});
		child.stdout.setEncoding("utf8");
		child.stdout.on("data", (s) => this.onStdout(s));
		child.stderr.setEncoding("utf8");
		let errLine = "";
		child.stderr.on("data", (s) => {
			this.stderrTail = (this.stderrTail + s).slice(-STDERR_TAIL);
			if (!cfg.onStderr) return;
			const lines = (errLine + s).split("\n");
			errLine = lines.pop();
			for (const line of lines) cfg.onStderr(line);
		});
		child.stderr.on("end", () => {
			if (cfg.onStderr && errLine !== "") cfg.onStderr(errLine);
		});
		this.updateRef();
	}

	// Idle turns do not keep node running (the exit hook removes their container);
	// a turn with a command, or one being stopped, does.
	updateRef() {
		const busy = this.cmds.size > 0 || this.stopping !== null;
		for (const h of [this.child, this.child.stdin, this.child.stdout, this.child.stderr]) {
			if (h) busy ? h.ref?.() : h.unref?.();
		}
	}

	send(obj) {
		if (this.ended || this.stopping) return;
		this.child.stdin.write(`${JSON.stringify(obj)}\n`);
	}

	exec(request, onData) {
		const id = `c${++this.seq}`;
		const cmd = { id, request: { op: "exec", id, ...request }, onData, state: "sent", killed: false };
		cmd.done = new Promise((resolve) => {
			cmd.resolve = resolve;
		});
		if (this.ended || this.stopping) {
			cmd.resolve({ error: this.endError() });
			return { done: cmd.done, kill() {} };
		}
		this.cmds.set(id, cmd);
		this.updateRef();
		this.send(cmd.request);
		return { done: cmd.done, kill: () => this.kill(cmd) };
	}

	// kill: what pi's local backend does on a timeout or an abort (SIGKILL to the
	// command's process group), then a cancel for whatever left the group. Once the
	// main process is gone turninit kills the rest and writes the exit event.
	kill(cmd) {
		if (cmd.killed || !this.cmds.has(cmd.id)) return;
		cmd.killed = true;
		if (cmd.state === "waiting") {
			this.finish(cmd, { killed: true });
			return;
		}
		this.send({ op: "signal", id: cmd.id, signal: "KILL" });
		this.send({ op: "cancel", id: cmd.id });
		const t = setTimeout(() => {
			if (this.cmds.has(cmd.id)) {
				this.endReason = `command ${cmd.id} did not end within ${KILL_WAIT_MS} ms of its kill`;
				this.stop();
			}
		}, KILL_WAIT_MS);
		t.unref();
	}

	finish(cmd, outcome) {
		if (!this.cmds.delete(cmd.id)) return;
		this.updateRef();
		cmd.resolve(outcome);
	}

	onStdout(s) {
		this.outBuf += s;
		let nl;
		while ((nl = this.outBuf.indexOf("\n")) >= 0) {
			const line = this.outBuf.slice(0, nl);
			this.outBuf = this.outBuf.slice(nl + 1);
			if (line.trim() !== "") this.onEvent(line);
		}
	}

	onEvent(line) {
		let ev;
		try {
			ev = JSON.parse(line);
		} catch {
			this.stderrTail = `${this.stderrTail}\n(not an event: ${line.slice(0, 200)})`.slice(-STDERR_TAIL);
			return;
		}
		const cmd = typeof ev.id === "string" ? this.cmds.get(ev.id) : undefined;
		switch (ev.event) {
			case "started":
				if (cmd) cmd.state = "running";
				break;
			case "output":
				if (cmd) cmd.onData(Buffer.from(ev.data, "base64"));
				break;
			case "exit":
				if (!cmd) break;
				// the audit log's head after this command (serve --audit-log): kept
				// for the caller, an anchor held outside the log (docs/audit.md)
				if (typeof ev.audit_head === "string")
					this.cfg.heads.push({ container: this.name, id: ev.id, head: ev.audit_head });
				if (ev.truncated) cmd.onData(Buffer.from(TRUNCATED_NOTE));
				this.finish(cmd, {
					exitCode: ev.signal === null ? ev.code : 128 + ev.signal,
					timedOut: ev.timed_out === true,
					durationMs: ev.duration_ms,
				});
				this.retryWaiting();
				break;
			case "error":
				if (!cmd) {
					// About a line with no valid id: ours are always valid, so keep it
					// for the message of a later failure.
					this.stderrTail = `${this.stderrTail}\nturninit: ${ev.message}`.slice(-STDERR_TAIL);
					break;
				}
				if (cmd.state !== "sent") break; // about a signal or cancel of a command that is ending
				if (/concurrency limit/.test(ev.message) && !cmd.killed) {
					// Not queued by turninit: sent again when one of ours exits.
					cmd.state = "waiting";
					break;
				}
				this.finish(cmd, { error: new Error(`turninit: ${ev.message}`) });
				break;
			default:
				break;
		}
	}

	retryWaiting() {
		for (const cmd of this.cmds.values()) {
			if (cmd.state === "waiting") {
				cmd.state = "sent";
				this.send(cmd.request);
				return;
			}
		}
	}

	endError() {
		const tail = this.stderrTail.trim();
		return new Error(
			`turninit: the container ${this.name} ended before the command did (${this.endReason || "turn ended"})` +
				(tail ? `:\n${tail}` : ""),
		);
	}

	onEnd(why) {
		this.ended = true;
		if (!this.endReason) this.endReason = why;
		liveTurns.delete(this);
		for (const cmd of [...this.cmds.values()]) this.finish(cmd, { error: this.endError() });
	}

	// stop: end the turn. End of stdin lets turninit cancel what still runs and exit;
	// then `podman rm -f` makes sure the container is gone, whatever podman's client
	// did; the client is killed last if it still has not exited.
	stop() {
		if (this.stopping) return this.stopping;
		this.stopping = (async () => {
			try {
				this.child.stdin.end();
			} catch {
				// already closed
			}
			await within(this.exited, STOP_GRACE_MS);
			await this.podmanRm();
			await within(this.exited, PODMAN_RM_TIMEOUT_MS);
			if (!this.ended) {
				this.child.kill("SIGKILL");
				await within(this.exited, 5000);
			}
			liveTurns.delete(this);
		})();
		this.updateRef();
		return this.stopping;
	}

	podmanRm() {
		return new Promise((resolve) => {
			const p = spawn(this.cfg.podman, ["rm", "-f", "-t", "0", "--ignore", this.name], { stdio: "ignore" });
			const t = setTimeout(() => p.kill("SIGKILL"), PODMAN_RM_TIMEOUT_MS);
			const done = () => {
				clearTimeout(t);
				resolve();
			};
			p.once("error", done);
			p.once("close", done);
		});
	}

	// removeSync: for the process's exit hook, where nothing asynchronous runs.
	removeSync() {
		try {
			this.child.kill("SIGKILL");
		} catch {
			// gone
		}
		spawnSync(this.cfg.podman, ["rm", "-f", "-t", "0", "--ignore", this.name], {
			stdio: "ignore",
			timeout: PODMAN_RM_TIMEOUT_MS,
		});
	}
}

/**
 * createTurninitBashOperations(options): pi's BashOperations (for
 * createBashTool(cwd, { operations }) or a user_bash handler), plus endTurn()
 * and dispose().
 *
 * options:
 *   image        the sealed turninit image (required); run with --pull never
 *   workspace    { hostPath, containerPath = "/work", mountOptions = "" }: a host
 *                directory mounted into every container (-v hostPath:containerPath),
 *                and pi's cwd under hostPath becomes the same path under
 *                containerPath. Without it, commands run in the manifest's workdir.
 *   podmanArgs   extra podman run flags, before the image (default [])
 *   serveArgs    turninit serve's flags, after "serve" (default []), such as
 *                ["--audit-log", "/var/log/turninit/audit.jsonl"]
 *   env          names from pi's environment to pass (default []); "LC_*" is a
 *                prefix. Nothing else of pi's environment is sent.
 *   perCall      true: a container per call instead of one per turn
 *   home         the manifest's home, given to podman as --tmpfs (default
 *                "/home/agent"); null when podmanArgs provide it
 *   network      podman --network (default "none"); null: podman's default
 *   podman       the podman command (default "podman")
 *   namePrefix   container name prefix (default "turninit-pi")
 *   onStderr     function called with each line turninit or podman writes on stderr
 *
 * exec() rejects exactly as pi's local backend does: Error("aborted") after an
 * abort, Error("timeout:" + timeout) after a timeout, each once the command's
 * processes are gone (and, per call, its container). A command killed by signal N
 * resolves with exitCode 128+N.
 */
export function createTurninitBashOperations(options) {
	const cfg = checkOptions(options);
	let current = null; // the turn's container (per-turn mode)
	const turns = new Set(); // every container of these operations not yet stopped
	let disposed = false;

	function newTurn() {
		const t = new Turn(cfg);
		turns.add(t);
		t.exited.then(() => turns.delete(t));
		return t;
	}

	function turnFor() {
		if (cfg.perCall) return newTurn();
		if (!current || current.ended || current.stopping) current = newTurn();
		return current;
	}

	function exec(command, cwd, { onData, signal, timeout, env } = {}) {
		return new Promise((resolve, reject) => {
			if (disposed) {
				reject(new Error("turninit-pi: exec after dispose()"));
				return;
			}
			let ctrCwd;
			try {
				ctrCwd = mapCwd(cfg.ws, cwd);
			} catch (e) {
				reject(e);
				return;
			}
			if (signal?.aborted) {
				reject(new Error("aborted"));
				return;
			}
			const request = { command, env: pickEnv(cfg.env, env) };
			if (ctrCwd !== undefined) request.cwd = ctrCwd;
			const limited = typeof timeout === "number" && timeout > 0;
			// turninit's own timer as well, in case this process's timer runs late.
			if (limited) request.timeout_s = Math.min(TIMEOUT_S_MAX, Math.ceil(timeout));
			const turn = turnFor();
			const call = turn.exec(request, (data) => onData?.(data));
			let timedOut = false;
			let timer;
			if (limited) {
				timer = setTimeout(() => {
					timedOut = true;
					call.kill();
				}, timeout * 1000);
			}
			const onAbort = () => call.kill();
			signal?.addEventListener("abort", onAbort, { once: true });
			call.done.then(async (outcome) => {
				if (timer) clearTimeout(timer);
				signal?.removeEventListener("abort", onAbort);
				if (cfg.perCall) await turn.stop();
				if (signal?.aborted) {
					reject(new Error("aborted"));
				} else if (timedOut) {
					reject(new Error(`timeout:${timeout}`));
				} else if (outcome.timedOut) {
					// turninit's timer: ours (timeout_s), or the manifest's cap when lower.
					const secs = limited && outcome.durationMs >= timeout * 1000 ? timeout : Math.round(outcome.durationMs / 1000);
					reject(new Error(`timeout:${secs}`));
				} else if (outcome.error) {
					reject(outcome.error);
				} else {
					resolve({ exitCode: outcome.exitCode });
				}
			});
		});
	}

	// endTurn: stop the turn's container (and, per call, those of calls still
	// running: they reject); the next exec starts a new one. Resolves once the
	// containers are removed.
	async function endTurn() {
		current = null;
		await Promise.all([...turns].map((t) => t.stop()));
	}

	// dispose: endTurn, and every later exec rejects.
	async function dispose() {
		disposed = true;
		await endTurn();
	}

	// auditHeads: the audit log's head after each command that ended, in the
	// order received, { container, id, head } (with serveArgs' --audit-log):
	// `turninit audit-verify LOG --head HEAD` checks a log cut there against it.
	function auditHeads() {
		return cfg.heads.map((h) => ({ ...h }));
	}

	return { exec, endTurn, dispose, auditHeads };
}
