/* SPDX-License-Identifier: MIT */
#include "multipart.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum {
	ST_PREAMBLE, /* before the first boundary: dropped */
	ST_AFTER,    /* a boundary read: "--" (the last) or CRLF (a part) follows */
	ST_AFTER_DASH,
	ST_AFTER_CR,
	ST_HEAD,     /* a part's headers, up to the empty line */
	ST_DATA,     /* a part's bytes, up to the next boundary */
	ST_EPILOGUE, /* after the last boundary: dropped */
	ST_ERROR,
};

/* RFC 2046's bchars: what a boundary may hold (a space, but not last). */
static bool boundary_valid(const char *b, size_t n)
{
	if (n == 0 || n > SR_MULTIPART_BOUNDARY_MAX || b[n - 1] == ' ')
		return false;
	return strspn(b, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "'()+_,-./:=? ") == n;
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/*
 * The next parameter of a header's value ("; key=value" or "; key=\"value\""),
 * from *p: its key and value NUL-terminated in place, *p past it; false at
 * the end. A quoted value ends at the next quote, escapes not read, as
 * browsers (which percent-encode a quote) and libmicrohttpd have it.
 */
static bool next_param(char **p, char **ret_key, char **ret_value)
{
	char *s = (char *)skip_space(*p), *key, *key_end, *value = NULL, *end = NULL;

	while (*s == ';')
		s = (char *)skip_space(s + 1);
	if (!*s)
		return false;
	key = s;
	s += strcspn(s, "=;");
	key_end = s;
	if (*s == '=') {
		s = (char *)skip_space(s + 1);
		if (*s == '"') {
			value = ++s;
			end = s + strcspn(s, "\"");
			s = end + (*end != '\0');
		} else {
			value = s;
			end = s + strcspn(s, ";");
			s = end;
			while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
		}
	}
	/* Past the ';' before the key and value are ended in place, which may be where it was. */
	if (*s == ';')
		s++;
	if (value)
		*end = '\0';
	while (key_end > key && (key_end[-1] == ' ' || key_end[-1] == '\t'))
		key_end--;
	*key_end = '\0';
	*ret_key = key;
	*ret_value = value;
	*p = s;
	return true;
}

int sr_multipart_init(struct sr_multipart *m, const char *content_type,
		      const struct sr_multipart_ops *ops, void *ctx)
{
	static const char form[] = "multipart/form-data";
	char params[512], *p = params, *key, *value;
	const char *rest;

	if (!content_type || strncasecmp(content_type, form, strlen(form)) != 0)
		return -ENOMSG;
	rest = skip_space(content_type + strlen(form));
	if (*rest && *rest != ';')
		return -ENOMSG;
	if (strlen(rest) >= sizeof(params))
		return -EINVAL;
	strcpy(params, rest);
	while (next_param(&p, &key, &value)) {
		if (strcasecmp(key, "boundary") != 0 || !value)
			continue;
		if (!boundary_valid(value, strlen(value)))
			return -EINVAL;
		*m = (struct sr_multipart){.ops = ops, .ctx = ctx, .state = ST_PREAMBLE};
		m->delim_len = (size_t)snprintf(m->delim, sizeof(m->delim), "\r\n--%s", value);
		/* The body may start with its boundary: as if a CRLF came before it. */
		m->matched = 2;
		return 0;
	}
	return -EINVAL;
}

/* The headers whole: the part begins, named as its Content-Disposition says. */
static void head_done(struct sr_multipart *m)
{
	char *line = m->head, *name = NULL, *filename = NULL;

	m->head[m->head_len] = '\0';
	while (*line) {
		char *eol = strstr(line, "\r\n"), *p, *key, *value;

		/* A NUL in a header ends what is read of them. */
		if (!eol)
			break;
		*eol = '\0';
		p = strchr(line, ':');
		if (p && (size_t)(p - line) == strlen("Content-Disposition") &&
		    strncasecmp(line, "Content-Disposition", (size_t)(p - line)) == 0) {
			p++;
			/* form-data, then its parameters. */
			p = (char *)skip_space(p);
			p += strcspn(p, ";");
			while (next_param(&p, &key, &value)) {
				if (strcasecmp(key, "name") == 0)
					name = value;
				else if (strcasecmp(key, "filename") == 0)
					filename = value;
			}
		}
		line = eol + 2;
	}
	m->ops->begin(m->ctx, name, filename);
	explicit_bzero(m->head, m->head_len);
	m->head_len = 0;
}

static int head_byte(struct sr_multipart *m, char c)
{
	if (m->head_len == SR_MULTIPART_HEAD_MAX)
		return -EBADMSG;
	m->head[m->head_len++] = c;
	if (c != '\n')
		return 0;
	/* No headers (a CRLF at once), or the empty line that ends them. */
	if ((m->head_len == 2 && m->head[0] == '\r') ||
	    (m->head_len >= 4 && memcmp(m->head + m->head_len - 4, "\r\n\r\n", 4) == 0)) {
		m->state = ST_DATA;
		head_done(m);
	}
	return 0;
}

/* After a boundary: "--" ends the body, CRLF (after spaces, RFC 2046's padding) a part. */
static int after_byte(struct sr_multipart *m, char c)
{
	switch (m->state) {
	case ST_AFTER:
		if (c == ' ' || c == '\t')
			return 0;
		m->state = c == '-' ? ST_AFTER_DASH : c == '\r' ? ST_AFTER_CR : ST_ERROR;
		break;
	case ST_AFTER_DASH:
		m->state = c == '-' ? ST_EPILOGUE : ST_ERROR;
		break;
	case ST_AFTER_CR:
		m->state = c == '\n' ? ST_HEAD : ST_ERROR;
		break;
	}
	return m->state == ST_ERROR ? -EBADMSG : 0;
}

static void emit(struct sr_multipart *m, const char *p, size_t n)
{
	if (n && m->state == ST_DATA)
		m->ops->data(m->ctx, p, n);
}

/*
 * The bytes of a part (or of the preamble) from p, up to the boundary
 * that ends it: how many were taken (all, or through the boundary). The
 * bytes that may begin a boundary at the end of p are held back, as a
 * count: held, they are delim's own first bytes. A boundary holds no CR
 * (boundary_valid()), so delim has none past its first byte: a partial
 * match that fails can hold no other one, and the bytes it had matched
 * are data.
 */
static size_t scan(struct sr_multipart *m, const char *p, size_t n)
{
	size_t carried = m->matched, i = 0;

	while (i < n) {
		if (m->matched == 0) {
			const char *cr = memchr(p + i, '\r', n - i);

			if (!cr)
				break;
			i = (size_t)(cr - p);
		}
		if (p[i] == m->delim[m->matched]) {
			i++;
			if (++m->matched == m->delim_len) {
				emit(m, p, i - (m->matched - carried));
				m->matched = 0;
				m->state = ST_AFTER;
				return i;
			}
			continue;
		}
		/* Not a boundary: what was held from before is data, p[i] looked at again. */
		if (carried)
			emit(m, m->delim, carried);
		carried = 0;
		m->matched = 0;
	}
	/* All but what may begin a boundary (if p is all of one, nothing). */
	emit(m, p, n - (m->matched - carried));
	return n;
}

int sr_multipart_feed(struct sr_multipart *m, const char *p, size_t n)
{
	size_t i = 0;
	int r = 0;

	while (i < n && r == 0) {
		switch (m->state) {
		case ST_PREAMBLE:
		case ST_DATA:
			i += scan(m, p + i, n - i);
			break;
		case ST_AFTER:
		case ST_AFTER_DASH:
		case ST_AFTER_CR:
			r = after_byte(m, p[i++]);
			break;
		case ST_HEAD:
			r = head_byte(m, p[i++]);
			break;
		case ST_EPILOGUE:
			return 0;
		default:
			return -EBADMSG;
		}
	}
	if (r < 0)
		m->state = ST_ERROR;
	return r;
}

int sr_multipart_end(struct sr_multipart *m)
{
	return m->state == ST_EPILOGUE ? 0 : -EBADMSG;
}

void sr_multipart_free(struct sr_multipart *m)
{
	explicit_bzero(m->head, sizeof(m->head));
	m->head_len = 0;
}
