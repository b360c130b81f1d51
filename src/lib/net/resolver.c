/* SPDX-License-Identifier: MIT */
#include "resolver-internal.h"

#include <arpa/inet.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>

extern char **environ;

bool sr_resolver_denied(const struct sr_resolver_config *c, const char *name)
{
	for (size_t i = 0; i < c->n_deny; i++)
		if (sr_dns_name_matches(name, c->deny[i].name, c->deny[i].wildcard))
			return true;
	return false;
}

bool sr_resolver_allowed(const struct sr_resolver_config *c, const char *name)
{
	if (sr_resolver_denied(c, name))
		return false;
	/* No allowlist (--deny by name alone): every name but those. */
	if (c->n_allow == 0)
		return true;
	for (size_t i = 0; i < c->n_allow; i++)
		if (sr_dns_name_matches(name, c->allow[i].name, c->allow[i].wildcard))
			return true;
	return false;
}

static bool add_upstream(struct sr_resolver_config *c, const char *text)
{
	struct sockaddr_in *in = (struct sockaddr_in *)&c->upstream[c->n_upstream];
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&c->upstream[c->n_upstream];

	memset(&c->upstream[c->n_upstream], 0, sizeof(c->upstream[0]));
	if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(53);
		c->upstream_len[c->n_upstream++] = sizeof(*in);
		return true;
	}
	if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(53);
		c->upstream_len[c->n_upstream++] = sizeof(*in6);
		return true;
	}
	return false;
}

int sr_resolver_read_upstreams(const char *path, struct sr_resolver_config *c)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[512];

	c->n_upstream = 0;
	while (f && c->n_upstream < SR_RESOLVER_UPSTREAMS && fgets(line, sizeof(line), f)) {
		char *word = line + strspn(line, " \t"), *addr;

		if (strncmp(word, "nameserver", 10) != 0 || !strchr(" \t", word[10]))
			continue;
		addr = word + 10 + strspn(word + 10, " \t");
		addr[strcspn(addr, " \t\r\n#;")] = '\0';
		/* A scoped IPv6 address (fe80::1%eth0) names an interface of the host: skipped. */
		add_upstream(c, addr);
	}
	/* glibc's default, with no nameserver line (or no file). */
	if (c->n_upstream == 0)
		add_upstream(c, "127.0.0.1");
	return f || errno == ENOENT ? 0 : sr_negerrno();
}

/*
 * The syscall filter (an allowlist) the resolver runs under: what its
 * loop needs, sockets of the internet families only, mappings never
 * executable. Anything else fails with EPERM; another architecture's
 * system call (x32 on x86-64 included) kills it.
 */
#if defined(__x86_64__)
#define SR_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SR_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef SR_AUDIT_ARCH
#define ALLOW(nr)                                        \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define ARG0 offsetof(struct seccomp_data, args[0])
#define ARG2 offsetof(struct seccomp_data, args[2])

static const struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SR_AUDIT_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1), /* __X32_SYSCALL_BIT */
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#endif
    ALLOW(SYS_read),
    ALLOW(SYS_write),
    ALLOW(SYS_close),
    ALLOW(SYS_recvfrom),
    ALLOW(SYS_sendto),
    ALLOW(SYS_recvmsg),
    ALLOW(SYS_sendmsg),
    ALLOW(SYS_connect),
    ALLOW(SYS_accept4),
    ALLOW(SYS_getsockopt),
    ALLOW(SYS_ppoll),
#ifdef SYS_poll
    ALLOW(SYS_poll),
#endif
    ALLOW(SYS_clock_gettime),
    ALLOW(SYS_getrandom),
    ALLOW(SYS_brk),
    ALLOW(SYS_munmap),
    ALLOW(SYS_madvise),
    ALLOW(SYS_rt_sigreturn),
    ALLOW(SYS_restart_syscall),
    ALLOW(SYS_exit),
    ALLOW(SYS_exit_group),
    /* socket(AF_INET or AF_INET6, ...): the upstreams. */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 5),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* mmap(..., prot without PROT_EXEC, ...): malloc's large blocks. */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG2),
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
};
#endif

