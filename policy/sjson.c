/* sjson.c - see sjson.h. */
#include "policy/sjson.h"

#include <errno.h>
#include <malloc.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- time: RFC 3339 UTC, "YYYY-MM-DDTHH:MM:SSZ" (and with milliseconds) ---- */

static bool sj_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days from 0000-01-01 to the first day of year y (0 <= y), proleptic
 * Gregorian calendar (year 0 is a leap year). */
static int64_t sj_days_before_year(int64_t y)
{
	if (y <= 0)
		return 0;
	return 365 * y + 1 + (y - 1) / 4 - (y - 1) / 100 + (y - 1) / 400;
}

static const int sj_days_before_month[12] = {
	0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334,
};

static int sj_month_days(int64_t y, int mon)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return days[mon - 1] + (mon == 2 && sj_leap(y));
}

static int64_t sj_days_from_epoch(int64_t y, int mon, int day)
{
	return sj_days_before_year(y) - sj_days_before_year(1970) + sj_days_before_month[mon - 1] +
	       (mon > 2 && sj_leap(y)) + day - 1;
}

static bool sj_digits(const char *s, size_t n, int *ret)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return true;
}

int sj_time_parse(const char *s, int64_t *ret_seconds)
{
	int y, mon, d, h, mi, sec;

	/* 0123456789012345678 9
	 * YYYY-MM-DDTHH:MM:SS Z */
	if (!s || strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
	    s[16] != ':' || s[19] != 'Z')
		return -EINVAL;
	if (!sj_digits(s, 4, &y) || !sj_digits(s + 5, 2, &mon) || !sj_digits(s + 8, 2, &d) ||
	    !sj_digits(s + 11, 2, &h) || !sj_digits(s + 14, 2, &mi) || !sj_digits(s + 17, 2, &sec))
		return -EINVAL;
	/* No leap second (":60"): POSIX time has none, and an expiry does not need one. */
	if (mon < 1 || mon > 12 || d < 1 || d > sj_month_days(y, mon) || h > 23 || mi > 59 || sec > 59)
		return -EINVAL;
	*ret_seconds = sj_days_from_epoch(y, mon, d) * 86400 + h * 3600 + mi * 60 + sec;
	return 0;
}

int sj_time_format(int64_t ms, bool millis, char buf[static SJ_TIME_MAX])
{
	int64_t t = ms / 1000, frac = ms % 1000, days, secs, y;
	int mon;

	if (frac < 0) {
		frac += 1000;
		t--;
	}
	if (t < sj_days_from_epoch(0, 1, 1) * 86400 || t >= sj_days_from_epoch(10000, 1, 1) * 86400)
		return -ERANGE;
	days = t / 86400;
	secs = t % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	/* days since 0000-01-01; find the year by estimate and correction */
	days += sj_days_before_year(1970);
	y = days / 366;
	while (sj_days_before_year(y + 1) <= days)
		y++;
	days -= sj_days_before_year(y);
	for (mon = 1; mon < 12 && days >= sj_month_days(y, mon); mon++)
		days -= sj_month_days(y, mon);
	if (millis)
		snprintf(buf, SJ_TIME_MAX, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (int)y, mon, (int)days + 1,
			 (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60), (int)frac);
	else
		snprintf(buf, SJ_TIME_MAX, "%04d-%02d-%02dT%02d:%02d:%02dZ", (int)y, mon, (int)days + 1,
			 (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
	return 0;
}

int sj_error(const json_error_t *je, struct tn_error *err)
{
	char show[ERR_SHOWN_MAX];

	switch (json_error_code(je)) {
	case json_error_out_of_memory: return err_set(err, ENOMEM, "out of memory");
	case json_error_duplicate_key: {
		/* jansson: "duplicate object key near '"KEY"'" */
		const char *near = strstr(je->text, "near '");
		const char *key = near ? near + 6 : "";
		size_t n = strlen(key);

		if (n > 0 && key[n - 1] == '\'')
			n--;
		if (n >= 2 && key[0] == '"' && key[n - 1] == '"') {
			key++;
			n -= 2;
		}
		return err_set(err, EBADMSG, "duplicate key \"%s\" (line %d, column %d)",
			       err_shown(key, n, show), je->line, je->column);
	}
	case json_error_invalid_utf8:
		return err_set(err, EBADMSG, "not valid UTF-8 (line %d, column %d)", je->line, je->column);
	case json_error_numeric_overflow:
		/* valid JSON, but no field takes a number this large */
		return err_set(err, EINVAL, "number out of range: %s (line %d, column %d)",
			       err_shown(je->text, SIZE_MAX, show), je->line, je->column);
	default:
		return err_set(err, EBADMSG, "not valid JSON: %s (line %d, column %d)",
			       err_shown(je->text, SIZE_MAX, show), je->line, je->column);
	}
}

/* jansson's lexer drops a byte when growing its token buffer fails (lex_save
 * ignores the result of strbuffer_append_byte), so under memory pressure
 * json_loadb can return a value that differs from the signed bytes: with one
 * allocation failed, "2027-06-01T00:00:00Z" came back as "2027-06-01T00:0:00Z".
 * So a parse runs between sj_guard_begin and sj_guard_end, which note every
 * failed allocation (jansson's unpack misreports one too, as "1 object
 * item(s) left unpacked"), and the caller refuses then. The wrapper chains to whatever allocator was
 * installed; not thread-safe (turninit is single-threaded). */
static json_malloc_t sj_inner_malloc;
static json_free_t sj_inner_free;
static bool sj_alloc_failed;

static void *sj_json_malloc(size_t n)
{
	void *p = sj_inner_malloc(n);

	if (!p)
		sj_alloc_failed = true;
	return p;
}

void sj_guard_begin(void)
{
	json_free_t inner_free;

	json_get_alloc_funcs(&sj_inner_malloc, &inner_free);
	sj_inner_free = inner_free;
	json_set_alloc_funcs(sj_json_malloc, inner_free);
	sj_alloc_failed = false;
}

static void sj_wiping_free(void *p)
{
	if (p)
		sodium_memzero(p, malloc_usable_size(p));
	sj_inner_free(p);
}

void sj_guard_wipe(void)
{
	json_set_alloc_funcs(sj_json_malloc, sj_wiping_free);
}

bool sj_guard_end(void)
{
	json_set_alloc_funcs(sj_inner_malloc, sj_inner_free);
	return sj_alloc_failed;
}

json_t *sj_load(const void *buf, size_t len, bool any, json_error_t *je)
{
	/* JSON_DECODE_ANY: a scalar is valid JSON (the manifest then says
	 * "expected an object"). JSON_ALLOW_NUL stays off: "\u0000" is refused. */
	return json_loadb((const char *)buf, len, JSON_REJECT_DUPLICATES | (any ? JSON_DECODE_ANY : 0), je);
}
