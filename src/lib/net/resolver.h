/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's resolver: the only DNS an agent has when its policy names
 * hosts (docs/network.md, "Names"). It answers on 127.0.0.53:53 inside
 * the sandbox (UDP and TCP sockets PID 1 made there during its set-up),
 * for allowed names only, from the host's own resolvers; before it
 * returns an answer, the supervisor has put the answer's addresses into
 * the policy's allow sets for their TTL (nfnl.h). Other names get
 * REFUSED, and the supervisor hears of each.
 *
 * It runs on the host side, as a process of its own forked by the
 * supervisor and confined before it reads a byte: the caller's ids (a
 * root caller's: the sandbox's unprivileged ones), a user namespace of
 * its own (so that it holds no capability over the sandbox's namespaces,
 * which the caller's uid owns), no_new_privs, non-dumpable, a syscall
 * filter that allows sockets of the internet families and I/O on them
 * and nothing that opens a file, and no environment. It holds no
 * nftables socket: a resolver taken over by what it parses can lie about
 * which addresses a name has (DNS can anyway), not change the policy.
 */
#pragma once

#include "dns.h"
#include "log.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define SR_RESOLVER_ADDRESS   "127.0.0.53" /* inside the sandbox, on lo */
#define SR_RESOLVER_UPSTREAMS 3		   /* as glibc's MAXNS */
/* An answer's TTLs are lowered to this: an address stays open at most this long unasked. */
#define SR_RESOLVER_TTL_MAX 3600

struct sr_resolver_name {
	char name[256]; /* a host name, as written */
	bool wildcard;	/* the names beneath it, not itself */
};

struct sr_resolver_config {
	const struct sr_resolver_name *allow, *deny;
	size_t n_allow, n_deny;
	struct sockaddr_storage upstream[SR_RESOLVER_UPSTREAMS];
	socklen_t upstream_len[SR_RESOLVER_UPSTREAMS];
	size_t n_upstream;
	bool change_ids; /* a root caller: become uid/gid first */
	uid_t uid;
	gid_t gid;
	bool show_stderr;
};

/*
 * What a name may do: be answered (allowed, or no allow names at all;
 * and no deny matches it) or not. A deny wins over an allow, a
 * wildcard's or not.
 */
bool sr_resolver_allowed(const struct sr_resolver_config *c, const char *name);
/* Whether a deny entry matches name. */
bool sr_resolver_denied(const struct sr_resolver_config *c, const char *name);

/*
 * The host's resolvers, as glibc reads them: the first
 * SR_RESOLVER_UPSTREAMS "nameserver" lines of path (IPv4 or IPv6);
 * 127.0.0.1 if there is none. -errno if path cannot be read.
 */
int sr_resolver_read_upstreams(const char *path, struct sr_resolver_config *c);

/* The control socket's messages (SOCK_SEQPACKET, one per datagram). */
enum sr_resolver_msg_type {
	/* resolver -> supervisor: an allowed name's addresses; answer with ACK of the same id. */
	SR_RESOLVER_ADDRESSES = 1,
	/* resolver -> supervisor: a name was refused (no reply). */
	SR_RESOLVER_REFUSED,
	/* supervisor -> resolver: the addresses are in the sets (code 0), or not (-errno). */
	SR_RESOLVER_ACK,
};

struct sr_resolver_msg {
	uint32_t type;
	uint32_t id;
	int32_t code;
	uint16_t qtype;
	uint16_t n_addrs;
	struct sr_dns_addr addrs[SR_DNS_ADDRS_MAX];
	char name[SR_DNS_NAME_MAX];
};

/*
 * Starts the resolver on the sandbox's sockets udp and tcp (both kept
 * here: the caller closes its copies). Its pid, a pidfd (-1 without
 * pidfd_open) and the supervisor's end of its control socket.
 */
int sr_resolver_start(const struct sr_resolver_config *c, int udp, int tcp, pid_t *ret_pid,
		      int *ret_pidfd, int *ret_ctl, struct sr_error *err);