/* In the forked child, before it reads a byte of the sandbox's. */
static int confine(const struct sr_resolver_config *c, pid_t parent)
{
#ifdef SR_AUDIT_ARCH
	const struct sock_fprog prog = {.len = SR_ARRAY_SIZE(filter),
					.filter = (struct sock_filter *)filter};
#endif
	const struct rlimit files = {FD_FIRST_FREE + PENDING_MAX + CLIENTS_MAX + 8,
				     FD_FIRST_FREE + PENDING_MAX + CLIENTS_MAX + 8};
	sigset_t none;

	/* Dies with the supervisor, however it dies; ^C is for the agent. Named for ps. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent || setpgid(0, 0) < 0 ||
	    prctl(PR_SET_NAME, "sr-resolver") < 0)
		return -1;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -1;
	/*
	 * The caller's environment may hold credentials, and this process
	 * parses what the agent sends: none of it stays in its memory.
	 */
	for (char **e = environ; e && *e; e++)
		explicit_bzero(*e, strlen(*e));
	clearenv();
	/* A root caller's: the sandbox's unprivileged ids, never root. */
	if (c->change_ids && (setgroups(0, NULL) < 0 || setresgid(c->gid, c->gid, c->gid) < 0 ||
			      setresuid(c->uid, c->uid, c->uid) < 0))
		return -1;
	/*
	 * The caller's uid owns the sandbox's outer user namespace, and so
	 * holds every capability over its network (the policy included)
	 * from the host's user namespace. From one of its own, it holds none
	 * there: the kernel looks for the owner from the parent namespace
	 * only.
	 */
	if (unshare(CLONE_NEWUSER) < 0)
		return -1;
	/* Non-dumpable: the caller's other processes cannot ptrace it or read its memory. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0 || setrlimit(RLIMIT_NOFILE, &files) < 0)
		return -1;
#ifdef SR_AUDIT_ARCH
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return -1;
	return 0;
#else
	/* No filter for this architecture: no resolver either (fail closed). */
	return -1;
#endif
}

/* A query in flight: upstream, then (with addresses) the supervisor. */
struct pending {
	bool used, waiting; /* waiting: for the supervisor's ACK */
	struct origin o;
	struct work *w; /* while used */
	int up;		/* the upstream socket, -1 */
	unsigned attempt;
	uint16_t up_id;
	size_t up_len, up_sent;
	int64_t deadline;
	uint8_t *ans; /* the answer: UDP_ANSWER_MAX, or TCP_ANSWER_MAX + 2 over TCP */
	size_t ans_len, ans_need;
	uint32_t gen;
};

/*
 * A pending query's large parts, allocated while it is pending: the slots
 * themselves stay a few pages, which a new resolver does not fault in one
 * by one (~10 us each on some VMs).
 */
struct work {
	uint8_t query[QUERY_IN_MAX];
	size_t query_len;
	struct sr_dns_query q;
	uint8_t up_msg[2 + SR_DNS_QUERY_MAX]; /* the upstream query, with a TCP length in front */
	struct sr_dns_answer a;
};

/* A reply on its way: over UDP at once (lost if the socket is full), over TCP as it drains. */
static void reply(struct resolver *rs, const struct origin *o, const uint8_t *msg, size_t len)
{
	if (o->client < 0) {
		if (len > 0)
			(void)sendto(FD_UDP, msg, len, MSG_DONTWAIT,
				     (const struct sockaddr *)&o->from, o->from_len);
		return;
	}
	resolver_client_reply(&rs->cl[o->client], msg, len);
}

static void pending_free(struct pending *p)
{
	sr_closep(&p->up);
	p->up = -1;
	free(p->ans);
	p->ans = NULL;
	free(p->w);
	p->w = NULL;
	p->used = p->waiting = false;
}

static void fail(struct resolver *rs, struct pending *p, uint16_t rcode)
{
	uint8_t out[SR_DNS_QUERY_MAX];

	reply(rs, &p->o, out, sr_dns_error(p->w->query, p->w->query_len, &p->w->q, 0, rcode, out));
	pending_free(p);
}

