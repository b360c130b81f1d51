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
#include <stdbool.h>
#include <stddef.h>

enum sr_log_level {
	SR_LOG_ERROR,
	SR_LOG_WARNING,
	SR_LOG_INFO,
	SR_LOG_DEBUG,
	_SR_LOG_LEVEL_MAX,
};

#define SR_ERROR_MSG_MAX 1024

/*
 * What an error is of, where a caller must tell it apart from others of
 * the same errno without reading its text: the API server says a profile
 * that did not load in its own words, as the request named it, since the
 * loader's name the server's files (profile.h).
 */
enum sr_error_kind {
	SR_ERROR_PLAIN,
	SR_ERROR_PROFILE_MISSING, /* the profile asked for is nowhere */
	SR_ERROR_PROFILE_BROKEN,  /* it is there, but it (or one it inherits) does not load */
	_SR_ERROR_KIND_MAX,
};

struct sr_error {
	int code;		 /* negative errno, 0 when unset */
	int status;		 /* exit status to report: 125 unless set (126, 127) */
	enum sr_error_kind kind; /* set by the module after the message; a new message resets it */
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

/*
 * Where a component's messages go: library code never prints, it hands
 * each message to the sink its caller gave it (crun's output handler), so
 * that a process driving many sandboxes (a keeper, the API server) keeps
 * their messages apart. A NULL sink discards everything; messages above
 * level are not formatted at all. write() gets the message alone, made
 * one printable line (sr_printable); the sink adds any prefix.
 */
struct sr_sink {
	enum sr_log_level level;
	void (*write)(void *ctx, enum sr_log_level level, const char *text);
	void *ctx;
};

void sr_sink_log(const struct sr_sink *s, enum sr_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool sr_sink_enabled(const struct sr_sink *s, enum sr_log_level level);
/*
 * The command line's sink: "sandbox-run: [warning: ]TEXT" lines on
 * stderr, each in one write(2), so that concurrent sandboxes sharing a
 * terminal do not interleave.
 */
void sr_sink_stderr(struct sr_sink *s, enum sr_log_level level);

#define sr_warn(sink, ...)  sr_sink_log((sink), SR_LOG_WARNING, __VA_ARGS__)
#define sr_info(sink, ...)  sr_sink_log((sink), SR_LOG_INFO, __VA_ARGS__)
#define sr_debug(sink, ...) sr_sink_log((sink), SR_LOG_DEBUG, __VA_ARGS__)

/*
 * text, made safe for the user's terminal: control characters (C0, DEL,
 * and C1 in either encoding) and bytes of no valid UTF-8 sequence become
 * '?', so it can neither start a line of its own nor send escape
 * sequences; valid UTF-8 is kept. Cut with "..." to fit len (at least 12).
 */
void sr_printable(const char *text, char *out, size_t len);
