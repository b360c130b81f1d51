/* SPDX-License-Identifier: MIT */
/*
 * Sizes, durations, CPU counts and network destinations as users write
 * them. Pure functions.
 *
 * Every parser takes the whole string (no surrounding blanks, no sign) and
 * returns 0, -EINVAL for text that is not a value of its kind, or -ERANGE
 * for a value too large for its type (the caller names the key and shows
 * an example of a good value).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * "0", "4096", "512K", "512M", "2G", "1T": binary multiples (K = 1024),
 * case-insensitive, optionally followed by "B" or "iB" ("512MiB", "2GB",
 * "4096B"). A decimal fraction is accepted with a unit and rounded down to
 * whole bytes ("1.5G" = 1610612736); a fraction of a byte ("1.5") is not.
 *
 * Sizes and durations: a non-zero value that would round down to 0 is
 * -ERANGE, because 0 means "unlimited" and must only be asked for as "0".
 */
int sr_parse_size(const char *s, uint64_t *ret_bytes);

/*
 * "0", "120" (seconds), "90s", "1.5s", "250ms", "5m", "1h"; ret in
 * milliseconds. Units are case-insensitive; fractions are rounded down to
 * whole milliseconds ("1.0005s" = 1000).
 */
int sr_parse_duration(const char *s, uint64_t *ret_ms);

/*
 * "0.5", "2", "1.25"; ret in thousandths of a CPU; "0" = unlimited. At most
 * three decimal places (a finer value would silently round to something
 * else, possibly to 0 = unlimited) and at most SR_CPUS_MAX_MILLI.
 */
#define SR_CPUS_MAX_MILLI (1024u * 1000u)
int sr_parse_cpus(const char *s, uint32_t *ret_milli);

/* A decimal integer count (pids); "0" = unlimited. */
int sr_parse_count(const char *s, uint64_t *ret);

/* true/false, yes/no, on/off, 1/0; case-insensitive. */
int sr_parse_bool(const char *s, bool *ret);

enum sr_dest_kind {
	SR_DEST_HOST,
	SR_DEST_IPV4,
	SR_DEST_IPV6,
	_SR_DEST_KIND_MAX,
};

struct sr_dest {
	enum sr_dest_kind kind;
	char host[256];		/* SR_DEST_HOST: the name as written (RFC 1123), without "*." */
	bool wildcard;		/* SR_DEST_HOST written "*.NAME": NAME's subdomains, not NAME */
	unsigned char addr[16]; /* IPv4 (first 4 bytes) / IPv6, host bits cleared */
	unsigned prefix;	/* 32 / 128 for a single address */
	uint16_t port;		/* 0: every port */
	bool host_bits_set;	/* "10.1.2.3/8": addr holds 10.0.0.0 */
};

/*
 * A network policy entry: "example.com", "192.0.2.1", "10.0.0.0/8",
 * "2001:db8::/32", each with an optional ":PORT"; an IPv6 address with a
 * port is written "[2001:db8::1]:443"; "*.example.com" stands for every name
 * beneath example.com. -ERANGE for a bad port, -EINVAL for anything else. A
 * name made only of numbers ("1.2.3.999") is a malformed address, not a
 * host name.
 */
int sr_parse_dest(const char *s, struct sr_dest *ret);

/*
 * Canonical forms that parse back to the same value: sizes in the largest
 * unit that divides them exactly ("2G", "1536M", "4097"); durations as
 * whole hours, else whole seconds, else milliseconds ("1h", "120s",
 * "1500ms"); CPUs as a decimal without trailing zeros ("2", "0.5"). Return
 * -ENOBUFS if buf is too small (32 bytes always suffice).
 */
#define SR_UNITS_BUF_MAX 32
int sr_format_size(uint64_t bytes, char *buf, size_t len);
int sr_format_duration(uint64_t ms, char *buf, size_t len);
int sr_format_cpus(uint32_t milli, char *buf, size_t len);
