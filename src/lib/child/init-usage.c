/* SPDX-License-Identifier: MIT */
/*
 * What PID 1 tells the host a sandbox has used (init.c's EXIT, HALTED and
 * STATS): the disk's bytes, a reaped process's rusage, and, for
 * `inspect` where no cgroup counts it, what the processes alive now have
 * used so far. Read from the sandbox's own /proc and its disk, nothing
 * of the host's.
 */
#include "init-internal.h"
#include "protocol.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/statfs.h>

/*
 * Bytes in use on the sandbox's disk (/tmp is a bind of it); -1 where it
 * is a directory of the host's, whose filesystem's count is not its own
 * (the host side counts it: disk.h).
 */
int64_t init_disk_used(const struct sr_plan *p)
{
	struct statfs sf;

	if (!p->disk_counts || statfs("/tmp", &sf) < 0 || sf.f_blocks == 0)
		return -1;
	return (int64_t)(sf.f_blocks - sf.f_bfree) * (int64_t)sf.f_bsize;
}

static int64_t tv_us(struct timeval tv)
{
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* An EXIT's use: a reaped process's rusage, its own and what it waited for's. */
void init_rusage_msg(struct sr_msg *m, const struct rusage *ru)
{
	m->user_us = tv_us(ru->ru_utime);
	m->sys_us = tv_us(ru->ru_stime);
	m->peak_rss = (int64_t)ru->ru_maxrss * 1024;
}

/* Clock ticks to microseconds. */
static int64_t ticks_us(unsigned long long t)
{
	static long hz;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	return (int64_t)(t * 1000000ULL / (unsigned long long)hz);
}

/* The first line of /proc/PID/WHAT into buf (NUL-ended), or -1. */
static ssize_t read_proc(const char *pid, const char *what, char *buf, size_t size)
{
	char path[300];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/%s", pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* A living process's peak resident bytes (VmHWM), or -1. */
static int64_t peak_rss_of(const char *pid)
{
	char buf[4096], *p;
	unsigned long long kib;

	if (read_proc(pid, "status", buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nVmHWM:");
	if (!p || sscanf(p + 7, "%llu", &kib) != 1)
		return -1;
	return (int64_t)kib * 1024;
}

/* One living process's count into m: its CPU time and its peak. */
static void add_process(struct sr_msg *m, const char *pid)
{
	char buf[1024], *p;
	unsigned long long ut, st;
	int64_t hwm;

	if (read_proc(pid, "stat", buf, sizeof(buf)) < 0)
		return;
	m->pid++;
	hwm = peak_rss_of(pid);
	if (hwm > m->peak_rss)
		m->peak_rss = hwm;
	/* After the command's ")", fields 3 on: utime and stime are 14 and 15. */
	p = strrchr(buf, ')');
	if (p &&
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2) {
		m->user_us += ticks_us(ut);
		m->sys_us += ticks_us(st);
	}
}

/*
 * Each process's CPU time so far (its own and what it waited for: fields
 * 14 to 17 of /proc/PID/stat), told to fn with its process group, in one
 * pass over /proc: what a group's leader would not have counted had it
 * been killed, as its children killed with it were never waited for.
 */
void init_each_usage(void (*fn)(void *ctx, pid_t pgrp, int64_t user_us, int64_t sys_us), void *ctx)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	while (d && (de = readdir(d))) {
		unsigned long long ut, st, cut, cst;
		char buf[1024], *p;
		int pgrp;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    read_proc(de->d_name, "stat", buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')))
			continue;
		if (sscanf(p + 2, "%*c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			   &pgrp, &ut, &st, &cut, &cst) == 5)
			fn(ctx, pgrp, ticks_us(ut) + ticks_us(cut), ticks_us(st) + ticks_us(cst));
	}
	if (d)
		closedir(d);
}

/*
 * STATS: the disk, the processes alive now (m->pid of them, from their
 * /proc/PID/stat), and CPU time of PID 1, of those alive and of every one
 * reaped.
 */
void init_usage_so_far(const struct sr_plan *p, struct sr_msg *m)
{
	struct rusage self, reaped;
	DIR *d = opendir("/proc");
	struct dirent *de;

	m->value = init_disk_used(p);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &reaped);
	m->user_us = tv_us(self.ru_utime) + tv_us(reaped.ru_utime);
	m->sys_us = tv_us(self.ru_stime) + tv_us(reaped.ru_stime);
	m->peak_rss =
	    (int64_t)(self.ru_maxrss > reaped.ru_maxrss ? self.ru_maxrss : reaped.ru_maxrss) * 1024;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || strcmp(de->d_name, "1") == 0)
			continue;
		add_process(m, de->d_name);
	}
	if (d)
		closedir(d);
}
