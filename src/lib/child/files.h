/* SPDX-License-Identifier: MIT */
/*
 * Single files and directories of a living sandbox, for the API (files
 * resources, E2B's files): what a worker (work.h) does for the kinds
 * SR_WORK_FILE_READ .. SR_WORK_MKDIR and SR_WORK_STAT_FOLLOW. A worker is a fork of PID 1 with
 * exactly the agent's rights, so whatever it reads, writes or removes, the
 * agent could have: paths resolve in the sandbox's own root (a symbolic
 * link the agent planted leads nowhere else), relative ones from
 * /workspace. Nothing here crosses to the host but the bytes on fd.
 *
 * SR_WORK_LIST, SR_WORK_STAT and SR_WORK_STAT_FOLLOW write one JSON
 * object per line:
 *
 *   {"name":"a.txt","path":"/workspace/a.txt","type":"file","size":12,
 *    "mode":420,"uid":1000,"gid":1000,"mtime_ns":1700000000123456789}
 *
 * type is "file", "dir", "symlink" (with "target") or "other"; mode the
 * permission bits (07777).
 */
#pragma once

#include "log.h"

/*
 * path as a worker names it in its entries' "path": absolute (from
 * /workspace if relative), without empty or "." parts; -ENAMETOOLONG
 * past len.
 */
int sr_files_path(const char *path, char *buf, size_t len);

/* Does kind on path with the stream fd (read or written as the kind says); 0 or -errno. */
int sr_files_work(int kind, const char *path, int fd, struct sr_error *err);
