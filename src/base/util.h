/* SPDX-License-Identifier: MIT */
/* Small helpers shared by every module: cleanup attributes and ownership. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* CLOCK_MONOTONIC in nanoseconds: deadlines as plain arithmetic. */
static inline int64_t sr_monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ms as a timespec: a timer's value (timerfd_settime()). */
static inline struct timespec sr_timespec_ms(uint64_t ms)
{
	return (struct timespec){.tv_sec = (time_t)(ms / 1000),
				 .tv_nsec = (long)(ms % 1000) * 1000000L};
}

static inline void sr_freep(void *p)
{
	free(*(void **)p);
}

/* Closes *fd if open and marks it closed (-1): never closed twice, nor polled once closed. */
static inline void sr_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
	*fd = -1;
}

/* name(&p) calls fn(p) unless p is NULL: a function for _cleanup_(name). */
#define SR_DEFINE_CLEANUP(name, type, fn) \
	static inline void name(type *p)  \
	{                                 \
		if (*p)                   \
			fn(*p);           \
	}

SR_DEFINE_CLEANUP(sr_fclosep, FILE *, fclose)

#define _cleanup_(f)	 __attribute__((cleanup(f)))
#define _cleanup_free_	 _cleanup_(sr_freep)
#define _cleanup_close_	 _cleanup_(sr_closep)
#define _cleanup_fclose_ _cleanup_(sr_fclosep)

/* Hand ownership out of a _cleanup_ variable. */
#define steal_pointer(pp)                     \
	({                                    \
		__typeof__(*(pp)) _p = *(pp); \
		*(pp) = NULL;                 \
		_p;                           \
	})

#define steal_fd(fdp)             \
	({                        \
		int _fd = *(fdp); \
		*(fdp) = -1;      \
		_fd;              \
	})

/* Retry a call that may fail with EINTR. */
#define SR_RETRY(expr)                              \
	({                                          \
		__typeof__(expr) _r;                \
		do                                  \
			_r = (expr);                \
		while (_r == -1 && errno == EINTR); \
		_r;                                 \
	})

/* Writes all of p (short writes and EINTR retried); 0 or a negative errno. */
static inline int sr_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno > 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * recvmsg(2) on a unix stream or seqpacket socket (EINTR retried), read on
 * past the peer's reset. A peer that closes with data of ours unread in
 * its queue leaves us ECONNRESET (unix_release_sock()), and recvmsg
 * reports that error before what the peer sent ahead of its close, which
 * is still queued: a keeper that tells a process's exit and closes with
 * the taker's release unread, or a PID 1 that tells its EXITED and exits
 * with a request unread, would have that last word lost. The error is
 * cleared once reported: the next call returns what is queued, then 0
 * (the peer is gone: EOF, never a wait).
 */
static inline ssize_t sr_recvmsg(int fd, struct msghdr *m, int flags)
{
	ssize_t n = SR_RETRY(recvmsg(fd, m, flags));

	if (n < 0 && errno == ECONNRESET)
		n = SR_RETRY(recvmsg(fd, m, flags));
	return n;
}

/*
 * fds attached to m (SCM_RIGHTS), in buf: the caller's control buffer,
 * aligned as a cmsghdr, with CMSG_SPACE() room for n_fds. None: m as it is.
 */
static inline void sr_cmsg_put_fds(struct msghdr *m, void *buf, const int *fds, size_t n_fds)
{
	struct cmsghdr *c;

	if (!n_fds)
		return;
	m->msg_control = buf;
	m->msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
	c = CMSG_FIRSTHDR(m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
}

/*
 * The fds a received message m brought (SCM_RIGHTS), appended to fds (*n
 * of its max there already); those past max are closed, never left open
 * in this process. How many it brought, kept or not: more than were kept
 * is the sender's error for the caller to refuse.
 */
static inline size_t sr_cmsg_take_fds(struct msghdr *m, int *fds, size_t max, size_t *n)
{
	size_t total = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++, total++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*n < max)
				fds[(*n)++] = fd;
			else
				close(fd);
		}
	}
	return total;
}

