/* SPDX-License-Identifier: MIT */
#include "units.h"

#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <strings.h>

/* 10^19 is the largest power of ten below 2^64. */
#define FRAC_DIGITS_MAX 19

struct decimal {
	uint64_t whole;
	uint64_t frac;	  /* the digits after '.', as an integer */
	unsigned n_frac;  /* how many of them */
	const char *rest; /* first character after the number */
};

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static uint64_t pow10_u64(unsigned n)
{
	uint64_t p = 1;

	while (n-- > 0)
		p *= 10;
	return p;
}

/*
 * DIGITS [ "." DIGITS ]: no sign, no blanks, no exponent, no hex; strtoull
 * would accept all of those, and "-1" would wrap to a huge limit.
 */
static int parse_decimal(const char *s, bool allow_frac, struct decimal *ret)
{
	struct decimal d = {};
	const char *p = s;

	if (!is_digit(*p))
		return -EINVAL;
	for (; is_digit(*p); p++) {
		if (__builtin_mul_overflow(d.whole, 10, &d.whole) ||
		    __builtin_add_overflow(d.whole, (uint64_t)(*p - '0'), &d.whole))
			return -ERANGE;
	}
	if (*p == '.' && allow_frac) {
		p++;
		if (!is_digit(*p))
			return -EINVAL;
		for (; is_digit(*p); p++) {
			if (d.n_frac == FRAC_DIGITS_MAX)
				return -EINVAL;
			d.frac = d.frac * 10 + (uint64_t)(*p - '0');
			d.n_frac++;
		}
	}
	d.rest = p;
	*ret = d;
	return 0;
}

/* whole * mult + floor(0.frac * mult), or -ERANGE. */
static int decimal_scale(const struct decimal *d, uint64_t mult, uint64_t *ret)
{
	unsigned __int128 part;
	uint64_t v;

	if (__builtin_mul_overflow(d->whole, mult, &v))
		return -ERANGE;
	part = (unsigned __int128)d->frac * mult / pow10_u64(d->n_frac);
	if (part > UINT64_MAX || __builtin_add_overflow(v, (uint64_t)part, &v))
		return -ERANGE;
	if (v == 0 && (d->whole != 0 || d->frac != 0))
		return -ERANGE;
	*ret = v;
	return 0;
}

static int size_multiplier(const char *unit, uint64_t *ret)
{
	static const char prefixes[] = "kmgt";
	const char *p;
	uint64_t mult = 1;

	if (*unit == '\0' || strcasecmp(unit, "b") == 0) {
		*ret = 1;
		return 0;
	}
	p = strchr(prefixes, tolower((unsigned char)unit[0]));
	if (!p)
		return -EINVAL;
	if (unit[1] != '\0' && strcasecmp(unit + 1, "b") != 0 && strcasecmp(unit + 1, "ib") != 0)
		return -EINVAL;
	for (long i = 0; i <= p - prefixes; i++)
		mult <<= 10;
	*ret = mult;
	return 0;
}

int sr_parse_size(const char *s, uint64_t *ret_bytes)
{
	struct decimal d;
	uint64_t mult, v;
	int r;

	r = parse_decimal(s, true, &d);
	if (r < 0)
		return r;
	r = size_multiplier(d.rest, &mult);
	if (r < 0)
		return r;
	if (mult == 1 && d.n_frac > 0)
		return -EINVAL;
	r = decimal_scale(&d, mult, &v);
	if (r < 0)
		return r;
	*ret_bytes = v;
	return 0;
}

int sr_parse_duration(const char *s, uint64_t *ret_ms)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = {
	    {"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"h", 3600 * 1000},
	};
	struct decimal d;
	uint64_t v;
	int r;

	r = parse_decimal(s, true, &d);
	if (r < 0)
		return r;
	for (size_t i = 0; i < SR_ARRAY_SIZE(units); i++) {
		if (strcasecmp(d.rest, units[i].unit) != 0)
			continue;
		r = decimal_scale(&d, units[i].ms, &v);
		if (r < 0)
			return r;
		*ret_ms = v;
		return 0;
	}
	return -EINVAL;
}

int sr_parse_cpus(const char *s, uint32_t *ret_milli)
{
	struct decimal d;
	uint64_t v;
	int r;

	r = parse_decimal(s, true, &d);
	if (r < 0)
		return r;
	if (*d.rest != '\0' || d.n_frac > 3)
		return -EINVAL;
	if (d.whole > SR_CPUS_MAX_MILLI / 1000)
		return -ERANGE;
	v = d.whole * 1000 + d.frac * pow10_u64(3 - d.n_frac);
	if (v > SR_CPUS_MAX_MILLI)
		return -ERANGE;
	*ret_milli = (uint32_t)v;
	return 0;
}

int sr_parse_count(const char *s, uint64_t *ret)
{
	struct decimal d;
	int r;

	r = parse_decimal(s, false, &d);
	if (r < 0)
		return r;
	if (*d.rest != '\0')
		return -EINVAL;
	*ret = d.whole;
	return 0;
}

int sr_parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = {"1", "true", "yes", "on"};
	static const char *const no[] = {"0", "false", "no", "off"};

	for (size_t i = 0; i < SR_ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(s[i]))
			return false;
	return n > 0;
}

