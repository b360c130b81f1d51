/* SPDX-License-Identifier: MIT */
/*
 * The state directory without keepers: an entry reserved, its state.json
 * rewritten (in place, or beside a reader that holds the file) and read
 * back, and removed; entries found, hidden ones left out; the deployment
 * a state says.
 */
#include "config.h"
#include "state.h"
#include "testutil.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define ID "0123456789abcdef0123456789abcdef"

static char statedir[256];
static char *dir;
static int lock = -1;

static json_t *state_of(const char *s)
{
	return json_pack("{ssss}", "id", ID, "state", s);
}

/* A fresh state directory per test, with one entry reserved (its lock held, as a keeper's). */
static void setup(void)
{
	struct sr_error err = {0};
	json_t *st = state_of("creating");

	sr_test_mkdtemp(statedir, sizeof(statedir), sr_test_basedir, "t");
	ck_assert_msg(sr_state_reserve(statedir, ID, NULL, st, &dir, &lock, &err) == 0, "%s",
		      err.msg);
	json_decref(st);
}

static void teardown(void)
{
	free(dir);
	dir = NULL;
	if (lock >= 0)
		close(lock);
	lock = -1;
}

static ino_t ino_of(const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_ino;
}

static void write_state(const char *s)
{
	struct sr_error err = {0};
	json_t *st = state_of(s);

	ck_assert_msg(sr_state_write(dir, st, &err) == 0, "%s", err.msg);
	json_decref(st);
}

/* What ls reads of the one entry. */
static const char *listed_state(json_t **hold)
{
	struct sr_error err = {0};
	struct sr_entry *v = NULL;
	size_t n = 0;

	ck_assert_msg(sr_state_list(statedir, &v, &n, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(n, 1);
	ck_assert_ptr_nonnull(v[0].state);
	*hold = json_incref(v[0].state);
	for (size_t i = 0; i < n; i++)
		sr_entry_free(&v[i]);
	free(v);
	return json_string_value(json_object_get(*hold, "state"));
}

/* A rewrite makes no file: the directory's filesystem may be a disk where each costs. */
START_TEST(test_rewrite_in_place)
{
	ino_t before = ino_of("state.json");
	json_t *j;

	write_state("running");
	write_state("a longer state than the one before it");
	write_state("warm");
	ck_assert_uint_eq(ino_of("state.json"), before);
	ck_assert_str_eq(listed_state(&j), "warm");
	json_decref(j);
}
END_TEST

/* A reader that holds the file (its shared lock) reads it whole: the new text goes beside it. */
START_TEST(test_reader_keeps_its_text)
{
	char path[512], buf[256];
	ssize_t n;
	json_t *j;
	int fd;

	write_state("running");
	snprintf(path, sizeof(path), "%s/state.json", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_SH), 0);
	write_state("warm, and long enough to overwrite the old text's whole length");
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "\"running\""));
	close(fd);
	ck_assert_str_eq(listed_state(&j),
			 "warm, and long enough to overwrite the old text's whole length");
	json_decref(j);
	snprintf(path, sizeof(path), "%s/.state.json.tmp", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

/* A write cut short leaves its temporary file: the removal takes it too. */
START_TEST(test_remove_takes_the_temporary)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/.state.json.tmp", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{", f);
	fclose(f);
	sr_state_remove(dir, NULL);
	ck_assert_int_eq(access(dir, F_OK), -1);
}
END_TEST

/* An entry of id, its lock held (closed by the caller), its state st. */
static int reserve(const char *id, const char *name, const char *st)
{
	struct sr_error err = {0};
	json_t *j = json_pack("{ssss}", "id", id, "state", st);
	char *d = NULL;
	int fd = -1;

	ck_assert_msg(sr_state_reserve(statedir, id, name, j, &d, &fd, &err) == 0, "%s", err.msg);
	json_decref(j);
	free(d);
	return fd;
}

static bool warm(void *ctx, const struct sr_entry *e)
{
	(void)ctx;
	return strcmp(json_string_value(json_object_get(e->state, "state")), "warm") == 0;
}

/*
 * What the API resolves: a hidden entry (a pool's warm one) counts for
 * nothing, not for a prefix it shares with another (the CLI still
 * counts it: ambiguous), nor by its id or its name, which are answered
 * as unknown ones are.
 */
