/* SPDX-License-Identifier: MIT */
/*
 * The pure logic of getting work out: SHA-256, unified diffs, the changes
 * manifest and its checks against crafted input, the disk's sizing.
 */
#include "changes.h"
#include "disk.h"
#include "sha256.h"
#include "testutil.h"
#include "udiff.h"
#include "util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sha_of(const char *s, size_t n, char hex[SR_SHA256_HEX_LEN + 1])
{
	struct sr_sha256 h;

	sr_sha256_init(&h);
	sr_sha256_update(&h, s, n);
	sr_sha256_hex(&h, hex);
}

START_TEST(test_sha256_vectors)
{
	char hex[SR_SHA256_HEX_LEN + 1];
	struct sr_sha256 h;
	static char million[1000000];

	/* FIPS 180-4 examples. */
	sha_of("", 0, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha_of("abc", 3, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* A million 'a's, fed in uneven pieces: the buffering across blocks. */
	memset(million, 'a', sizeof(million));
	sr_sha256_init(&h);
	for (size_t i = 0, step = 1; i < sizeof(million); i += step, step = step % 97 + 1)
		sr_sha256_update(&h, million + i,
				 i + step > sizeof(million) ? sizeof(million) - i : step);
	sr_sha256_hex(&h, hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

static char *diff_text(const char *a, const char *b, struct sr_udiff_stat *st)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	ck_assert_int_eq(sr_udiff(a, strlen(a), b, strlen(b), "a/x", "b/x", 3, f, st), 0);
	fclose(f);
	return out;
}

START_TEST(test_udiff)
{
	struct sr_udiff_stat st;
	char *d;

	d = diff_text("same\n", "same\n", &st);
	ck_assert_str_eq(d, "");
	ck_assert_uint_eq(st.added + st.removed, 0);
	free(d);

	d = diff_text("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n", &st);
	ck_assert_str_eq(d,
			 "--- a/x\n+++ b/x\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
	ck_assert_uint_eq(st.added, 1);
	ck_assert_uint_eq(st.removed, 1);
	free(d);

	/* New and gone files; a last line without its newline. */
	d = diff_text("", "a\nb", &st);
	ck_assert_str_eq(
	    d, "--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n");
	free(d);
	d = diff_text("a\n", "", &st);
	ck_assert_str_eq(d, "--- a/x\n+++ b/x\n@@ -1,1 +0,0 @@\n-a\n");
	ck_assert_uint_eq(st.removed, 1);
	free(d);

	/* Two changes far apart: two hunks. */
	d = diff_text("a\n1\n2\n3\n4\n5\n6\n7\n8\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\n8\nB\n", &st);
	ck_assert_str_eq(d, "--- a/x\n+++ b/x\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n"
			    "@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-b\n+B\n");
	free(d);
	ck_assert(sr_udiff_is_text("plain", 5));
	ck_assert(!sr_udiff_is_text("bi\0n", 4));
}
END_TEST

/* Past the edit bound the middle is replaced whole: still a correct diff. */
START_TEST(test_udiff_bound)
{
	size_t n = 3 * SR_UDIFF_MAX_EDITS;
	char *a = malloc(n * 2 + 1), *b = malloc(n * 2 + 1);
	struct sr_udiff_stat st;

	for (size_t i = 0; i < n; i++) {
		memcpy(a + 2 * i, "a\n", 2);
		memcpy(b + 2 * i, "b\n", 2);
	}
	a[2 * n] = b[2 * n] = '\0';
	ck_assert_int_eq(sr_udiff(a, 2 * n, b, 2 * n, "a", "b", 3, NULL, &st), 0);
	ck_assert_uint_eq(st.added, n);
	ck_assert_uint_eq(st.removed, n);
	free(a);
	free(b);
}
END_TEST

START_TEST(test_paths)
{
	ck_assert(sr_changes_path_ok("a"));
	ck_assert(sr_changes_path_ok("src/a.c"));
	ck_assert(sr_changes_path_ok("..hidden/x..y"));
	ck_assert(!sr_changes_path_ok(""));
	ck_assert(!sr_changes_path_ok("/etc/passwd"));
	ck_assert(!sr_changes_path_ok("../x"));
	ck_assert(!sr_changes_path_ok("a/../../x"));
	ck_assert(!sr_changes_path_ok("a//b"));
	ck_assert(!sr_changes_path_ok("a/./b"));
	ck_assert(!sr_changes_path_ok("a/"));
	ck_assert(!sr_changes_path_ok("."));
}
END_TEST

#define SHA_A "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"

static const char *parse_error(const char *json)
{
	static struct sr_error err;
	struct sr_changes c = {0};

	memset(&err, 0, sizeof(err));
	if (sr_changes_manifest_parse(json, strlen(json), &c, &err) == 0) {
		sr_changes_free(&c);
		return "";
	}
	return err.msg;
}

START_TEST(test_manifest_round_trip)
{
	struct sr_change v[2] = {
	    {.path = (char *)"gone.txt",
	     .op = SR_CHANGE_DELETED,
	     .base = {.type = SR_CHANGE_FILE, .mode = 0644, .size = 1, .sha256 = SHA_A}},
	    {.path = (char *)"src/a.c",
	     .op = SR_CHANGE_MODIFIED,
	     .node = {.type = SR_CHANGE_FILE, .mode = 0755, .size = 1, .sha256 = SHA_A},
	     .base = {.type = SR_CHANGE_LINK, .mode = 0777, .target = (char *)"b.c"},
	     .host_changed = true},
	};
	struct sr_changes in = {
	    .sandbox_id = "0123", .base_time_ns = 1795698452000000000LL, .v = v, .n = 2};
	struct sr_changes out = {0};
	struct sr_error err = {0};
	char *json = NULL;
	size_t len = 0;

	ck_assert_int_eq(sr_changes_manifest_json(&in, &json, &len), 0);
	ck_assert_ptr_nonnull(strstr(json, "\"workspace\":null"));
	ck_assert_ptr_nonnull(strstr(json, "\"base_time\":\"2026-11-26T"));
	ck_assert_msg(sr_changes_manifest_parse(json, len, &out, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(out.n, 2);
	ck_assert_str_eq(out.v[1].path, "src/a.c");
	ck_assert_int_eq(out.v[1].op, SR_CHANGE_MODIFIED);
	ck_assert_uint_eq(out.v[1].node.mode, 0755);
	ck_assert_str_eq(out.v[1].node.sha256, SHA_A);
	ck_assert_int_eq(out.v[1].base.type, SR_CHANGE_LINK);
	ck_assert_str_eq(out.v[1].base.target, "b.c");
	ck_assert(out.v[1].host_changed);
	ck_assert_ptr_eq(sr_changes_find(&out, "gone.txt"), &out.v[0]);
	ck_assert_ptr_null(sr_changes_find(&out, "nope"));
	sr_changes_free(&out);
	free(json);
}
END_TEST

/* What a crafted manifest may try: every one refused, saying what. */
START_TEST(test_manifest_crafted)
{
#define M(changes)                                                                                 \
	"{\"kind\":\"sandbox-run-changes\",\"version\":1,\"workspace\":null,\"changes\":[" changes \
	"]}"
	ck_assert_str_eq(parse_error(M("")), "");
	ck_assert_str_eq(parse_error("{\"kind\":\"x\"}"), "not a changes file of sandbox-run's");
	ck_assert_str_eq(parse_error("[1]"), "not a changes file of sandbox-run's");
	ck_assert_str_eq(parse_error("{\"kind\":\"sandbox-run-changes\",\"version\":2}"),
			 "a changes file of another version (this sandbox-run reads 1)");
	ck_assert_str_eq(
	    parse_error(M("{\"path\":\"../../etc/cron.d/x\",\"op\":\"added\",\"type\":\"dir\","
			  "\"mode\":\"0755\"}")),
	    "changes: a path that is absolute, empty or holds '..' (a crafted file?)");
	ck_assert_str_eq(parse_error(M("{\"path\":\"/etc/passwd\",\"op\":\"deleted\"}")),
			 "changes: a path that is absolute, empty or holds '..' (a crafted file?)");
	/* A link's target is data (apply follows none): absolute or climbing, as git keeps it. */
	ck_assert_str_eq(parse_error(M("{\"path\":\"l\",\"op\":\"added\",\"type\":\"symlink\","
				       "\"mode\":\"0777\",\"target\":\"/usr/bin/python3\"}")),
			 "");
	ck_assert_str_eq(parse_error(M("{\"path\":\"a/l\",\"op\":\"added\",\"type\":\"symlink\","
				       "\"mode\":\"0777\",\"target\":\"../../x\"}")),
			 "");
	ck_assert_str_eq(parse_error(M("{\"path\":\"d\",\"op\":\"added\",\"type\":\"chardev\","
				       "\"mode\":\"0644\"}")),
			 "changes: d: no known type");
	ck_assert_str_eq(parse_error(M("{\"path\":\"f\",\"op\":\"added\",\"type\":\"file\","
				       "\"mode\":\"0644\",\"size\":1,\"sha256\":\"xyz\"}")),
			 "changes: f: bad sha256");
	ck_assert_str_eq(parse_error(M("{\"path\":\"f\",\"op\":\"added\",\"type\":\"file\","
				       "\"mode\":\"99999\",\"size\":1,\"sha256\":\"" SHA_A "\"}")),
			 "changes: f: bad mode");
	ck_assert_str_eq(parse_error(M("{\"path\":\"f\",\"op\":\"moved\"}")),
			 "changes: f: no known op");
	ck_assert_str_eq(
	    parse_error(M("{\"path\":\"f\",\"op\":\"deleted\",\"base\":{\"type\":"
			  "\"dir\",\"mode\":\"0755\"}},{\"path\":\"f\",\"op\":"
			  "\"deleted\",\"base\":{\"type\":\"dir\",\"mode\":\"0755\"}}")),
	    "changes: f is listed twice");
#undef M
}
END_TEST

START_TEST(test_disk_inodes)
{
	/* As mke2fs sizes ext4 and tmpfs's nr_inodes has always been: 655,360 for 10G. */
	ck_assert_uint_eq(sr_disk_inodes(UINT64_C(10) << 30), 655360);
	ck_assert_uint_eq(sr_disk_inodes(UINT64_C(256) << 20), 65536);
	ck_assert_uint_eq(sr_disk_inodes(UINT64_C(1) << 20), 4096);
	ck_assert_uint_eq(sr_disk_inodes(0), 0);
}
END_TEST

static Suite *changes_suite(void)
{
	Suite *s = suite_create("changes");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_sha256_vectors);
	tcase_add_test(tc, test_udiff);
	tcase_add_test(tc, test_udiff_bound);
	tcase_add_test(tc, test_paths);
	tcase_add_test(tc, test_manifest_round_trip);
	tcase_add_test(tc, test_manifest_crafted);
	tcase_add_test(tc, test_disk_inodes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(changes_suite());
}
