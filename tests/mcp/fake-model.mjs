// fake-model.mjs - a scripted model behind a fake Anthropic Messages API on
// 127.0.0.1, for driving the real Claude Code with no model and no network.
//
// The prompt names a script: "TURNINIT-SCRIPT <name>". A request that offers the
// tool TOOL is a turn of the agent loop: the model calls TOOL with the script's
// next input, one step per request, and records the tool_result block Claude Code
// sent back for the step before; after the last step it answers "done". Any other
// request (a title, a quota probe) gets the text "ok". Responses stream as
// server-sent events when the request says "stream": true, as Claude Code's do.
// Every request body is kept, for what Claude Code offered the model.
import http from "node:http";

export const TOOL = "mcp__turninit__bash";

// startModel(scripts) - scripts: { name: [input, ...] } where input is the tool's
// input, or { tool: NAME, input } for a call of another tool. Resolves to
// { url, results: { name: [tool_result block, ...] }, requests: [body, ...], close }.
export function startModel(scripts) {
	const results = {};
	const requests = [];
	let n = 0;

	const server = http.createServer((req, res) => {
		let body = "";
		req.setEncoding("utf8");
		req.on("data", (d) => (body += d));
		req.on("end", () => {
			if (req.method !== "POST" || !req.url.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
				res.writeHead(req.url.includes("count_tokens") ? 200 : 404, { "content-type": "application/json" });
				res.end(JSON.stringify(req.url.includes("count_tokens") ? { input_tokens: 1 } :
					{ type: "error", error: { type: "not_found_error", message: "fake model: " + req.url } }));
				return;
			}
			const msg = JSON.parse(body);
			requests.push(msg);
			const reply = answer(msg);
			send(res, msg, reply);
		});
	});

	function textOf(content) {
		if (typeof content === "string") return content;
		return (content || []).map((b) => (b.type === "text" ? b.text : "")).join("\n");
	}

	function answer(msg) {
		const offers = (msg.tools || []).some((t) => t.name === TOOL);
		const first = textOf(msg.messages?.[0]?.content);
		const m = /TURNINIT-SCRIPT (\S+)/.exec(first);
		if (!offers || !m || !scripts[m[1]]) return { text: "ok" };
		const name = m[1], steps = scripts[name];
		// The tool results Claude Code sent back so far: one per step taken.
		const sent = [];
		for (const turn of msg.messages) {
			if (turn.role !== "user" || typeof turn.content === "string") continue;
			for (const b of turn.content) if (b.type === "tool_result") sent.push(b);
		}
		results[name] = sent;
		if (sent.length >= steps.length) return { text: "done" };
		const step = steps[sent.length];
		return { tool: step.tool || TOOL, input: step.tool ? step.input : step };
	}

	function send(res, msg, reply) {
		const id = `msg_${++n}`;
		const block = reply.text !== undefined
			? { type: "text", text: reply.text }
			: { type: "tool_use", id: `toolu_${n}`, name: reply.tool, input: reply.input };
		const stop = reply.text !== undefined ? "end_turn" : "tool_use";
		const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
		if (!msg.stream) {
			res.writeHead(200, { "content-type": "application/json" });
			res.end(JSON.stringify({ id, type: "message", role: "assistant", model: msg.model, content: [block],
				stop_reason: stop, stop_sequence: null, usage }));
			return;
		}
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
		ev("message_start", { message: { id, type: "message", role: "assistant", model: msg.model, content: [],
			stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
		if (block.type === "text") {
			ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
			ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: block.text } });
		} else {
			ev("content_block_start", { index: 0, content_block: { ...block, input: {} } });
			ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
		}
		ev("content_block_stop", { index: 0 });
		ev("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
		ev("message_stop", {});
		res.end();
	}

	return new Promise((resolve) => {
		server.listen(0, "127.0.0.1", () => {
			resolve({
				url: `http://127.0.0.1:${server.address().port}`,
				results,
				requests,
				close: () => new Promise((r) => server.close(r)),
			});
		});
	});
}
