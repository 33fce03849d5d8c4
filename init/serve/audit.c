/* audit.c - see audit.h and docs/audit.md. */
#define _GNU_SOURCE
#include "serve/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/auditline.h"
#include "policy/cleanup.h"
#include "policy/envfilter.h"
#include "policy/signature.h"
#include "policy/sjson.h"
#include "sandbox/place.h"
#include "util/log.h"

/* The log's state, the one of the process: its fd, the filter that names an
 * exec's env_names, and the chain (docs/audit.md, "The chain"): each line's
 * "prev" is the BLAKE2b-256 of the line before it, its exact bytes with the
 * newline; turn_start's is that of its turn id, 32 hex digits
 * (policy/auditline.h). */
static struct audit_log {
	int fd; /* -1: no log */
	const struct mf_env *env;
	bool started;                   /* the turn_start line is written */
	bool broken;                    /* a write failed: later execs are refused */
	uint8_t link[AUDIT_HASH_BYTES]; /* the head: the last line's digest */
	char turn[2 * AUDIT_TURN_BYTES + 1];
	uint64_t lines; /* lines of this turn written */
} audit = { .fd = -1 };

_Static_assert(AUDIT_HASH_BYTES == ALINE_HASH_BYTES, "one digest size for the writer and the check");
_Static_assert(2 * AUDIT_TURN_BYTES == ALINE_TURN_HEX, "one turn id size for the writer and the check");

/* The rules of a log that is a file (a regular file, or a FIFO with a path),
 * however it was handed in: where the kernel says fd is (place_resolve: a
 * deleted file, or one at no path turninit can check, is refused), not inside
 * the writable set, the file and its directory out of the command uid's reach.
 * A FIFO's reader is the log's keeper: a command that could open the FIFO
 * for reading would take lines from it, so group and others may not read it
 * either. */
static int check_file(const char *spec, int fd, const struct stat *st, const struct mf_manifest *m,
		      struct tn_error *err)
{
	char real[PATH_MAX], what[64 + PATH_MAX];
	const char *w;
	int r;

	snprintf(what, sizeof(what), "audit log %s", spec);
	if ((r = place_need_landlock(what, m, err)) < 0)
		return r;
	/* Landlock bounds writes only: a FIFO of the commands' own uid could be
	 * opened for reading by any command. */
	if (S_ISFIFO(st->st_mode) && geteuid() == m->uid)
		return err_set(err, EPERM,
			       "audit log %s: a FIFO, and turninit runs as the commands' uid %u (non-root mode): a command could open it and take lines from its reader",
			       spec, m->uid);
	r = place_resolve(what, fd, st, "give a path in the container, a pipe or a socket", real, err);
	if (r < 0)
		return r;
	if ((w = place_writable_holder(real, m)))
		return err_set(err, EPERM, "audit log %s: is %s, inside %s, which commands may write", spec,
			       real, w);
	if (place_open_to_uid(st, m))
		return err_set(err, EPERM, "audit log %s: owned by uid %u or writable by group or others",
			       spec, m->uid);
	if (S_ISFIFO(st->st_mode) && (st->st_mode & 0044))
		return err_set(err, EPERM,
			       "audit log %s: a FIFO readable by group or others: a command "
			       "could open it and take lines from its reader",
			       spec);
	return place_check_dir(what, real, m, err);
}

/* A log file is one turn's: two turns appending to one file interleave
 * their lines, and neither chain checks whole. turninit holds an exclusive
 * flock(2) on it for the turn (on the host's inode, so a turn of another
 * container sees it too); one held already is refused. For verify the lock
 * goes with the fd it closes. */
static int lock_log(const char *spec, int fd, struct tn_error *err)
{
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		return err_set(err, EBUSY,
			       "audit log %s: another turn holds it (flock): give each turn a file of its own",
			       spec);
	return err_errno(err, errno, "audit log %s: flock", spec);
}

/* PATH: as given, then as opened (check_file). */
static int check_path(const char *spec, int fd, const struct mf_manifest *m, struct tn_error *err)
{
	const char *w;
	struct stat st;

	if ((w = place_writable_holder(spec, m)))
		return err_set(err, EPERM, "audit log %s: inside %s, which commands may write", spec, w);
	if (fstat(fd, &st) != 0)
		return err_errno(err, errno, "audit log %s: fstat", spec);
	if (!S_ISREG(st.st_mode))
		return err_set(err, EPERM, "audit log %s: not a regular file", spec);
	return check_file(spec, fd, &st, m, err);
}

