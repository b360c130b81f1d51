/* SPDX-License-Identifier: MIT */
/*
 * Messages and errors.
 *
 * Modules never print and never exit: a failing function fills a struct
 * sr_error ("what: why") and returns a negative errno. The caller adds
 * context with sr_error_prefix(); main.c prints it once and chooses the
 * exit status (err->status, 125 unless a module said otherwise).
 */
#pragma once

#include <stdarg.h>
#include <stddef.h>

enum sr_log_level {
	SR_LOG_ERROR,
	SR_LOG_WARNING,
	SR_LOG_INFO,
	SR_LOG_DEBUG,
	_SR_LOG_LEVEL_MAX,
};

#define SR_ERROR_MSG_MAX 1024

struct sr_error {
	int code;   /* negative errno, 0 when unset */
	int status; /* exit status to report: 125 unless set (126, 127) */
	char msg[SR_ERROR_MSG_MAX];
};

/* "what: strerror(-code)"; returns code. */
int sr_error_errno(struct sr_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "what" exactly as formatted (it says why itself); returns code. */
int sr_error_msg(struct sr_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepends "context: " to the message; returns err->code. */
int sr_error_prefix(struct sr_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void sr_error_clear(struct sr_error *err);

void sr_log_set_level(enum sr_log_level level);
enum sr_log_level sr_log_get_level(void);
void sr_log(enum sr_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define sr_warn(...)  sr_log(SR_LOG_WARNING, __VA_ARGS__)
#define sr_info(...)  sr_log(SR_LOG_INFO, __VA_ARGS__)
#define sr_debug(...) sr_log(SR_LOG_DEBUG, __VA_ARGS__)

/*
 * text, made safe for the user's terminal: control characters (C0, DEL,
 * and C1 in either encoding) and bytes of no valid UTF-8 sequence become
 * '?', so it can neither start a line of its own nor send escape
 * sequences; valid UTF-8 is kept. Cut with "..." to fit len (at least 12).
 */
void sr_printable(const char *text, char *out, size_t len);
