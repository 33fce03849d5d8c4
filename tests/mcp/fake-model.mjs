// fake-model.mjs - a scripted model behind fake model APIs on 127.0.0.1, for
// driving the real Claude Code, Codex CLI and Gemini CLI with no model and no
// network. One server speaks the three wire formats:
//   Anthropic Messages   POST /v1/messages            (Claude Code; SSE or JSON)
//   OpenAI Responses     POST /v1/responses           (Codex; SSE)
//   Gemini               POST /v1beta/models/M:streamGenerateContent?alt=sse,
//                        M:generateContent            (Gemini CLI)
//
// The prompt names a script: "TURNINIT-SCRIPT <name>". A request that offers
// turninit's tool (its name as the client makes it: TOOL, the Responses
// namespace "mcp__turninit" holding "bash", or GEMINI_TOOL) is a turn of the
// agent loop: the model calls the tool with the script's next input, one step
// per request, and records what the client sent back for the step before; after
// the last step it answers "done". Any other request (a title, a quota probe)
// gets the text "ok". Every request body is kept, for what a client offered the
// model, under its wire format.
import http from "node:http";

export const TOOL = "mcp__turninit__bash";
export const GEMINI_TOOL = "mcp_turninit_bash";
// What the model asks Claude Code's ToolSearch for: the job, in words.
export const SEARCH = "run a shell command in a sandbox";

