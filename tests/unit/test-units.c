/* SPDX-License-Identifier: MIT */
#include "units.h"
#include "testutil.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

static uint64_t size_ok(const char *s)
{
	uint64_t v = 12345;

	ck_assert_msg(sr_parse_size(s, &v) == 0, "size '%s' refused", s);
	return v;
}

static int size_err(const char *s)
{
	uint64_t v = 777;
	int r = sr_parse_size(s, &v);

	ck_assert_msg(r < 0, "size '%s' accepted", s);
	ck_assert_uint_eq(v, 777); /* untouched on failure */
	return r;
}

START_TEST(test_size_valid)
{
	ck_assert_uint_eq(size_ok("0"), 0);
	ck_assert_uint_eq(size_ok("4096"), 4096);
	ck_assert_uint_eq(size_ok("4096B"), 4096);
	ck_assert_uint_eq(size_ok("512K"), 512 * 1024);
	ck_assert_uint_eq(size_ok("512k"), 512 * 1024);
	ck_assert_uint_eq(size_ok("512M"), 512 * MiB);
	ck_assert_uint_eq(size_ok("512MiB"), 512 * MiB);
	ck_assert_uint_eq(size_ok("512mib"), 512 * MiB);
	ck_assert_uint_eq(size_ok("2G"), 2 * GiB);
	ck_assert_uint_eq(size_ok("2GB"), 2 * GiB);
	ck_assert_uint_eq(size_ok("1T"), 1024 * GiB);
	ck_assert_uint_eq(size_ok("1.5G"), 3 * GiB / 2);
	ck_assert_uint_eq(size_ok("0.5K"), 512);
}
END_TEST

START_TEST(test_size_invalid)
{
	ck_assert_int_eq(size_err(""), -EINVAL);
	ck_assert_int_eq(size_err("lots"), -EINVAL);
	ck_assert_int_eq(size_err("-1"), -EINVAL);
	ck_assert_int_eq(size_err("+1G"), -EINVAL);
	ck_assert_int_eq(size_err(" 1G"), -EINVAL);
	ck_assert_int_eq(size_err("1G "), -EINVAL);
	ck_assert_int_eq(size_err("1 G"), -EINVAL);
	ck_assert_int_eq(size_err("1X"), -EINVAL);
	ck_assert_int_eq(size_err("1GG"), -EINVAL);
	ck_assert_int_eq(size_err("1Gi"), -EINVAL);
	ck_assert_int_eq(size_err("0x10"), -EINVAL);
	ck_assert_int_eq(size_err("1e9"), -EINVAL);
	ck_assert_int_eq(size_err("1.5"), -EINVAL); /* a fraction of a byte */
	ck_assert_int_eq(size_err("1."), -EINVAL);
	ck_assert_int_eq(size_err(".5G"), -EINVAL);
	ck_assert_int_eq(size_err("99999999999999999999G"), -ERANGE);
	ck_assert_int_eq(size_err("99999999999999999999"), -ERANGE);
	ck_assert_int_eq(size_err("16777216T"), -ERANGE); /* 2^64 */
	ck_assert_int_eq(size_err("0.0001K"), -ERANGE);	  /* would round to 0 = unlimited */
}
END_TEST