START_TEST(test_find_hidden)
{
	const char *hidden = "0123456789abcdef0000000000000000";
	struct sr_error err = {0};
	struct sr_entry e = {0};
	int fd = reserve(hidden, "hid", "warm");

	ck_assert_int_eq(sr_state_find(statedir, "0123", &e, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "'0123' is the start of 2 sandboxes' ids: give more of it");
	ck_assert_int_eq(sr_state_find_if(statedir, "0123", warm, NULL, &e, &err), 0);
	ck_assert_str_eq(e.id, ID);
	sr_entry_free(&e);
	ck_assert_int_eq(sr_state_find(statedir, hidden, &e, &err), 0);
	ck_assert_str_eq(e.id, hidden);
	sr_entry_free(&e);
	ck_assert_int_eq(sr_state_find_if(statedir, "0123456789abcdef00", warm, NULL, &e, &err),
			 -ENOENT);
	ck_assert_int_eq(sr_state_find_if(statedir, "hid", warm, NULL, &e, &err), -ENOENT);
	ck_assert_int_eq(sr_state_find_if(statedir, hidden, warm, NULL, &e, &err), -ENOENT);
	ck_assert_str_eq(err.msg, "no sandbox '0123456789abcdef0000000000000000' (sandbox-run ls "
				  "lists them)");
	close(fd);
}
END_TEST

/* The deployment a state is shown with: {"name", "version"} as a string of JSON. */
static char *shown(const char *state)
{
	json_t *st = json_loads(state, 0, NULL), *d;
	char *s;

	ck_assert_ptr_nonnull(st);
	sr_state_add_deployment(st);
	d = json_object_get(st, "deployment");
	s = d ? json_dumps(d, JSON_ENCODE_ANY) : strdup("absent");
	json_decref(st);
	return s;
}

/*
 * The deployment a sandbox runs is what its keeper wrote, never a guess
 * from where its profile lies: a profile at a deployment's config.ini in
 * this user's data directory (`create --profile` on it: a plain sandbox,
 * with no secrets and no app) was shown as that deployment's, and a real
 * one's, on a path that said nothing, as none.
 */
START_TEST(test_deployment_written)
{
	char data[256], profile[512], state[1024];
	char *s;

	sr_test_mkdtemp(data, sizeof(data), sr_test_basedir, "data");
	ck_assert_int_eq(setenv(SR_DATA_DIR_ENV, data, 1), 0);
	snprintf(profile, sizeof(profile), "%s/deployments/p/versions/1/config.ini", data);
	snprintf(state, sizeof(state), "{\"profile\": \"%s\"}", profile);
	s = shown(state);
	ck_assert_str_eq(s, "null");
	free(s);
	snprintf(state, sizeof(state), "{\"profile\": \"%s\", \"deployment\": null}", profile);
	s = shown(state);
	ck_assert_str_eq(s, "null");
	free(s);
	s = shown("{\"profile\": \"/p.ini\", \"deployment\": {\"name\": \"p\", \"version\": 2}}");
	ck_assert_str_eq(s, "{\"name\": \"p\", \"version\": 2}");
	free(s);
	/* What no keeper writes is none. */
	s = shown(
	    "{\"profile\": \"/p.ini\", \"deployment\": {\"name\": \"../p\", \"version\": 2}}");
	ck_assert_str_eq(s, "null");
	free(s);
	s = shown("{\"profile\": \"/p.ini\", \"deployment\": {\"name\": \"p\", \"version\": 0}}");
	ck_assert_str_eq(s, "null");
	free(s);
	s = shown(
	    "{\"profile\": \"/p.ini\", \"deployment\": {\"name\": \"p\", \"version\": \"2\"}}");
	ck_assert_str_eq(s, "null");
	free(s);
	/* No sandbox's state (no "profile"): left as it is. */
	s = shown("{\"id\": \"x\"}");
	ck_assert_str_eq(s, "absent");
	free(s);
	unsetenv(SR_DATA_DIR_ENV);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("state");

	tcase_add_unchecked_fixture(tc, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rewrite_in_place);
	tcase_add_test(tc, test_reader_keeps_its_text);
	tcase_add_test(tc, test_remove_takes_the_temporary);
	tcase_add_test(tc, test_find_hidden);
	tcase_add_test(tc, test_deployment_written);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(suite());
}
