/* SPDX-License-Identifier: MIT */
/*
 * Published ports: 127.0.0.1 and ::1 on the host, each connection there
 * relayed to one PID 1 makes on the sandbox's loopback.
 */
#include "keeper-internal.h"
#include "control.h"
#include "peeruid.h"
#include "util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Relayed connections to published ports at once: 128 KiB of buffers each. */
#define CONNS_MAX 256
/* Past CONNS_MAX, connections of the sandbox's owner only, up to this many more. */
#define CONNS_OWNER_RESERVE 32
#define PORTS_MAX	    64

void keeper_drop_conn(struct keeper *k, size_t i)
{
	struct conn *c = k->conns[i];

	sr_closep(&c->host_fd);
	sr_closep(&c->sandbox_fd);
	free(c);
	k->conns[i] = k->conns[--k->n_conns];
	keeper_trim_when_idle(k);
}

void keeper_on_connected(void *ctx, struct sr_sandbox *sb, uint32_t id, int fd,
			 const struct sr_error *err)
{
	struct keeper *k = ctx;

	(void)sb;
	(void)err;
	for (size_t i = 0; i < k->n_conns; i++) {
		struct conn *c = k->conns[i];

		if (c->sandbox_fd >= 0 || c->id != id)
			continue;
		/* Nothing listens on the port inside: the host's connection is refused, as it would
		 * be. */
		if (fd < 0) {
			keeper_drop_conn(k, i);
			return;
		}
		c->sandbox_fd = fd;
		sr_relay_init(&c->relay, c->host_fd, c->sandbox_fd);
		return;
	}
	sr_closep(&fd);
}

static json_t *port_json(const struct port *p)
{
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", p->host_port);
	return json_pack("{sisisssb}", "port", p->port, "host_port", p->host_port, "url", url,
			 "owner_only", p->owner_only);
}

static void save_ports(struct keeper *k)
{
	json_t *ports = json_array();

	for (size_t i = 0; i < k->n_ports; i++)
		json_array_append_new(ports, port_json(&k->ports[i]));
	json_object_set_new(k->state, "ports", ports);
	keeper_save_state(k);
}

/*
 * `port ID PORT`: the sandbox's PORT on the host's loopback only. Each
 * connection accepted there is relayed to one PID 1 makes inside (on_connect
 * in init.c): the keeper never enters the sandbox's network namespace, and
 * nothing reaches the sandbox but through this relay.
 */
void keeper_do_port(struct keeper *k, struct client *cl, json_t *req)
{
	json_t *port = json_object_get(req, "port");
	bool owner_only = json_is_true(json_object_get(req, "owner_only"));
	struct port *np;
	int p, fd, fd6 = -1, host_port = 0;

	if (!json_is_integer(port) || json_integer_value(port) < 1 ||
	    json_integer_value(port) > 65535)
		return keeper_reply_error(cl, -EINVAL, 125, "port: a port is 1-65535");
	p = (int)json_integer_value(port);
	for (size_t i = 0; i < k->n_ports; i++) {
		if (k->ports[i].port != p)
			continue;
		/* Published by name (`port`, the API's /ports), it is open from then on. */
		if (!owner_only && k->ports[i].owner_only) {
			k->ports[i].owner_only = false;
			save_ports(k);
		}
		return keeper_reply(
		    cl, json_pack("{sbso}", "ok", 1, "port", port_json(&k->ports[i])), NULL, 0);
	}
	if (k->n_ports >= PORTS_MAX)
		return keeper_reply_error(cl, -ENOSPC, 125, "port: %d ports are published already",
					  PORTS_MAX);
	fd = sr_listen_loopback(p, true, &fd6, &host_port, NULL);
	if (fd < 0)
		return keeper_reply_error(cl, fd, 125, "port: listen on 127.0.0.1 and ::1: %s",
					  strerror(-fd));
	np = realloc(k->ports, sizeof(*np) * (k->n_ports + 1));
	if (!np) {
		close(fd);
		sr_closep(&fd6);
		return keeper_reply_error(cl, -ENOMEM, 125, "port: out of memory");
	}
	k->ports = np;
	k->ports[k->n_ports++] = (struct port){.port = p,
					       .host_port = host_port,
					       .listen_fd = fd,
					       .listen_fd6 = fd6,
					       .owner_only = owner_only};
	save_ports(k);
	keeper_reply(cl, json_pack("{sbso}", "ok", 1, "port", port_json(&k->ports[k->n_ports - 1])),
		     NULL, 0);
}

void keeper_on_port_connection(struct keeper *k, struct port *p, int listen_fd)
{
	struct conn **nv, *c;
	uid_t uid;
	int fd;

	/*
	 * A connection is a request to PID 1 (CONNECT), and anyone on the host
	 * may make one: sent into a full socket, it would hold the loop for up
	 * to SEND_WAIT_MS (sandbox.c) while PID 1 is kept from reading (the
	 * agent can stop a process PID 1 starts), rm and every client behind
	 * it. So it waits for room as a worker's request does, in the
	 * listening socket's backlog (fill_poll_set() polls the ports again
	 * once there is).
	 */
	if (!sr_sandbox_has_room(k->sb))
		return;
	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			keeper_out_of_fds(k);
		return;
	}
	/*
	 * A preview's port: its relay (serve) is ours; another user's
	 * connection is not. A published port is open to every user of the
	 * host, and connections are bounded (each two fds and a relay): past
	 * CONNS_MAX, only the owner's come in, into a reserve of their own,
	 * so that another user's connections to one port do not shut the
	 * owner out of the sandbox's ports (its preview's included).
	 */
	if (k->end_reason || k->n_conns >= CONNS_MAX + CONNS_OWNER_RESERVE ||
	    ((p->owner_only || k->n_conns >= CONNS_MAX) &&
	     (sr_tcp_peer_uid(fd, &uid) < 0 || !sr_uid_is_us(uid)))) {
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	nv = c ? realloc(k->conns, sizeof(*nv) * (k->n_conns + 1)) : NULL;
	if (!nv || sr_sandbox_connect(k->sb, p->port, &c->id) < 0) {
		if (nv)
			k->conns = nv;
		free(c);
		close(fd);
		return;
	}
	k->conns = nv;
	c->host_fd = fd;
	c->sandbox_fd = -1;
	k->conns[k->n_conns++] = c;
}
