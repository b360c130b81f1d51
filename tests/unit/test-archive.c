/* SPDX-License-Identifier: MIT */
/*
 * Archives, good and hostile, are built here with libarchive's write API
 * (the test links libarchive for that only; the code under test dlopen()s
 * it).
 */
#include "archive.h"
#include "util.h"
#include "testutil.h"

#include <archive.h>
#include <archive_entry.h>
#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <locale.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>

static char tmpdir[96];
static int tmpfd = -1, destfd = -1;

/* tmpdir/dest is where archives are extracted; anything else in tmpdir is an escape. */
static void setup_tmp(void)
{
	sr_test_mkdtemp(tmpdir, sizeof(tmpdir), sr_test_basedir, "t");
	tmpfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(tmpfd, 0);
	ck_assert_int_eq(mkdirat(tmpfd, "dest", 0755), 0);
	destfd = openat(tmpfd, "dest", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(destfd, 0);
	umask(022);
}

static void teardown_tmp(void)
{
	close(destfd);
	close(tmpfd);
	sr_test_rmtree(tmpdir);
}

enum fmt {
	TAR,
	TAR_GZ,
	TAR_XZ,
	TAR_ZST,
	TAR_BZ2,
	ZIP,
};

struct ent {
	const char *name;
	mode_t type; /* 0: regular file */
	mode_t perm;
	const char *data; /* file content, or symlink / hard link target */
	bool hard;
	uint64_t zeros; /* a file of this many zero bytes instead of data */
	bool unsized;	/* zip: size not in the header (data descriptor) */
};

#define FILE_(n, p, d)                                \
	{                                             \
		.name = (n), .perm = (p), .data = (d) \
	}
#define DIR_(n, p)                                         \
	{                                                  \
		.name = (n), .type = AE_IFDIR, .perm = (p) \
	}
#define LINK_(n, t)                                                      \
	{                                                                \
		.name = (n), .type = AE_IFLNK, .perm = 0777, .data = (t) \
	}
#define HARD_(n, t)                                    \
	{                                              \
		.name = (n), .data = (t), .hard = true \
	}

static void write_zeros(struct archive *a, uint64_t n)
{
	static char zero[1 << 20];

	while (n > 0) {
		size_t l = n < sizeof(zero) ? (size_t)n : sizeof(zero);

		ck_assert_int_eq(archive_write_data(a, zero, l), (la_ssize_t)l);
		n -= l;
	}
}

static void add_entry(struct archive *a, const struct ent *e)
{
	struct archive_entry *ae = archive_entry_new();
	mode_t type = e->type ? e->type : AE_IFREG;

	archive_entry_set_pathname(ae, e->name);
	archive_entry_set_perm(ae, e->perm ? e->perm : 0644);
	archive_entry_set_mtime(ae, 1700000000, 0);
	if (e->hard) {
		archive_entry_set_filetype(ae, AE_IFREG);
		archive_entry_set_hardlink(ae, e->data);
		archive_entry_set_size(ae, 0);
	} else {
		archive_entry_set_filetype(ae, type);
		if (type == AE_IFLNK)
			archive_entry_set_symlink(ae, e->data);
		if (type == AE_IFCHR || type == AE_IFBLK)
			archive_entry_set_rdev(ae, makedev(1, 3));
		if (type == AE_IFREG && !e->unsized)
			archive_entry_set_size(
			    ae, e->zeros ? (la_int64_t)e->zeros
					 : (la_int64_t)strlen(e->data ? e->data : ""));
	}
	ck_assert_int_eq(archive_write_header(a, ae), ARCHIVE_OK);
	if (type == AE_IFREG && !e->hard) {
		if (e->zeros)
			write_zeros(a, e->zeros);
		else if (e->data && *e->data)
			ck_assert_int_eq(archive_write_data(a, e->data, strlen(e->data)),
					 (la_ssize_t)strlen(e->data));
	}
	archive_entry_free(ae);
}

/* Writes tmpdir/NAME; returns an fd open on it for reading. */
static int make_archive(const char *name, enum fmt f, const struct ent *ents, size_t n)
{
	struct archive *a = archive_write_new();
	int fd;

	ck_assert_ptr_nonnull(a);
	if (f == ZIP) {
		ck_assert_int_eq(archive_write_set_format_zip(a), ARCHIVE_OK);
	} else {
		ck_assert_int_eq(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
		if (f == TAR_GZ)
			ck_assert_int_eq(archive_write_add_filter_gzip(a), ARCHIVE_OK);
		if (f == TAR_XZ)
			ck_assert_int_eq(archive_write_add_filter_xz(a), ARCHIVE_OK);
		if (f == TAR_ZST)
			ck_assert_int_eq(archive_write_add_filter_zstd(a), ARCHIVE_OK);
		if (f == TAR_BZ2)
			ck_assert_int_eq(archive_write_add_filter_bzip2(a), ARCHIVE_OK);
	}
	fd = openat(tmpfd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(archive_write_open_fd(a, fd), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++)
		add_entry(a, &ents[i]);
	ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static int extract(const char *name, enum fmt f, const struct ent *ents, size_t n, uint64_t max,
		   struct sr_error *err)
{
	_cleanup_close_ int fd = make_archive(name, f, ents, n);

	*err = (struct sr_error){};
	return sr_archive_extract(fd, destfd, max, err);
}

static void assert_file(const char *path, const char *content, mode_t perm)
{
	struct stat st;
	char buf[256];
	int fd = openat(destfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t l;

	ck_assert_msg(fd >= 0, "%s: %m", path);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_msg(S_ISREG(st.st_mode), "%s", path);
	ck_assert_int_eq(st.st_mode & 07777, perm);
	l = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_ge(l, 0);
	buf[l] = '\0';
	ck_assert_str_eq(buf, content);
}

static void assert_absent(int dirfd, const char *path)
{
	struct stat st;

	ck_assert_msg(fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT,
		      "%s exists", path);
}

/* Only dest and the archives are in tmpdir: nothing was written beside dest. */
static void assert_no_escape(void)
{
	assert_absent(tmpfd, "x");
	assert_absent(tmpfd, "escaped");
	assert_absent(AT_FDCWD, "/tmp/sr-test-archive-escaped");
	assert_absent(AT_FDCWD, "/etc/sr-test-archive-escaped");
}

static void assert_error(int k, int code, const struct sr_error *err, const char *part)
{
	ck_assert_msg(k == code, "got %d (%s), want %d", k, err->msg, code);
	ck_assert_msg(strstr(err->msg, part), "message '%s' lacks '%s'", err->msg, part);
}

static const struct ent good[] = {
    DIR_("d", 0755),
    FILE_("d/f.txt", 0644, "hello\n"),
    FILE_("run", 0755, "#!/bin/sh\necho hi\n"),
    LINK_("d/link", "../run"),
    FILE_("deep/a/b/c.txt", 0600, "deep"),
    FILE_("suid", 04755, "s"),
    FILE_("sgid-sticky", 03775, "g"),
    FILE_("empty", 0644, ""),
    HARD_("d/hard", "d/f.txt"),
};

static void check_good(enum fmt f, bool with_hardlink)
{
	struct sr_error err;
	struct stat a, b;
	char target[64];
	ssize_t l;

	ck_assert_int_eq(
	    extract("good", f, good, SR_ARRAY_SIZE(good) - (with_hardlink ? 0 : 1), 0, &err), 0);
	assert_file("d/f.txt", "hello\n", 0644);
	assert_file("run", "#!/bin/sh\necho hi\n", 0755);
	assert_file("deep/a/b/c.txt", "deep", 0600);
	/* Never setuid, setgid or sticky. */
	assert_file("suid", "s", 0755);
	assert_file("sgid-sticky", "g", 0755);
	assert_file("empty", "", 0644);
	l = readlinkat(destfd, "d/link", target, sizeof(target) - 1);
	ck_assert_int_gt(l, 0);
	target[l] = '\0';
	ck_assert_str_eq(target, "../run");
	ck_assert_int_eq(fstatat(destfd, "deep/a", &a, 0), 0);
	ck_assert(S_ISDIR(a.st_mode));
	ck_assert_int_eq(fstatat(destfd, "d/f.txt", &a, 0), 0);
	ck_assert_int_eq(a.st_mtime, 1700000000);
	if (with_hardlink) {
		ck_assert_int_eq(fstatat(destfd, "d/hard", &b, AT_SYMLINK_NOFOLLOW), 0);
		ck_assert_int_eq(a.st_ino, b.st_ino);
		ck_assert_int_eq(b.st_nlink, 2);
	}
}

START_TEST(test_good_tar)
{
	check_good(TAR, true);
}
END_TEST

START_TEST(test_good_tar_gz)
{
	check_good(TAR_GZ, true);
}
END_TEST

START_TEST(test_good_tar_xz)
{
	check_good(TAR_XZ, true);
}
END_TEST

START_TEST(test_good_tar_zst)
{
	check_good(TAR_ZST, true);
}
END_TEST

START_TEST(test_good_tar_bz2)
{
	check_good(TAR_BZ2, true);
}
END_TEST

START_TEST(test_good_zip)
{
	/* zip has no hard links. */
	check_good(ZIP, false);
}
END_TEST

START_TEST(test_dot_prefixes)
{
	static const struct ent ents[] = {
	    DIR_("./", 0755),
	    DIR_("./a/", 0700),
	    FILE_("./a//./b.txt", 0644, "b"),
	    FILE_(".hidden", 0644, "h"),
	};
	struct sr_error err;
	struct stat st;

	ck_assert_int_eq(extract("a.tgz", TAR_GZ, ents, SR_ARRAY_SIZE(ents), 0, &err), 0);
	assert_file("a/b.txt", "b", 0644);
	assert_file(".hidden", "h", 0644);
	ck_assert_int_eq(fstatat(destfd, "a", &st, 0), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0700);
}
END_TEST

/* Names in UTF-8 while extracting in the C locale, as the sandbox child does. */
static void check_utf8_name(enum fmt f)
{
	static const struct ent ents[] = {
	    FILE_("caf\xc3\xa9/\xe2\x82\xac.txt", 0644, "euro"),
	};
	locale_t utf8 = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);
	_cleanup_close_ int fd = -1;
	struct sr_error err = {};
	locale_t old;

	ck_assert_ptr_nonnull(utf8);
	old = uselocale(utf8);
	fd = make_archive("u", f, ents, SR_ARRAY_SIZE(ents));
	uselocale(old);
	freelocale(utf8);
	ck_assert_msg(sr_archive_extract(fd, destfd, 0, &err) == 0, "%s", err.msg);
	assert_file("caf\xc3\xa9/\xe2\x82\xac.txt", "euro", 0644);
}

START_TEST(test_utf8_names_tar)
{
	check_utf8_name(TAR_GZ);
}
END_TEST

START_TEST(test_utf8_names_zip)
{
	check_utf8_name(ZIP);
}
END_TEST

START_TEST(test_dir_modes)
{
	static const struct ent ents[] = {
	    /* A read-only directory still receives its files. */
	    DIR_("ro", 0555),
	    FILE_("ro/f", 0444, "f"),
	    /* The umask applies to directories as to files. */
	    DIR_("open", 0777),
	    /* Listed after a file inside it, which created it implicitly. */
	    FILE_("later/f", 0644, "f"),
	    DIR_("later", 0750),
	    FILE_("later/g", 0666, "g"),
	};
	struct sr_error err;
	struct stat st;

	ck_assert_int_eq(extract("a.tar", TAR, ents, SR_ARRAY_SIZE(ents), 0, &err), 0);
	assert_file("ro/f", "f", 0444);
	assert_file("later/g", "g", 0644);
	ck_assert_int_eq(fstatat(destfd, "ro", &st, 0), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0755);
	ck_assert_int_eq(fstatat(destfd, "open", &st, 0), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0755);
	ck_assert_int_eq(fstatat(destfd, "later", &st, 0), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0750);
}
END_TEST

START_TEST(test_absolute_and_dotdot)
{
	static const char *const names[] = {
	    "/tmp/sr-test-archive-escaped", "../x", "a/../../x", "..", "a/..", "./../x",
	};
	struct sr_error err;

	for (size_t i = 0; i < SR_ARRAY_SIZE(names); i++) {
		struct ent e = FILE_(names[i], 0644, "pwned");
		int k = extract("evil.tar", TAR, &e, 1, 0, &err);

		ck_assert_int_eq(k, -EPERM);
		ck_assert_msg(strstr(err.msg, "absolute path") || strstr(err.msg, "'..'"), "%s",
			      err.msg);
		ck_assert_ptr_nonnull(strstr(err.msg, "extract "));
	}
	assert_no_escape();
}
END_TEST

START_TEST(test_symlink_absolute_then_file)
{
	static const struct ent ents[] = {
	    LINK_("evil", "/etc"),
	    FILE_("evil/sr-test-archive-escaped", 0644, "pwned"),
	};
	struct sr_error err;
	int k = extract("evil.tgz", TAR_GZ, ents, SR_ARRAY_SIZE(ents), 0, &err);

	assert_error(k, -EPERM, &err,
		     "extract evil: symbolic link to '/etc' leaves the archive's tree");
	assert_absent(destfd, "evil");
	assert_no_escape();
}
END_TEST

START_TEST(test_file_through_inner_symlink)
{
	/* Even a link that stays inside is never written through. */
	static const struct ent ents[] = {
	    LINK_("in", "."),
	    FILE_("in/x", 0644, "x"),
	};
	struct sr_error err;
	int k = extract("a.tar", TAR, ents, SR_ARRAY_SIZE(ents), 0, &err);

	assert_error(k, -ELOOP, &err, "extract in/x: a parent directory is a symbolic link");
	assert_absent(destfd, "x");
}
END_TEST

START_TEST(test_symlink_escapes)
{
	static const struct {
		const char *name, *target;
		bool ok;
	} cases[] = {
	    {"up", "..", false},	   {"a/up", "../..", false},
	    {"a/b/up", "../../..", false}, {"a/b/x", "c/../../../..", false},
	    {"a/b/y", "c/../..", false},   {"a/z", "", false},
	    {"a/b/root", "../..", true},   {"a/b/lib", "../../lib/x.so", true},
	    {"a/b/self", "./.", true},	   {"a/b/sib", "c//d/", true},
	};
	struct sr_error err;

	for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
		struct ent e = LINK_(cases[i].name, cases[i].target);
		int k = extract("l.tar", TAR, &e, 1, 0, &err);

		if (cases[i].ok) {
			ck_assert_msg(k == 0, "%s -> %s: %s", cases[i].name, cases[i].target,
				      err.msg);
		} else {
			ck_assert_msg(k == -EPERM, "%s -> %s accepted", cases[i].name,
				      cases[i].target);
			ck_assert_ptr_nonnull(strstr(err.msg, "leaves the archive's tree"));
		}
	}
}
END_TEST

/*
 * cp (links_within_top): the copied tree is the entry's first component,
 * not dest, which is the caller's directory (~/). Security review of cp,
 * finding B: "report -> .ssh" and "out/keys -> ../.ssh" were made in ~/.
 */
START_TEST(test_symlink_within_top)
{
	static const struct {
		const char *name, *target;
		bool ok, ok_in_archive; /* with links_within_top; without (an agent's archive) */
	} cases[] = {
	    {"report", ".ssh", false, true},	  {"report", ".", false, true},
	    {"out/keys", "../.ssh", false, true}, {"out/keys", "..", false, true},
	    {"out/a/up", "../../x", false, true}, {"out/sib", "a.txt", true, true},
	    {"out/a/up", "../a.txt", true, true}, {"out/a/b/up", "../../x", true, true},
	    {"out/self", ".", true, true},	  {"out/abs", "/etc", false, false},
	};
	struct sr_error err;

	for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
		for (int within = 0; within < 2; within++) {
			struct sr_extract_opts o = {.links_within_top = within};
			struct ent e = LINK_(cases[i].name, cases[i].target);
			_cleanup_close_ int fd = make_archive("l.tar", TAR, &e, 1);
			bool want = within ? cases[i].ok : cases[i].ok_in_archive;
			int k;

			err = (struct sr_error){};
			k = sr_archive_extract_opts(fd, destfd, &o, &err);
			ck_assert_msg((k == 0) == want, "%s -> %s (within top: %d): %d %s",
				      cases[i].name, cases[i].target, within, k, err.msg);
			if (!want) {
				ck_assert_int_eq(k, -EPERM);
				assert_absent(destfd, cases[i].name);
			}
			if (!want && within)
				ck_assert_ptr_nonnull(strstr(err.msg, "leaves the copied tree"));
			if (!want && within && !strchr(cases[i].name, '/'))
				ck_assert_ptr_nonnull(strstr(err.msg, "it is the copy itself"));
			(void)unlinkat(destfd, cases[i].name, 0);
		}
	}
}
END_TEST

START_TEST(test_hardlink_escapes)
{
	static const struct {
		const char *target, *why;
	} cases[] = {
	    {"/etc/passwd", "absolute path"},
	    {"../../../../etc/passwd", "'..'"},
	    {"missing", "not a regular file extracted earlier"},
	    {"lnk", "not a regular file extracted earlier"},
	    {"dir", "not a regular file extracted earlier"},
	    {"h", "hard link to itself"},
	};
	struct sr_error err;

	for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
		struct ent ents[] = {
		    DIR_("dir", 0755),
		    LINK_("lnk", "dir"),
		    HARD_("h", cases[i].target),
		};
		int k = extract("h.tar", TAR, ents, SR_ARRAY_SIZE(ents), 0, &err);

		ck_assert_msg(k < 0, "hard link to %s accepted", cases[i].target);
		ck_assert_msg(strstr(err.msg, cases[i].why), "%s", err.msg);
		assert_absent(destfd, "h");
	}
}
END_TEST

/*
 * A hard link names a file this extraction made, never one dest had
 * before: cp into an existing directory of the caller's extracts among
 * the caller's files, and a stream from the sandbox must not give one of
 * them a second name in the copy.
 */
START_TEST(test_hardlink_to_file_there_before)
{
	static const struct ent ents[] = {
	    FILE_("f", 0644, "made"),
	    HARD_("h", "secret"),
	};
	static const struct ent ents2[] = {
	    FILE_("secret", 0644, "replaced"),
	    HARD_("h", "secret"),
	};
	struct sr_error err;
	struct stat st;
	int fd = openat(destfd, "secret", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int k;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "caller", 6), 6);
	close(fd);
	k = extract("before.tar", TAR, ents, SR_ARRAY_SIZE(ents), 0, &err);
	assert_error(k, -EPERM, &err,
		     "extract h: hard link target is not a regular file extracted");
	assert_absent(destfd, "h");
	ck_assert_int_eq(fstatat(destfd, "secret", &st, 0), 0);
	ck_assert_int_eq(st.st_nlink, 1);
	/* Replaced by the archive's own file first, it is one extracted: linked. */
	ck_assert_int_eq(extract("replaced.tar", TAR, ents2, SR_ARRAY_SIZE(ents2), 0, &err), 0);
	assert_file("h", "replaced", 0644);
}
END_TEST

