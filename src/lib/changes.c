/* SPDX-License-Identifier: MIT */
/*
 * Taking a sandbox's changes (changes.h): the raw stream of the
 * workspace's upper layer, compared with the host directory below it.
 * The stream is the sandbox's, so read as untrusted: names are checked
 * as a crafted changes file's are, and nothing is written but the
 * changes file. The host directory is only read, beneath its fd, never
 * through a link.
 */
#include "changes.h"
#include "json.h"
#include "units.h"
#include "util.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

#define READ_BUF 65536

/*
 * The raw stream's entries are the agent's to multiply: a name costs it a
 * directory entry, no inode (65,000 hard links to one empty file), so a
 * sandbox of 50 MB held 770,000 of them, and building their changes took
 * 1.4 GB of the caller's memory (or the keeper's, for --changes), for a
 * manifest too long to be read back. At most as many as a manifest that
 * can be read back holds: each costs its path and this much of it at
 * least (a file more), and no more than CHANGES_MAX_ENTRIES in all.
 */
#define CHANGES_ENTRY_MIN   48
#define CHANGES_FILE_MIN    128 /* its size, mode, and sha256 in hex */
#define CHANGES_MAX_ENTRIES (500 * 1000)

/* An entry of the raw stream: "f/PATH" (upper content), "w/PATH" (whiteout), "o/PATH" (opaque). */
struct node {
	char kind;
	char *path;
	struct sr_change_node n;
	ssize_t change; /* the index of its change, or -1 */
};

struct build {
	struct node *nodes;
	size_t n_nodes, cap_nodes;
	char **upper; /* the "f" paths, sorted: what the upper layer has */
	size_t n_upper;
	int base; /* the host directory, or -1 */
	int64_t t0_ns;
	int idle_ms; /* on the raw stream */
	const struct sr_sink *sink;
	struct sr_changes out;
	size_t cap_out;
	size_t left_out;
	uint64_t bytes, max_bytes; /* the files' sizes so far, and their bound (0: none) */
	uint64_t manifest;	   /* what the manifest will take, at least */
	char buf[READ_BUF];
};

