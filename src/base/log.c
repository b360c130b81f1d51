/* SPDX-License-Identifier: MIT */

#include "log.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

bool sr_sink_enabled(const struct sr_sink *s, enum sr_log_level level)
{
	return s && s->write && level <= s->level;
}

void sr_sink_log(const struct sr_sink *s, enum sr_log_level level, const char *fmt, ...)
{
	char text[2048], line[2048];
	va_list ap;

	if (!sr_sink_enabled(s, level))
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/*
	 * Messages carry what the caller, an archive or the agent's own files
	 * wrote (a path, package.json's "main", a decoder's error): each is one
	 * line, with no escape sequence for the terminal.
	 */
	sr_printable(text, line, sizeof(line));
	s->write(s->ctx, level, line);
}

static void write_stderr(void *ctx, enum sr_log_level level, const char *text)
{
	static const char *const prefix[_SR_LOG_LEVEL_MAX] = {
	    [SR_LOG_ERROR] = "",
	    [SR_LOG_WARNING] = "warning: ",
	    [SR_LOG_INFO] = "",
	    [SR_LOG_DEBUG] = "debug: ",
	};
	char line[2200];

	(void)ctx;
	snprintf(line, sizeof(line), "sandbox-run: %s%s\n", prefix[level], text);
	/* One write(2): concurrent sandboxes sharing a terminal do not interleave. */
	(void)!write(STDERR_FILENO, line, strlen(line));
}

void sr_sink_stderr(struct sr_sink *s, enum sr_log_level level)
{
	*s = (struct sr_sink){.level = level, .write = write_stderr};
}

static int error_vset(struct sr_error *err, int code, bool with_errno, const char *fmt, va_list ap)
{
	size_t n;

	err->code = code;
	err->kind = SR_ERROR_PLAIN;
	if (err->status == 0)
		err->status = 125;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	n = strlen(err->msg);
	if (with_errno && code < 0 && n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(-code));
	return code;
}

int sr_error_errno(struct sr_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, code, true, fmt, ap);
	va_end(ap);
	return code;
}

int sr_error_msg(struct sr_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, code, false, fmt, ap);
	va_end(ap);
	return code;
}

int sr_error_prefix(struct sr_error *err, const char *fmt, ...)
{
	char prefix[SR_ERROR_MSG_MAX];
	char old[SR_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation keeps the start: the context and the first words of why. */
	if (snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old) < 0)
		memcpy(err->msg, old, sizeof(old));
	return err->code;
}

void sr_error_clear(struct sr_error *err)
{
	memset(err, 0, sizeof(*err));
}

void sr_printable(const char *text, char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t n = 0;

	/* Room for one more UTF-8 sequence, "..." and the NUL. */
	while (*p && n + 8 < len) {
		size_t l = 1;

		if (*p >= 0xc2 && *p <= 0xf4) {
			while (l < 4 && (p[l] & 0xc0) == 0x80)
				l++;
			if (l != (*p >= 0xf0   ? 4u
				  : *p >= 0xe0 ? 3u
					       : 2u) ||
			    (*p == 0xc2 && p[1] < 0xa0))
				l = 0;
		} else if (*p < 0x20 || *p >= 0x7f) {
			l = 0;
		}
		if (l == 0) {
			out[n++] = '?';
			p++;
		} else {
			memcpy(out + n, p, l);
			n += l;
			p += l;
		}
	}
	if (*p) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
}