START_TEST(test_special_files)
{
	static const struct {
		mode_t type;
		const char *why;
	} cases[] = {
	    {AE_IFCHR, "extract dev/null: device nodes are not allowed"},
	    {AE_IFBLK, "extract dev/null: device nodes are not allowed"},
	    {AE_IFIFO, "extract dev/null: FIFOs are not allowed"},
	};
	struct sr_error err;

	for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
		struct ent e = {.name = "dev/null", .type = cases[i].type, .perm = 0666};
		int k = extract("dev.tar", TAR, &e, 1, 0, &err);

		assert_error(k, -EPERM, &err, cases[i].why);
		assert_absent(destfd, "dev/null");
	}
}
END_TEST

START_TEST(test_duplicates)
{
	static const struct ent ents[] = {
	    FILE_("a", 0644, "one"),
	    FILE_("a", 0600, "two"),
	    /* A later file replaces a symlink; it is not written through it. */
	    LINK_("s", "t"),
	    FILE_("s", 0644, "data"),
	    FILE_("f", 0644, "f"),
	    HARD_("h", "f"),
	    FILE_("h", 0644, "new"),
	};
	struct sr_error err;

	ck_assert_int_eq(extract("dup.tar", TAR, ents, SR_ARRAY_SIZE(ents), 0, &err), 0);
	assert_file("a", "two", 0600);
	assert_file("s", "data", 0644);
	assert_absent(destfd, "t");
	assert_file("f", "f", 0644);
	assert_file("h", "new", 0644);
}
END_TEST