static bool host_name_valid(const char *h)
{
	size_t len = strlen(h);
	bool numeric = true;
	size_t last_len = 0;

	if (len > 0 && h[len - 1] == '.')
		len--;
	if (len == 0 || len > 253)
		return false;
	for (const char *label = h; label < h + len;) {
		size_t n = strcspn(label, ".");

		if (label + n > h + len)
			n = (size_t)(h + len - label);
		if (n == 0 || n > 63 || label[0] == '-' || label[n - 1] == '-')
			return false;
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)label[i]) && label[i] != '-')
				return false;
		numeric = numeric && all_digits(label, n);
		last_len = n;
		label += n + 1;
	}
	/* A top-level label is never all digits (RFC 3696 2), so "1.2.3.999" is a bad address. */
	return !numeric && !all_digits(h + len - last_len, last_len);
}

static int parse_cidr(char *addr, const char *prefix, struct sr_dest *d)
{
	unsigned char orig[16];
	uint64_t bits;
	unsigned max;

	d->kind = strchr(addr, ':') ? SR_DEST_IPV6 : SR_DEST_IPV4;
	max = d->kind == SR_DEST_IPV4 ? 32 : 128;
	if (inet_pton(d->kind == SR_DEST_IPV4 ? AF_INET : AF_INET6, addr, d->addr) != 1 ||
	    sr_parse_count(prefix, &bits) < 0 || bits > max)
		return -EINVAL;
	d->prefix = (unsigned)bits;
	memcpy(orig, d->addr, sizeof(orig));
	for (unsigned i = 0; i < max / 8; i++) {
		unsigned keep = bits >= (i + 1) * 8 ? 8 : bits > i * 8 ? (unsigned)bits - i * 8 : 0;

		d->addr[i] &= (unsigned char)(0xff00u >> keep);
	}
	d->host_bits_set = memcmp(orig, d->addr, max / 8) != 0;
	return 0;
}

/* Splits "[v6]:port", "v6", "addr:port" or "addr" in place. */
static int split_port(char *buf, char **ret_addr, char **ret_port, bool *ret_bracketed)
{
	char *colon;

	*ret_port = NULL;
	*ret_bracketed = false;
	*ret_addr = buf;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close || (close[1] != '\0' && close[1] != ':'))
			return -EINVAL;
		*close = '\0';
		*ret_addr = buf + 1;
		*ret_port = close[1] == ':' ? close + 2 : NULL;
		*ret_bracketed = true;
		return 0;
	}
	colon = strchr(buf, ':');
	/* More than one ':' is a bare IPv6 address, which cannot carry a port. */
	if (colon && !strchr(colon + 1, ':')) {
		*colon = '\0';
		*ret_port = colon + 1;
	}
	return 0;
}

int sr_parse_dest(const char *s, struct sr_dest *ret)
{
	struct sr_dest d = {};
	char buf[300], *addr, *port, *slash;
	bool bracketed;
	uint64_t p = 0;
	int r;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	r = split_port(buf, &addr, &port, &bracketed);
	if (r < 0)
		return r;
	if (port && (sr_parse_count(port, &p) < 0 || p == 0 || p > 65535))
		return -ERANGE;
	d.port = (uint16_t)p;
	slash = strchr(addr, '/');
	if (slash) {
		*slash = '\0';
		r = parse_cidr(addr, slash + 1, &d);
		if (r < 0 || (bracketed && d.kind != SR_DEST_IPV6))
			return -EINVAL;
	} else if (inet_pton(AF_INET6, addr, d.addr) == 1) {
		d.kind = SR_DEST_IPV6;
		d.prefix = 128;
	} else if (bracketed) {
		return -EINVAL;
	} else if (inet_pton(AF_INET, addr, d.addr) == 1) {
		d.kind = SR_DEST_IPV4;
		d.prefix = 32;
	} else if (host_name_valid(addr)) {
		d.kind = SR_DEST_HOST;
		strcpy(d.host, addr);
	} else if (strncmp(addr, "*.", 2) == 0 && host_name_valid(addr + 2)) {
		d.kind = SR_DEST_HOST;
		d.wildcard = true;
		strcpy(d.host, addr + 2);
	} else {
		return -EINVAL;
	}
	*ret = d;
	return 0;
}

static int format_checked(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int format_checked(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		return -ENOBUFS;
	return 0;
}

int sr_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "TGMK";

	for (size_t i = 0; i < sizeof(units) - 1; i++) {
		unsigned shift = 10 * (unsigned)(sizeof(units) - 1 - i);

		if (bytes != 0 && bytes % (UINT64_C(1) << shift) == 0)
			return format_checked(buf, len, "%" PRIu64 "%c", bytes >> shift, units[i]);
	}
	return format_checked(buf, len, "%" PRIu64, bytes);
}

int sr_format_duration(uint64_t ms, char *buf, size_t len)
{
	if (ms == 0)
		return format_checked(buf, len, "0");
	if (ms % (3600 * 1000) == 0)
		return format_checked(buf, len, "%" PRIu64 "h", ms / (3600 * 1000));
	if (ms % 1000 == 0)
		return format_checked(buf, len, "%" PRIu64 "s", ms / 1000);
	return format_checked(buf, len, "%" PRIu64 "ms", ms);
}

int sr_format_cpus(uint32_t milli, char *buf, size_t len)
{
	uint32_t frac = milli % 1000;
	int digits = 3;

	if (frac == 0)
		return format_checked(buf, len, "%" PRIu32, milli / 1000);
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	return format_checked(buf, len, "%" PRIu32 ".%0*" PRIu32, milli / 1000, digits, frac);
}
