/* SPDX-License-Identifier: MIT */
#include "udiff.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct line {
	const char *p;
	size_t len; /* without its '\n' */
	uint64_t hash;
	int newline; /* ends with '\n' */
};

enum op { EQ, DEL, ADD };

struct edit {
	enum op op;
	size_t a, b; /* line indexes in a and b */
};

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
	return h;
}

static struct line *split(const char *t, size_t len, size_t *ret_n)
{
	size_t n = 0, cap = 64;
	struct line *v = malloc(cap * sizeof(*v));

	for (size_t i = 0; v && i < len;) {
		const char *nl = memchr(t + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (t + i)) : len - i;

		if (n == cap) {
			struct line *nv = realloc(v, (cap *= 2) * sizeof(*v));

			if (!nv) {
				free(v);
				return NULL;
			}
			v = nv;
		}
		v[n++] = (struct line){t + i, l, fnv1a(t + i, l), nl != NULL};
		i += l + (nl ? 1 : 0);
	}
	*ret_n = n;
	return v;
}

static int same(const struct line *x, const struct line *y)
{
	return x->hash == y->hash && x->len == y->len && x->newline == y->newline &&
	       memcmp(x->p, y->p, x->len) == 0;
}

/*
 * Myers' greedy algorithm over a[0..n) and b[0..m): the edit script, in
 * order, appended to es (its room: n + m). -E2BIG past max_d edits.
 */
static int myers(const struct line *a, size_t n, const struct line *b, size_t m, size_t max_d,
		 struct edit *es, size_t *ret_n)
{
	long off = (long)(n + m + 1), d, k;
	long *v = calloc((size_t)(2 * off + 1), sizeof(*v));
	long **trace = calloc(max_d + 1, sizeof(*trace));
	size_t count = 0;
	long x, y;
	int found = 0;

	if (!v || !trace) {
		free(v);
		free(trace);
		return -ENOMEM;
	}
	for (d = 0; d <= (long)max_d && !found; d++) {
		trace[d] = malloc((size_t)(2 * d + 1) * sizeof(long));
		if (!trace[d])
			goto oom;
		for (k = -d; k <= d; k += 2) {
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			y = x - k;
			while (x < (long)n && y < (long)m && same(&a[x], &b[y]))
				x++, y++;
			v[off + k] = x;
			if (x >= (long)n && y >= (long)m)
				found = 1;
		}
		memcpy(trace[d], &v[off - d], (size_t)(2 * d + 1) * sizeof(long));
	}
	if (!found) {
		for (long i = 0; i < d; i++)
			free(trace[i]);
		free(trace);
		free(v);
		return -E2BIG;
	}
	/* Back from (n, m): each step d one edit and the diagonal run after it. */
	x = (long)n, y = (long)m;
	for (long step = d - 1; step > 0; step--) {
		long *vp = trace[step - 1] + (step - 1); /* V before step, indexed by k */
		long pk, px, py, mx, my;

		k = x - y;
		pk = (k == -step || (k != step && vp[k - 1] < vp[k + 1])) ? k + 1 : k - 1;
		px = vp[pk];
		py = px - pk;
		mx = pk == k + 1 ? px : px + 1;
		my = pk == k + 1 ? py + 1 : py;
		while (x > mx && y > my)
			es[count++] = (struct edit){EQ, (size_t)--x, (size_t)--y};
		if (pk == k + 1)
			es[count++] = (struct edit){ADD, (size_t)px, (size_t)py};
		else
			es[count++] = (struct edit){DEL, (size_t)px, (size_t)py};
		x = px, y = py;
	}
	while (x > 0 && y > 0)
		es[count++] = (struct edit){EQ, (size_t)--x, (size_t)--y};
	/* Reversed into order. */
	for (size_t i = 0; i < count / 2; i++) {
		struct edit t = es[i];

		es[i] = es[count - 1 - i];
		es[count - 1 - i] = t;
	}
	for (long i = 0; i <= (long)max_d && trace[i]; i++)
		free(trace[i]);
	free(trace);
	free(v);
	*ret_n = count;
	return 0;
oom:
	for (long i = 0; i <= d && i <= (long)max_d; i++)
		free(trace[i]);
	free(trace);
	free(v);
	return -ENOMEM;
}