/*
 * Room in the array at *pv (a pointer to its first element), of *cap
 * elements of size bytes, for need elements: its capacity doubled, from
 * first when it has none, until they fit, so n appends cost O(log n)
 * reallocations. 0, or -ENOMEM (on overflow too) with the array and *cap
 * as they were. Called as SR_GROW(v, cap, need, first), which takes the
 * element's size from v; the pointer goes through memcpy, as v's own
 * type, not through a cast to void **.
 */
static inline int sr_grow(void *pv, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t c = *cap ? *cap : first;
	void *v;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	memcpy(&v, pv, sizeof(v));
	v = reallocarray(v, c, size);
	if (!v)
		return -ENOMEM;
	memcpy(pv, &v, sizeof(v));
	*cap = c;
	return 0;
}
#define SR_GROW(v, cap, need, first) sr_grow(&(v), &(cap), (need), sizeof(*(v)), (first))

static inline int sr_negerrno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/*
 * The path the kernel gives fd (its /proc/self/fd link), into buf of
 * size bytes: 0, -errno, or -ENOENT where that names no path (a pipe's
 * "pipe:[N]").
 */
static inline int sr_fd_path(int fd, char *buf, size_t size)
{
	char proc[32];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, size - 1);
	if (n < 0)
		return sr_negerrno();
	buf[n] = '\0';
	return buf[0] == '/' ? 0 : -ENOENT;
}

static inline bool sr_streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/*
 * Whether a and b (statx with STATX_MNT_ID asked) lie on one mount: by
 * the mount's id where the kernel gave it (a bind of a directory of the
 * same file system has the same device), else by the device.
 */
static inline bool sr_same_mount(const struct statx *a, const struct statx *b)
{
	if (a->stx_mask & b->stx_mask & STATX_MNT_ID)
		return a->stx_mnt_id == b->stx_mnt_id;
	return a->stx_dev_major == b->stx_dev_major && a->stx_dev_minor == b->stx_dev_minor;
}

/*
 * openat2(2) (Linux 5.6), which glibc does not wrap: path resolved under
 * the RESOLVE_* rules, always O_CLOEXEC. An fd, or -errno (errno set too).
 */
static inline int sr_openat2(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC), .resolve = resolve};
	long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	return fd < 0 ? sr_negerrno() : (int)fd;
}

/*
 * Whether the directory fd (open for reading, at its start) holds nothing
 * but "." and "..": 1, 0, or -errno.
 */
static inline int sr_dir_empty(int fd)
{
	char buf[4096] __attribute__((aligned(8)));
	long n;

	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name */
			unsigned short reclen;
			const char *name = buf + off + 19;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
				return 0;
			off += reclen;
		}
	return n < 0 ? sr_negerrno() : 1;
}

/*
 * What was just made at (dirfd, name), a directory or a symbolic link
 * (type: S_IFDIR, S_IFLNK), opened as it is (O_PATH, never followed) to be
 * chowned through (fchownat(fd, "", ..., AT_EMPTY_PATH)), and only if it
 * still is one. Never chown it by its name: whoever else may write dirfd
 * can swap that name, between the making and the chown, for a hard link
 * to a file they may link (their own; with fs.protected_hardlinks, any
 * they may read and write, root's too), and a root caller would give them
 * that file; or, where dirfd is not sticky, rename a directory of a third
 * user's there (a rename within one directory needs no right to what is
 * moved). So it must also still be ours, as what we just made is, and a
 * directory empty, as one just made is: a root caller's directory that a
 * user renamed to that name is root's too, but holds what root put there.
 * An O_PATH fd (a directory's open for reading); -ESTALE when the name is
 * no longer of that type, ours or (a directory) empty; -errno.
 */
static inline int sr_open_made(int dirfd, const char *name, mode_t type)
{
	struct stat st;
	int fd = sr_openat2(dirfd, name,
			    (type == S_IFDIR ? O_RDONLY | O_DIRECTORY : O_PATH) | O_NOFOLLOW,
			    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	int k;

	if ((fd == -ENOTDIR || fd == -ELOOP) && type == S_IFDIR)
		return -ESTALE;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		k = sr_negerrno();
	else if ((st.st_mode & S_IFMT) != type || st.st_uid != geteuid())
		k = -ESTALE;
	else if (type == S_IFDIR && (k = sr_dir_empty(fd)) <= 0)
		k = k < 0 ? k : -ESTALE;
	else
		return fd;
	close(fd);
	return k;
}
