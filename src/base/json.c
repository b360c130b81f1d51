/* SPDX-License-Identifier: MIT */
#include "json.h"
#include "secmem.h"

#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * Length of the valid UTF-8 sequence at s (1-4), of the left bytes there
 * (left > 0), or 0 if it is not one: the same rule jansson applies to a
 * string it is given. A NUL is a character like any other (a process's
 * output may hold one); a sequence cut short by the end is none.
 */
static size_t utf8_valid_len(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t need = c < 0x80		       ? 1
		      : c >= 0xc2 && c <= 0xdf ? 2
		      : c >= 0xe0 && c <= 0xef ? 3
		      : c >= 0xf0 && c <= 0xf4 ? 4
					       : 0;

	if (need == 0 || need > left)
		return 0;
	for (size_t i = 1; i < need; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* No overlongs (E0 80..9F, F0 80..8F), no UTF-16 surrogates (ED A0..BF), nothing
	 * above U+10FFFF (F4 90..). */
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return need;
}

static bool utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0, l; i < len; i += l)
		if ((l = utf8_valid_len(p + i, len - i)) == 0)
			return false;
	return true;
}

/* s's len bytes, sanitized (json.h), NUL-terminated; their length in *ret_len. */
static int utf8_sanitize(const char *s, size_t len, char **ret, size_t *ret_len)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;

	/* At worst every byte becomes the 3 bytes of U+FFFD. */
	if (len > (SIZE_MAX - 1) / 3)
		return -ENOMEM;
	out = o = malloc(len * 3 + 1);
	if (!out)
		return -ENOMEM;
	for (size_t i = 0, l; i < len; i += l) {
		l = utf8_valid_len(p + i, len - i);
		if (l == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			l = 1;
		} else {
			memcpy(o, p + i, l);
			o += l;
		}
	}
	*o = '\0';
	*ret = out;
	*ret_len = (size_t)(o - out);
	return 0;
}

int sr_utf8_sanitize(const char *s, char **ret)
{
	size_t n;

	return utf8_sanitize(s, strlen(s), ret, &n);
}

json_t *sr_json_string(const char *s)
{
	return s ? sr_json_stringn(s, strlen(s)) : json_null();
}

json_t *sr_json_stringn(const char *s, size_t len)
{
	_cleanup_free_ char *clean = NULL;
	size_t n;

	if (utf8_valid(s, len))
		return json_stringn_nocheck(s, len);
	if (utf8_sanitize(s, len, &clean, &n) < 0)
		return NULL;
	return json_stringn_nocheck(clean, n);
}

static int dump(const json_t *j, size_t flags, char **ret)
{
	char *s = json_dumps(j, flags), *line = s;
	size_t n;

	if (!s)
		return -ENOMEM;
	n = strlen(s);
	/*
	 * The newline in the block's room, most often there; else a block of
	 * its own, the old one wiped: realloc would free it as it was, and it
	 * may hold a secret (the server's token, secmem.h).
	 */
	if (malloc_usable_size(s) < n + 2) {
		line = malloc(n + 2);
		if (line)
			memcpy(line, s, n);
		sr_free_wiped(s);
		if (!line)
			return -ENOMEM;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	*ret = line;
	return 0;
}

int sr_json_dump_line(const json_t *j, char **ret)
{
	return dump(j, SR_JSON_DUMP_FLAGS, ret);
}

int sr_json_dump_document(const json_t *j, char **ret)
{
	return dump(j, (SR_JSON_DUMP_FLAGS & ~(size_t)JSON_COMPACT) | JSON_INDENT(2), ret);
}

/* Whether j nests at most `left` arrays and objects, itself included. */
static bool depth_within(json_t *j, unsigned left)
{
	const char *key;
	json_t *v;
	size_t i;

	if (!json_is_array(j) && !json_is_object(j))
		return true;
	if (left == 0)
		return false;
	if (json_is_array(j)) {
		json_array_foreach (j, i, v) {
			if (!depth_within(v, left - 1))
				return false;
		}
		return true;
	}
	json_object_foreach (j, key, v) {
		if (!depth_within(v, left - 1))
			return false;
	}
	return true;
}

int sr_json_parse(const char *text, size_t len, size_t flags, unsigned max_depth, json_t **ret)
{
	_cleanup_(sr_json_decrefp) json_t *j = NULL;
	json_error_t e;

	j = json_loadb(text, len, flags, &e);
	if (!j)
		return json_error_code(&e) == json_error_out_of_memory ? -ENOMEM : -EINVAL;
	/*
	 * After the parse, on a tree jansson has already bounded to 2048
	 * levels: the walk's recursion is bounded by max_depth.
	 */
	if (!depth_within(j, max_depth))
		return -EINVAL;
	*ret = steal_pointer(&j);
	return 0;
}

json_t *sr_json_read_object_fd(int fd, size_t max, unsigned max_depth)
{
	_cleanup_free_ char *buf = malloc(max + 1);
	_cleanup_(sr_json_decrefp) json_t *j = NULL;
	size_t len = 0;

	if (!buf)
		return NULL;
	/* One byte past max tells a file too long from one that fills it. */
	while (len <= max) {
		ssize_t n = SR_RETRY(read(fd, buf + len, max + 1 - len));

		if (n < 0)
			return NULL;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len == 0 || len > max || sr_json_parse(buf, len, 0, max_depth, &j) < 0 ||
	    !json_is_object(j))
		return NULL;
	return steal_pointer(&j);
}

json_t *sr_json_read_object_at(int dirfd, const char *path, size_t max, unsigned max_depth)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	return fd < 0 ? NULL : sr_json_read_object_fd(fd, max, max_depth);
}