// startModel(scripts) - scripts: { name: [input, ...] } where input is the tool's
// input, or { tool: NAME, input } for a call of another tool (NAME as the wire
// names it). Resolves to { url, results, requests, close }: results[wire][name]
// is what the client sent back for each step taken (Anthropic: the tool_result
// block; Responses: the function_call_output item; Gemini: the functionResponse),
// requests[wire] every request body, where wire is "anthropic", "responses" or
// "gemini".
export function startModel(scripts) {
	const WIRES = ["anthropic", "responses", "gemini"];
	const results = Object.fromEntries(WIRES.map((w) => [w, {}]));
	const requests = Object.fromEntries(WIRES.map((w) => [w, []]));
	let n = 0;

	const server = http.createServer((req, res) => {
		let body = "";
		req.setEncoding("utf8");
		req.on("data", (d) => (body += d));
		req.on("end", () => {
			const url = req.url;
			if (req.method === "POST" && url.startsWith("/v1/messages") && !url.includes("count_tokens"))
				return anthropic(res, JSON.parse(body));
			if (req.method === "POST" && url.startsWith("/v1/responses"))
				return responses(res, JSON.parse(body));
			if (req.method === "POST" && /^\/v1beta\/models\/[^/:]+:(stream)?[gG]enerateContent/.test(url))
				return gemini(res, JSON.parse(body), url.includes(":stream"));
			if (url.includes("count_tokens") || url.includes(":countTokens")) {
				res.writeHead(200, { "content-type": "application/json" });
				return res.end(JSON.stringify(url.includes(":") ? { totalTokens: 1 } : { input_tokens: 1 }));
			}
			res.writeHead(404, { "content-type": "application/json" });
			res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "fake model: " + url } }));
		});
	});

	// The step to take, from the script the prompt names and the results sent
	// back so far: { text } or { tool, input } (tool: null for turninit's).
	function step(wire, prompt, offers, sent) {
		const m = /TURNINIT-SCRIPT (\S+)/.exec(prompt);
		if (!offers || !m || !scripts[m[1]]) return { text: "ok" };
		const name = m[1], steps = scripts[name];
		results[wire][name] = sent;
		if (sent.length >= steps.length) return { text: "done" };
		const s = steps[sent.length];
		return s.tool ? { tool: s.tool, input: s.input } : { tool: null, input: s };
	}

	// --- Anthropic Messages (Claude Code) ---
	function anthropic(res, msg) {
		requests.anthropic.push(msg);
		const textOf = (content) => typeof content === "string" ? content
			: (content || []).map((b) => (b.type === "text" ? b.text : "")).join("\n");
		// Claude Code 2.1.3xx defers MCP tools behind its ToolSearch tool: the
		// model searches for the job in words first, as a model would, and
		// the tool is offered once found. Its result is not a step's.
		const searches = new Set(), sent = [];
		for (const turn of msg.messages || []) {
			if (typeof turn.content === "string") continue;
			for (const b of turn.content) {
				if (turn.role === "assistant" && b.type === "tool_use" && b.name === "ToolSearch") searches.add(b.id);
				if (turn.role === "user" && b.type === "tool_result" && !searches.has(b.tool_use_id)) sent.push(b);
			}
		}
		const tools = (msg.tools || []).map((t) => t.name);
		const prompt = textOf(msg.messages?.[0]?.content);
		const reply = !tools.includes(TOOL) && tools.includes("ToolSearch") && searches.size === 0 &&
			/TURNINIT-SCRIPT (\S+)/.test(prompt)
			? { tool: "ToolSearch", input: { query: SEARCH } }
			: step("anthropic", prompt, tools.includes(TOOL), sent);
		const id = `msg_${++n}`;
		const block = reply.text !== undefined
			? { type: "text", text: reply.text }
			: { type: "tool_use", id: `toolu_${n}`, name: reply.tool ?? TOOL, input: reply.input };
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

	// --- OpenAI Responses over SSE (Codex) ---
	// Codex offers an MCP server's tools as a namespace "mcp__SERVER" of
	// functions; a flat function "mcp__turninit__bash" is taken too.
	function responses(res, msg) {
		requests.responses.push(msg);
		const tools = msg.tools || [];
		const ns = tools.find((t) => t.type === "namespace" && t.name === "mcp__turninit" &&
			(t.tools || []).some((f) => f.name === "bash"));
		const flat = tools.some((t) => t.type === "function" && t.name === TOOL);
		const input = Array.isArray(msg.input) ? msg.input : [];
		const prompt = input.filter((i) => i.type === "message" && i.role === "user")
			.flatMap((i) => typeof i.content === "string" ? [i.content] : (i.content || []).map((c) => c.text || ""))
			.join("\n");
		const sent = input.filter((i) => i.type === "function_call_output");
		const reply = step("responses", prompt, ns || flat, sent);
		const id = `resp_${++n}`;
		let item;
		if (reply.text !== undefined) {
			item = { type: "message", id: `msg_${n}`, role: "assistant", status: "completed",
				content: [{ type: "output_text", text: reply.text, annotations: [] }] };
		} else {
			const call = reply.tool ? { name: reply.tool }
				: ns ? { namespace: "mcp__turninit", name: "bash" } : { name: TOOL };
			item = { type: "function_call", id: `fc_${n}`, call_id: `call_${n}`, status: "completed",
				...call, arguments: JSON.stringify(reply.input) };
		}
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		const ev = (data) => res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
		const response = { id, object: "response", status: "in_progress", model: msg.model, output: [] };
		ev({ type: "response.created", response });
		ev({ type: "response.output_item.added", output_index: 0, item });
		ev({ type: "response.output_item.done", output_index: 0, item });
		ev({ type: "response.completed", response: { ...response, status: "completed", output: [item],
			usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5,
				output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 } } });
		res.end();
	}

	// --- Gemini generateContent / streamGenerateContent (Gemini CLI) ---
	function gemini(res, msg, stream) {
		requests.gemini.push(msg);
		const names = (msg.tools || []).flatMap((t) => t.functionDeclarations || []).map((f) => f.name);
		const parts = (msg.contents || []).filter((c) => c.role === "user").flatMap((c) => c.parts || []);
		const prompt = parts.map((p) => p.text || "").join("\n");
		const sent = parts.filter((p) => p.functionResponse).map((p) => p.functionResponse);
		const reply = step("gemini", prompt, names.includes(GEMINI_TOOL), sent);
		const out = reply.text !== undefined ? [{ text: reply.text }]
			: [{ functionCall: { name: reply.tool ?? GEMINI_TOOL, args: reply.input } }];
		const chunk = { candidates: [{ content: { role: "model", parts: out }, finishReason: "STOP", index: 0 }],
			usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
			modelVersion: "fake-model", responseId: `gem_${++n}` };
		if (!stream) {
			res.writeHead(200, { "content-type": "application/json" });
			return res.end(JSON.stringify(chunk));
		}
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		res.write(`data: ${JSON.stringify(chunk)}\n\n`);
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