START_TEST(test_dir_over_file)
{
	static const struct ent ents[] = {
	    FILE_("x", 0644, "file"),
	    DIR_("x", 0755),
	};
	static const struct ent ents2[] = {
	    DIR_("y", 0755),
	    FILE_("y", 0644, "file"),
	};
	struct sr_error err;
	int k;

	k = extract("d.tar", TAR, ents, SR_ARRAY_SIZE(ents), 0, &err);
	assert_error(k, -ENOTDIR, &err, "extract x/: exists and is not a directory");
	k = extract("d2.tar", TAR, ents2, SR_ARRAY_SIZE(ents2), 0, &err);
	assert_error(k, -EISDIR, &err, "extract y: would replace a directory");
}
END_TEST

/*
 * An export's HOSTDIR that is an existing directory (report.xml:out): a
 * file goes into it under its own name, as cp FILE DIR; a directory is
 * merged into it. Without file_into_dir, or where out is a link to a
 * directory, the file would replace it: refused.
 */
START_TEST(test_file_into_dir)
{
	static const struct ent file[] = {FILE_("report.xml", 0644, "<r/>")};
	static const struct ent dir[] = {DIR_("cov", 0755), FILE_("cov/index.html", 0644, "91%")};
	struct sr_extract_opts o = {.rename_top = "out", .file_into_dir = true};
	struct sr_error err = {0};
	int fd, k;

	ck_assert_int_eq(mkdirat(destfd, "out", 0755), 0);
	fd = make_archive("f.tar", TAR, file, SR_ARRAY_SIZE(file));
	ck_assert_int_eq(sr_archive_extract_opts(fd, destfd, &o, &err), 0);
	close(fd);
	assert_file("out/report.xml", "<r/>", 0644);
	fd = make_archive("d.tar", TAR, dir, SR_ARRAY_SIZE(dir));
	ck_assert_int_eq(sr_archive_extract_opts(fd, destfd, &o, &err), 0);
	close(fd);
	assert_file("out/index.html", "91%", 0644);
	assert_absent(destfd, "out/cov");

	o.file_into_dir = false;
	fd = make_archive("f.tar", TAR, file, SR_ARRAY_SIZE(file));
	k = sr_archive_extract_opts(fd, destfd, &o, &err);
	close(fd);
	assert_error(k, -EISDIR, &err, "would replace a directory");

	o = (struct sr_extract_opts){.rename_top = "link", .file_into_dir = true};
	ck_assert_int_eq(symlinkat("out", destfd, "link"), 0);
	fd = make_archive("f.tar", TAR, file, SR_ARRAY_SIZE(file));
	ck_assert_int_eq(sr_archive_extract_opts(fd, destfd, &o, &err), 0);
	close(fd);
	assert_file("link", "<r/>", 0644);
	assert_absent(destfd, "out/link");
}
END_TEST

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t used_bytes(const char *path)
{
	struct stat st;

	if (fstatat(destfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return (uint64_t)st.st_size;
}

START_TEST(test_bomb_declared_size)
{
	struct ent e = {.name = "zeros", .perm = 0644, .zeros = 100 << 20};
	_cleanup_close_ int fd = make_archive("bomb.tar.gz", TAR_GZ, &e, 1);
	struct sr_error err = {};
	struct stat st;
	double t;
	int k;

	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_lt(st.st_size, 1 << 20);
	t = now();
	k = sr_archive_extract(fd, destfd, 1 << 20, &err);
	t = now() - t;
	assert_error(k, -ENOSPC, &err,
		     "extract zeros: archive exceeds the disk limit of 1048576 bytes");
	ck_assert_msg(t < 1.0, "took %.2f s", t);
	ck_assert_uint_le(used_bytes("zeros"), 1 << 20);
}
END_TEST

/* A zip read through a pipe: no central directory, no sizes up front. */
START_TEST(test_bomb_streamed)
{
	struct ent e = {.name = "zeros", .perm = 0644, .zeros = 100 << 20, .unsized = true};
	_cleanup_close_ int fd = make_archive("bomb.zip", ZIP, &e, 1);
	struct sr_error err = {};
	int p[2], k, status;
	pid_t pid;
	double t;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char buf[65536];
		ssize_t n;

		close(p[0]);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			if (write(p[1], buf, (size_t)n) != n)
				_exit(0);
		_exit(0);
	}
	close(p[1]);
	t = now();
	k = sr_archive_extract(p[0], destfd, 1 << 20, &err);
	t = now() - t;
	close(p[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	assert_error(k, -ENOSPC, &err,
		     "extract zeros: archive exceeds the disk limit of 1048576 bytes");
	ck_assert_msg(t < 1.0, "took %.2f s", t);
	/* Cut short, so not left half-written under its name. */
	assert_absent(destfd, "zeros");
}
END_TEST

START_TEST(test_limit_across_files)
{
	struct ent ents[] = {
	    {.name = "a", .perm = 0644, .zeros = 400 << 10},
	    {.name = "b", .perm = 0644, .zeros = 400 << 10},
	    {.name = "c", .perm = 0644, .zeros = 400 << 10},
	};
	struct sr_error err;
	int k;

	k = extract("m.tar.zst", TAR_ZST, ents, SR_ARRAY_SIZE(ents), 1 << 20, &err);
	assert_error(k, -ENOSPC, &err, "extract c: archive exceeds the disk limit");
	ck_assert_uint_eq(used_bytes("a"), 400 << 10);
	/* Exactly at the limit is fine. */
	k = extract("m2.tar.zst", TAR_ZST, ents, 2, 800 << 10, &err);
	ck_assert_msg(k == 0, "%s", err.msg);
}
END_TEST

START_TEST(test_truncated)
{
	struct ent e = {.name = "data", .perm = 0644, .zeros = 0};
	char *junk = malloc(256 << 10);
	_cleanup_close_ int fd = -1;
	struct sr_error err = {};
	struct stat st;
	unsigned seed = 7;
	int k;

	/* Incompressible content, so that half the archive is half the data. */
	ck_assert_ptr_nonnull(junk);
	for (size_t i = 0; i < (256 << 10) - 1; i++)
		junk[i] = (char)(1 + rand_r(&seed) % 255);
	junk[(256 << 10) - 1] = '\0';
	e.data = junk;
	fd = make_archive("t.tar.gz", TAR_GZ, &e, 1);
	free(junk);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(ftruncate(fd, st.st_size / 2), 0);
	k = sr_archive_extract(fd, destfd, 0, &err);
	ck_assert_int_lt(k, 0);
	ck_assert_msg(strstr(err.msg, "extract data: ") && strstr(err.msg, "runcated"), "%s",
		      err.msg);
}
END_TEST

START_TEST(test_not_an_archive)
{
	_cleanup_close_ int fd = openat(tmpfd, "text", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	_cleanup_close_ int empty = openat(tmpfd, "empty", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	struct sr_error err = {};
	int k;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "just some text, not an archive\n", 31), 31);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	k = sr_archive_extract(fd, destfd, 0, &err);
	assert_error(k, -EINVAL, &err, "read archive: ");
	ck_assert_ptr_nonnull(
	    strstr(err.msg, "(expected tar, tar.gz, tar.xz, tar.zst, tar.bz2 or zip)"));

	/* An empty file is no archive either. */
	err = (struct sr_error){};
	ck_assert_int_ge(empty, 0);
	k = sr_archive_extract(empty, destfd, 0, &err);
	assert_error(k, -EINVAL, &err, "read archive: ");
}
END_TEST

START_TEST(test_hostile_names_in_messages)
{
	struct ent e = FILE_("\x1b[31mred\x07/../../x", 0644, "x");
	struct sr_error err;
	int k = extract("n.tar", TAR, &e, 1, 0, &err);

	ck_assert_int_eq(k, -EPERM);
	ck_assert_str_eq(err.msg, "extract ?[31mred?/../../x: path contains '..'");
	assert_no_escape();
}
END_TEST

START_TEST(test_long_path)
{
	char name[PATH_MAX + 64];
	struct ent e = FILE_(name, 0644, "x");
	struct sr_error err;
	int k;

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (size_t i = 100; i < sizeof(name) - 1; i += 100)
		name[i] = '/';
	k = extract("long.tar", TAR, &e, 1, 0, &err);
	assert_error(k, -ENAMETOOLONG, &err, "path too long");
}
END_TEST

START_TEST(test_entry_count_limit)
{
	struct archive *a = archive_write_new();
	struct archive_entry *ae = archive_entry_new();
	_cleanup_close_ int fd = -1;
	struct sr_error err = {};
	int k;

	/* 100001 "./" entries: cheap to extract (skipped), but counted. */
	ck_assert_int_eq(archive_write_set_format_ustar(a), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_add_filter_gzip(a), ARCHIVE_OK);
	fd = openat(tmpfd, "many.tgz", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_eq(archive_write_open_fd(a, fd), ARCHIVE_OK);
	archive_entry_set_pathname(ae, "./");
	archive_entry_set_filetype(ae, AE_IFDIR);
	archive_entry_set_perm(ae, 0755);
	for (int i = 0; i < 100001; i++)
		ck_assert_int_eq(archive_write_header(a, ae), ARCHIVE_OK);
	archive_entry_free(ae);
	ck_assert_int_eq(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	k = sr_archive_extract(fd, destfd, 0, &err);
	assert_error(k, -E2BIG, &err, "read archive: more than 100000 entries");
}
END_TEST

/* Writing. */

static void write_at(int dirfd, const char *name, uint64_t off, char c, size_t len)
{
	char buf[8192];
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_le(len, sizeof(buf));
	memset(buf, c, len);
	ck_assert_int_eq(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static void set_size(int dirfd, const char *name, uint64_t size)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

/* len bytes of c at off in dest's path. */
static void assert_bytes(const char *path, uint64_t off, char c, size_t len)
{
	char buf[8192];
	int fd = openat(destfd, path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	for (size_t i = 0; i < len; i++)
		ck_assert_msg(buf[i] == c, "%s at %ju: %d, want %d", path, (uintmax_t)(off + i),
			      buf[i], c);
	close(fd);
}

static void assert_sparse(const char *path, uint64_t size, uint64_t max_allocated)
{
	struct stat st;

	ck_assert_int_eq(fstatat(destfd, path, &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_uint_eq((uint64_t)st.st_size, size);
	ck_assert_msg((uint64_t)st.st_blocks * 512 <= max_allocated, "%s: %ju bytes allocated",
		      path, (uintmax_t)st.st_blocks * 512);
}

/*
 * The outside review of cp, finding C: `truncate -s 2G` in a sandbox of
 * 50 MB became 2 GB of zeros in the stream and on the host. Holes are
 * not stored, and extraction makes them holes again.
 */
START_TEST(test_write_sparse)
{
	_cleanup_close_ int out = -1, srcfd = -1;
	struct sr_archive_writer *w = NULL;
	struct sr_error err = {};
	struct stat st;
	double t;

	ck_assert_int_eq(mkdirat(tmpfd, "src", 0755), 0);
	srcfd = openat(tmpfd, "src", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(srcfd, 0);
	/* Holes around and between two extents, and at the end. */
	set_size(srcfd, "sp", 256 << 20);
	write_at(srcfd, "sp", 1 << 20, 'A', 5000);
	write_at(srcfd, "sp", 128 << 20, 'B', 100);
	/* Nothing but a hole. */
	set_size(srcfd, "holes", 256 << 20);
	/* A hole too short to be one, and data at the very end. */
	write_at(srcfd, "short", 0, 'C', 10);
	write_at(srcfd, "short", 20 << 10, 'D', 10);
	write_at(srcfd, "short", 1 << 20, 'E', 10);
	write_at(srcfd, "dense", 0, 'F', 8192);

	out = openat(tmpfd, "out.tar", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(out, 0);
	t = now();
	ck_assert_int_eq(sr_archive_writer_new(out, &(struct sr_write_opts){0}, &w, &err), 0);
	ck_assert_msg(sr_archive_write_tree(w, tmpfd, "src", NULL, &err) == 0, "%s", err.msg);
	ck_assert_msg(sr_archive_writer_end(w, NULL, NULL, &err) == 0, "%s", err.msg);
	sr_archive_writer_free(w);
	t = now() - t;
	ck_assert_int_eq(fstat(out, &st), 0);
	ck_assert_msg(st.st_size < (1 << 20), "archive of %jd bytes", (intmax_t)st.st_size);
	ck_assert_msg(t < 2.0, "took %.2f s", t);

	ck_assert_int_eq(lseek(out, 0, SEEK_SET), 0);
	ck_assert_msg(sr_archive_extract(out, destfd, 0, &err) == 0, "%s", err.msg);
	assert_sparse("src/sp", 256 << 20, 1 << 20);
	assert_bytes("src/sp", 0, 0, 4096);
	assert_bytes("src/sp", 1 << 20, 'A', 5000);
	assert_bytes("src/sp", (1 << 20) + 5000, 0, 4096);
	assert_bytes("src/sp", 128 << 20, 'B', 100);
	assert_bytes("src/sp", (256 << 20) - 4096, 0, 4096);
	assert_sparse("src/holes", 256 << 20, 64 << 10);
	assert_bytes("src/holes", 100 << 20, 0, 4096);
	assert_bytes("src/short", 0, 'C', 10);
	assert_bytes("src/short", 10, 0, 4096);
	assert_bytes("src/short", 20 << 10, 'D', 10);
	assert_bytes("src/short", 1 << 20, 'E', 10);
	assert_sparse("src/short", (1 << 20) + 10, 512 << 10);
	assert_bytes("src/dense", 0, 'F', 8192);
}
END_TEST

/*
 * A snapshot counts a sparse file's data, not its holes (they cost the
 * sandbox's disk nothing); its restore counted the holes too and refused
 * it. holes_free counts the data written only; the data is still bounded.
 */
START_TEST(test_extract_holes_free)
{
	_cleanup_close_ int out = -1, srcfd = -1;
	struct sr_archive_writer *w = NULL;
	struct sr_error err = {};
	struct sr_extract_opts o = {.max_bytes = 1 << 20};

	ck_assert_int_eq(mkdirat(tmpfd, "hf", 0755), 0);
	srcfd = openat(tmpfd, "hf", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(srcfd, 0);
	set_size(srcfd, "big", 64 << 20);
	write_at(srcfd, "big", 32 << 20, 'A', 5000);
	out = openat(tmpfd, "hf.tar", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(out, 0);
	ck_assert_int_eq(sr_archive_writer_new(out, &(struct sr_write_opts){0}, &w, &err), 0);
	ck_assert_msg(sr_archive_write_tree(w, tmpfd, "hf", NULL, &err) == 0, "%s", err.msg);
	ck_assert_msg(sr_archive_writer_end(w, NULL, NULL, &err) == 0, "%s", err.msg);
	sr_archive_writer_free(w);

	/* The extent counts by default: 64 MB is past 1 MB. */
	ck_assert_int_eq(lseek(out, 0, SEEK_SET), 0);
	ck_assert_int_lt(sr_archive_extract_opts(out, destfd, &o, &err), 0);
	ck_assert_msg(strstr(err.msg, "exceeds the disk limit"), "%s", err.msg);
	o.holes_free = true;
	ck_assert_int_eq(lseek(out, 0, SEEK_SET), 0);
	ck_assert_msg(sr_archive_extract_opts(out, destfd, &o, &err) == 0, "%s", err.msg);
	assert_sparse("hf/big", 64 << 20, 1 << 20);
	assert_bytes("hf/big", 32 << 20, 'A', 5000);
	assert_bytes("hf/big", (64 << 20) - 4096, 0, 4096);
	/* Its data still counts: 5000 bytes are past 4096. */
	o.max_bytes = 4096;
	ck_assert_int_eq(lseek(out, 0, SEEK_SET), 0);
	ck_assert_int_lt(sr_archive_extract_opts(out, destfd, &o, &err), 0);
	ck_assert_msg(strstr(err.msg, "hf/big: archive exceeds the disk limit of 4096 bytes"), "%s",
		      err.msg);
}
END_TEST

/*
 * A file under three names (and one of a single name beside it): with
 * hardlinks, written once and linked twice, and extracted as one file of
 * three names; without, three files (the stream a changes file needs).
 */
static void write_links(const char *tar, bool hardlinks, off_t *ret_size)
{
	_cleanup_close_ int out = -1;
	struct sr_archive_writer *w = NULL;
	struct sr_error err = {};
	struct stat st;

	out = openat(tmpfd, tar, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(out, 0);
	ck_assert_int_eq(
	    sr_archive_writer_new(out, &(struct sr_write_opts){.hardlinks = hardlinks}, &w, &err),
	    0);
	ck_assert_msg(sr_archive_write_tree(w, tmpfd, "lsrc", NULL, &err) == 0, "%s", err.msg);
	ck_assert_msg(sr_archive_writer_end(w, NULL, NULL, &err) == 0, "%s", err.msg);
	sr_archive_writer_free(w);
	ck_assert_int_eq(fstat(out, &st), 0);
	*ret_size = st.st_size;
}

START_TEST(test_write_hardlinks)
{
	_cleanup_close_ int srcfd = -1, in = -1;
	struct sr_error err = {};
	struct stat a, b, c, one;
	off_t linked, whole;

	ck_assert_int_eq(mkdirat(tmpfd, "lsrc", 0755), 0);
	srcfd = openat(tmpfd, "lsrc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(srcfd, 0);
	ck_assert_int_eq(mkdirat(srcfd, "d", 0755), 0);
	for (int i = 0; i < 12; i++)
		write_at(srcfd, "a", (uint64_t)i * 8000, 'L', 8000);
	write_at(srcfd, "a", 96000, 'M', 4000);
	ck_assert_int_eq(linkat(srcfd, "a", srcfd, "b", 0), 0);
	ck_assert_int_eq(linkat(srcfd, "a", srcfd, "d/c", 0), 0);
	write_at(srcfd, "one", 0, 'O', 10);

	write_links("links.tar", true, &linked);
	write_links("whole.tar", false, &whole);
	ck_assert_msg(linked < 150000 && whole > 300000, "%jd and %jd bytes", (intmax_t)linked,
		      (intmax_t)whole);

	in = openat(tmpfd, "links.tar", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(in, 0);
	ck_assert_msg(sr_archive_extract(in, destfd, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(fstatat(destfd, "lsrc/a", &a, 0), 0);
	ck_assert_int_eq(fstatat(destfd, "lsrc/b", &b, 0), 0);
	ck_assert_int_eq(fstatat(destfd, "lsrc/d/c", &c, 0), 0);
	ck_assert_int_eq(fstatat(destfd, "lsrc/one", &one, 0), 0);
	ck_assert(a.st_ino == b.st_ino && a.st_ino == c.st_ino);
	ck_assert_int_eq(a.st_nlink, 3);
	ck_assert_int_eq(a.st_size, 100000);
	ck_assert_int_eq(one.st_nlink, 1);
	assert_bytes("lsrc/d/c", 88000, 'L', 8000);
	assert_bytes("lsrc/d/c", 96000, 'M', 4000);
}
END_TEST

/* A full disk under the stream says so, not libarchive's "Write error". */
START_TEST(test_write_full)
{
	_cleanup_close_ int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	struct sr_archive_writer *w = NULL;
	struct sr_error err = {};
	int k;

	ck_assert_int_ge(full, 0);
	ck_assert_int_eq(mkdirat(tmpfd, "fsrc", 0755), 0);
	for (int i = 0; i < 4; i++)
		write_at(tmpfd, "fsrc/f", (uint64_t)i * 8000, 'x', 8000);
	ck_assert_int_eq(sr_archive_writer_new(full, &(struct sr_write_opts){0}, &w, &err), 0);
	k = sr_archive_write_tree(w, tmpfd, "fsrc", NULL, &err);
	if (k == 0)
		k = sr_archive_writer_end(w, NULL, NULL, &err);
	sr_archive_writer_free(w);
	ck_assert_int_eq(k, -ENOSPC);
	ck_assert_msg(strstr(err.msg, "No space left on device"), "%s", err.msg);
}
END_TEST

/* At most max_bytes of file data in the stream, holes not counted: past it, -EFBIG naming the
 * bound. */
START_TEST(test_write_bound)
{
	_cleanup_close_ int out = -1;
	struct sr_archive_writer *w = NULL;
	struct sr_error err = {};
	int k;

	ck_assert_int_eq(mkdirat(tmpfd, "bsrc", 0755), 0);
	for (int i = 0; i < 4; i++)
		write_at(tmpfd, "bsrc/a", (uint64_t)i * 8000, 'a', 8000);
	for (int i = 0; i < 4; i++)
		write_at(tmpfd, "bsrc/b", (uint64_t)i * 8000, 'b', 8000);
	set_size(tmpfd, "bsrc/sparse", 1 << 30);
	out = openat(tmpfd, "bound.tar", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(out, 0);
	/* 64,000 bytes of data and a 1 GiB hole: within 70,000. */
	ck_assert_int_eq(
	    sr_archive_writer_new(out, &(struct sr_write_opts){.max_bytes = 70000}, &w, &err), 0);
	k = sr_archive_write_tree(w, tmpfd, "bsrc", NULL, &err);
	sr_archive_writer_free(w);
	ck_assert_msg(k == 0, "%s", err.msg);
	ck_assert_int_eq(ftruncate(out, 0), 0);
	ck_assert_int_eq(sr_archive_writer_new(
			     out,
			     &(struct sr_write_opts){.max_bytes = 50000, .limit_what = "the limit"},
			     &w, &err),
			 0);
	k = sr_archive_write_tree(w, tmpfd, "bsrc", NULL, &err);
	sr_archive_writer_free(w);
	ck_assert_int_eq(k, -EFBIG);
	ck_assert_msg(strstr(err.msg, "more than 50000 bytes of files, the limit"), "%s", err.msg);
}
END_TEST

/*
 * The entries are bounded too, by max_bytes of their own, at 512 bytes and their names
 * each: names cost no data, and a walk of the agent's tree meets as many as it can make.
 */
START_TEST(test_write_bound_names)
{
	_cleanup_close_ int out = -1;
	struct sr_archive_writer *w = NULL;
	struct sr_error err = {};
	char name[128];
	int k;

	ck_assert_int_eq(mkdirat(tmpfd, "nsrc", 0755), 0);
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "nsrc/%0100d", i);
		ck_assert_int_eq(close(openat(tmpfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)),
				 0);
	}
	out = openat(tmpfd, "names.tar", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(out, 0);
	/* 201 entries of at most 617 bytes: within 130,000. */
	ck_assert_int_eq(
	    sr_archive_writer_new(out, &(struct sr_write_opts){.max_bytes = 130000}, &w, &err), 0);
	k = sr_archive_write_tree(w, tmpfd, "nsrc", NULL, &err);
	sr_archive_writer_free(w);
	ck_assert_msg(k == 0, "%s", err.msg);
	ck_assert_int_eq(ftruncate(out, 0), 0);
	ck_assert_int_eq(sr_archive_writer_new(out,
					       &(struct sr_write_opts){.max_bytes = 100000,
								       .limit_what = "the limit"},
					       &w, &err),
			 0);
	k = sr_archive_write_tree(w, tmpfd, "nsrc", NULL, &err);
	sr_archive_writer_free(w);
	ck_assert_int_eq(k, -EFBIG);
	ck_assert_msg(strstr(err.msg, "more than 100000 bytes of entries (a 512-byte header and "
				      "its names each), the limit"),
		      "%s", err.msg);

	/* Extracted with bound_entries (cp out), the same bound on the host's side. */
	ck_assert_int_eq(ftruncate(out, 0), 0);
	ck_assert_int_eq(lseek(out, 0, SEEK_SET), 0);
	ck_assert_int_eq(sr_archive_writer_new(out, &(struct sr_write_opts){0}, &w, &err), 0);
	ck_assert_msg(sr_archive_write_tree(w, tmpfd, "nsrc", NULL, &err) == 0, "%s", err.msg);
	ck_assert_msg(sr_archive_writer_end(w, NULL, NULL, &err) == 0, "%s", err.msg);
	sr_archive_writer_free(w);
	ck_assert_int_eq(lseek(out, 0, SEEK_SET), 0);
	k = sr_archive_extract_opts(out, destfd,
				    &(struct sr_extract_opts){.max_bytes = 100000,
							      .bound_entries = true,
							      .limit_what = "the limit"},
				    &err);
	ck_assert_int_eq(k, -EFBIG);
	ck_assert_msg(strstr(err.msg,
			     ": more than the limit, in entries (512 bytes and their names "
			     "each)"),
		      "%s", err.msg);
	ck_assert_int_eq(lseek(out, 0, SEEK_SET), 0);
	k = sr_archive_extract_opts(
	    out, destfd, &(struct sr_extract_opts){.max_bytes = 130000, .bound_entries = true},
	    &err);
	ck_assert_msg(k == 0, "%s", err.msg);
}
END_TEST

static Suite *archive_suite(void)
{
	Suite *s = suite_create("archive");
	TCase *tg = tcase_create("good");
	TCase *th = tcase_create("hostile");
	TCase *tw = tcase_create("write");

	tcase_add_unchecked_fixture(tg, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(tg, setup_tmp, teardown_tmp);
	tcase_add_test(tg, test_good_tar);
	tcase_add_test(tg, test_good_tar_gz);
	tcase_add_test(tg, test_good_tar_xz);
	tcase_add_test(tg, test_good_tar_zst);
	tcase_add_test(tg, test_good_tar_bz2);
	tcase_add_test(tg, test_good_zip);
	tcase_add_test(tg, test_dot_prefixes);
	tcase_add_test(tg, test_dir_modes);
	tcase_add_test(tg, test_utf8_names_tar);
	tcase_add_test(tg, test_utf8_names_zip);
	tcase_add_test(tg, test_duplicates);
	tcase_add_test(tg, test_file_into_dir);
	suite_add_tcase(s, tg);

	tcase_add_unchecked_fixture(th, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(th, setup_tmp, teardown_tmp);
	tcase_set_timeout(th, 30);
	tcase_add_test(th, test_absolute_and_dotdot);
	tcase_add_test(th, test_symlink_absolute_then_file);
	tcase_add_test(th, test_file_through_inner_symlink);
	tcase_add_test(th, test_symlink_escapes);
	tcase_add_test(th, test_symlink_within_top);
	tcase_add_test(th, test_hardlink_escapes);
	tcase_add_test(th, test_hardlink_to_file_there_before);
	tcase_add_test(th, test_special_files);
	tcase_add_test(th, test_dir_over_file);
	tcase_add_test(th, test_bomb_declared_size);
	tcase_add_test(th, test_bomb_streamed);
	tcase_add_test(th, test_limit_across_files);
	tcase_add_test(th, test_truncated);
	tcase_add_test(th, test_not_an_archive);
	tcase_add_test(th, test_hostile_names_in_messages);
	tcase_add_test(th, test_long_path);
	tcase_add_test(th, test_entry_count_limit);
	suite_add_tcase(s, th);

	tcase_add_unchecked_fixture(tw, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(tw, setup_tmp, teardown_tmp);
	tcase_set_timeout(tw, 30);
	tcase_add_test(tw, test_write_sparse);
	tcase_add_test(tw, test_extract_holes_free);
	tcase_add_test(tw, test_write_hardlinks);
	tcase_add_test(tw, test_write_full);
	tcase_add_test(tw, test_write_bound);
	tcase_add_test(tw, test_write_bound_names);
	suite_add_tcase(s, tw);
	return s;
}

int main(void)
{
	return sr_test_run(archive_suite());
}
