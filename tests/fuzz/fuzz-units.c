/* SPDX-License-Identifier: MIT */
/*
 * Sizes, durations, CPU counts, counts, booleans and network destinations
 * (src/base/units.h). The input is read twice: as text for every parser, and as
 * numbers for the formatters. Checked: parse(format(x)) == x for every x a
 * formatter accepts, format(parse(s)) parses to the same value, and a
 * parsed destination prints back (as a policy entry) to the same one.
 */
#include "fuzz-common.h"

#include "units.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_rc(int r)
{
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
}

static void size_round_trip(uint64_t v)
{
	char buf[SR_UNITS_BUF_MAX];
	uint64_t back = 0;

	FUZZ_CHECK(sr_format_size(v, buf, sizeof(buf)) == 0);
	FUZZ_CHECK(sr_parse_size(buf, &back) == 0);
	FUZZ_CHECK(back == v);
	/* Too small a buffer is an error, never a truncated value. */
	FUZZ_CHECK(sr_format_size(v, buf, strlen(buf)) == -ENOBUFS);
}

static void duration_round_trip(uint64_t v)
{
	char buf[SR_UNITS_BUF_MAX];
	uint64_t back = 0;

	FUZZ_CHECK(sr_format_duration(v, buf, sizeof(buf)) == 0);
	FUZZ_CHECK(sr_parse_duration(buf, &back) == 0);
	FUZZ_CHECK(back == v);
	FUZZ_CHECK(sr_format_duration(v, buf, strlen(buf)) == -ENOBUFS);
}

static void cpus_round_trip(uint32_t v)
{
	char buf[SR_UNITS_BUF_MAX];
	uint32_t back = 0;

	if (v > SR_CPUS_MAX_MILLI)
		return;
	FUZZ_CHECK(sr_format_cpus(v, buf, sizeof(buf)) == 0);
	FUZZ_CHECK(sr_parse_cpus(buf, &back) == 0);
	FUZZ_CHECK(back == v);
	FUZZ_CHECK(sr_format_cpus(v, buf, strlen(buf)) == -ENOBUFS);
}

/* A destination as a policy entry, the way a user would write it back. */
static void format_dest(const struct sr_dest *d, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN], prefix[8] = "", port[8] = "";
	bool v6 = d->kind == SR_DEST_IPV6;

	if (d->port)
		snprintf(port, sizeof(port), ":%u", d->port);
	if (d->kind == SR_DEST_HOST) {
		snprintf(buf, len, "%s%s%s", d->wildcard ? "*." : "", d->host, port);
		return;
	}
	FUZZ_CHECK(inet_ntop(v6 ? AF_INET6 : AF_INET, d->addr, addr, sizeof(addr)));
	if (d->prefix != (v6 ? 128u : 32u))
		snprintf(prefix, sizeof(prefix), "/%u", d->prefix);
	if (v6 && d->port)
		snprintf(buf, len, "[%s%s]%s", addr, prefix, port);
	else
		snprintf(buf, len, "%s%s%s", addr, prefix, port);
}

static void check_dest(const char *s)
{
	struct sr_dest d, back;
	char buf[320];
	int r;

	memset(&d, 0xa5, sizeof(d));
	r = sr_parse_dest(s, &d);
	check_rc(r);
	if (r < 0)
		return;
	FUZZ_CHECK(d.kind < _SR_DEST_KIND_MAX);
	if (d.kind == SR_DEST_HOST) {
		FUZZ_CHECK(memchr(d.host, '\0', sizeof(d.host)) != NULL);
		FUZZ_CHECK(d.host[0] != '\0' && strlen(d.host) <= 254);
	} else {
		FUZZ_CHECK(d.prefix <= (d.kind == SR_DEST_IPV4 ? 32u : 128u));
		/* Host bits are cleared: the bytes past the prefix are zero. */
		for (unsigned i = 0; i < 16; i++) {
			unsigned keep = d.prefix >= (i + 1) * 8 ? 8
					: d.prefix > i * 8	? d.prefix - i * 8
								: 0;

			FUZZ_CHECK((d.addr[i] & (0xffu >> keep)) == 0 ||
				   (d.kind == SR_DEST_IPV4 && i >= 4));
		}
	}
	format_dest(&d, buf, sizeof(buf));
	memset(&back, 0, sizeof(back));
	if (sr_parse_dest(buf, &back) != 0) {
		fprintf(stderr, "'%s' parsed, printed as '%s', which does not parse\n", s, buf);
		FUZZ_CHECK(!"a parsed destination prints back to one that parses");
	}
	FUZZ_CHECK(back.kind == d.kind && back.port == d.port && back.prefix == d.prefix);
	if (d.kind == SR_DEST_HOST)
		FUZZ_CHECK(strcmp(back.host, d.host) == 0 && back.wildcard == d.wildcard);
	else
		FUZZ_CHECK(memcmp(back.addr, d.addr, d.kind == SR_DEST_IPV4 ? 4 : 16) == 0);
}

static void check_text(const char *s)
{
	uint64_t u = 0;
	uint32_t m = 0;
	bool b;
	int r;

	r = sr_parse_size(s, &u);
	check_rc(r);
	if (r == 0)
		size_round_trip(u);
	r = sr_parse_duration(s, &u);
	check_rc(r);
	if (r == 0)
		duration_round_trip(u);
	r = sr_parse_cpus(s, &m);
	check_rc(r);
	if (r == 0) {
		FUZZ_CHECK(m <= SR_CPUS_MAX_MILLI);
		cpus_round_trip(m);
	}
	r = sr_parse_count(s, &u);
	check_rc(r);
	r = sr_parse_bool(s, &b);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	check_dest(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size > 512)
		return -1;
	s = fuzz_strndup(data, size);
	check_text(s);
	free(s);
	if (size >= sizeof(uint64_t)) {
		uint64_t v;

		memcpy(&v, data, sizeof(v));
		size_round_trip(v);
		duration_round_trip(v);
		cpus_round_trip((uint32_t)(v % (SR_CPUS_MAX_MILLI + 1)));
		/* Small values and exact multiples are where unit choice happens. */
		size_round_trip(v >> (v & 63));
		duration_round_trip((v >> 32) * 1000);
		duration_round_trip((v >> 40) * 3600 * 1000);
	}
	return 0;
}