/* The supervisor hears of every refused name (dropped if it cannot keep up). */
static void tell_refused(struct resolver *rs, const char *name, uint16_t qtype)
{
	struct sr_resolver_msg *m = &rs->msg;

	memset(m, 0, offsetof(struct sr_resolver_msg, name));
	m->type = SR_RESOLVER_REFUSED;
	m->qtype = qtype;
	snprintf(m->name, sizeof(m->name), "%s", name);
	(void)send(FD_CTL, m, sizeof(*m), MSG_DONTWAIT);
}

/* The next attempt's upstream socket, the query sent (UDP) or connecting (TCP). */
static int ask_upstream(struct resolver *rs, struct pending *p)
{
	const struct sr_resolver_config *c = rs->c;
	size_t u = p->attempt % c->n_upstream;
	bool tcp = p->o.client >= 0;
	size_t n;
	int fd;

	sr_closep(&p->up);
	p->up = -1;
	if (getrandom(&p->up_id, sizeof(p->up_id), 0) != sizeof(p->up_id))
		return -EIO;
	n = sr_dns_build_query(p->w->query, &p->w->q, p->up_id, p->w->up_msg + 2);
	p->w->up_msg[0] = (uint8_t)(n >> 8);
	p->w->up_msg[1] = (uint8_t)n;
	p->up_len = tcp ? n + 2 : n;
	p->up_sent = 0;
	p->ans_len = 0;
	p->ans_need = tcp ? 2 : 0;
	fd = socket(c->upstream[u].ss_family,
		    (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sr_negerrno();
	p->up = fd;
	p->deadline = now_ms() + ATTEMPT_MS;
	/* Connected: only the upstream's datagrams reach it, from a fresh random port. */
	if (connect(fd, (const struct sockaddr *)&c->upstream[u], c->upstream_len[u]) < 0 &&
	    errno != EINPROGRESS)
		return sr_negerrno();
	if (!tcp && send(fd, p->w->up_msg + 2, n, 0) != (ssize_t)n)
		return sr_negerrno();
	if (!tcp)
		p->up_sent = n;
	return 0;
}

static void retry_or_fail(struct resolver *rs, struct pending *p)
{
	while (++p->attempt < ATTEMPTS)
		if (ask_upstream(rs, p) == 0)
			return;
	fail(rs, p, SR_DNS_SERVFAIL);
}

/* A query from the sandbox: refused, or sent upstream. */
void resolver_on_query(struct resolver *rs, const uint8_t *msg, size_t len, const struct origin *o)
{
	struct sr_dns_query q;
	uint8_t out[SR_DNS_QUERY_MAX];
	struct pending *p = NULL;
	int r = sr_dns_parse_query(msg, len, &q);

	if (r < 0) {
		reply(rs, o, out,
		      sr_dns_error(msg, len, &q, r,
				   r == -EOPNOTSUPP ? SR_DNS_NOTIMP : SR_DNS_FORMERR, out));
		return;
	}
	if (q.qclass != 1 || q.qtype == SR_DNS_AXFR || q.qtype == SR_DNS_IXFR ||
	    !sr_resolver_allowed(rs->c, q.name)) {
		reply(rs, o, out, sr_dns_error(msg, len, &q, 0, SR_DNS_REFUSED, out));
		tell_refused(rs, q.name, q.qtype);
		return;
	}
	for (size_t i = 0; i < PENDING_MAX && !p; i++)
		if (!rs->p[i].used)
			p = &rs->p[i];
	if (!p) {
		reply(rs, o, out, sr_dns_error(msg, len, &q, 0, SR_DNS_SERVFAIL, out));
		return;
	}
	p->w = malloc(sizeof(*p->w));
	p->ans = malloc(o->client >= 0 ? TCP_ANSWER_MAX + 2 : UDP_ANSWER_MAX);
	if (!p->w || !p->ans) {
		free(p->w);
		free(p->ans);
		p->w = NULL;
		p->ans = NULL;
		reply(rs, o, out, sr_dns_error(msg, len, &q, 0, SR_DNS_SERVFAIL, out));
		return;
	}
	p->o = *o;
	p->up = -1;
	p->waiting = false;
	p->used = true;
	p->gen = ++rs->gen;
	p->w->q = q;
	memcpy(p->w->query, msg, len);
	p->w->query_len = len;
	if (o->client >= 0)
		rs->cl[o->client].busy = true;
	p->attempt = 0;
	if (ask_upstream(rs, p) < 0)
		retry_or_fail(rs, p);
}

/* An answer for p, read from upstream: refused, given, or first to the supervisor. */
static void on_answer(struct resolver *rs, struct pending *p)
{
	struct sr_dns_answer *a = &p->w->a;
	struct sr_resolver_msg *m = &rs->msg;
	size_t slot = (size_t)(p - rs->p), cap;

	if (sr_dns_parse_answer(p->ans, p->ans_len, p->w->query, &p->w->q, p->up_id,
				SR_RESOLVER_TTL_MAX, a) < 0) {
		/* Not an answer to this query (a spoof, garbage): wait on, or try again. */
		if (p->o.client >= 0)
			retry_or_fail(rs, p);
		else
			p->ans_len = 0;
		return;
	}
	sr_closep(&p->up);
	p->up = -1;
	/* Where a CNAME leads to a denied name, the name is refused as that one would be. */
	for (size_t i = 1; i < a->n_chain; i++) {
		if (!sr_resolver_denied(rs->c, a->chain[i]))
			continue;
		tell_refused(rs, a->chain[i], p->w->q.qtype);
		fail(rs, p, SR_DNS_REFUSED);
		return;
	}
	/* Its end unchecked (dns.h): not given, and its addresses would not have opened. */
	if (a->chain_cut) {
		fail(rs, p, SR_DNS_SERVFAIL);
		return;
	}
	if (a->n_addrs == 0) {
		cap = p->o.client >= 0 ? TCP_ANSWER_MAX : UDP_ANSWER_MAX;
		reply(rs, &p->o, p->ans, sr_dns_finish(p->ans, cap, a, &p->w->q, p->o.client < 0));
		pending_free(p);
		return;
	}
	memset(m, 0, offsetof(struct sr_resolver_msg, name));
	m->type = SR_RESOLVER_ADDRESSES;
	m->id = resolver_ack_id(slot, p->gen);
	m->qtype = p->w->q.qtype;
	m->n_addrs = (uint16_t)a->n_addrs;
	memcpy(m->addrs, a->addrs, a->n_addrs * sizeof(a->addrs[0]));
	snprintf(m->name, sizeof(m->name), "%s", p->w->q.name);
	if (send(FD_CTL, m, sizeof(*m), MSG_DONTWAIT) != (ssize_t)sizeof(*m)) {
		fail(rs, p, SR_DNS_SERVFAIL);
		return;
	}
	p->waiting = true;
	p->deadline = now_ms() + ACK_MS;
}

/* The supervisor's word on p's addresses: only once they are in the sets does the answer go. */
static void on_ack(struct resolver *rs)
{
	struct sr_resolver_msg *m = &rs->msg;
	struct pending *p;
	ssize_t k = recv(FD_CTL, m, sizeof(*m), MSG_DONTWAIT);

	if (k == 0)
		_exit(0); /* the supervisor is gone */
	if (k != (ssize_t)sizeof(*m) || m->type != SR_RESOLVER_ACK || (m->id & 0xff) >= PENDING_MAX)
		return;
	p = &rs->p[m->id & 0xff];
	if (!p->used || !p->waiting || !resolver_ack_is_for(m->id, m->id & 0xff, p->gen))
		return;
	if (m->code < 0) {
		fail(rs, p, SR_DNS_SERVFAIL);
		return;
	}
	reply(rs, &p->o, p->ans,
	      sr_dns_finish(p->ans, p->o.client >= 0 ? TCP_ANSWER_MAX : UDP_ANSWER_MAX, &p->w->a,
			    &p->w->q, p->o.client < 0));
	pending_free(p);
}

static void on_udp(struct resolver *rs)
{
	for (int i = 0; i < 16; i++) {
		struct origin o = {.client = -1, .from_len = sizeof(o.from)};
		ssize_t k = recvfrom(FD_UDP, rs->buf, sizeof(rs->buf), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&o.from, &o.from_len);

		if (k < 0)
			return;
		if ((size_t)k <= QUERY_IN_MAX)
			resolver_on_query(rs, rs->buf, (size_t)k, &o);
	}
}

/* The upstream socket of p is ready. */
static void on_upstream(struct resolver *rs, struct pending *p, short revents)
{
	ssize_t k;

	if (p->o.client < 0) {
		k = recv(p->up, p->ans, UDP_ANSWER_MAX, MSG_DONTWAIT | MSG_TRUNC);
		if (k < 0) {
			if (errno != EAGAIN)
				retry_or_fail(rs, p); /* ICMP unreachable */
			return;
		}
		p->ans_len = (size_t)k;
		if ((size_t)k > UDP_ANSWER_MAX) {
			/*
			 * Larger than asked for, and than was read: its records cut
			 * off mid-way, it would never parse (the agent waited for
			 * every try to time out). Its header and question alone,
			 * truncated: the client asks again over TCP.
			 */
			p->ans_len = SR_DNS_HEADER + p->w->q.question_len;
			p->ans[2] |= 0x02;
			memset(p->ans + 6, 0, 6);
		}
		on_answer(rs, p);
		return;
	}
	if (p->up_sent < p->up_len && (revents & POLLOUT)) {
		k = send(p->up, p->w->up_msg + p->up_sent, p->up_len - p->up_sent,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0 && errno != EAGAIN) {
			retry_or_fail(rs, p);
			return;
		}
		p->up_sent += k > 0 ? (size_t)k : 0;
	}
	if (!(revents & (POLLIN | POLLHUP | POLLERR)) || p->up_sent < p->up_len)
		return;
	k = recv(p->up, p->ans + p->ans_len, p->ans_need - p->ans_len, MSG_DONTWAIT);
	if (k == 0 || (k < 0 && errno != EAGAIN)) {
		retry_or_fail(rs, p);
		return;
	}
	p->ans_len += k > 0 ? (size_t)k : 0;
	if (p->ans_len < p->ans_need)
		return;
	if (p->ans_need == 2) {
		p->ans_need = 2 + ((size_t)p->ans[0] << 8 | p->ans[1]);
		return;
	}
	/* The length off the front: the message alone. */
	p->ans_len -= 2;
	memmove(p->ans, p->ans + 2, p->ans_len);
	on_answer(rs, p);
}

static void on_timeouts(struct resolver *rs, int64_t now)
{
	for (size_t i = 0; i < PENDING_MAX; i++) {
		struct pending *p = &rs->p[i];

		if (!p->used || now < p->deadline)
			continue;
		if (p->waiting)
			fail(rs, p, SR_DNS_SERVFAIL);
		else
			retry_or_fail(rs, p);
	}
	for (size_t i = 0; i < CLIENTS_MAX; i++)
		if (rs->cl[i].fd >= 0 && !rs->cl[i].busy && now >= rs->cl[i].idle_deadline)
			resolver_client_close(&rs->cl[i]);
}

static _Noreturn void serve(struct resolver *rs)
{
	struct pollfd fds[3 + CLIENTS_MAX + PENDING_MAX];
	int owner[3 + CLIENTS_MAX + PENDING_MAX];

	for (;;) {
		int64_t now = now_ms(), next = now + 60000;
		size_t n = 3;
		int k;

		fds[0] = (struct pollfd){.fd = FD_UDP, .events = POLLIN};
		fds[1] = (struct pollfd){.fd = FD_TCP, .events = POLLIN};
		fds[2] = (struct pollfd){.fd = FD_CTL, .events = POLLIN};
		for (size_t i = 0; i < CLIENTS_MAX; i++) {
			struct client *cl = &rs->cl[i];

			/*
			 * Not polled at all while its query is pending: a client that
			 * sent more meanwhile would wake the loop at once, round after
			 * round, and so would one that reset its connection, whose
			 * POLLERR/POLLHUP poll() reports whatever the events asked
			 * (the agent spun the resolver on a CPU of the host's, outside
			 * its cgroup, for as long as a slow upstream took). Its reply,
			 * once written, finds out.
			 */
			if (cl->fd < 0 || (cl->busy && !cl->out))
				continue;
			owner[n] = (int)i;
			fds[n++] = (struct pollfd){.fd = cl->fd,
						   .events = (short)(cl->out ? POLLOUT : POLLIN)};
			if (!cl->busy && cl->idle_deadline < next)
				next = cl->idle_deadline;
		}
		for (size_t i = 0; i < PENDING_MAX; i++) {
			struct pending *p = &rs->p[i];

			if (!p->used)
				continue;
			if (p->deadline < next)
				next = p->deadline;
			if (p->up < 0)
				continue;
			owner[n] = CLIENTS_MAX + (int)i;
			fds[n++] = (struct pollfd){
			    .fd = p->up,
			    .events = (short)(POLLIN | (p->up_sent < p->up_len ? POLLOUT : 0))};
		}
		k = poll(fds, n, (int)(next > now ? next - now : 0));
		if (k < 0 && errno != EINTR)
			_exit(1);
		/* The supervisor first: an ACK frees a slot. */
		if (fds[2].revents & POLLIN)
			on_ack(rs);
		else if (fds[2].revents & (POLLHUP | POLLERR))
			_exit(0);
		for (size_t i = 3; k > 0 && i < n; i++) {
			if (!fds[i].revents)
				continue;
			if (owner[i] < CLIENTS_MAX)
				resolver_on_client(rs, (size_t)owner[i], fds[i].revents);
			else if (rs->p[owner[i] - CLIENTS_MAX].up == fds[i].fd)
				on_upstream(rs, &rs->p[owner[i] - CLIENTS_MAX], fds[i].revents);
		}
		if (fds[0].revents & POLLIN)
			on_udp(rs);
		if (fds[1].revents & POLLIN)
			resolver_on_accept(rs);
		on_timeouts(rs, now_ms());
	}
}

/* The forked child: its fds in place, confined, then serving. Never returns. */
static _Noreturn void run(const struct sr_resolver_config *c, pid_t parent, int udp, int tcp,
			  int ctl)
{
	struct resolver rs = {.c = c};
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    (!c->show_stderr && dup2(null, 2) < 0))
		_exit(127);
	/* Numbered above the three, then into place: none may land on another. */
	udp = fcntl(udp, F_DUPFD_CLOEXEC, 16);
	tcp = fcntl(tcp, F_DUPFD_CLOEXEC, 16);
	ctl = fcntl(ctl, F_DUPFD_CLOEXEC, 16);
	if (udp < 0 || tcp < 0 || ctl < 0 || dup3(udp, FD_UDP, O_CLOEXEC) < 0 ||
	    dup3(tcp, FD_TCP, O_CLOEXEC) < 0 || dup3(ctl, FD_CTL, O_CLOEXEC) < 0 ||
	    syscall(SYS_close_range, FD_FIRST_FREE, ~0U, 0) < 0)
		_exit(127);
	/* Everything it will need, before the filter (no mmap of its own after). */
	rs.p = calloc(PENDING_MAX, sizeof(*rs.p));
	rs.cl = calloc(CLIENTS_MAX, sizeof(*rs.cl));
	if (!rs.p || !rs.cl || confine(c, parent) < 0)
		_exit(127);
	for (size_t i = 0; i < PENDING_MAX; i++)
		rs.p[i].up = -1;
	for (size_t i = 0; i < CLIENTS_MAX; i++)
		rs.cl[i].fd = -1;
	serve(&rs);
}

int sr_resolver_start(const struct sr_resolver_config *c, int udp, int tcp, pid_t *ret_pid,
		      int *ret_pidfd, int *ret_ctl, struct sr_error *err)
{
	pid_t parent = getpid(), pid;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return sr_error_errno(err, sr_negerrno(), "resolver: socketpair");
	/* fork, not posix_spawn: no exec, the parent-death signal set in the child. */
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		run(c, parent, udp, tcp, sv[1]);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return sr_error_errno(err, sr_negerrno(), "start the resolver");
	}
	*ret_pid = pid;
#ifdef SYS_pidfd_open
	*ret_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
	*ret_pidfd = -1;
#endif
	*ret_ctl = sv[0];
	return 0;
}
