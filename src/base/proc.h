/* SPDX-License-Identifier: MIT */
/* What the host's ps shows of us. */
#pragma once

/*
 * Overwrites this process's whole argument area (argv[0] to the end of
 * the last argument, as long as /proc/self/cmdline says) with text, cut to
 * fit: /proc/PID/cmdline is readable by every user of the host (and, for
 * PID 1, by the agent), and the command line that started us may carry
 * host paths and --env values. The thread's name (comm) becomes comm.
 */
void sr_proc_set_cmdline(const char *text, const char *comm);

/*
 * Drops this process's pages of read-only file mappings (code and
 * constants of the binary and its libraries) from its resident set: a
 * long-lived process (a keeper) gives back what its set-up touched once.
 * The pages stay in the page cache, shared; the few the process uses
 * again come back on use. Writable mappings are never touched.
 */
void sr_proc_drop_clean_pages(void);
