/* SPDX-License-Identifier: MIT */
/*
 * A changes file's manifest, to and from JSON (changes.h). What is read
 * may be crafted: every field is checked here, before diff or apply look
 * at it.
 */
#include "changes.h"
#include "json.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

/* A manifest is read whole: bounded like a JSON document anyone may hand us. */
#define MANIFEST_MAX   SR_CHANGES_MANIFEST_MAX
#define MANIFEST_DEPTH 8
#define COPY_BUF       65536

static const char *const ops[_SR_CHANGE_OP_MAX] = {
    [SR_CHANGE_ADDED] = "added",
    [SR_CHANGE_MODIFIED] = "modified",
    [SR_CHANGE_DELETED] = "deleted",
};

static const char *const types[_SR_CHANGE_TYPE_MAX] = {
    [SR_CHANGE_FILE] = "file",
    [SR_CHANGE_DIR] = "dir",
    [SR_CHANGE_LINK] = "symlink",
};

const char *sr_change_op_to_string(enum sr_change_op op)
{
	return (unsigned)op < _SR_CHANGE_OP_MAX ? ops[op] : "?";
}

const char *sr_change_type_to_string(enum sr_change_type t)
{
	return (unsigned)t < _SR_CHANGE_TYPE_MAX ? types[t] : "?";
}

void sr_changes_free(struct sr_changes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].node.target);
		free(c->v[i].base.target);
	}
	free(c->v);
	free(c->by_path);
	free(c->workspace);
	*c = (struct sr_changes){0};
}