START_TEST(test_size_limits)
{
	uint64_t v;

	ck_assert_int_eq(sr_parse_size("18446744073709551615", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(sr_parse_size("18446744073709551616", &v), -ERANGE);
	ck_assert_int_eq(sr_parse_size("16777215T", &v), 0);
	ck_assert_uint_eq(v, UINT64_C(16777215) << 40);
}
END_TEST

static uint64_t dur_ok(const char *s)
{
	uint64_t v = 12345;

	ck_assert_msg(sr_parse_duration(s, &v) == 0, "duration '%s' refused", s);
	return v;
}

START_TEST(test_duration)
{
	uint64_t v = 5;

	ck_assert_uint_eq(dur_ok("0"), 0);
	ck_assert_uint_eq(dur_ok("120"), 120000);
	ck_assert_uint_eq(dur_ok("90s"), 90000);
	ck_assert_uint_eq(dur_ok("90S"), 90000);
	ck_assert_uint_eq(dur_ok("1.5s"), 1500);
	ck_assert_uint_eq(dur_ok("1.0005s"), 1000);
	ck_assert_uint_eq(dur_ok("250ms"), 250);
	ck_assert_uint_eq(dur_ok("5m"), 300000);
	ck_assert_uint_eq(dur_ok("0.5m"), 30000);
	ck_assert_uint_eq(dur_ok("1h"), 3600000);
	ck_assert_uint_eq(dur_ok("0s"), 0);

	ck_assert_int_eq(sr_parse_duration("", &v), -EINVAL);
	ck_assert_int_eq(sr_parse_duration("soon", &v), -EINVAL);
	ck_assert_int_eq(sr_parse_duration("-5s", &v), -EINVAL);
	ck_assert_int_eq(sr_parse_duration("5d", &v), -EINVAL);
	ck_assert_int_eq(sr_parse_duration("5 s", &v), -EINVAL);
	ck_assert_int_eq(sr_parse_duration("1.5ms", &v), 0);
	ck_assert_uint_eq(v, 1);
	v = 5;
	ck_assert_int_eq(sr_parse_duration("0.5ms", &v), -ERANGE);
	ck_assert_int_eq(sr_parse_duration("99999999999999999999h", &v), -ERANGE);
	ck_assert_int_eq(sr_parse_duration("18446744073709551615s", &v), -ERANGE);
	ck_assert_uint_eq(v, 5);
}
END_TEST

START_TEST(test_cpus)
{
	uint32_t m = 7;

	ck_assert_int_eq(sr_parse_cpus("0", &m), 0);
	ck_assert_uint_eq(m, 0);
	ck_assert_int_eq(sr_parse_cpus("0.5", &m), 0);
	ck_assert_uint_eq(m, 500);
	ck_assert_int_eq(sr_parse_cpus("2", &m), 0);
	ck_assert_uint_eq(m, 2000);
	ck_assert_int_eq(sr_parse_cpus("1.25", &m), 0);
	ck_assert_uint_eq(m, 1250);
	ck_assert_int_eq(sr_parse_cpus("0.001", &m), 0);
	ck_assert_uint_eq(m, 1);
	ck_assert_int_eq(sr_parse_cpus("1024", &m), 0);
	ck_assert_uint_eq(m, 1024000);

	m = 7;
	ck_assert_int_eq(sr_parse_cpus("1024.001", &m), -ERANGE);
	ck_assert_int_eq(sr_parse_cpus("1025", &m), -ERANGE);
	ck_assert_int_eq(sr_parse_cpus("99999999999999999999", &m), -ERANGE);
	ck_assert_int_eq(sr_parse_cpus("0.0005", &m), -EINVAL);
	ck_assert_int_eq(sr_parse_cpus("-1", &m), -EINVAL);
	ck_assert_int_eq(sr_parse_cpus("two", &m), -EINVAL);
	ck_assert_int_eq(sr_parse_cpus("2c", &m), -EINVAL);
	ck_assert_int_eq(sr_parse_cpus("", &m), -EINVAL);
	ck_assert_uint_eq(m, 7);
}
END_TEST

START_TEST(test_count_bool)
{
	uint64_t v = 3;
	bool b = false;

	ck_assert_int_eq(sr_parse_count("1024", &v), 0);
	ck_assert_uint_eq(v, 1024);
	ck_assert_int_eq(sr_parse_count("0", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(sr_parse_count("1K", &v), -EINVAL);
	ck_assert_int_eq(sr_parse_count("1.5", &v), -EINVAL);
	ck_assert_int_eq(sr_parse_count("-1", &v), -EINVAL);
	ck_assert_int_eq(sr_parse_count("99999999999999999999", &v), -ERANGE);

	const char *yes[] = {"true", "TRUE", "yes", "1", "on", "On"};
	const char *no[] = {"false", "no", "0", "off", "OFF"};
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++) {
		b = false;
		ck_assert_int_eq(sr_parse_bool(yes[i], &b), 0);
		ck_assert(b);
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++) {
		b = true;
		ck_assert_int_eq(sr_parse_bool(no[i], &b), 0);
		ck_assert(!b);
	}
	ck_assert_int_eq(sr_parse_bool("maybe", &b), -EINVAL);
	ck_assert_int_eq(sr_parse_bool("", &b), -EINVAL);
	ck_assert_int_eq(sr_parse_bool("2", &b), -EINVAL);
}
END_TEST

START_TEST(test_format)
{
	char buf[SR_UNITS_BUF_MAX];

	ck_assert_int_eq(sr_format_size(0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "0");
	sr_format_size(2 * GiB, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2G");
	sr_format_size(1536 * MiB, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1536M");
	sr_format_size(4097, buf, sizeof(buf));
	ck_assert_str_eq(buf, "4097");
	sr_format_size(UINT64_C(1) << 40, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1T");
	sr_format_duration(120000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "120s");
	sr_format_duration(7200000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2h");
	sr_format_duration(1500, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1500ms");
	sr_format_duration(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0");
	sr_format_cpus(2000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2");
	sr_format_cpus(500, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.5");
	sr_format_cpus(1250, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1.25");
	sr_format_cpus(1, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0.001");
	ck_assert_int_eq(sr_format_size(UINT64_MAX, buf, 4), -ENOBUFS);
}
END_TEST

START_TEST(test_format_round_trip)
{
	const uint64_t sizes[] = {0,
				  1,
				  1023,
				  1024,
				  4097,
				  512 * 1024,
				  3 * GiB / 2,
				  10 * GiB,
				  UINT64_C(1) << 40,
				  UINT64_MAX,
				  UINT64_MAX - 1023};
	const uint64_t durations[] = {
	    0,	       1,      999,	1000,	  1500,
	    90000,     120000, 3600000, 86400000, UINT64_MAX / 1000 * 1000,
	    UINT64_MAX};
	const uint32_t cpus[] = {0, 1, 10, 100, 500, 999, 1000, 1250, 2000, 1024000};
	char buf[SR_UNITS_BUF_MAX];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		uint64_t v;

		ck_assert_int_eq(sr_format_size(sizes[i], buf, sizeof(buf)), 0);
		ck_assert_msg(sr_parse_size(buf, &v) == 0 && v == sizes[i], "size %s", buf);
	}
	for (size_t i = 0; i < sizeof(durations) / sizeof(*durations); i++) {
		uint64_t v;

		ck_assert_int_eq(sr_format_duration(durations[i], buf, sizeof(buf)), 0);
		ck_assert_msg(sr_parse_duration(buf, &v) == 0 && v == durations[i], "dur %s", buf);
	}
	for (size_t i = 0; i < sizeof(cpus) / sizeof(*cpus); i++) {
		uint32_t v;

		ck_assert_int_eq(sr_format_cpus(cpus[i], buf, sizeof(buf)), 0);
		ck_assert_msg(sr_parse_cpus(buf, &v) == 0 && v == cpus[i], "cpus %s", buf);
	}
}
END_TEST

START_TEST(test_dest)
{
	struct sr_dest d;

	ck_assert_int_eq(sr_parse_dest("example.com", &d), 0);
	ck_assert_int_eq(d.kind, SR_DEST_HOST);
	ck_assert_str_eq(d.host, "example.com");
	ck_assert_uint_eq(d.port, 0);

	ck_assert_int_eq(sr_parse_dest("api.example.com:443", &d), 0);
	ck_assert_int_eq(d.kind, SR_DEST_HOST);
	ck_assert_str_eq(d.host, "api.example.com");
	ck_assert_uint_eq(d.port, 443);

	ck_assert(!d.wildcard);

	ck_assert_int_eq(sr_parse_dest("*.example.com:8443", &d), 0);
	ck_assert_int_eq(d.kind, SR_DEST_HOST);
	ck_assert(d.wildcard);
	ck_assert_str_eq(d.host, "example.com");
	ck_assert_uint_eq(d.port, 8443);

	ck_assert_int_eq(sr_parse_dest("192.0.2.1", &d), 0);
	ck_assert_int_eq(d.kind, SR_DEST_IPV4);
	ck_assert_uint_eq(d.prefix, 32);
	ck_assert_uint_eq(d.addr[0], 192);
	ck_assert_uint_eq(d.addr[3], 1);

	ck_assert_int_eq(sr_parse_dest("10.0.0.0/8:53", &d), 0);
	ck_assert_int_eq(d.kind, SR_DEST_IPV4);
	ck_assert_uint_eq(d.prefix, 8);
	ck_assert_uint_eq(d.port, 53);
	ck_assert(!d.host_bits_set);

	ck_assert_int_eq(sr_parse_dest("10.1.2.3/8", &d), 0);
	ck_assert(d.host_bits_set);
	ck_assert_uint_eq(d.addr[1], 0);

	ck_assert_int_eq(sr_parse_dest("2001:db8::/32", &d), 0);
	ck_assert_int_eq(d.kind, SR_DEST_IPV6);
	ck_assert_uint_eq(d.prefix, 32);
	ck_assert_uint_eq(d.port, 0);

	ck_assert_int_eq(sr_parse_dest("[::1]:443", &d), 0);
	ck_assert_int_eq(d.kind, SR_DEST_IPV6);
	ck_assert_uint_eq(d.prefix, 128);
	ck_assert_uint_eq(d.port, 443);
	ck_assert_uint_eq(d.addr[15], 1);

	ck_assert_int_eq(sr_parse_dest("::1", &d), 0);
	ck_assert_int_eq(sr_parse_dest("localhost", &d), 0);
	ck_assert_int_eq(sr_parse_dest("x-1.example.", &d), 0);

	ck_assert_int_eq(sr_parse_dest("", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("1.2.3.999", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("1.2.3", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("-bad.example", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("under_score.example", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("a..b", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("*", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("*.", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("*.*.example.com", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("a.*.example.com", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("*example.com", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("*.10.0.0.1", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("10.0.0.0/33", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("10.0.0.0/", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("example.com/8", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("[1.2.3.4]:80", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("[::1", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("[::1]x", &d), -EINVAL);
	ck_assert_int_eq(sr_parse_dest("example.com:0", &d), -ERANGE);
	ck_assert_int_eq(sr_parse_dest("example.com:65536", &d), -ERANGE);
	ck_assert_int_eq(sr_parse_dest("example.com:https", &d), -ERANGE);
	ck_assert_int_eq(sr_parse_dest("[::1]:", &d), -ERANGE);
}
END_TEST

static Suite *units_suite(void)
{
	Suite *s = suite_create("units");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_size_valid);
	tcase_add_test(tc, test_size_invalid);
	tcase_add_test(tc, test_size_limits);
	tcase_add_test(tc, test_duration);
	tcase_add_test(tc, test_cpus);
	tcase_add_test(tc, test_count_bool);
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_format_round_trip);
	tcase_add_test(tc, test_dest);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(units_suite());
}
