/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run diff`: a changes file (changes.h) for a person to review.
 * Names are shown printable (an agent chooses them: no escape sequence
 * reaches the terminal); file contents in --patch are as they are, for
 * git apply, unless the caller shows them on a terminal
 * (sr_changes_visible_open()).
 */
#include "apply.h"
#include "changes.h"
#include "udiff.h"
#include "util.h"

#include <limits.h>
#include <sys/stat.h>

/* Larger files are not diffed line by line: "Binary or large files differ". */
#define PATCH_MAX (16 << 20)

struct show {
	struct sr_changes c;
	enum sr_diff_mode mode;
	FILE *out;
	bool *renamed; /* a deletion shown as the source of a rename */
	char *held;    /* base/PATH's content, waiting for files/PATH */
	size_t held_len;
	const struct sr_change *held_for;
	size_t files, added, removed;
};

static const char *shown(const char *s, char *buf, size_t len)
{
	sr_printable(s, buf, len);
	return buf;
}

/* A deleted file whose content an added file has (the same digest): a rename. */
static const struct sr_change *rename_of(struct show *s, const struct sr_change *ch)
{
	if (ch->op != SR_CHANGE_ADDED || ch->node.type != SR_CHANGE_FILE || ch->node.size == 0)
		return NULL;
	for (size_t i = 0; i < s->c.n; i++) {
		const struct sr_change *d = &s->c.v[i];

		if (d->op == SR_CHANGE_DELETED && !s->renamed[i] &&
		    d->base.type == SR_CHANGE_FILE &&
		    strcmp(d->base.sha256, ch->node.sha256) == 0) {
			s->renamed[i] = true;
			return d;
		}
	}
	return NULL;
}

static void summary(struct show *s)
{
	size_t counts[_SR_CHANGE_OP_MAX] = {0}, renames = 0;
	char a[512], b[512];

	/* By path, whatever order the sandbox's directories listed them in. */
	for (size_t j = 0; j < s->c.n; j++) {
		const struct sr_change *ch = &s->c.v[s->c.by_path[j]], *from = rename_of(s, ch);
		const char *dir = ch->node.type == SR_CHANGE_DIR ? "/" : "";

		if (from) {
			fprintf(s->out, "R  %s -> %s\n", shown(from->path, a, sizeof(a)),
				shown(ch->path, b, sizeof(b)));
			renames++;
			continue;
		}
		if (ch->op == SR_CHANGE_DELETED)
			continue; /* after the others: a rename's source is known then */
		counts[ch->op]++;
		fprintf(s->out, "%c  %s%s", ch->op == SR_CHANGE_ADDED ? 'A' : 'M',
			shown(ch->path, a, sizeof(a)), dir);
		if (ch->node.type == SR_CHANGE_LINK)
			fprintf(s->out, " -> %s", shown(ch->node.target, b, sizeof(b)));
		if (ch->op == SR_CHANGE_MODIFIED && ch->base.type != ch->node.type)
			fprintf(s->out, " (%s -> %s)", sr_change_type_to_string(ch->base.type),
				sr_change_type_to_string(ch->node.type));
		else if (ch->op == SR_CHANGE_MODIFIED &&
			 (ch->base.mode & 0777) != (ch->node.mode & 0777))
			fprintf(s->out, " (mode %04o -> %04o)", (unsigned)(ch->base.mode & 0777),
				(unsigned)(ch->node.mode & 0777));
		if (ch->host_changed)
			fputs(" (changed on the host while the sandbox ran)", s->out);
		fputc('\n', s->out);
	}
	for (size_t j = 0; j < s->c.n; j++) {
		size_t i = s->c.by_path[j];
		const struct sr_change *ch = &s->c.v[i];

		if (ch->op != SR_CHANGE_DELETED || s->renamed[i])
			continue;
		counts[SR_CHANGE_DELETED]++;
		fprintf(s->out, "D  %s%s%s\n", shown(ch->path, a, sizeof(a)),
			ch->base.type == SR_CHANGE_DIR ? "/" : "",
			ch->host_changed ? " (changed on the host while the sandbox ran)" : "");
	}
	fprintf(s->out, "%zu added, %zu modified, %zu deleted, %zu renamed\n",
		counts[SR_CHANGE_ADDED], counts[SR_CHANGE_MODIFIED], counts[SR_CHANGE_DELETED],
		renames);
}

/* One file's (or link's) old and new content: --stat's line or --patch's section. */
static int show_pair(struct show *s, const struct sr_change *ch, const char *old, size_t old_len,
		     bool has_old, const char *new, size_t new_len, bool has_new)
{
	struct sr_udiff_stat st = {0};
	char la[PATH_MAX + 8], lb[PATH_MAX + 8], p[512];
	bool text = old_len <= PATCH_MAX && new_len <= PATCH_MAX &&
		    sr_udiff_is_text(old, old_len) && sr_udiff_is_text(new, new_len);
	const struct sr_change_node *n = has_new ? &ch->node : &ch->base;
	int k = 0;

	shown(ch->path, p, sizeof(p));
	snprintf(la, sizeof(la), "%s%s", has_old ? "a/" : "", has_old ? p : "/dev/null");
	snprintf(lb, sizeof(lb), "%s%s", has_new ? "b/" : "", has_new ? p : "/dev/null");
	if (text)
		k = sr_udiff(old, old_len, new, new_len, la, lb, 3, NULL, &st);
	if (k < 0)
		return k;
	s->files++;
	s->added += st.added;
	s->removed += st.removed;
	if (s->mode == SR_DIFF_STAT) {
		if (text)
			fprintf(s->out, " %s | +%zu -%zu\n", p, st.added, st.removed);
		else
			fprintf(s->out, " %s | binary, %zu -> %zu bytes\n", p, old_len, new_len);
		return 0;
	}
	fprintf(s->out, "diff --git a/%s b/%s\n", p, p);
	if (!has_old)
		fprintf(s->out, "new file mode %s%04o\n", n->type == SR_CHANGE_LINK ? "12" : "10",
			(unsigned)(n->mode & 0777));
	else if (!has_new)
		fprintf(s->out, "deleted file mode %s%04o\n",
			n->type == SR_CHANGE_LINK ? "12" : "10", (unsigned)(n->mode & 0777));
	else if ((ch->base.mode & 0777) != (ch->node.mode & 0777))
		fprintf(s->out, "old mode 10%04o\nnew mode 10%04o\n",
			(unsigned)(ch->base.mode & 0777), (unsigned)(ch->node.mode & 0777));
	if (!text) {
		fprintf(s->out, "Binary files %s and %s differ\n", la, lb);
		return 0;
	}
	return sr_udiff(old, old_len, new, new_len, la, lb, 3, s->out, &st);
}

/* A deleted file whose base/ content waited: shown against nothing. */
static int flush_held(struct show *s)
{
	int k = 0;

	if (s->held_for)
		k = show_pair(s, s->held_for, s->held, s->held_len, true, "", 0, false);
	free(s->held);
	s->held = NULL;
	s->held_len = 0;
	s->held_for = NULL;
	return k;
}

static int read_all(struct sr_archive_reader *r, int64_t size, char **ret, size_t *ret_len,
		    struct sr_error *err)
{
	size_t cap = size > 0 && size <= PATCH_MAX ? (size_t)size : 0, len = 0;
	char *buf = malloc(cap + 1);
	ssize_t n;

	if (!buf)
		return sr_error_errno(err, -ENOMEM, "diff");
	/* Past PATCH_MAX only the size matters: read and dropped. */
	for (;;) {
		char chunk[65536];

		n = sr_archive_reader_data(r, chunk, sizeof(chunk), err);
		if (n <= 0)
			break;
		if (len + (size_t)n <= cap)
			memcpy(buf + len, chunk, (size_t)n);
		len += (size_t)n;
	}
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	buf[len <= cap ? len : 0] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

static int contents(struct show *s, struct sr_archive_reader *r, struct sr_error *err)
{
	struct sr_archive_entry e;
	int k;

	while ((k = sr_archive_reader_next(r, &e, err)) > 0) {
		bool base = strncmp(e.path, "base/", 5) == 0;
		const struct sr_change *ch = sr_changes_find(&s->c, e.path + (base ? 5 : 6));
		_cleanup_free_ char *data = NULL;
		size_t len = 0;

		if (!ch || (!base && strncmp(e.path, "files/", 6) != 0) || S_ISDIR(e.type))
			continue;
		if (S_ISLNK(e.type)) {
			data = strdup(e.link ? e.link : "");
			len = data ? strlen(data) : 0;
		} else if ((k = read_all(r, e.size, &data, &len, err)) < 0) {
			return k;
		}
		if (!data)
			return sr_error_errno(err, -ENOMEM, "diff");
		if (base) {
			if ((k = flush_held(s)) < 0)
				return sr_error_errno(err, k, "diff");
			s->held = steal_pointer(&data);
			s->held_len = len;
			s->held_for = ch;
			continue;
		}
		if (s->held_for == ch) {
			k = show_pair(s, ch, s->held, s->held_len, true, data, len, true);
			free(s->held);
			s->held = NULL;
			s->held_for = NULL;
		} else if ((k = flush_held(s)) >= 0) {
			/* A link's old content is its old target, which the manifest has. */
			const char *old =
			    ch->op == SR_CHANGE_MODIFIED && ch->base.type == SR_CHANGE_LINK
				? ch->base.target
				: "";

			k = show_pair(s, ch, old, strlen(old), ch->op != SR_CHANGE_ADDED, data, len,
				      true);
		}
		if (k < 0)
			return sr_error_errno(err, k, "diff");
	}
	if (k >= 0)
		k = flush_held(s);
	return k;
}

int sr_changes_show(int fd, enum sr_diff_mode mode, FILE *out, struct sr_error *err)
{
	struct show s = {.mode = mode, .out = out};
	struct sr_archive_reader *r = NULL;
	int k;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return sr_error_errno(err, sr_negerrno(), "diff");
	k = sr_archive_reader_open(fd, 0, &r, err);
	if (k >= 0)
		k = sr_changes_read(r, &s.c, err);
	if (k >= 0 && !(s.renamed = calloc(s.c.n + 1, sizeof(*s.renamed))))
		k = sr_error_errno(err, -ENOMEM, "diff");
	if (k >= 0 && mode == SR_DIFF_SUMMARY)
		summary(&s);
	else if (k >= 0)
		k = contents(&s, r, err);
	if (k >= 0 && mode == SR_DIFF_STAT)
		fprintf(out, " %zu file%s changed, %zu insertion%s(+), %zu deletion%s(-)\n",
			s.files, s.files == 1 ? "" : "s", s.added, s.added == 1 ? "" : "s",
			s.removed, s.removed == 1 ? "" : "s");
	sr_archive_reader_free(r);
	sr_changes_free(&s.c);
	free(s.renamed);
	free(s.held);
	return k < 0 ? k : 0;
}

/*
 * The reviewer's terminal: an agent's file is the agent's words, and an
 * escape sequence in it (cursor up, erase line, an OSC title) could hide
 * or rewrite the lines of the diff the reviewer is asked to approve. C0
 * controls other than newline and tab are shown as cat -v shows them
 * (ESC as ^[, CR as ^M, DEL as ^?); C1 controls (U+0080 to U+009F, which
 * some terminals obey as ESC [ and the like) and bytes of no UTF-8
 * character as \xHH; UTF-8 characters as they are. A character may come
 * in two writes: its first bytes wait for the rest.
 */
struct visible {
	FILE *out;
	unsigned char seq[4];
	size_t have, need;
};

static void put_hex(FILE *out, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "\\x%02x", p[i]);
}

/* A whole UTF-8 sequence: no overlong form, surrogate, C1 or code point past U+10FFFF. */
static bool utf8_shown(const unsigned char *p)
{
	switch (p[0]) {
	case 0xc2:
		return p[1] >= 0xa0;
	case 0xe0:
		return p[1] >= 0xa0;
	case 0xed:
		return p[1] < 0xa0;
	case 0xf0:
		return p[1] >= 0x90;
	case 0xf4:
		return p[1] < 0x90;
	default:
		return true;
	}
}

static void visible_byte(struct visible *v, unsigned char b)
{
	if (v->need) {
		if ((b & 0xc0) == 0x80) {
			v->seq[v->have++] = b;
			if (v->have < v->need)
				return;
			if (utf8_shown(v->seq))
				fwrite(v->seq, 1, v->have, v->out);
			else
				put_hex(v->out, v->seq, v->have);
			v->have = v->need = 0;
			return;
		}
		put_hex(v->out, v->seq, v->have);
		v->have = v->need = 0;
	}
	if (b == '\n' || b == '\t' || (b >= 0x20 && b < 0x7f)) {
		putc(b, v->out);
	} else if (b < 0x20 || b == 0x7f) {
		putc('^', v->out);
		putc(b ^ 0x40, v->out);
	} else if (b >= 0xc2 && b <= 0xf4) {
		v->seq[0] = b;
		v->have = 1;
		v->need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
	} else {
		put_hex(v->out, &b, 1);
	}
}

static ssize_t visible_write(void *cookie, const char *buf, size_t len)
{
	struct visible *v = cookie;

	for (size_t i = 0; i < len; i++)
		visible_byte(v, (unsigned char)buf[i]);
	return ferror(v->out) ? -1 : (ssize_t)len;
}

static int visible_close(void *cookie)
{
	struct visible *v = cookie;
	int r;

	put_hex(v->out, v->seq, v->have);
	r = fflush(v->out) == 0 && !ferror(v->out) ? 0 : EOF;
	free(v);
	return r;
}

FILE *sr_changes_visible_open(FILE *out)
{
	struct visible *v = calloc(1, sizeof(*v));
	FILE *f;

	if (!v)
		return NULL;
	v->out = out;
	f = fopencookie(v, "w",
			(cookie_io_functions_t){.write = visible_write, .close = visible_close});
	if (!f)
		free(v);
	return f;
}