bool sr_changes_path_ok(const char *path)
{
	const char *p = path;

	if (!path || !*path || *path == '/' || strlen(path) >= PATH_MAX)
		return false;
	while (*p) {
		size_t l = strcspn(p, "/");

		if (l == 0 || l > NAME_MAX || (l == 1 && p[0] == '.') ||
		    (l == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += l;
		if (*p == '/' && !*++p)
			return false; /* a trailing '/' */
	}
	return true;
}

static json_t *node_json(const struct sr_change_node *n)
{
	char mode[8];
	json_t *j;

	snprintf(mode, sizeof(mode), "%04o", (unsigned)(n->mode & 07777));
	j = json_pack("{ss ss}", "type", types[n->type], "mode", mode);
	if (!j)
		return NULL;
	if (n->type == SR_CHANGE_FILE &&
	    (json_object_set_new(j, "size", json_integer(n->size)) < 0 ||
	     json_object_set_new(j, "sha256", json_string(n->sha256)) < 0))
		goto fail;
	if (n->type == SR_CHANGE_LINK &&
	    json_object_set_new(j, "target", sr_json_string(n->target)) < 0)
		goto fail;
	return j;
fail:
	json_decref(j);
	return NULL;
}

json_t *sr_changes_manifest(const struct sr_changes *c)
{
	_cleanup_(sr_json_decrefp) json_t *root = NULL;
	json_t *list = json_array();
	time_t s = (time_t)(c->base_time_ns / 1000000000);
	char when[32] = "";
	struct tm tm;

	if (gmtime_r(&s, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	root = json_pack("{ss si ss so so ss sI}", "kind", "sandbox-run-changes", "version", 1,
			 "sandbox_id", c->sandbox_id, "workspace", sr_json_string(c->workspace),
			 "changes", list ? list : json_null(), "base_time", when, "base_time_ns",
			 (json_int_t)c->base_time_ns);
	if (!root || !list)
		return NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct sr_change *ch = &c->v[i];
		json_t *j = ch->op == SR_CHANGE_DELETED ? json_object() : node_json(&ch->node);

		if (!j || json_object_set_new(j, "path", json_string(ch->path)) < 0 ||
		    json_object_set_new(j, "op", json_string(ops[ch->op])) < 0 ||
		    (ch->op != SR_CHANGE_ADDED &&
		     json_object_set_new(j, "base", node_json(&ch->base)) < 0) ||
		    (ch->op != SR_CHANGE_ADDED &&
		     json_object_set_new(j, "host_changed", json_boolean(ch->host_changed)) < 0) ||
		    json_array_append_new(list, j) < 0) {
			json_decref(j);
			return NULL;
		}
	}
	return steal_pointer(&root);
}

int sr_changes_manifest_json(const struct sr_changes *c, char **ret, size_t *ret_len)
{
	_cleanup_(sr_json_decrefp) json_t *root = sr_changes_manifest(c);
	int k;

	if (!root)
		return -ENOMEM;
	k = sr_json_dump_line(root, ret);
	if (k < 0)
		return k;
	*ret_len = strlen(*ret);
	return 0;
}

static int find_name(const char *s, const char *const *names, int n)
{
	for (int i = 0; s && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* One node of a change ("base" or the change itself); what names it in errors. */
static int node_parse(json_t *j, struct sr_change_node *ret, const char *what, struct sr_error *err)
{
	const char *mode = json_string_value(json_object_get(j, "mode"));
	const char *sha = json_string_value(json_object_get(j, "sha256"));
	json_t *size = json_object_get(j, "size"), *target = json_object_get(j, "target");
	int t =
	    find_name(json_string_value(json_object_get(j, "type")), types, _SR_CHANGE_TYPE_MAX);
	unsigned long m;
	char *end;

	if (!json_is_object(j) || t < 0)
		return sr_error_msg(err, -EINVAL, "%s: no known type", what);
	ret->type = (enum sr_change_type)t;
	if (!mode || (m = strtoul(mode, &end, 8), *end) || !*mode || m > 07777)
		return sr_error_msg(err, -EINVAL, "%s: bad mode", what);
	ret->mode = (mode_t)m;
	if (t == SR_CHANGE_FILE) {
		if (!json_is_integer(size) || json_integer_value(size) < 0)
			return sr_error_msg(err, -EINVAL, "%s: bad size", what);
		ret->size = json_integer_value(size);
		if (!sha || strlen(sha) != SR_SHA256_HEX_LEN ||
		    strspn(sha, "0123456789abcdef") != SR_SHA256_HEX_LEN)
			return sr_error_msg(err, -EINVAL, "%s: bad sha256", what);
		memcpy(ret->sha256, sha, sizeof(ret->sha256));
	}
	if (t == SR_CHANGE_LINK) {
		if (!json_is_string(target) || !*json_string_value(target) ||
		    strlen(json_string_value(target)) >= PATH_MAX)
			return sr_error_msg(err, -EINVAL, "%s: bad link target", what);
		ret->target = strdup(json_string_value(target));
		if (!ret->target)
			return sr_error_errno(err, -ENOMEM, "%s", what);
	}
	return 0;
}

static const struct sr_changes *sort_ctx;

static int by_path(const void *a, const void *b)
{
	return strcmp(sort_ctx->v[*(const size_t *)a].path, sort_ctx->v[*(const size_t *)b].path);
}

static int index_paths(struct sr_changes *c, struct sr_error *err)
{
	c->by_path = calloc(c->n + 1, sizeof(*c->by_path));
	if (!c->by_path)
		return sr_error_errno(err, -ENOMEM, "changes");
	for (size_t i = 0; i < c->n; i++)
		c->by_path[i] = i;
	/* One thread: a file-scope context for qsort is enough. */
	sort_ctx = c;
	qsort(c->by_path, c->n, sizeof(*c->by_path), by_path);
	for (size_t i = 1; i < c->n; i++)
		if (strcmp(c->v[c->by_path[i - 1]].path, c->v[c->by_path[i]].path) == 0)
			return sr_error_msg(err, -EINVAL, "changes: %s is listed twice",
					    c->v[c->by_path[i]].path);
	return 0;
}

struct sr_change *sr_changes_find(const struct sr_changes *c, const char *path)
{
	size_t lo = 0, hi = c->n;

	while (c->by_path && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = strcmp(path, c->v[c->by_path[mid]].path);

		if (d == 0)
			return &c->v[c->by_path[mid]];
		if (d < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int change_parse(json_t *j, struct sr_change *ch, struct sr_error *err)
{
	const char *path = json_string_value(json_object_get(j, "path"));
	int op = find_name(json_string_value(json_object_get(j, "op")), ops, _SR_CHANGE_OP_MAX);
	char what[300];
	int k;

	if (!json_is_object(j) || !sr_changes_path_ok(path))
		return sr_error_msg(err, -EINVAL,
				    "changes: a path that is absolute, empty or "
				    "holds '..' (a crafted file?)");
	snprintf(what, sizeof(what), "changes: %.256s", path);
	if (op < 0)
		return sr_error_msg(err, -EINVAL, "%s: no known op", what);
	ch->path = strdup(path);
	if (!ch->path)
		return sr_error_errno(err, -ENOMEM, "changes");
	ch->op = (enum sr_change_op)op;
	ch->host_changed = json_is_true(json_object_get(j, "host_changed"));
	if (op != SR_CHANGE_DELETED && (k = node_parse(j, &ch->node, what, err)) < 0)
		return k;
	/*
	 * A link's target is data, whatever it is (venv/bin/python ->
	 * /usr/bin/python3, as git keeps it): apply makes the link and
	 * follows none, and refuses a path through one (changes-apply.c).
	 */
	if (op != SR_CHANGE_ADDED &&
	    (k = node_parse(json_object_get(j, "base"), &ch->base, what, err)) < 0)
		return k;
	return 0;
}

int sr_changes_manifest_parse(const char *json, size_t len, struct sr_changes *ret,
			      struct sr_error *err)
{
	_cleanup_(sr_json_decrefp) json_t *root = NULL;
	struct sr_changes c = {0};
	json_t *list, *id, *ws, *t0, *j;
	size_t i;
	int k;

	if (sr_json_parse(json, len, 0, MANIFEST_DEPTH, &root) < 0 || !json_is_object(root) ||
	    !sr_streq(json_string_value(json_object_get(root, "kind")), "sandbox-run-changes"))
		return sr_error_msg(err, -EINVAL, "not a changes file of sandbox-run's");
	if (json_integer_value(json_object_get(root, "version")) != 1)
		return sr_error_msg(err, -EINVAL,
				    "a changes file of another version (this sandbox-run reads 1)");
	list = json_object_get(root, "changes");
	id = json_object_get(root, "sandbox_id");
	ws = json_object_get(root, "workspace");
	t0 = json_object_get(root, "base_time_ns");
	if (!json_is_array(list) || (ws && !json_is_null(ws) && !json_is_string(ws)))
		return sr_error_msg(err, -EINVAL, "changes: a malformed manifest");
	if (json_is_string(id))
		snprintf(c.sandbox_id, sizeof(c.sandbox_id), "%s", json_string_value(id));
	if (json_is_string(ws) && !(c.workspace = strdup(json_string_value(ws))))
		return sr_error_errno(err, -ENOMEM, "changes");
	c.base_time_ns = json_is_integer(t0) ? json_integer_value(t0) : 0;
	c.v = calloc(json_array_size(list) + 1, sizeof(*c.v));
	if (!c.v) {
		sr_changes_free(&c);
		return sr_error_errno(err, -ENOMEM, "changes");
	}
	json_array_foreach (list, i, j) {
		k = change_parse(j, &c.v[c.n++], err);
		if (k < 0) {
			sr_changes_free(&c);
			return k;
		}
	}
	k = index_paths(&c, err);
	if (k < 0) {
		sr_changes_free(&c);
		return k;
	}
	*ret = c;
	return 0;
}

int sr_changes_read(struct sr_archive_reader *r, struct sr_changes *ret, struct sr_error *err)
{
	_cleanup_free_ char *json = NULL;
	struct sr_archive_entry e;
	size_t got = 0;
	int k = sr_archive_reader_next(r, &e, err);

	if (k == 0)
		return sr_error_msg(err, -EINVAL, "an empty archive, not a changes file");
	if (k < 0)
		return k;
	if (!sr_streq(e.path, SR_CHANGES_MANIFEST) || !S_ISREG(e.type) || e.size < 0 ||
	    e.size > MANIFEST_MAX)
		return sr_error_msg(err, -EINVAL,
				    "not a changes file of sandbox-run's (its first entry is not "
				    "%s)",
				    SR_CHANGES_MANIFEST);
	json = malloc((size_t)e.size + 1);
	if (!json)
		return sr_error_errno(err, -ENOMEM, "changes");
	while (got < (size_t)e.size) {
		ssize_t n = sr_archive_reader_data(r, json + got, (size_t)e.size - got, err);

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return sr_changes_manifest_parse(json, got, ret, err);
}

const char *sr_changes_tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

/*
 * An unnamed file (O_TMPFILE) rather than a memfd: a changes file holds
 * the sandbox's files whole, up to its disk limit, and a memfd is memory.
 * O_EXCL: not even this process may give it a name (linkat). Its bytes
 * are no one else's to reach: root's child that becomes the tree's owner
 * to apply (as-owner.c) is not dumpable, so its owner may not
 * open it through /proc/PID/fd.
 */
int sr_changes_copy(int fd, int *ret_fd, struct sr_error *err)
{
	_cleanup_close_ int dir = -1, copy = -1;
	_cleanup_free_ char *buf = NULL;
	const char *where = sr_changes_tmp_dir();
	struct stat st;
	off_t off = 0;
	int k = 0;

	if (fstat(fd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "changes file");
	dir = open(where, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	copy = dir < 0 ? -1 : openat(dir, ".", O_TMPFILE | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	buf = malloc(COPY_BUF);
	if (copy < 0 || !buf)
		return sr_error_errno(err, buf ? sr_negerrno() : -ENOMEM,
				      "changes: a private copy in %s", where);
	/* At most its size now: one who keeps writing it cannot keep us copying. */
	while (k >= 0 && off < st.st_size) {
		size_t want =
		    (size_t)(st.st_size - off) < COPY_BUF ? (size_t)(st.st_size - off) : COPY_BUF;
		ssize_t n = SR_RETRY(pread(fd, buf, want, off));

		if (n <= 0) {
			k = n < 0 ? sr_negerrno() : 0;
			break;
		}
		k = sr_write_all(copy, buf, (size_t)n);
		off += n;
	}
	if (k >= 0 && lseek(copy, 0, SEEK_SET) < 0)
		k = sr_negerrno();
	if (k < 0)
		return sr_error_errno(err, k, "changes: a private copy in %s", where);
	*ret_fd = steal_fd(&copy);
	return 0;
}