static void build_free(struct build *b)
{
	for (size_t i = 0; i < b->n_nodes; i++) {
		free(b->nodes[i].path);
		free(b->nodes[i].n.target);
	}
	free(b->nodes);
	free(b->upper);
	sr_changes_free(&b->out);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool in_upper(const struct build *b, const char *path)
{
	return bsearch(&path, b->upper, b->n_upper, sizeof(*b->upper), cmp_str) != NULL;
}

static enum sr_change_type type_of(mode_t m)
{
	return S_ISDIR(m) ? SR_CHANGE_DIR : S_ISLNK(m) ? SR_CHANGE_LINK : SR_CHANGE_FILE;
}

/* Hashes what fd holds (from where it is). */
static int hash_fd(struct build *b, int fd, char sha[SR_SHA256_HEX_LEN + 1])
{
	struct sr_sha256 h;
	ssize_t n;

	sr_sha256_init(&h);
	while ((n = SR_RETRY(read(fd, b->buf, sizeof(b->buf)))) > 0)
		sr_sha256_update(&h, b->buf, (size_t)n);
	if (n < 0)
		return sr_negerrno();
	sr_sha256_hex(&h, sha);
	return 0;
}

/* The host directory's entry at path: 1 with *ret (and its ctime), 0 when it has none. */
static int base_node(struct build *b, const char *path, struct sr_change_node *ret,
		     struct stat *ret_st)
{
	_cleanup_free_ char *dir = strdup(path);
	_cleanup_close_ int dirfd = -1, fd = -1;
	char *slash = dir ? strrchr(dir, '/') : NULL;
	const char *leaf = slash ? slash + 1 : path;
	char target[PATH_MAX];
	ssize_t n;

	if (b->base < 0 || !dir)
		return dir ? 0 : -ENOMEM;
	if (slash)
		*slash = '\0';
	/* Beneath the host directory, and never through a link: a link there is a change too. */
	dirfd = sr_openat2(b->base, slash ? dir : ".", O_RDONLY | O_DIRECTORY,
			   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (dirfd < 0 || fstatat(dirfd, leaf, ret_st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (!S_ISREG(ret_st->st_mode) && !S_ISDIR(ret_st->st_mode) && !S_ISLNK(ret_st->st_mode))
		return 0;
	*ret = (struct sr_change_node){.type = type_of(ret_st->st_mode),
				       .mode = ret_st->st_mode & 07777,
				       .size = ret_st->st_size};
	if (S_ISLNK(ret_st->st_mode)) {
		n = readlinkat(dirfd, leaf, target, sizeof(target) - 1);
		if (n < 0)
			return sr_negerrno();
		target[n] = '\0';
		ret->target = strdup(target);
		return ret->target ? 1 : -ENOMEM;
	}
	if (!S_ISREG(ret_st->st_mode))
		return 1;
	fd = openat(dirfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return sr_negerrno();
	n = hash_fd(b, fd, ret->sha256);
	return n < 0 ? (int)n : 1;
}

static struct sr_change *add_change(struct build *b, const char *path, enum sr_change_op op,
				    struct sr_error *err)
{
	struct sr_change *ch;

	if (SR_GROW(b->out.v, b->cap_out, b->out.n + 1, 64) < 0)
		return sr_error_errno(err, -ENOMEM, "changes"), NULL;
	ch = &b->out.v[b->out.n];
	*ch = (struct sr_change){.op = op, .path = strdup(path)};
	if (!ch->path)
		return sr_error_errno(err, -ENOMEM, "changes"), NULL;
	b->out.n++;
	return ch;
}

static bool changed_since(const struct build *b, const struct stat *st)
{
	int64_t ctime = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;

	return b->t0_ns && ctime >= b->t0_ns;
}

/*
 * Deletions of the host's path and what it holds (a directory's after its
 * contents); with only_missing, of what the upper layer does not have (an
 * opaque directory's: whatever it replaced and did not keep); with
 * children_only, not of path itself (a directory replaced by a file: the
 * file's change says so).
 */
static int delete_tree(struct build *b, const char *path, bool only_missing, bool children_only,
		       int depth, struct sr_error *err)
{
	struct sr_change_node base = {0};
	struct stat st;
	int k = base_node(b, path, &base, &st);

	if (k <= 0)
		return k < 0 ? sr_error_errno(err, k, "changes: read %s", path) : 0;
	if (base.type == SR_CHANGE_DIR && depth < 256) {
		_cleanup_close_ int fd = sr_openat2(b->base, path, O_RDONLY | O_DIRECTORY,
						    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
		DIR *d = fd >= 0 ? fdopendir(steal_fd(&fd)) : NULL;
		struct dirent *de;

		while (d && k >= 0 && (de = readdir(d))) {
			_cleanup_free_ char *child = NULL;

			if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
				continue;
			if (asprintf(&child, "%s/%s", path, de->d_name) < 0)
				k = sr_error_errno(err, -ENOMEM, "changes");
			else
				k = delete_tree(b, child, only_missing, false, depth + 1, err);
		}
		if (d)
			closedir(d);
		if (k < 0) {
			free(base.target);
			return k;
		}
	}
	if (children_only || (only_missing && in_upper(b, path))) {
		free(base.target);
		return 0;
	}
	struct sr_change *ch = add_change(b, path, SR_CHANGE_DELETED, err);

	if (!ch) {
		free(base.target);
		return err->code;
	}
	ch->base = base;
	ch->host_changed = changed_since(b, &st);
	return 0;
}

static bool same(const struct sr_change_node *a, const struct sr_change_node *b)
{
	if (a->type != b->type)
		return false;
	if (a->type == SR_CHANGE_LINK)
		return sr_streq(a->target, b->target);
	if (a->mode != b->mode)
		return false;
	return a->type == SR_CHANGE_DIR || strcmp(a->sha256, b->sha256) == 0;
}

/* An upper entry against the host's: added, modified, unchanged, or a type replaced. */
static int classify(struct build *b, struct node *nd, struct sr_error *err)
{
	struct sr_change_node base = {0};
	struct sr_change *ch;
	struct stat st;
	int k = base_node(b, nd->path, &base, &st);

	if (k < 0)
		return sr_error_errno(err, k, "changes: read %s", nd->path);
	if (k > 0 && same(&base, &nd->n)) {
		free(base.target);
		return 0;
	}
	/* A directory that became a file or a link: what it held is deleted first. */
	if (k > 0 && base.type == SR_CHANGE_DIR && nd->n.type != SR_CHANGE_DIR) {
		int d = delete_tree(b, nd->path, false, true, 0, err);

		if (d < 0) {
			free(base.target);
			return d;
		}
	}
	ch = add_change(b, nd->path, k > 0 ? SR_CHANGE_MODIFIED : SR_CHANGE_ADDED, err);
	if (!ch) {
		free(base.target);
		return err->code;
	}
	ch->node = nd->n;
	ch->node.target = nd->n.target ? strdup(nd->n.target) : NULL;
	if (k > 0) {
		ch->base = base;
		ch->host_changed = changed_since(b, &st);
	}
	nd->change = (ssize_t)(ch - b->out.v);
	return 0;
}

static int path_desc(const void *a, const void *b)
{
	return strcmp(((const struct sr_change *)b)->path, ((const struct sr_change *)a)->path);
}

/* Deletions first, deepest first, each once; then the rest in the upper layer's order. */
static int order_changes(struct build *b, struct sr_error *err)
{
	struct sr_change *v = calloc(b->out.n + 1, sizeof(*v));
	size_t n = 0;
	ssize_t *moved = calloc(b->out.n + 1, sizeof(*moved));

	if (!v || !moved) {
		free(v);
		free(moved);
		return sr_error_errno(err, -ENOMEM, "changes");
	}
	for (size_t i = 0; i < b->out.n; i++)
		if (b->out.v[i].op == SR_CHANGE_DELETED)
			v[n++] = b->out.v[i];
	qsort(v, n, sizeof(*v), path_desc);
	/* A path both whited out and under an opaque directory is deleted once. */
	for (size_t i = 0, w = 0;; i++) {
		if (i == n) {
			n = w;
			break;
		}
		if (w > 0 && strcmp(v[i].path, v[w - 1].path) == 0) {
			free(v[i].path);
			free(v[i].base.target);
			continue;
		}
		v[w++] = v[i];
	}
	for (size_t i = 0; i < b->out.n; i++) {
		if (b->out.v[i].op == SR_CHANGE_DELETED)
			continue;
		moved[i] = (ssize_t)n;
		v[n++] = b->out.v[i];
	}
	for (size_t i = 0; i < b->n_nodes; i++)
		if (b->nodes[i].change >= 0)
			b->nodes[i].change = moved[b->nodes[i].change];
	free(b->out.v);
	free(moved);
	b->out.v = v;
	b->out.n = n;
	return 0;
}

static int add_node(struct build *b, char kind, const char *path, const struct sr_archive_entry *e,
		    struct sr_error *err)
{
	struct node *nd;

	b->manifest += (kind == 'f' && S_ISREG(e->type) ? CHANGES_FILE_MIN : CHANGES_ENTRY_MIN) +
		       strlen(path) +
		       (kind == 'f' && S_ISLNK(e->type) && e->link ? strlen(e->link) : 0);
	if (b->n_nodes >= CHANGES_MAX_ENTRIES || b->manifest > SR_CHANGES_MANIFEST_MAX)
		return sr_error_msg(err, -EFBIG,
				    "changes: more than a changes file holds (%zu entries so far, "
				    "at most %d, and a manifest of %d MiB)",
				    b->n_nodes, CHANGES_MAX_ENTRIES, SR_CHANGES_MANIFEST_MAX >> 20);
	if (SR_GROW(b->nodes, b->cap_nodes, b->n_nodes + 1, 256) < 0)
		return sr_error_errno(err, -ENOMEM, "changes");
	nd = &b->nodes[b->n_nodes];
	*nd = (struct node){.kind = kind, .change = -1, .path = strdup(path)};
	if (!nd->path)
		return sr_error_errno(err, -ENOMEM, "changes");
	b->n_nodes++;
	if (kind == 'f') {
		nd->n = (struct sr_change_node){
		    .type = type_of(e->type), .mode = e->perm & 01777, .size = e->size};
		if (S_ISLNK(e->type) && !(nd->n.target = strdup(e->link ? e->link : "")))
			return sr_error_errno(err, -ENOMEM, "changes");
	}
	return 0;
}

/* The raw stream, read once: its entries noted, the upper layer's content spooled and hashed. */
static int read_raw(struct build *b, int raw_fd, struct sr_archive_writer *spool,
		    struct sr_error *err)
{
	struct sr_archive_reader *r = NULL;
	struct sr_archive_entry e;
	int k = sr_archive_reader_open(raw_fd, b->idle_ms, &r, err);

	while (k >= 0 && (k = sr_archive_reader_next(r, &e, err)) > 0) {
		const char *path = e.path + 2;
		char kind = e.path[0];
		json_t *utf8;

		if ((kind != 'f' && kind != 'w' && kind != 'o') || e.path[1] != '/' ||
		    !sr_changes_path_ok(path)) {
			k = sr_error_msg(err, -EBADMSG,
					 "changes: a malformed stream from the sandbox");
			break;
		}
		/*
		 * A manifest is JSON: a name that is not UTF-8 cannot be in one,
		 * nor a link's target (kept, it would be U+FFFD's there, and
		 * applied so: another link than the agent's).
		 */
		utf8 = json_string(path);
		if (utf8 && kind == 'f' && S_ISLNK(e.type)) {
			json_decref(utf8);
			utf8 = e.link ? json_string(e.link) : NULL;
		}
		if (!utf8 ||
		    (kind == 'f' && !S_ISREG(e.type) && !S_ISDIR(e.type) && !S_ISLNK(e.type))) {
			b->left_out++;
			json_decref(utf8);
			continue;
		}
		json_decref(utf8);
		if (kind == 'f' && S_ISREG(e.type) && b->max_bytes) {
			uint64_t size = e.size > 0 ? (uint64_t)e.size : 0;

			if (size > b->max_bytes || b->bytes > b->max_bytes - size) {
				char shown[256], limit[SR_UNITS_BUF_MAX];

				sr_printable(path, shown, sizeof(shown));
				sr_format_size(b->max_bytes, limit, sizeof(limit));
				k = sr_error_msg(
				    err, -EFBIG,
				    "changes: %s: more than %s, the sandbox's disk limit", shown,
				    limit);
				break;
			}
			b->bytes += size;
		}
		k = add_node(b, kind, path, &e, err);
		if (k < 0 || kind != 'f')
			continue;
		{
			struct sr_archive_entry out = e;
			struct sr_sha256 h;
			ssize_t n;

			out.path = path;
			k = sr_archive_write_entry(spool, &out, err);
			sr_sha256_init(&h);
			while (k >= 0 && S_ISREG(e.type) &&
			       (n = sr_archive_reader_data(r, b->buf, sizeof(b->buf), err)) != 0) {
				if (n < 0) {
					k = (int)n;
					break;
				}
				sr_sha256_update(&h, b->buf, (size_t)n);
				k = sr_archive_write_data(spool, b->buf, (size_t)n, err);
			}
			if (S_ISREG(e.type))
				sr_sha256_hex(&h, b->nodes[b->n_nodes - 1].n.sha256);
		}
	}
	sr_archive_reader_free(r);
	return k < 0 ? k : 0;
}

static int classify_all(struct build *b, struct sr_error *err)
{
	int k = 0;

	b->upper = calloc(b->n_nodes + 1, sizeof(*b->upper));
	if (!b->upper)
		return sr_error_errno(err, -ENOMEM, "changes");
	for (size_t i = 0; i < b->n_nodes; i++)
		if (b->nodes[i].kind == 'f')
			b->upper[b->n_upper++] = b->nodes[i].path;
	qsort(b->upper, b->n_upper, sizeof(*b->upper), cmp_str);
	for (size_t i = 0; k >= 0 && i < b->n_nodes; i++) {
		struct node *nd = &b->nodes[i];

		if (nd->kind == 'f')
			k = classify(b, nd, err);
		else
			/* A whiteout: the host's entry is gone; opaque: what the upper did not
			 * keep. */
			k = delete_tree(b, nd->path, nd->kind == 'o', false, 0, err);
	}
	return k < 0 ? k : order_changes(b, err);
}

/* base/PATH: the host file's content, the one hashed in the manifest. */
static int write_base(struct build *b, struct sr_archive_writer *w, const struct sr_change *ch,
		      struct sr_error *err)
{
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int fd = sr_openat2(b->base, ch->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK,
					    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	struct sr_archive_entry e = {.type = S_IFREG, .perm = ch->base.mode, .size = ch->base.size};
	struct sr_sha256 h;
	char sha[SR_SHA256_HEX_LEN + 1];
	int64_t done = 0;
	int k;

	if (fd < 0)
		return sr_error_errno(err, fd, "changes: read %s", ch->path);
	if (asprintf(&name, "base/%s", ch->path) < 0)
		return sr_error_errno(err, -ENOMEM, "changes");
	e.path = name;
	k = sr_archive_write_entry(w, &e, err);
	sr_sha256_init(&h);
	while (k >= 0 && done < ch->base.size) {
		ssize_t n = SR_RETRY(read(fd, b->buf, sizeof(b->buf)));

		if (n <= 0)
			break;
		if (n > ch->base.size - done)
			n = (ssize_t)(ch->base.size - done);
		sr_sha256_update(&h, b->buf, (size_t)n);
		k = sr_archive_write_data(w, b->buf, (size_t)n, err);
		done += n;
	}
	if (k < 0)
		return k;
	sr_sha256_hex(&h, sha);
	if (done != ch->base.size || strcmp(sha, ch->base.sha256) != 0)
		return sr_error_msg(err, -EAGAIN,
				    "changes: %s changed on the host while the changes were taken "
				    "(take them again)",
				    ch->path);
	return 0;
}

/* files/PATH from the spool, for the changes that have content; the rest of the spool skipped. */
static int write_contents(struct build *b, int spool_fd, struct sr_archive_writer *w,
			  struct sr_error *err)
{
	struct sr_archive_reader *r = NULL;
	struct sr_archive_entry e;
	size_t i = 0;
	int k;

	for (size_t d = 0; d < b->out.n; d++)
		if (b->out.v[d].op == SR_CHANGE_DELETED &&
		    b->out.v[d].base.type == SR_CHANGE_FILE &&
		    (k = write_base(b, w, &b->out.v[d], err)) < 0)
			return k;
	if (lseek(spool_fd, 0, SEEK_SET) < 0)
		return sr_error_errno(err, sr_negerrno(), "changes: spool");
	k = sr_archive_reader_open(spool_fd, 0, &r, err);
	while (k >= 0 && (k = sr_archive_reader_next(r, &e, err)) > 0) {
		_cleanup_free_ char *name = NULL;
		const struct sr_change *ch;
		ssize_t n;

		while (i < b->n_nodes && b->nodes[i].kind != 'f')
			i++;
		if (i == b->n_nodes || strcmp(b->nodes[i].path, e.path) != 0) {
			k = sr_error_msg(err, -EIO, "changes: the spool is out of step");
			break;
		}
		if (b->nodes[i++].change < 0)
			continue; /* unchanged: its data is skipped by the next header */
		ch = &b->out.v[b->nodes[i - 1].change];
		if (ch->op == SR_CHANGE_MODIFIED && ch->base.type == SR_CHANGE_FILE &&
		    ch->node.type == SR_CHANGE_FILE && (k = write_base(b, w, ch, err)) < 0)
			break;
		if (asprintf(&name, "files/%s", e.path) < 0) {
			k = sr_error_errno(err, -ENOMEM, "changes");
			break;
		}
		e.path = name;
		k = sr_archive_write_entry(w, &e, err);
		while (k >= 0 && S_ISREG(e.type) &&
		       (n = sr_archive_reader_data(r, b->buf, sizeof(b->buf), err)) != 0)
			k = n < 0 ? (int)n : sr_archive_write_data(w, b->buf, (size_t)n, err);
	}
	sr_archive_reader_free(r);
	return k < 0 ? k : 0;
}

static int spool_open(int dirfd, struct sr_error *err)
{
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	/* A filesystem without O_TMPFILE: /tmp then. */
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
		fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return fd < 0 ? sr_error_errno(err, sr_negerrno(), "changes: a spool file") : fd;
}

int sr_changes_build(int raw_fd, const struct sr_changes_origin *o, int spool_dirfd, int out_fd,
		     const struct sr_sink *sink, size_t *ret_n, struct sr_error *err)
{
	const char *workspace = o->workspace;
	struct build *b = calloc(1, sizeof(*b));
	struct sr_archive_writer *spool = NULL, *w = NULL;
	_cleanup_free_ char *manifest = NULL;
	_cleanup_close_ int spool_fd = -1;
	struct sr_archive_entry me = {.path = SR_CHANGES_MANIFEST, .type = S_IFREG, .perm = 0644};
	size_t len = 0;
	int k;

	if (!b)
		return sr_error_errno(err, -ENOMEM, "changes");
	b->base = -1;
	b->t0_ns = o->t0_ns;
	b->idle_ms = o->idle_ms;
	b->max_bytes = o->max_bytes;
	b->sink = sink;
	if (workspace) {
		b->base = open(workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (b->base < 0) {
			k = sr_error_errno(err, sr_negerrno(), "changes: %s", workspace);
			goto out;
		}
	}
	snprintf(b->out.sandbox_id, sizeof(b->out.sandbox_id), "%s",
		 o->sandbox_id ? o->sandbox_id : "");
	b->out.base_time_ns = o->t0_ns;
	if (workspace && !(b->out.workspace = strdup(workspace))) {
		k = sr_error_errno(err, -ENOMEM, "changes");
		goto out;
	}
	if ((k = spool_fd = spool_open(spool_dirfd, err)) < 0 ||
	    (k = sr_archive_writer_new(spool_fd, &(struct sr_write_opts){0}, &spool, err)) < 0 ||
	    (k = read_raw(b, raw_fd, spool, err)) < 0 ||
	    (k = sr_archive_writer_end(spool, NULL, NULL, err)) < 0 ||
	    (k = classify_all(b, err)) < 0)
		goto out;
	if (b->left_out)
		sr_warn(
		    sink,
		    "changes: %zu entr%s left out (a device, FIFO or socket the agent made, or a "
		    "name or link target that is not UTF-8)",
		    b->left_out, b->left_out == 1 ? "y" : "ies");
	k = sr_changes_manifest_json(&b->out, &manifest, &len);
	if (k < 0) {
		sr_error_errno(err, k, "changes: manifest");
		goto out;
	}
	me.size = (int64_t)len;
	if ((k = sr_archive_writer_new(out_fd, &(struct sr_write_opts){0}, &w, err)) < 0 ||
	    (k = sr_archive_write_entry(w, &me, err)) < 0 ||
	    (k = sr_archive_write_data(w, manifest, len, err)) < 0 ||
	    (k = write_contents(b, spool_fd, w, err)) < 0 ||
	    (k = sr_archive_writer_end(w, NULL, NULL, err)) < 0)
		goto out;
	*ret_n = b->out.n;
out:
	sr_archive_writer_free(spool);
	sr_archive_writer_free(w);
	sr_closep(&b->base);
	build_free(b);
	free(b);
	return k < 0 ? k : 0;
}
