/* events.h - the events of the JSON Lines protocol (docs/protocol.md): the
 * framing bounds, each event encoded as one line, and an event line decoded
 * (what `turninit call` reads). Pure: bytes in, bytes out (jansson, libsodium's
 * base64); the loop that writes and reads them is init/serve/serve.c's and
 * init/client/call.c's. */
#ifndef TURNINIT_EVENTS_H
#define TURNINIT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "policy/error.h"
#include "policy/netrec.h"

#define EV_LINE_MAX 1048576 /* bytes of one request line, newline excluded */
#define EV_CHUNK 65536      /* raw bytes of output in one output event */

/* Each encoder returns one event as compact JSON, malloc'd, without the
 * newline (the caller frames it), or NULL when out of memory. An id of NULL is
 * written as null (error events only). */

/* {"event":"started","id":ID,"pid":PID} */
char *ev_started(const char *id, int pid);

/* {"event":"output","id":ID,"stream":"stdout"|"stderr","data":BASE64};
 * len: 1..EV_CHUNK bytes of data. */
char *ev_output(const char *id, bool err_stream, const uint8_t *data, size_t len);

/* How a command ended: what an exit event says. */
struct ev_end {
	int wait_status; /* waitpid(2)'s; SIGKILL when lost */
	bool timed_out, truncated;
	bool lost;       /* its keeper ended without reporting the end: turninit
			    killed every process of the command itself */
	bool oom_killed; /* SIGKILL while the memory cgroup counted an OOM kill */
	bool ended;      /* cancelled by the end of the turn (MCP results say so;
			    the exit event does not) */
	uint64_t duration_ms;
	const char *audit_head; /* the audit log's head after this command's exit
				   line (64 hex digits, docs/audit.md), or NULL:
				   no log */
};

/* {"event":"exit","id":ID,"code":N|null,"signal":N|null,"timed_out":B,
 *  "truncated":B,"duration_ms":N}, then "lost":true and "oom_killed":true
 * only when they are true, and "audit_head":HEX when e->audit_head is set; code and signal from
 * e->wait_status (waitpid(2)): one of them is null. */
char *ev_exit(const char *id, const struct ev_end *e);

/* {"event":"error","id":ID|null,"message":MSG}. msg is cut to valid UTF-8 when
 * a cut at TN_ERROR_MSG_MAX fell inside a character; a message that is still
 * not UTF-8 is replaced by a fixed one, so that every error is answered. */
char *ev_error(const char *id, const char *msg);

/* {"event":"credential","id":ID,"name":NAME}: a credential request's value
 * taken (docs/protocol.md, "credential"): the name, never the value. NULL on
 * no memory. */
char *ev_credential(const char *id, const char *name);

/* {"event":"info","id":ID,"manifest":MANIFEST}: the effective manifest the
 * server runs its commands under, for a client that describes them (`turninit
 * mcp --socket`). manifest is a JSON object's compact text (mf_to_json's,
 * made once a turn), copied as it is: an info answer costs the id's escaping,
 * not a render of the manifest. NULL when manifest is NULL or on no memory. */
char *ev_info(const char *id, const char *manifest);

/* {"event":"net","id":ID|null,"verdict":V,"request":R|null,"host":H|null,
 *  "port":N|null,"address":A|null,"rule":N|null,"reason":S|null,
 *  "bytes_out":N,"bytes_in":N,"duration_ms":N}: a decision of turninit's
 * proxy (docs/protocol.md, "net"). id: the command whose port of the proxy
 * the connection came to (r->id), null when r->id is "" (the shared port). */
char *ev_net(const struct net_record *r);

/* ev_net_fields - obj (stolen) with r's fields appended, from "verdict" to
 * "duration_ms" as ev_net writes them (the audit log's net line puts its own
 * first keys before them); NULL, obj released, when out of memory. */
json_t *ev_net_fields(json_t *obj, const struct net_record *r);

/* {"event":"turn_end","id":null,"exit_code":N,"audit_head":HEX}: the last
 * event of a turn with an audit log, to every connection still open, written
 * after the log's turn_end line; audit_head is the log's final head, the
 * digest of that line (64 hex digits, docs/audit.md, "Anchors"), which
 * anchors the whole turn, change record included. exit_code: turninit's exit
 * status (0 at the end of stdin, 143 on SIGTERM). */
char *ev_turn_end(int exit_code, const char *audit_head);

enum ev_kind { EV_STARTED = 1, EV_OUTPUT, EV_EXIT, EV_ERROR, EV_INFO, EV_NET, EV_TURN_END };

/* One decoded event. Strings point into the decoded value and live until
 * ev_clear. */
struct ev_event {
	enum ev_kind kind;
	const char *id;  /* NULL for an error with id null */
	int pid;         /* started */
	bool err_stream; /* output: stderr */
	uint8_t *data;   /* output: decoded bytes, malloc'd */
	size_t len;
	bool has_code, has_signal; /* exit */
	int code, signal;
	bool timed_out, truncated, lost, oom_killed; /* the last two: false when absent */
	const char *message;                         /* error */
	char *manifest;                              /* info: the manifest object as compact JSON, malloc'd */
	const char *verdict, *host, *reason;         /* net; host and reason NULL when null */
	int port;                                    /* net: 0 when null */
	const char *audit_head;                      /* turn_end: the log's final head (64 hex digits) */
	int exit_code;                               /* turn_end: turninit's exit status, 0..255 */
	void *json;                                  /* the parsed value */
};

/* ev_parse - decode one event line (without its newline). Errors: -EBADMSG
 * not a JSON object, an unknown event or a field of the wrong type (err says
 * which), -ENOMEM. ret is written only on success; free with ev_clear. */
int ev_parse(const char *line, size_t len, struct ev_event *ret, struct tn_error *err);

void ev_clear(struct ev_event *e);

#endif