/* fd:N. A regular file and a FIFO with a path get the rules of a path
 * (check_file): handed in as an fd, a file in a directory commands may write
 * could still be removed and a forged one put in its place. A pipe (pipe:[N])
 * and a socket have no path: no command can open them (turninit is not
 * dumpable, so /proc/1/fd is closed to commands), and they are taken as they
 * are. A device keeps nothing (/dev/null), or is one a command can write too
 * (a tty); anything else (an eventfd, an epoll fd) is no log. */
static int check_fd(const char *spec, int fd, const struct mf_manifest *m, struct tn_error *err)
{
	int fl = fcntl(fd, F_GETFL);
	struct stat st;

	if (fl < 0)
		return err_set(err, EBADF, "audit log %s: not an open file descriptor", spec);
	if ((fl & O_ACCMODE) == O_RDONLY)
		return err_set(err, EBADF, "audit log %s: not open for writing", spec);
	if (fstat(fd, &st) != 0)
		return err_errno(err, errno, "audit log %s: fstat", spec);
	if (S_ISDIR(st.st_mode))
		return err_set(err, EBADF, "audit log %s: a directory", spec);
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		return err_set(err, EBADF,
			       "audit log %s: a device (such as /dev/null), which keeps "
			       "nothing: give a file, a pipe or a socket",
			       spec);
	if (S_ISFIFO(st.st_mode)) {
		char proc[64], link[16];
		ssize_t n;

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		n = readlink(proc, link, sizeof(link));
		if (n < 5 || memcmp(link, "pipe:", 5) != 0) {
			int r = check_file(spec, fd, &st, m, err);

			if (r < 0)
				return r;
		}
	} else if (S_ISREG(st.st_mode)) {
		int r = check_file(spec, fd, &st, m, err);

		if (r == 0)
			r = lock_log(spec, fd, err);
		if (r < 0)
			return r;
		if (fcntl(fd, F_SETFL, fl | O_APPEND) != 0)
			return err_errno(err, errno, "audit log %s: O_APPEND", spec);
	} else if (!S_ISSOCK(st.st_mode)) {
		return err_set(err, EBADF, "audit log %s: not a file, a pipe or a socket", spec);
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
		return err_errno(err, errno, "audit log %s: FD_CLOEXEC", spec);
	return 0;
}

/* audit_open's work; probe: check only (verify): a PATH made for the check
 * is removed again, and no fd is kept. */
static int audit_open_or_probe(const char *spec, const struct mf_manifest *m, bool probe,
			       struct tn_error *err)
{
	bool created;
	int fd, r;

	audit.env = &m->env;
	if (strncmp(spec, "fd:", 3) == 0) {
		char *end;
		long v;

		errno = 0;
		v = strtol(spec + 3, &end, 10);
		if (errno || end == spec + 3 || *end || spec[3] < '0' || spec[3] > '9' || v < 3 ||
		    v > INT_MAX)
			return err_set(err, EINVAL, "audit log %s: expected fd:N with N >= 3", spec);
		r = check_fd(spec, (int)v, m, err);
		if (r < 0)
			return r;
		if (!probe)
			audit.fd = (int)v;
		return 0;
	}
	if (spec[0] != '/')
		return err_set(err, EINVAL, "audit log %s: expected an absolute path or fd:N", spec);
	/* O_EXCL first, to know whether the file is ours: a refused log that
	 * turninit created is removed again, not left behind empty. */
	fd = open(spec,
		  O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
		  0600);
	created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(spec, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ELOOP) /* O_NOFOLLOW's answer for a link, not a loop */
		return err_set(err, ELOOP, "audit log %s: is a symbolic link (give the path it leads to)",
			       spec);
	if (fd < 0)
		return err_errno(err, errno, "audit log %s", spec);
	r = check_path(spec, fd, m, err);
	if (r == 0)
		r = lock_log(spec, fd, err);
	if (r < 0 || probe) {
		if (created)
			unlink(spec);
		close(fd);
		return r;
	}
	/* Regular file: O_NONBLOCK only kept a FIFO from holding the open. */
	fcntl(fd, F_SETFL, O_APPEND);
	audit.fd = fd;
	return 0;
}

int audit_open(const char *spec, const struct mf_manifest *m, struct tn_error *err)
{
	return audit_open_or_probe(spec, m, false, err);
}

int audit_probe(const char *spec, const struct mf_manifest *m, struct tn_error *err)
{
	return audit_open_or_probe(spec, m, true, err);
}

uint64_t audit_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* RFC 3339, UTC, milliseconds: 2026-11-29T21:20:31.123Z (policy/sjson.c, the
 * manifest's format too). */
static json_t *rfc3339(uint64_t ms)
{
	char buf[SJ_TIME_MAX];

	if (sj_time_format((int64_t)ms, true, buf) < 0)
		return json_string("0000-00-00T00:00:00.000Z");
	return json_string(buf);
}

/* Write one event (steals ev) as one line (policy/auditline.h) with one
 * write(2) where the fd takes it whole (a regular file with O_APPEND; a pipe
 * up to PIPE_BUF). A write that fails after part of the line (ENOSPC, EDQUOT,
 * EFBIG) leaves a regular file cut back to its last whole line. Returns 0,
 * -ENOMEM, or -errno of write(2) (-EIO for a write of nothing). */
static int audit_write(json_t *ev)
{
	_cleanup_free_ char *s = NULL;
	size_t n, off = 0;
	struct stat st;
	off_t before;
	int r;

	if (audit.fd < 0 || !ev) {
		json_decref(ev);
		return audit.fd < 0 ? 0 : -ENOMEM;
	}
	r = aline_encode(ev, audit.link, &s, &n);
	json_decref(ev);
	if (r < 0)
		return -ENOMEM;
	/* A file system that fills up takes part of a line: a regular file is
	 * cut back to the end of the last whole line. */
	before = fstat(audit.fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : -1;
	while (off < n) {
		ssize_t w = TEMP_FAILURE_RETRY(write(audit.fd, s + off, n - off));

		if (w <= 0) {
			int e = w < 0 ? errno : EIO;

			if (off > 0 && before >= 0 && ftruncate(audit.fd, before) != 0)
				log_errno(errno, "audit log: cutting a partial line");
			if (audit.started && !audit.broken)
				log_line("audit log: write failed: %s; further commands are refused",
					 strerror(e));
			audit.broken = true;
			return -e;
		}
		off += (size_t)w;
	}
	aline_digest(s, n - 1, true, audit.link);
	audit.lines++;
	return 0;
}

json_t *audit_read_back(int pid, int ppid)
{
	static const char *const keys[][2] = {
		{ "CapInh:", "cap_inh" },  { "CapPrm:", "cap_prm" },
		{ "CapEff:", "cap_eff" },  { "CapBnd:", "cap_bnd" },
		{ "CapAmb:", "cap_amb" },  { "NoNewPrivs:", "no_new_privs" },
		{ "Seccomp:", "seccomp" }, { "Seccomp_filters:", "seccomp_filters" },
	};
	char path[64], line[256];
	json_t *o;
	long pp = -1;
	FILE *f;

	if (audit.fd < 0 || pid <= 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	o = json_object();
	while (o && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v++;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		if (strncmp(line, "PPid:", 5) == 0)
			pp = strtol(v, NULL, 10);
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			size_t l = strlen(keys[i][0]);

			if (strncmp(line, keys[i][0], l) != 0)
				continue;
			/* capability masks as the kernel prints them (hex); the
			 * others as numbers */
			if (keys[i][1][0] == 'c')
				json_object_set_new(o, keys[i][1], json_string(v));
			else
				json_object_set_new(o, keys[i][1], json_integer(strtol(v, NULL, 10)));
		}
	}
	fclose(f);
	/* the command's own: a child of its keeper (a pid reused after it ended
	 * would have another parent) */
	if (o && pp != ppid) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int audit_emit(json_t *ev)
{
	json_t *line;

	if (audit.fd < 0 || !ev) {
		json_decref(ev);
		return audit.fd < 0 ? 0 : -ENOMEM;
	}
	/* "event", then "time" (audit_write puts "prev" between them) */
	line = json_pack("{s:O, s:o}", "event", json_object_get(ev, "event"), "time",
			 rfc3339(audit_wall_ms()));
	if (!line || json_object_update(line, ev) != 0) {
		json_decref(line);
		json_decref(ev);
		return -ENOMEM;
	}
	json_decref(ev);
	return audit_write(line);
}

bool audit_on(void)
{
	return audit.fd >= 0;
}

bool audit_head(char hex[static AUDIT_HEAD_HEX])
{
	if (audit.fd < 0 || !audit.started)
		return false;
	sodium_bin2hex(hex, AUDIT_HEAD_HEX, audit.link, sizeof(audit.link));
	return true;
}

int audit_turn_start(const char *mode, const struct load_result *pol, json_t *protections,
		     struct tn_error *err)
{
	char kid[17], hex[2 * sizeof(pol->manifest_digest) + 1];
	uint8_t id[AUDIT_TURN_BYTES];
	int r;

	if (audit.fd < 0)
		return 0;
	/* a fresh turn id; the chain's first link is made from it. getrandom(2)
	 * rather than randombytes_buf, which links libsodium's stream ciphers */
	if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
		return err_errno(err, errno, "audit log: no random turn id: getrandom");
	sodium_bin2hex(audit.turn, sizeof(audit.turn), id, sizeof(id));
	aline_first_link(audit.turn, audit.link);
	audit.lines = 0;
	sig_key_id_hex(pol->sig.key_id, kid);
	sodium_bin2hex(hex, sizeof(hex), pol->manifest_digest, sizeof(pol->manifest_digest));
	r = audit_write(json_pack("{s:s, s:s, s:o, s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:O}", "event",
				  "turn_start", "turn", audit.turn, "time", rfc3339(audit_wall_ms()),
				  "turninit", TURNINIT_VERSION, "mode", mode, "manifest", "key_id", kid,
				  "blake2b_256", hex, "source", pol->source, "trusted_comment",
				  pol->sig.trusted_comment, "protections", protections));
	if (r < 0)
		return err_errno(err, -r, "audit log: cannot write the turn_start line");
	audit.started = true;
	return 0;
}

/* An exec request's command as the log gives it: the command string, or
 * the argv as an array (even of one word); NULL when out of memory. */
static json_t *command_words(const struct rq_request *rq)
{
	json_t *words;

	if (!rq->argv_form)
		return json_string(rq->words[0]);
	words = json_array();
	for (int i = 0; words && i < rq->n_words; i++)
		json_array_append_new(words, json_string(rq->words[i]));
	return words;
}

int audit_exec(unsigned stream, const struct rq_request *rq, const char *cwd, uint32_t timeout_s,
	       bool filter_in_command)
{
	json_t *ev, *names, *words;

	if (audit.fd < 0)
		return 0;
	if (audit.broken)
		return -EIO;
	/* The names the command gets from the request, not every name the
	 * caller offered: the log says what reached the command. */
	names = json_array();
	for (char **e = rq->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');

		if (eq && envf_admits(audit.env, *e))
			json_array_append_new(names, json_stringn(*e, (size_t)(eq - *e)));
	}
	words = command_words(rq);
	ev = json_pack("{s:s, s:o, s:I, s:s, s:o, s:s, s:o, s:i}", "event", "exec", "time",
		       rfc3339(audit_wall_ms()), "stream", (json_int_t)stream, "id", rq->id,
		       rq->argv_form ? "argv" : "command", words, "cwd", cwd, "env_names", names, "timeout_s",
		       (int)timeout_s);
	/* where this command's sandbox differs from turn_start's record: its
	 * filter is loaded in the command, not in its keeper */
	if (ev && filter_in_command && json_object_set_new(ev, "filter_in_command", json_true()) != 0) {
		json_decref(ev);
		ev = NULL;
	}
	/* stdin is code as much as the command is (`bash` with a script on
	 * stdin): logged whole, base64 as the request carried it. */
	if (ev && rq->has_stdin) {
		size_t cap = sodium_base64_ENCODED_LEN(rq->stdin_len, sodium_base64_VARIANT_ORIGINAL);
		char *b = malloc(cap);

		if (!b ||
		    json_object_set_new(ev, "stdin",
					json_string(sodium_bin2base64(b, cap, rq->stdin_data, rq->stdin_len,
								      sodium_base64_VARIANT_ORIGINAL))) !=
			    0) {
			free(b);
			json_decref(ev);
			ev = NULL;
		} else {
			free(b);
		}
	}
	return audit_write(ev) < 0 ? -EIO : 0;
}

void audit_refused(unsigned stream, const char *id, const char *reason)
{
	if (audit.fd >= 0)
		audit_write(json_pack("{s:s, s:o, s:I, s:s, s:s}", "event", "refused", "time",
				      rfc3339(audit_wall_ms()), "stream", (json_int_t)stream, "id", id,
				      "reason", reason));
}

void audit_rejected(unsigned stream, const char *id, const struct rq_request *rq, const char *reason)
{
	json_t *ev;

	if (audit.fd < 0)
		return;
	ev = json_pack("{s:s, s:o, s:I, s:s?, s:s}", "event", "rejected", "time", rfc3339(audit_wall_ms()),
		       "stream", (json_int_t)stream, "id", id && id[0] ? id : NULL, "reason", reason);
	if (ev && rq && rq->op == RQ_EXEC &&
	    json_object_set_new(ev, rq->argv_form ? "argv" : "command", command_words(rq)) != 0) {
		json_decref(ev);
		ev = NULL;
	}
	audit_write(ev);
}

int audit_credential(unsigned stream, const char *id, const char *name)
{
	if (audit.fd < 0)
		return 0;
	if (audit.broken)
		return -EIO;
	return audit_write(json_pack("{s:s, s:o, s:I, s:s, s:s}", "event", "credential", "time",
				     rfc3339(audit_wall_ms()), "stream", (json_int_t)stream, "id", id, "name",
				     name)) < 0 ?
		       -EIO :
		       0;
}

void audit_control(unsigned stream, const char *id, int signo)
{
	if (audit.fd < 0)
		return;
	if (signo == 0)
		audit_write(json_pack("{s:s, s:o, s:I, s:s}", "event", "cancel", "time",
				      rfc3339(audit_wall_ms()), "stream", (json_int_t)stream, "id", id));
	else
		audit_write(json_pack("{s:s, s:o, s:I, s:s, s:i}", "event", "signal", "time",
				      rfc3339(audit_wall_ms()), "stream", (json_int_t)stream, "id", id,
				      "signal", signo));
}

void audit_exit(unsigned stream, const char *id, int pid, uint64_t start_ms, const struct ev_end *e,
		bool cancelled, uint64_t out_bytes, uint64_t err_bytes,
		const uint8_t out_digest[static AUDIT_HASH_BYTES],
		const uint8_t err_digest[static AUDIT_HASH_BYTES], json_t *read_back)
{
	char oh[AUDIT_HEAD_HEX], eh[AUDIT_HEAD_HEX];
	int st = e->wait_status;
	json_t *code, *sig;

	if (audit.fd < 0)
		return;
	sodium_bin2hex(oh, sizeof(oh), out_digest, AUDIT_HASH_BYTES);
	sodium_bin2hex(eh, sizeof(eh), err_digest, AUDIT_HASH_BYTES);
	code = WIFEXITED(st) ? json_integer(WEXITSTATUS(st)) : json_null();
	sig = WIFSIGNALED(st) ? json_integer(WTERMSIG(st)) : json_null();
	audit_write(
		json_pack("{s:s, s:o, s:I, s:s, s:i, s:o, s:o, s:o, s:o, s:b, s:b, s:b, s:b, s:b, s:I, s:I, s:s, s:s, s:O?}",
			  "event", "exit", "time", rfc3339(audit_wall_ms()), "stream", (json_int_t)stream,
			  "id", id, "pid", pid, "start", rfc3339(start_ms), "end",
			  rfc3339(start_ms + e->duration_ms), "code", code, "signal", sig, "timed_out",
			  e->timed_out, "cancelled", cancelled, "truncated", e->truncated, "lost", e->lost,
			  "oom_killed", e->oom_killed, "stdout_bytes", (json_int_t)out_bytes, "stderr_bytes",
			  (json_int_t)err_bytes, "stdout_blake2b_256", oh, "stderr_blake2b_256", eh,
			  "read_back", read_back ? read_back : json_null()));
}

void audit_net(const struct net_record *r)
{
	if (audit.fd < 0)
		return;
	audit_write(ev_net_fields(json_pack("{s:s, s:o, s:o, s:o}", "event", "net", "time",
					    rfc3339(audit_wall_ms()), "stream",
					    r->id[0] ? json_integer(r->stream) : json_null(), "id",
					    r->id[0] ? json_string(r->id) : json_null()),
				  r));
}

void audit_turn_end(int exit_code)
{
	char head[AUDIT_HEAD_HEX];

	if (audit.fd < 0 || !audit.started)
		return;
	if (audit_write(json_pack("{s:s, s:o, s:i, s:I}", "event", "turn_end", "time",
				  rfc3339(audit_wall_ms()), "exit_code", exit_code, "lines",
				  (json_int_t)audit.lines + 1)) < 0)
		return;
	/* the final head, outside the log: the container's log keeps it */
	sodium_bin2hex(head, sizeof(head), audit.link, sizeof(audit.link));
	log_line("audit: turn %s ended, %llu lines, head %s", audit.turn, (unsigned long long)audit.lines,
		 head);
}
