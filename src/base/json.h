/* SPDX-License-Identifier: MIT */
/*
 * JSON: one library (jansson) and one policy for everything sandbox-run
 * reads or writes as JSON (package.json, the result record, and what
 * comes next: state files, inspect, the API).
 *
 * Reading: RFC 8259 as jansson checks it: valid UTF-8 only, a \u0000
 * escape only with JSON_ALLOW_NUL, nothing after the value, numbers
 * within a double's range. Nesting is bounded by the caller (jansson
 * recurses, and refuses more than 2048 levels itself).
 *
 * Writing: one line, compact, keys in the order they were added (jansson
 * >= 2.8 keeps insertion order), UTF-8 as it is; '"', '\' and control
 * characters escaped (\n, \t, \u001B), '/' and DEL not. Reals with at most
 * 15 significant digits (DBL_DIG): any decimal of up to 15 digits prints
 * as itself (12.3, not the 12.300000000000001 of %.17g), with a '.' for
 * every LC_NUMERIC (jansson puts back the locale's decimal point).
 *
 * Strings written come from anywhere (an error quoting an agent's path, a
 * profile's file name), and jansson refuses one that is not valid UTF-8:
 * sr_json_string() replaces each byte that does not begin a valid
 * sequence with U+FFFD, as a decoder shows it, and keeps everything else.
 */
#pragma once

#include "util.h"

#include <jansson.h>
#include <stddef.h>

#define SR_JSON_DUMP_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15))

SR_DEFINE_CLEANUP(sr_json_decrefp, json_t *, json_decref)

/*
 * s with each byte that does not begin a valid UTF-8 sequence (a stray
 * continuation byte, an overlong form, a UTF-16 surrogate, a code point
 * above U+10FFFF, a sequence cut short) replaced by U+FFFD; malloc'd.
 */
int sr_utf8_sanitize(const char *s, char **ret);

/* A JSON string of s, sanitized as above; null for a NULL s; NULL when out of memory. */
json_t *sr_json_string(const char *s);
/*
 * The same of len bytes at s, NULs among them (a process's output): JSON
 * writes each as \u0000 where a C string would end there.
 */
json_t *sr_json_stringn(const char *s, size_t len);

/* j as one line of JSON (SR_JSON_DUMP_FLAGS) and a '\n', malloc'd. */
int sr_json_dump_line(const json_t *j, char **ret);
/*
 * j indented by two spaces a level, and a '\n', malloc'd: documents people
 * read and edit (an OCI bundle's config.json, Kubernetes objects).
 * Otherwise as sr_json_dump_line.
 */
int sr_json_dump_document(const json_t *j, char **ret);

/*
 * Parses the len bytes at text (no terminator needed) with jansson's
 * decoding flags: -EINVAL when they are not JSON or nest more than
 * max_depth arrays and objects (the top-level one counts), -ENOMEM.
 */
int sr_json_parse(const char *text, size_t len, size_t flags, unsigned max_depth, json_t **ret);

/*
 * The JSON object in the file at dirfd/path (the last name not followed
 * if it is a symlink), parsed as above; NULL when it cannot be read, is
 * empty, longer than max bytes, not JSON, nests deeper than max_depth or
 * is not an object. For the small files sandbox-run writes itself
 * (state.json, a version's or a snapshot's meta.json).
 */
json_t *sr_json_read_object_at(int dirfd, const char *path, size_t max, unsigned max_depth);
/* The same, from fd's position on (a file the caller has opened and locked). */
json_t *sr_json_read_object_fd(int fd, size_t max, unsigned max_depth);