static void put_line(FILE *out, char c, const struct line *l)
{
	fputc(c, out);
	fwrite(l->p, 1, l->len, out);
	fputc('\n', out);
	if (!l->newline)
		fputs("\\ No newline at end of file\n", out);
}

static void hunks(FILE *out, const struct edit *es, size_t n, const struct line *a,
		  const struct line *b, int context)
{
	size_t i = 0;

	while (i < n) {
		size_t start, end, last, a0, b0, ac = 0, bc = 0;

		while (i < n && es[i].op == EQ)
			i++;
		if (i == n)
			break;
		start = i > (size_t)context ? i - (size_t)context : 0;
		/* The hunk goes on while the next change is within two contexts. */
		last = i;
		for (size_t j = i; j < n; j++) {
			if (es[j].op != EQ) {
				last = j;
				continue;
			}
			if (j - last > 2 * (size_t)context)
				break;
		}
		end = last + (size_t)context + 1 < n ? last + (size_t)context + 1 : n;
		a0 = es[start].a, b0 = es[start].b;
		for (size_t j = start; j < end; j++) {
			ac += es[j].op != ADD;
			bc += es[j].op != DEL;
		}
		fprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", ac ? a0 + 1 : a0, ac, bc ? b0 + 1 : b0,
			bc);
		for (size_t j = start; j < end; j++)
			put_line(out,
				 es[j].op == EQ	   ? ' '
				 : es[j].op == DEL ? '-'
						   : '+',
				 es[j].op == ADD ? &b[es[j].b] : &a[es[j].a]);
		i = end;
	}
}

int sr_udiff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
	     const char *label_b, int context, FILE *out, struct sr_udiff_stat *ret)
{
	size_t n = 0, m = 0, head = 0, tail = 0, count = 0, mid = 0;
	struct line *la = split(a, alen, &n), *lb = split(b, blen, &m);
	struct edit *es = NULL;
	int k = -ENOMEM;

	*ret = (struct sr_udiff_stat){0};
	if (!la || !lb)
		goto out;
	while (head < n && head < m && same(&la[head], &lb[head]))
		head++;
	while (tail < n - head && tail < m - head && same(&la[n - 1 - tail], &lb[m - 1 - tail]))
		tail++;
	es = malloc((n + m + 1) * sizeof(*es));
	if (!es)
		goto out;
	for (size_t i = 0; i < head; i++)
		es[count++] = (struct edit){EQ, i, i};
	k = myers(la + head, n - head - tail, lb + head, m - head - tail, SR_UDIFF_MAX_EDITS,
		  es + count, &mid);
	if (k == -E2BIG) {
		/* Too different to be worth the search: the middle replaced whole. */
		mid = 0;
		for (size_t i = 0; i < n - head - tail; i++)
			es[count + mid++] = (struct edit){DEL, i, 0};
		for (size_t i = 0; i < m - head - tail; i++)
			es[count + mid++] = (struct edit){ADD, n - head - tail, i};
		k = 0;
	}
	if (k < 0)
		goto out;
	for (size_t i = count; i < count + mid; i++) {
		es[i].a += head;
		es[i].b += head;
	}
	count += mid;
	for (size_t i = 0; i < tail; i++)
		es[count++] = (struct edit){EQ, n - tail + i, m - tail + i};
	for (size_t i = 0; i < count; i++) {
		ret->added += es[i].op == ADD;
		ret->removed += es[i].op == DEL;
	}
	if (out && (ret->added || ret->removed)) {
		fprintf(out, "--- %s\n+++ %s\n", label_a, label_b);
		hunks(out, es, count, la, lb, context);
	}
	k = 0;
out:
	free(la);
	free(lb);
	free(es);
	return k;
}

int sr_udiff_is_text(const char *text, size_t len)
{
	return memchr(text, '\0', len < 8192 ? len : 8192) == NULL;
}
