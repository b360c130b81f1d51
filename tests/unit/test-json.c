/* SPDX-License-Identifier: MIT */
#include "json.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <stdbool.h>
#include <locale.h>

static char *sanitize(const char *s)
{
	static char buf[512];
	_cleanup_free_ char *out = NULL;

	ck_assert_int_eq(sr_utf8_sanitize(s, &out), 0);
	snprintf(buf, sizeof(buf), "%s", out);
	return buf;
}

/* s as a JSON string literal, the way every writer dumps it. */
static char *quoted(const char *s)
{
	static char buf[512];
	_cleanup_(sr_json_decrefp) json_t *j = sr_json_string(s);
	_cleanup_free_ char *out = NULL;

	ck_assert_ptr_nonnull(j);
	out = json_dumps(j, SR_JSON_DUMP_FLAGS);
	ck_assert_ptr_nonnull(out);
	snprintf(buf, sizeof(buf), "%s", out);
	return buf;
}

#define FFFD "\xef\xbf\xbd"

START_TEST(test_sanitize_valid)
{
	/* Valid UTF-8 of every length passes through unchanged. */
	ck_assert_str_eq(sanitize(""), "");
	ck_assert_str_eq(sanitize("plain \x01\x7f"), "plain \x01\x7f");
	ck_assert_str_eq(sanitize("caf\xc3\xa9"), "caf\xc3\xa9");
	ck_assert_str_eq(sanitize("\xe2\x82\xac 5"), "\xe2\x82\xac 5");
	ck_assert_str_eq(sanitize("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");
	ck_assert_str_eq(sanitize("\xf4\x8f\xbf\xbf"), "\xf4\x8f\xbf\xbf");
	ck_assert_str_eq(sanitize(FFFD), FFFD);
}
END_TEST

START_TEST(test_sanitize_invalid)
{
	/* Each byte that begins no valid sequence is one U+FFFD. */
	ck_assert_str_eq(sanitize("a\x80z"), "a" FFFD "z");
	ck_assert_str_eq(sanitize("\xff\xfe"), FFFD FFFD);
	/* Overlong "/" and overlong 3-byte NUL. */
	ck_assert_str_eq(sanitize("\xc0\xaf"), FFFD FFFD);
	ck_assert_str_eq(sanitize("\xe0\x80\x80"), FFFD FFFD FFFD);
	/* UTF-16 surrogate D800 and a code point above U+10FFFF. */
	ck_assert_str_eq(sanitize("\xed\xa0\x80"), FFFD FFFD FFFD);
	ck_assert_str_eq(sanitize("\xf4\x90\x80\x80"), FFFD FFFD FFFD FFFD);
	/* A sequence cut short by the end of the string or by ASCII. */
	ck_assert_str_eq(sanitize("x\xe2\x82"), "x" FFFD FFFD);
	ck_assert_str_eq(sanitize("\xe2\x82z"), FFFD FFFD "z");
	/* The worst case: three bytes out for each byte in. */
	ck_assert_str_eq(sanitize("\x80\x80\x80\x80"), FFFD FFFD FFFD FFFD);
}
END_TEST

/*
 * Whether the sanitizer and jansson agree on in: what jansson takes is
 * kept as it is, what it refuses is changed, and the result it takes.
 */
static bool agrees_with_jansson(const char *in)
{
	json_t *as_is = json_string(in), *clean;
	char *out;
	bool ok;

	if (sr_utf8_sanitize(in, &out) < 0)
		return false;
	clean = json_string(out);
	ok = clean && (as_is ? strcmp(out, in) == 0 : strcmp(out, in) != 0);
	json_decref(as_is);
	json_decref(clean);
	free(out);
	return ok;
}

/*
 * sr_json_string() hands jansson what it deems valid unchecked: every
 * lead byte with every second byte and telling third and fourth ones.
 * One assertion at the end: Check's each costs a write to its pipe.
 */
START_TEST(test_sanitize_agrees_with_jansson)
{
	static const unsigned char tail[] = {0x00, 0x41, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0};
	char bad[16] = "";

	for (unsigned a = 0x80; a <= 0xff; a++)
		for (unsigned b = 0; b <= 0xff; b++)
			for (size_t c = 0; c < sizeof(tail); c++)
				for (size_t d = 0; d < sizeof(tail) && !bad[0]; d++) {
					char in[] = {(char)a, (char)b, (char)tail[c], (char)tail[d],
						     0};

					if (!agrees_with_jansson(in))
						snprintf(bad, sizeof(bad), "%02x %02x %02x %02x", a,
							 b, tail[c], tail[d]);
				}
	ck_assert_msg(!bad[0], "disagree on %s", bad);
}
END_TEST

START_TEST(test_string_escapes)
{
	ck_assert_str_eq(quoted(""), "\"\"");
	ck_assert_str_eq(quoted("plain text"), "\"plain text\"");
	ck_assert_str_eq(quoted("say \"hi\""), "\"say \\\"hi\\\"\"");
	ck_assert_str_eq(quoted("C:\\dir"), "\"C:\\\\dir\"");
	/* Neither '/' nor DEL is escaped. */
	ck_assert_str_eq(quoted("a/b"), "\"a/b\"");
	ck_assert_str_eq(quoted("\x7f"), "\"\x7f\"");
	/* Control characters: never raw, which would not be JSON. */
	ck_assert_str_eq(quoted("a\nb"), "\"a\\nb\"");
	ck_assert_str_eq(quoted("\t\r\b\f"), "\"\\t\\r\\b\\f\"");
	ck_assert_str_eq(quoted("\x01\x1f"), "\"\\u0001\\u001F\"");
	ck_assert_str_eq(quoted("\x1b[31mred"), "\"\\u001B[31mred\"");
	/* UTF-8 as it is; invalid bytes as U+FFFD, itself as UTF-8. */
	ck_assert_str_eq(quoted("caf\xc3\xa9 \xf0\x9f\x98\x80"),
			 "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
	ck_assert_str_eq(quoted("a\x80z\xc0\xaf"), "\"a" FFFD "z" FFFD FFFD "\"");
	ck_assert_str_eq(quoted(NULL), "null");
}
END_TEST

/* Output of a process: its NULs kept (\u0000), not the end of the text; its length's end a
 * sequence's. */
START_TEST(test_stringn)
{
	static const char out[] = "a\0b\xff"
				  "c\xe2\x82";
	_cleanup_(sr_json_decrefp) json_t *j = sr_json_stringn(out, sizeof(out) - 1);
	_cleanup_(sr_json_decrefp) json_t *two = sr_json_stringn("\xc3\xa9", 1);
	_cleanup_free_ char *dumped = NULL;

	ck_assert_ptr_nonnull(j);
	ck_assert_uint_eq(json_string_length(j), 1 + 1 + 1 + 3 + 1 + 3 + 3);
	dumped = json_dumps(j, SR_JSON_DUMP_FLAGS | JSON_ENCODE_ANY);
	ck_assert_str_eq(dumped, "\"a\\u0000b" FFFD "c" FFFD FFFD "\"");
	/* A valid sequence that the length cuts is none. */
	ck_assert_ptr_nonnull(two);
	ck_assert_str_eq(json_string_value(two), FFFD);
}
END_TEST

START_TEST(test_dump_line)
{
	_cleanup_(sr_json_decrefp) json_t *o = json_object();
	_cleanup_free_ char *line = NULL;

	/* Insertion order, not sorted, not hashed. */
	ck_assert_int_eq(json_object_set_new(o, "z", json_integer(-1)), 0);
	ck_assert_int_eq(json_object_set_new(o, "a", json_pack("[Ibn]", (json_int_t)INT64_MAX, 1)),
			 0);
	ck_assert_int_eq(json_object_set_new(o, "m", json_pack("{s:s}", "k", "v")), 0);
	ck_assert_int_eq(json_object_set_new(o, "b", sr_json_string("x\ny")), 0);
	ck_assert_int_eq(sr_json_dump_line(o, &line), 0);
	ck_assert_str_eq(line,
			 "{\"z\":-1,\"a\":[9223372036854775807,true,null],\"m\":{\"k\":\"v\"},"
			 "\"b\":\"x\\ny\"}\n");
}
END_TEST

static char *real_text(double v)
{
	static char buf[64];
	_cleanup_(sr_json_decrefp) json_t *j = json_real(v);
	_cleanup_free_ char *line = NULL;

	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(sr_json_dump_line(j, &line), 0);
	snprintf(buf, sizeof(buf), "%.*s", (int)strlen(line) - 1, line);
	return buf;
}

static void check_reals(void)
{
	/* Up to 15 significant digits print as the decimal they stand for. */
	ck_assert_str_eq(real_text(12.3), "12.3");
	ck_assert_str_eq(real_text(4.0), "4.0");
	ck_assert_str_eq(real_text(0.125), "0.125");
	ck_assert_str_eq(real_text(2126 / 1000.0), "2.126");
	ck_assert_str_eq(real_text(0.001), "0.001");
	ck_assert_str_eq(real_text(0.5), "0.5");
	ck_assert_str_eq(real_text(1000.5), "1000.5");
	ck_assert_str_eq(real_text(0.1 + 0.2), "0.3");
	ck_assert_str_eq(real_text(123456789012.345), "123456789012.345");
	ck_assert_str_eq(real_text(999999999999999.0), "999999999999999.0");
	/* Beyond: rounded to 15 digits; from 1e15 in exponent form (still JSON). */
	ck_assert_str_eq(real_text(1234567890123.456), "1234567890123.46");
	ck_assert_str_eq(real_text(1e15), "1e15");
}

START_TEST(test_dump_document)
{
	_cleanup_(sr_json_decrefp) json_t *j =
	    json_pack("{s:[i, s], s:{}, s:s}", "b", 1, "x", "e", "a", "\x1b");
	_cleanup_free_ char *text = NULL;

	/* Two spaces a level, keys in order, escapes as in one line. */
	ck_assert_int_eq(sr_json_dump_document(j, &text), 0);
	ck_assert_str_eq(text, "{\n  \"b\": [\n    1,\n    \"x\"\n  ],\n  \"e\": {},\n"
			       "  \"a\": \"\\u001B\"\n}\n");
}
END_TEST

START_TEST(test_reals)
{
	check_reals();
}
END_TEST

/* Where a "%g" writes "12,3", JSON with it would be invalid. */
START_TEST(test_reals_comma_locale)
{
	_cleanup_(sr_json_decrefp) json_t *j = NULL;

	sr_test_comma_locale(sr_test_basedir);
	check_reals();
	/* Reading too: jansson's strtod gets the locale's decimal point. */
	ck_assert_int_eq(sr_json_parse("[1.5]", 5, 0, 4, &j), 0);
	ck_assert(json_real_value(json_array_get(j, 0)) == 1.5);
}
END_TEST

static int parse(const char *text, size_t flags, unsigned depth)
{
	json_t *j = (json_t *)0x1;
	int k = sr_json_parse(text, strlen(text), flags, depth, &j);

	if (k == 0)
		json_decref(j);
	else
		ck_assert_ptr_eq(j, (json_t *)0x1);
	return k;
}

START_TEST(test_parse)
{
	_cleanup_(sr_json_decrefp) json_t *j = NULL;

	ck_assert_int_eq(parse("{\"a\":[1,{\"b\":null}]}", 0, 3), 0);
	ck_assert_int_eq(parse(" [] ", 0, 1), 0);
	/* Not JSON, or not valid UTF-8. */
	ck_assert_int_eq(parse("", 0, 8), -EINVAL);
	ck_assert_int_eq(parse("{} x", 0, 8), -EINVAL);
	ck_assert_int_eq(parse("[\"\xff\"]", 0, 8), -EINVAL);
	ck_assert_int_eq(parse("[\"\xed\xa0\x80\"]", 0, 8), -EINVAL);
	/* A bare scalar only with JSON_DECODE_ANY; \u0000 only with JSON_ALLOW_NUL. */
	ck_assert_int_eq(parse("1", 0, 8), -EINVAL);
	ck_assert_int_eq(parse("1", JSON_DECODE_ANY, 8), 0);
	ck_assert_int_eq(parse("[\"\\u0000\"]", 0, 8), -EINVAL);
	ck_assert_int_eq(parse("[\"\\u0000\"]", JSON_ALLOW_NUL, 8), 0);
	/* Depth: arrays and objects alike, the top level included. */
	ck_assert_int_eq(parse("[[{\"a\":[]}]]", 0, 4), 0);
	ck_assert_int_eq(parse("[[{\"a\":[]}]]", 0, 3), -EINVAL);
	ck_assert_int_eq(parse("[[{\"a\":[1]}],[]]", 0, 3), -EINVAL);
	ck_assert_int_eq(parse("[1,[2,[3]],{\"a\":{}}]", 0, 3), 0);
	/* len is honoured: no terminator is needed, nothing past it read. */
	ck_assert_int_eq(sr_json_parse("[1]garbage", 3, 0, 1, &j), 0);
	ck_assert_int_eq(json_integer_value(json_array_get(j, 0)), 1);
}
END_TEST

static void write_file(int dir, const char *name, const char *text)
{
	_cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

START_TEST(test_read_object_at)
{
	_cleanup_close_ int dir = open(sr_test_basedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_(sr_json_decrefp) json_t *j = NULL;

	ck_assert_int_ge(dir, 0);
	write_file(dir, "ok.json", "{\"a\":[1]}");
	j = sr_json_read_object_at(dir, "ok.json", 9, 2);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(j, "a"), 0)), 1);
	/* One byte longer than max: refused, not cut and parsed. */
	ck_assert_ptr_null(sr_json_read_object_at(dir, "ok.json", 8, 2));
	ck_assert_ptr_null(sr_json_read_object_at(dir, "ok.json", 9, 1));
	ck_assert_ptr_null(sr_json_read_object_at(dir, "missing.json", 64, 8));
	write_file(dir, "array.json", "[1]");
	ck_assert_ptr_null(sr_json_read_object_at(dir, "array.json", 64, 8));
	write_file(dir, "empty.json", "");
	ck_assert_ptr_null(sr_json_read_object_at(dir, "empty.json", 64, 8));
	write_file(dir, "bad.json", "{\"a\":");
	ck_assert_ptr_null(sr_json_read_object_at(dir, "bad.json", 64, 8));
	/* A symlink in its place is not followed. */
	ck_assert_int_eq(symlinkat("ok.json", dir, "link.json"), 0);
	ck_assert_ptr_null(sr_json_read_object_at(dir, "link.json", 64, 8));
}
END_TEST

static Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("json");

	tcase_add_unchecked_fixture(tc, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_test(tc, test_sanitize_valid);
	tcase_add_test(tc, test_sanitize_invalid);
	tcase_add_test(tc, test_sanitize_agrees_with_jansson);
	tcase_add_test(tc, test_string_escapes);
	tcase_add_test(tc, test_stringn);
	tcase_add_test(tc, test_dump_line);
	tcase_add_test(tc, test_dump_document);
	tcase_add_test(tc, test_reals);
	tcase_add_test(tc, test_reals_comma_locale);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_read_object_at);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(json_suite());
}
