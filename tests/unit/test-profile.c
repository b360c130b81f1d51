/* SPDX-License-Identifier: MIT */
#include "config.h"
#include "profile.h"
#include "testutil.h"
#include "util.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

static char tmpdir[64];
static char xdgdir[128];

static void setup(void)
{
	sr_test_mkdtemp(tmpdir, sizeof(tmpdir), "/tmp", "sr-test-profile");
	snprintf(xdgdir, sizeof(xdgdir), "%s/xdg", tmpdir);
	ck_assert_int_eq(mkdir(xdgdir, 0700), 0);
	/* Never let the tester's own ~/.config profiles leak into the results. */
	setenv("XDG_CONFIG_HOME", xdgdir, 1);
	/* Nor what a failed test_installed_layers left (teardown is skipped then). */
	sr_test_rmtree(SR_DATADIR);
}

static void teardown(void)
{
	sr_test_rmtree(tmpdir);
	/* This test's own "installed" profiles (Makefile.am), in the build tree. */
	sr_test_rmtree(SR_DATADIR);
}

/* Writes DIR/NAME; returns its path (static). */
static const char *write_at(const char *dir, const char *name, const char *text)
{
	static char path[2 * PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static const char *write_file(const char *rel, const char *text)
{
	return write_at(tmpdir, rel, text);
}

/* Makes the user's profile directory under XDG_CONFIG_HOME; returns it (static). */
static const char *user_profiles(void)
{
	static char dir[PATH_MAX + 64];

	snprintf(dir, sizeof(dir), "%s/sandbox-run", xdgdir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/sandbox-run/profiles", xdgdir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	return dir;
}

/* sr_profile_load of NAME into a fresh c (the caller frees it), with a fresh err. */
static int load_named(struct sr_config *c, const char *name, struct sr_error *err)
{
	memset(err, 0, sizeof(*err));
	sr_config_init(c);
	return sr_profile_load(c, name, err);
}

/* Loads text into a fresh config; returns the error message ("" on success). */
static const char *load_text(struct sr_config *c, const char *text)
{
	static struct sr_error err;

	memset(&err, 0, sizeof(err));
	sr_config_init(c);
	if (sr_profile_load_string(c, text, "t.ini", &err) < 0)
		return err.msg;
	return "";
}

static const char *load_error(const char *text)
{
	struct sr_config c;
	const char *msg = load_text(&c, text);

	sr_config_free(&c);
	ck_assert_msg(msg[0] != '\0', "profile accepted:\n%s", text);
	return msg;
}

START_TEST(test_good_profile)
{
	struct sr_config c;
	const char *msg = load_text(&c, "# a comment\n"
					"; another\n"
					"[profile]\n"
					"description = a test ; inline comment\n"
					"[limits]\n"
					"memory = 512M ; half a gig\n"
					"  cpus = 0.5\n"
					"pids=64\n"
					"timeout = 5m\n"
					"disk = 0\n"
					"strict = yes\n"
					"[network]\n"
					"mode = egress\n"
					"helper = pasta\n"
					"allow = 10.0.0.0/8\n"
					"allow = example.com:443\n"
					"deny = [2001:db8::1]:25\n"
					"[agent]\n"
					"entry =  python3  main.py \n");

	ck_assert_str_eq(msg, "");
	ck_assert_uint_eq(c.memory_bytes, 512 * MiB);
	ck_assert_uint_eq(c.cpus_milli, 500);
	ck_assert_uint_eq(c.pids, 64);
	ck_assert_uint_eq(c.timeout_ms, 300000);
	ck_assert_uint_eq(c.disk_bytes, 0);
	ck_assert(c.strict);
	ck_assert_int_eq(c.net, SR_NET_EGRESS);
	ck_assert_int_eq(c.net_helper, SR_NET_HELPER_PASTA);
	ck_assert_uint_eq(c.allow.n, 2);
	ck_assert_str_eq(c.allow.items[0], "10.0.0.0/8");
	ck_assert_str_eq(c.allow.items[1], "example.com:443");
	ck_assert_ptr_null(c.allow.items[2]);
	ck_assert_uint_eq(c.deny.n, 1);
	ck_assert_str_eq(c.deny.items[0], "[2001:db8::1]:25");
	ck_assert_str_eq(c.entry, "python3  main.py");
	ck_assert_ptr_null(c.profile); /* load_string leaves the name to the caller */
	sr_config_free(&c);
}
END_TEST

START_TEST(test_defaults)
{
	struct sr_config c;

	sr_config_init(&c);
	ck_assert_uint_eq(c.memory_bytes, 2 * GiB);
	ck_assert_uint_eq(c.cpus_milli, 2000);
	ck_assert_uint_eq(c.pids, 1024);
	ck_assert_uint_eq(c.timeout_ms, 120000);
	ck_assert_uint_eq(c.disk_bytes, 10 * GiB);
	ck_assert_int_eq(c.net, SR_NET_EGRESS);
	ck_assert(!c.strict);
	ck_assert_str_eq(sr_net_mode_to_string(SR_NET_NONE), "none");
	ck_assert_str_eq(sr_net_mode_to_string(SR_NET_EGRESS), "egress");
	ck_assert_ptr_null(sr_net_mode_to_string(_SR_NET_MODE_MAX));
	ck_assert_int_eq(c.net_helper, SR_NET_HELPER_AUTO);
	ck_assert_str_eq(sr_net_helper_to_string(SR_NET_HELPER_AUTO), "auto");
	ck_assert_str_eq(sr_net_helper_to_string(SR_NET_HELPER_SLIRP4NETNS), "slirp4netns");
	ck_assert_str_eq(sr_net_helper_to_string(SR_NET_HELPER_PASTA), "pasta");
	ck_assert_ptr_null(sr_net_helper_to_string(_SR_NET_HELPER_MAX));
	sr_config_free(&c);
}
END_TEST

START_TEST(test_errors_name_file_and_line)
{
	ck_assert_str_eq(load_error("[limits]\nmemory = 1G\n\nmemroy = 2G\n"),
			 "profile t.ini:4: unknown key 'memroy' in [limits] (did you mean "
			 "'memory'?)");
	ck_assert_str_eq(load_error("# x\n[limts]\nmemory = 1G\n"),
			 "profile t.ini:2: unknown section [limts] (did you mean [limits]?)");
	ck_assert_str_eq(load_error("[sandbox]\nx = 1\n"),
			 "profile t.ini:1: unknown section [sandbox] (known: profile, limits, "
			 "network, env, filesystem, agent, deploy, artifacts)");
	ck_assert_str_eq(load_error("[limits]\ncpus = 1\nmemory = lots\n"),
			 "profile t.ini:3: memory: bad size 'lots' (use e.g. 512M, 2G, or 0 for "
			 "unlimited)");
	ck_assert_str_eq(load_error("[limits]\nmemory = 99999999999999999999G\n"),
			 "profile t.ini:2: memory: size '99999999999999999999G' is out of range "
			 "(use e.g. 512M, 2G, or 0 for unlimited)");
	ck_assert_str_eq(load_error("[limits]\ntimeout = soon\n"),
			 "profile t.ini:2: timeout: bad duration 'soon' (use e.g. 120, 90s, 5m, "
			 "1h, or 0 for none)");
	ck_assert_str_eq(load_error("[limits]\npids = 5000000\n"),
			 "profile t.ini:2: pids: count '5000000' is out of range (use e.g. 1024, "
			 "or 0 for unlimited; at most 4194304)");
	ck_assert_str_eq(load_error("[limits]\nstrict = maybe\n"),
			 "profile t.ini:2: strict: bad boolean 'maybe' (use true or false)");
	ck_assert_str_eq(load_error("[network]\nmode = bridge\n"),
			 "profile t.ini:2: mode: bad network mode 'bridge' (use none or egress)");
	ck_assert_str_eq(load_error("[network]\nhelper = vde\n"),
			 "profile t.ini:2: helper: bad network helper 'vde' (use auto, slirp4netns "
			 "or pasta)");
	ck_assert_str_eq(load_error("[network]\nhelpr = pasta\n"),
			 "profile t.ini:2: unknown key 'helpr' in [network] (did you mean "
			 "'helper'?)");
	ck_assert_str_eq(load_error("[limits]\nmode = none\n"),
			 "profile t.ini:2: unknown key 'mode' in [limits] (it belongs in "
			 "[network])");
	ck_assert_str_eq(load_error("[limits]\ncpus = 1 # one\n"),
			 "profile t.ini:2: cpus: bad CPU count '1 # one' (use e.g. 0.5, 2, or 0 "
			 "for unlimited; at most 1024 and 3 decimals) ('#' after a value is not a "
			 "comment: use ';')");
	ck_assert_str_eq(load_error("[network]\nallow = 10.1.2.3/8\n"),
			 "profile t.ini:2: allow: '10.1.2.3/8' has host bits set (did you mean "
			 "10.0.0.0/8?)");
	ck_assert_str_eq(load_error("[network]\ndeny = example.com:99999\n"),
			 "profile t.ini:2: deny: bad port in 'example.com:99999' (use 1-65535, "
			 "e.g. example.com:443)");
	ck_assert_str_eq(load_error("[network]\nallow = not a host\n"),
			 "profile t.ini:2: allow: bad destination 'not a host' (use e.g. "
			 "10.0.0.0/8, 192.0.2.1, example.com:443, *.example.com or "
			 "[2001:db8::1]:443)");
	ck_assert_str_eq(load_error("[network]\nallow-host = 0\n"),
			 "profile t.ini:2: allow-host: bad port '0' (use a port number from 1 to "
			 "65535)");
}
END_TEST

START_TEST(test_syntax_errors)
{
	ck_assert_str_eq(load_error("memory = 1G\n"),
			 "profile t.ini:1: key 'memory' outside a section (put it under [limits])");
	ck_assert_str_eq(load_error("\n\nfoo = 1\n[limits]\n"),
			 "profile t.ini:3: key 'foo' outside a section");
	ck_assert_str_eq(load_error("[limits]\nmemory 1G\n"),
			 "profile t.ini:2: cannot parse 'memory 1G' (expected '[section]' or "
			 "'key = value')");
	ck_assert_str_eq(load_error("[limits]\n\n[network\n"),
			 "profile t.ini:3: missing ']' in '[network'");
	ck_assert_str_eq(load_error("[filesystem]\nro-bind /a:/b\n"),
			 "profile t.ini:2: 'ro-bind /a' is not a key (expected 'key = value')");
	/* The first error wins even when a later one is inih's own. */
	ck_assert_str_eq(load_error("[limits]\nmemory = x\nbroken line\n"),
			 "profile t.ini:2: memory: bad size 'x' (use e.g. 512M, 2G, or 0 for "
			 "unlimited)");
	ck_assert_str_eq(load_error("[limits]\nbroken line\nmemory = x\n"),
			 "profile t.ini:2: cannot parse 'broken line' (expected '[section]' or "
			 "'key = value')");
}
END_TEST

START_TEST(test_long_line)
{
	char text[600];
	const char *msg;

	snprintf(text, sizeof(text), "[env]\nA = 1\nX = %0400d\n", 7);
	msg = load_error(text);
	ck_assert_msg(strncmp(msg, "profile t.ini:3: line too long (at most ", 40) == 0, "%s", msg);
}
END_TEST

START_TEST(test_env_keys)
{
	struct sr_config c;
	const char *msg = load_text(&c, "[env]\n"
					"FOO = bar\n"
					"_x1 = a=b;c#d\n"
					"EMPTY =\n"
					"FOO = baz\n"
					"pass = HOME\n"
					"pass = TERM\n"
					"file = /etc/secrets.env\n");

	ck_assert_str_eq(msg, "");
	ck_assert_uint_eq(c.env.n, 3);
	ck_assert_str_eq(c.env.items[0], "FOO=baz"); /* replaced in place */
	ck_assert_str_eq(c.env.items[1], "_x1=a=b;c#d");
	ck_assert_str_eq(c.env.items[2], "EMPTY=");
	ck_assert_ptr_null(c.env.items[3]);
	ck_assert_uint_eq(c.pass_env.n, 2);
	ck_assert_str_eq(c.pass_env.items[1], "TERM");
	ck_assert_str_eq(c.env_file, "/etc/secrets.env");
	sr_config_free(&c);

	ck_assert_str_eq(load_error("[env]\n1FOO = x\n"),
			 "profile t.ini:2: bad variable name '1FOO' (use letters, digits and '_', "
			 "not starting with a digit)");
	ck_assert_str_eq(load_error("[env]\nA-B = x\n"),
			 "profile t.ini:2: bad variable name 'A-B' (use letters, digits and '_', "
			 "not starting with a digit)");
	ck_assert_str_eq(load_error("[env]\npass = A B\n"),
			 "profile t.ini:2: pass: bad variable name 'A B' (use letters, digits and "
			 "'_', not starting with a digit)");
}
END_TEST

START_TEST(test_binds)
{
	struct sr_config c;
	char cwd[PATH_MAX], want[PATH_MAX + 16];
	const char *msg;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	msg = load_text(&c, "[filesystem]\n"
			    "ro-bind = /srv/data:/data\n"
			    "ro-bind = /usr/share/dict\n"
			    "bind = rel/./dir//:/out/\n"
			    "ro-bind = /other:/data\n"
			    "bind = /a:b:/c\n");
	ck_assert_str_eq(msg, "");
	ck_assert_uint_eq(c.n_binds, 4);
	ck_assert_str_eq(c.binds[0].src, "/other"); /* same destination: replaced */
	ck_assert_str_eq(c.binds[0].dst, "/data");
	ck_assert(!c.binds[0].writable);
	ck_assert_str_eq(c.binds[1].src, "/usr/share/dict");
	ck_assert_str_eq(c.binds[1].dst, "/usr/share/dict");
	snprintf(want, sizeof(want), "%s/rel/dir", strcmp(cwd, "/") ? cwd : "");
	ck_assert_str_eq(c.binds[2].src, want);
	ck_assert_str_eq(c.binds[2].dst, "/out");
	ck_assert(c.binds[2].writable);
	ck_assert_str_eq(c.binds[3].src, "/a:b");
	ck_assert_str_eq(c.binds[3].dst, "/c");
	sr_config_free(&c);

	/* An empty value drops what was inherited, of that kind only. */
	msg = load_text(&c, "[filesystem]\nro-bind = /a:/x\nbind = /b:/y\nro-bind =\n");
	ck_assert_str_eq(msg, "");
	ck_assert_uint_eq(c.n_binds, 1);
	ck_assert_str_eq(c.binds[0].dst, "/y");
	sr_config_free(&c);

	ck_assert_str_eq(load_error("[filesystem]\nro-bind = /a:/proc/sys\n"),
			 "profile t.ini:2: ro-bind: destination '/proc/sys' is reserved (not /, "
			 "/proc, /dev, /workspace or /.sr-data)");
	ck_assert_str_eq(load_error("[filesystem]\nbind = /a:/dev\n"),
			 "profile t.ini:2: bind: destination '/dev' is reserved (not /, /proc, "
			 "/dev, /workspace or /.sr-data)");
	ck_assert_str_eq(load_error("[filesystem]\nbind = /a:/\n"),
			 "profile t.ini:2: bind: destination '/' is reserved (not /, /proc, /dev, "
			 "/workspace or /.sr-data)");
	ck_assert_str_eq(load_error("[filesystem]\nbind = /a:/workspace/\n"),
			 "profile t.ini:2: bind: destination '/workspace/' is reserved (not /, "
			 "/proc, /dev, /workspace or /.sr-data)");
	/* The sandbox's disk while the root is built. */
	ck_assert_str_eq(load_error("[filesystem]\nbind = /a:/.sr-data/x\n"),
			 "profile t.ini:2: bind: destination '/.sr-data/x' is reserved (not /, "
			 "/proc, /dev, /workspace or /.sr-data)");
	ck_assert_str_eq(load_error("[filesystem]\nbind = /a:/x/../proc\n"),
			 "profile t.ini:2: bind: destination '/x/../proc' contains '..'");
	ck_assert_str_eq(load_error("[filesystem]\nbind = /a:data\n"),
			 "profile t.ini:2: bind: destination 'data' is not absolute (e.g. /data)");
	/* Lexically "/devices" is not under /dev. */
	ck_assert_str_eq(load_error("[filesystem]\nbind = /a:/devices\n[x]\n"),
			 "profile t.ini:3: unknown section [x] (known: profile, limits, network, "
			 "env, filesystem, agent, deploy, artifacts)");
}
END_TEST

START_TEST(test_artifacts)
{
	struct sr_config c;
	char cwd[PATH_MAX], want[PATH_MAX + 32];
	const char *msg, *base;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	base = strcmp(cwd, "/") ? cwd : "";
	msg = load_text(&c, "[artifacts]\n"
			    "export = reports/junit.xml\n"
			    "export = coverage/:/srv/out/cov\n"
			    "export = /home/user/.cache/log.txt\n"
			    "export = dist:a:b\n"
			    "changes = /tmp/changes.tar\n"
			    "[limits]\ndisk-backing = memory\n");
	ck_assert_str_eq(msg, "");
	ck_assert_uint_eq(c.n_exports, 4);
	ck_assert_str_eq(c.exports[0].path, "reports/junit.xml");
	snprintf(want, sizeof(want), "%s/reports/junit.xml", base);
	/* The default: the same relative path under the current directory. */
	ck_assert_str_eq(c.exports[0].host, want);
	ck_assert_str_eq(c.exports[1].path, "coverage");
	ck_assert_str_eq(c.exports[1].host, "/srv/out/cov");
	snprintf(want, sizeof(want), "%s/log.txt", base);
	ck_assert_str_eq(c.exports[2].host, want);
	/* The first ':' splits: a host path may hold one. */
	snprintf(want, sizeof(want), "%s/a:b", base);
	ck_assert_str_eq(c.exports[3].host, want);
	ck_assert_str_eq(c.exports[3].origin, "profile t.ini:5");
	ck_assert_str_eq(c.changes_path, "/tmp/changes.tar");
	ck_assert_int_eq(c.disk_backing, SR_DISK_BACKING_MEMORY);
	sr_config_free(&c);

	msg = load_text(&c, "[artifacts]\nexport = a\nexport =\nexport = b\n");
	ck_assert_str_eq(msg, "");
	ck_assert_uint_eq(c.n_exports, 1);
	ck_assert_str_eq(c.exports[0].path, "b");
	sr_config_free(&c);

	ck_assert_str_eq(load_error("[artifacts]\nexport = ../etc\n"),
			 "profile t.ini:2: export: '../etc' contains '..'");
	ck_assert_str_eq(load_error("[artifacts]\nexport = /\n"),
			 "profile t.ini:2: export: '/' names no file or directory (e.g. coverage)");
	ck_assert_str_eq(load_error("[limits]\ndisk-backing = ssd\n"),
			 "profile t.ini:2: disk-backing: bad disk backing 'ssd' (use auto, disk or "
			 "memory)");
	ck_assert_str_eq(load_error("[artifacts]\nchange = x\n"),
			 "profile t.ini:2: unknown key 'change' in [artifacts] (did you mean "
			 "'changes'?)");
}
END_TEST

/* Every path a profile file names is relative to the file, not to where sandbox-run runs. */
START_TEST(test_paths_relative_to_profile)
{
	struct sr_config c;
	struct sr_error err = {};
	char dir[PATH_MAX], want[2 * PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/agent", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	write_at(dir, "prod.ini",
		 "[env]\nfile = secrets.env\n"
		 "[filesystem]\nbind = out:/out\nro-bind = ~/x:/x\n"
		 "[artifacts]\nexport = cov:artifacts/cov\nexport = junit.xml\nchanges = ch.tar\n");
	sr_config_init(&c);
	snprintf(want, sizeof(want), "%s/prod.ini", dir);
	ck_assert_msg(sr_profile_load(&c, want, &err) == 0, "%s", err.msg);
	snprintf(want, sizeof(want), "%s/secrets.env", dir);
	ck_assert_str_eq(c.env_file, want);
	snprintf(want, sizeof(want), "profile %s/prod.ini:2", dir);
	ck_assert_str_eq(c.env_file_origin, want);
	snprintf(want, sizeof(want), "%s/out", dir);
	ck_assert_str_eq(c.binds[0].src, want);
	snprintf(want, sizeof(want), "profile %s/prod.ini:4", dir);
	ck_assert_str_eq(c.binds[0].origin, want);
	snprintf(want, sizeof(want), "%s/artifacts/cov", dir);
	ck_assert_str_eq(c.exports[0].host, want);
	snprintf(want, sizeof(want), "%s/ch.tar", dir);
	ck_assert_str_eq(c.changes_path, want);
	/* An option is the caller's: relative to the current directory, no origin. */
	ck_assert_int_eq(sr_config_apply(&c, "env", "file", "/abs.env", &err), 0);
	ck_assert_ptr_null(c.env_file_origin);
	sr_config_free(&c);

	/* A relative -p path: its directory, relative to the current one, is the base. */
	ck_assert_int_eq(chdir(tmpdir), 0);
	sr_config_init(&c);
	ck_assert_msg(sr_profile_load(&c, "./agent/prod.ini", &err) == 0, "%s", err.msg);
	snprintf(want, sizeof(want), "%s/agent/secrets.env", tmpdir);
	ck_assert_str_eq(c.env_file, want);
	sr_config_free(&c);
	ck_assert_int_eq(chdir("/"), 0);
}
END_TEST

START_TEST(test_list_reset)
{
	struct sr_config c;
	struct sr_error err = {};
	char path[PATH_MAX];

	write_file("base.ini", "[network]\nallow = 10.0.0.0/8\n"
			       "[env]\npass = HOME\n[agent]\nentry = ./run\n");
	/* base.ini: a relative inherit path is relative to the inheriting file. */
	write_file("child.ini", "[profile]\ninherit = ./base.ini\n[network]\nallow =\n"
				"allow = 192.0.2.1\n[env]\npass =\n[agent]\nentry =\n");
	snprintf(path, sizeof(path), "%s/child.ini", tmpdir);
	sr_config_init(&c);
	ck_assert_msg(sr_profile_load(&c, path, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c.allow.n, 1);
	ck_assert_str_eq(c.allow.items[0], "192.0.2.1");
	ck_assert_uint_eq(c.pass_env.n, 0);
	ck_assert_ptr_null(c.entry);
	sr_config_free(&c);
}
END_TEST

START_TEST(test_inherit_chain)
{
	struct sr_config c;
	struct sr_error err = {};
	char path[PATH_MAX];

	/* inherit after other keys: still loaded first. */
	write_file("a.ini", "[limits]\nmemory = 3G\n[profile]\ninherit = ./b.ini\n");
	write_file("b.ini", "[profile]\ninherit = tx\n[limits]\npids = 99\nmemory = 1G\n");
	snprintf(path, sizeof(path), "%s/a.ini", tmpdir);
	sr_config_init(&c);
	ck_assert_msg(sr_profile_load(&c, path, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c.memory_bytes, 3 * GiB); /* a over b */
	ck_assert_uint_eq(c.pids, 99);		    /* b over tx */
	ck_assert_uint_eq(c.cpus_milli, 1000);	    /* tx */
	ck_assert_uint_eq(c.timeout_ms, 300000);    /* tx */
	ck_assert_int_eq(c.net, SR_NET_EGRESS);	    /* default, via tx */
	ck_assert_str_eq(c.profile, path);
	ck_assert_str_eq(c.profile_path, path);
	sr_config_free(&c);
}
END_TEST

START_TEST(test_inherit_errors)
{
	struct sr_config c;
	struct sr_error err = {};
	char path[PATH_MAX], want[2 * PATH_MAX];

	write_file("loop1.ini", "# loop\n[profile]\ninherit = ./loop2.ini\n");
	write_file("loop2.ini", "[profile]\n\ninherit = ./loop1.ini\n");
	snprintf(path, sizeof(path), "%s/loop1.ini", tmpdir);
	sr_config_init(&c);
	ck_assert_int_eq(sr_profile_load(&c, path, &err), -ELOOP);
	snprintf(want, sizeof(want),
		 "profile %s/loop2.ini:3: inherit loop: %s -> ./loop2.ini -> ./loop1.ini", tmpdir,
		 path);
	ck_assert_str_eq(err.msg, want);
	sr_config_free(&c);

	ck_assert_str_eq(load_error("[profile]\ninherit = t.ini\n"),
			 "profile t.ini:2: inherit: profile 't.ini' looks like a file: write "
			 "./t.ini");
	ck_assert_str_eq(load_error("[profile]\ninherit = ../x\n[limits]\n"),
			 "profile t.ini:2: inherit: profile ../x: No such file or directory");
	ck_assert_str_eq(load_error("[profile]\ninherit = a..b\n"),
			 "profile t.ini:2: inherit: bad profile name 'a..b' (use letters, digits, "
			 "'-', '_' and '.', or a path with a '/')");
	ck_assert_str_eq(load_error("[profile]\ninherit = ab.\n"),
			 "profile t.ini:2: inherit: bad profile name 'ab.' (use letters, digits, "
			 "'-', '_' and '.', or a path with a '/')");
	/* builtin:NAME, as --print-config names a built-in profile. */
	struct sr_config b;
	ck_assert_str_eq(load_text(&b, "[profile]\ninherit = builtin:tx\n"), "");
	ck_assert_uint_eq(b.timeout_ms, 300000);
	sr_config_free(&b);
	ck_assert_str_eq(load_error("[profile]\ninherit = tx\ninherit = ci\n"),
			 "profile t.ini:3: inherit given twice (first on line 2)");
	ck_assert_str_eq(
	    load_error("[profile]\ninherit =\n"),
	    "profile t.ini:2: inherit: empty value (use a profile name, e.g. default)");
	ck_assert_str_eq(
	    load_error("inherit = tx\n"),
	    "profile t.ini:1: key 'inherit' outside a section (put it under [profile])");

	/* Missing inherit target names every place looked at. */
	const char *msg = load_error("\n[profile]\ninherit = nosuch\n");
	snprintf(want, sizeof(want),
		 "profile t.ini:3: inherit: profile 'nosuch' not found (looked for "
		 "%s/sandbox-run/profiles/nosuch.ini, %s/profiles/nosuch.ini and the built-in "
		 "profiles default, offline, tx, e2b, ci)",
		 xdgdir, SR_DATADIR);
	ck_assert_str_eq(msg, want);

	/* Depth: each file inherits the next; the limit stops a long chain. */
	for (int i = 0; i < SR_PROFILE_DEPTH_MAX + 2; i++) {
		char name[32], text[64];

		snprintf(name, sizeof(name), "d%d.ini", i);
		snprintf(text, sizeof(text), "[profile]\ninherit = ./d%d.ini\n", i + 1);
		write_file(name, text);
	}
	write_file("d10.ini", "[limits]\n");
	snprintf(path, sizeof(path), "%s/d0.ini", tmpdir);
	sr_config_init(&c);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(sr_profile_load(&c, path, &err), -ELOOP);
	ck_assert_msg(strstr(err.msg, "d7.ini:2: inherit chain deeper than 8 profiles"), "%s",
		      err.msg);
	sr_config_free(&c);
}
END_TEST

START_TEST(test_unreadable)
{
	struct sr_config c;
	struct sr_error err = {};
	char path[PATH_MAX + 32];

	sr_config_init(&c);
	snprintf(path, sizeof(path), "%s/nope.ini", tmpdir);
	ck_assert_int_eq(sr_profile_load(&c, path, &err), -ENOENT);
	ck_assert_str_eq(strstr(err.msg, "nope.ini"), "nope.ini: No such file or directory");

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(sr_profile_load(&c, xdgdir, &err), -EINVAL);
	ck_assert_str_eq(strstr(err.msg, "xdg"), "xdg: not a regular file");

	snprintf(path, sizeof(path), "%s/fifo.ini", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(sr_profile_load(&c, path, &err), -EINVAL);
	ck_assert_str_eq(strstr(err.msg, "fifo.ini"), "fifo.ini: not a regular file");

	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(sr_profile_load(&c, "bad name", &err), -EINVAL);
	ck_assert_str_eq(err.msg, "bad profile name 'bad name' (use letters, digits, '-', '_' "
				  "and '.', or a path with a '/')");
	ck_assert_ptr_null(c.profile);
	sr_config_free(&c);
}
END_TEST

/* Loading NAME fails with an inherit loop CHAIN, reported at line 2 of FILE. */
static void assert_loop(const char *name, const char *file, const char *chain)
{
	char want[3 * PATH_MAX];
	struct sr_config c;
	struct sr_error err;

	ck_assert_int_eq(load_named(&c, name, &err), -ELOOP);
	snprintf(want, sizeof(want), "profile %s:2: inherit loop: %s", file, chain);
	ck_assert_str_eq(err.msg, want);
	sr_config_free(&c);
}

START_TEST(test_xdg_search)
{
	const char *dir = user_profiles(), *last;
	struct sr_config c;
	struct sr_error err;
	char path[2 * PATH_MAX];

	/* A user profile named like a shipped one wins over the shipped one. */
	snprintf(path, sizeof(path), "%s",
		 write_at(dir, "tx.ini", "[profile]\ninherit = e2b\n[limits]\npids = 7\n"));
	ck_assert_msg(load_named(&c, "tx", &err) == 0, "%s", err.msg);
	ck_assert_str_eq(c.profile, "tx");
	ck_assert_str_eq(c.profile_path, path);
	ck_assert_uint_eq(c.pids, 7);
	ck_assert_uint_eq(c.memory_bytes, 4 * GiB); /* e2b, not the shipped tx */
	sr_config_free(&c);

	/*
	 * A user default.ini that inherits `default` builds on the shipped one,
	 * and so changes the shipped profiles that inherit default, and a user
	 * profile that does.
	 */
	write_at(dir, "default.ini", "[profile]\ninherit = default\n[limits]\nmemory = 5G\n");
	write_at(dir, "mine.ini", "[profile]\ninherit = default\n[limits]\npids = 5\n");
	const char *const over_default[] = {"default", "offline", "mine"};
	for (size_t i = 0; i < SR_ARRAY_SIZE(over_default); i++) {
		ck_assert_msg(load_named(&c, over_default[i], &err) == 0, "%s: %s", over_default[i],
			      err.msg);
		ck_assert_uint_eq(c.memory_bytes, 5 * GiB);
		ck_assert_uint_eq(c.cpus_milli, 2000); /* the shipped default's */
		sr_config_free(&c);
	}
	/* The name --print-config gives reaches the built-in copy past a user file. */
	ck_assert_msg(load_named(&c, "builtin:default", &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c.memory_bytes, 2 * GiB);
	ck_assert_str_eq(c.profile_path, "builtin:default");
	sr_config_free(&c);
	ck_assert_int_eq(load_named(&c, "builtin:mine", &err), -ENOENT);
	ck_assert_str_eq(err.msg, "profile 'builtin:mine' not found (the built-in profiles are "
				  "default, offline, tx, e2b, ci)");
	sr_config_free(&c);

	/* A name that comes back to another file of the chain is a loop... */
	write_at(dir, "loopa.ini", "[profile]\ninherit = loopb\n");
	last = write_at(dir, "loopb.ini", "[profile]\ninherit = loopa\n");
	assert_loop("loopa", last, "loopa -> loopb -> loopa");
	/* ...also between names the shipped profiles have... */
	write_at(dir, "offline.ini", "[profile]\ninherit = e2b\n");
	last = write_at(dir, "e2b.ini", "[profile]\ninherit = offline\n");
	assert_loop("offline", last, "offline -> e2b -> offline");
	/* ...and a file inheriting its own name that no later place has. */
	last = write_at(dir, "solo.ini", "[profile]\ninherit = solo\n");
	assert_loop("solo", last, "solo -> solo");
	/* A symbolic link loop is that, not an inherit loop. */
	snprintf(path, sizeof(path), "%s/self.ini", dir);
	ck_assert_int_eq(symlink("self.ini", path), 0);
	write_at(dir, "viaself.ini", "[profile]\ninherit = self\n");
	ck_assert_int_eq(load_named(&c, "viaself", &err), -ELOOP);
	ck_assert_msg(strstr(err.msg, "inherit: profile ") &&
			  strstr(err.msg, "self.ini: Too many levels of symbolic links"),
		      "%s", err.msg);
	sr_config_free(&c);

	/* Relative XDG_CONFIG_HOME is ignored (XDG spec); then $HOME/.config. */
	setenv("XDG_CONFIG_HOME", "relative/dir", 1);
	setenv("HOME", tmpdir, 1);
	const char *parts[] = {".config", ".config/sandbox-run", ".config/sandbox-run/profiles"};
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, parts[i]);
		ck_assert_int_eq(mkdir(path, 0700), 0);
	}
	write_file(".config/sandbox-run/profiles/mine.ini", "[limits]\npids = 3\n");
	ck_assert_msg(load_named(&c, "mine", &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c.pids, 3);
	sr_config_free(&c);
}
END_TEST

/*
 * User, installed and built-in profiles stacked: each default.ini inherits
 * `default` and builds on the next place's, as an administrator's and a
 * user's own defaults do.
 */
START_TEST(test_installed_layers)
{
	const char *dir = user_profiles();
	struct sr_config c;
	struct sr_error err;
	char path[2 * PATH_MAX];

	ck_assert_int_eq(mkdir(SR_DATADIR, 0755), 0);
	ck_assert_int_eq(mkdir(SR_DATADIR "/profiles", 0755), 0);
	write_at(SR_DATADIR "/profiles", "default.ini",
		 "[profile]\ninherit = default\n[limits]\nmemory = 1G\n");
	snprintf(
	    path, sizeof(path), "%s",
	    write_at(dir, "default.ini", "[profile]\ninherit = default\n[limits]\npids = 77\n"));

	const char *const names[] = {"default", "offline"};
	for (size_t i = 0; i < SR_ARRAY_SIZE(names); i++) {
		ck_assert_msg(load_named(&c, names[i], &err) == 0, "%s: %s", names[i], err.msg);
		ck_assert_uint_eq(c.pids, 77);		    /* the user's */
		ck_assert_uint_eq(c.memory_bytes, 1 * GiB); /* the installed one's */
		ck_assert_uint_eq(c.cpus_milli, 2000);	    /* the built-in one's */
		ck_assert_int_eq(c.net, i ? SR_NET_NONE : SR_NET_EGRESS);
		sr_config_free(&c);
	}
	/* The installed one alone builds on the built-in one. */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_msg(load_named(&c, "default", &err) == 0, "%s", err.msg);
	ck_assert_str_eq(c.profile_path, SR_DATADIR "/profiles/default.ini");
	ck_assert_uint_eq(c.memory_bytes, 1 * GiB);
	ck_assert_uint_eq(c.pids, 1024);
	sr_config_free(&c);
}
END_TEST

static void load_shipped(struct sr_config *c, const char *name)
{
	struct sr_error err = {};
	char installed[PATH_MAX], want[64];

	sr_config_init(c);
	ck_assert_msg(sr_profile_load(c, name, &err) == 0, "%s: %s", name, err.msg);
	ck_assert_str_eq(c->profile, name);
	snprintf(installed, sizeof(installed), "%s/profiles/%s.ini", SR_DATADIR, name);
	snprintf(want, sizeof(want), "builtin:%s", name);
	/* An installed copy comes before the built-in one. */
	if (access(installed, F_OK) == 0)
		ck_assert_str_eq(c->profile_path, installed);
	else
		ck_assert_str_eq(c->profile_path, want);
	ck_assert_ptr_nonnull(sr_profile_builtin(name));
}

START_TEST(test_shipped_profiles)
{
	struct sr_config c;

	load_shipped(&c, "default");
	ck_assert_uint_eq(c.memory_bytes, 2 * GiB);
	ck_assert_uint_eq(c.cpus_milli, 2000);
	ck_assert_uint_eq(c.pids, 1024);
	ck_assert_uint_eq(c.timeout_ms, 120000);
	ck_assert_uint_eq(c.disk_bytes, 10 * GiB);
	ck_assert_int_eq(c.net, SR_NET_EGRESS);
	sr_config_free(&c);

	load_shipped(&c, "offline");
	ck_assert_int_eq(c.net, SR_NET_NONE);
	ck_assert_uint_eq(c.memory_bytes, 2 * GiB);
	ck_assert_uint_eq(c.timeout_ms, 120000);
	sr_config_free(&c);

	load_shipped(&c, "tx");
	ck_assert_uint_eq(c.cpus_milli, 1000);
	ck_assert_uint_eq(c.memory_bytes, 256 * MiB);
	ck_assert_uint_eq(c.timeout_ms, 300000);
	ck_assert_uint_eq(c.disk_bytes, 1 * GiB);
	ck_assert_int_eq(c.net, SR_NET_EGRESS);
	sr_config_free(&c);

	load_shipped(&c, "e2b");
	ck_assert_uint_eq(c.cpus_milli, 2000);
	ck_assert_uint_eq(c.memory_bytes, 4 * GiB);
	ck_assert_uint_eq(c.timeout_ms, 300000);
	ck_assert_uint_eq(c.disk_bytes, 10 * GiB);
	sr_config_free(&c);

	load_shipped(&c, "ci");
	ck_assert_uint_eq(c.timeout_ms, 0);
	ck_assert_uint_eq(c.memory_bytes, 2 * GiB);
	ck_assert_uint_eq(c.cpus_milli, 2000);
	sr_config_free(&c);

	ck_assert_ptr_null(sr_profile_builtin("nosuch"));
}
END_TEST

static void assert_same_strv(const struct sr_strv *a, const struct sr_strv *b)
{
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		ck_assert_str_eq(a->items[i], b->items[i]);
}

START_TEST(test_print_round_trip)
{
	struct sr_config a, b;
	struct sr_error err = {};
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	const char *msg =
	    load_text(&a, "[profile]\ninherit = offline\n"
			  "[limits]\nmemory = 1.5G\ncpus = 0.25\ntimeout = 1500ms\n"
			  "disk = 1048577\nstrict = on\n"
			  "[network]\nmode = egress\nhelper = slirp4netns\n"
			  "allow = 10.0.0.0/8\nallow = [::1]:443\ndeny = example.com\n"
			  "[env]\nA = 1\nB = x=y#z\nC =\npass = TERM\n"
			  "file = /run/s.env\n"
			  "[filesystem]\nro-bind = /a:b:/c\nbind = /srv\n"
			  "[agent]\nentry = node index.js\n"
			  "[artifacts]\nexport = cov:/srv/a:b\nchanges = /tmp/c.tar\n");

	ck_assert_str_eq(msg, "");
	f = open_memstream(&text, &len);
	ck_assert_int_eq(sr_config_print(&a, f), 0);
	fclose(f);
	sr_config_init(&b);
	ck_assert_msg(sr_profile_load_string(&b, text, "printed", &err) == 0, "%s\n%s", err.msg,
		      text);
	ck_assert_uint_eq(a.memory_bytes, b.memory_bytes);
	ck_assert_uint_eq(a.cpus_milli, b.cpus_milli);
	ck_assert_uint_eq(a.pids, b.pids);
	ck_assert_uint_eq(a.timeout_ms, b.timeout_ms);
	ck_assert_uint_eq(a.disk_bytes, b.disk_bytes);
	ck_assert_int_eq(a.strict, b.strict);
	ck_assert_int_eq(a.net, b.net);
	ck_assert_int_eq(a.net_helper, SR_NET_HELPER_SLIRP4NETNS);
	ck_assert_int_eq(a.net_helper, b.net_helper);
	assert_same_strv(&a.allow, &b.allow);
	assert_same_strv(&a.deny, &b.deny);
	assert_same_strv(&a.env, &b.env);
	assert_same_strv(&a.pass_env, &b.pass_env);
	ck_assert_str_eq(a.env_file, b.env_file);
	ck_assert_str_eq(a.entry, b.entry);
	ck_assert_str_eq(a.changes_path, b.changes_path);
	ck_assert_uint_eq(b.n_exports, 1);
	ck_assert_str_eq(b.exports[0].path, "cov");
	ck_assert_str_eq(b.exports[0].host, "/srv/a:b");
	ck_assert_int_eq(a.disk_backing, b.disk_backing);
	ck_assert_uint_eq(a.n_binds, 2);
	ck_assert_uint_eq(b.n_binds, 2);
	for (size_t i = 0; i < a.n_binds; i++) {
		ck_assert_str_eq(a.binds[i].src, b.binds[i].src);
		ck_assert_str_eq(a.binds[i].dst, b.binds[i].dst);
		ck_assert_int_eq(a.binds[i].writable, b.binds[i].writable);
	}
	ck_assert_ptr_nonnull(strstr(text, "\n[limits]\nmemory = 1536M\ncpus = 0.25\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nfile = /run/s.env\n"));
	free(text);
	sr_config_free(&a);
	sr_config_free(&b);
}
END_TEST

START_TEST(test_print_unrepresentable)
{
	struct sr_config c;
	struct sr_error err = {};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	sr_config_init(&c);
	ck_assert_int_eq(sr_config_set_env(&c, "PEM", "line1\nline2", &err), 0);
	ck_assert_int_eq(sr_config_set_env(&c, "SP", " padded", &err), 0);
	ck_assert_int_eq(sr_config_set_env(&c, "file", "x", &err), -EINVAL);
	ck_assert_str_eq(err.msg, "variable name 'file' is reserved: [env] file is a setting");
	f = open_memstream(&text, &len);
	ck_assert_int_eq(sr_config_print(&c, f), 0);
	fclose(f);
	ck_assert_ptr_null(strstr(text, "line1"));
	ck_assert_ptr_nonnull(strstr(text, "\n# PEM: value not representable in a profile"));
	ck_assert_ptr_nonnull(strstr(text, "\n# SP: value not representable in a profile"));
	sr_config_free(&c);
	sr_config_init(&c);
	memset(&err, 0, sizeof(err));
	ck_assert_msg(sr_profile_load_string(&c, text, "printed", &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c.env.n, 0);
	free(text);
	sr_config_free(&c);
}
END_TEST

START_TEST(test_suggest)
{
	const char *const words[] = {"memory", "cpus", "pids", "timeout", "disk", NULL};

	ck_assert_str_eq(sr_suggest("memroy", words), "memory");
	ck_assert_str_eq(sr_suggest("Memory", words), "memory");
	ck_assert_str_eq(sr_suggest("cpu", words), "cpus");
	ck_assert_str_eq(sr_suggest("timout", words), "timeout");
	ck_assert_ptr_null(sr_suggest("mem", words));
	ck_assert_ptr_null(sr_suggest("xyz", words));
	ck_assert_ptr_null(sr_suggest("cpuset", words));
	ck_assert_str_eq(sr_config_suggest_key("network", "allwo"), "allow");
	ck_assert_str_eq(sr_config_suggest_section("enf"), "env");
	ck_assert(sr_config_known_key("env", "ANYTHING"));
	ck_assert(sr_config_known_key("filesystem", "ro-bind"));
	ck_assert(!sr_config_known_key("limits", "ro-bind"));
	ck_assert(!sr_config_known_section("Limits"));
}
END_TEST

START_TEST(test_validate)
{
	struct sr_config c;
	struct sr_error err = {};

	ck_assert_str_eq(load_text(&c, "[network]\nmode = none\nallow = 192.0.2.1\n"), "");
	ck_assert_int_eq(sr_config_validate(&c, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "network: allow '192.0.2.1' given but the network mode is "
				  "none (use --net egress, or drop the allow entries)");
	sr_config_free(&c);

	memset(&err, 0, sizeof(err));
	ck_assert_str_eq(load_text(&c, "[network]\nmode = none\ndeny = 192.0.2.1\n"), "");
	ck_assert_int_eq(sr_config_validate(&c, &err), 0);
	sr_config_free(&c);
}
END_TEST

static Suite *profile_suite(void)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_good_profile);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_errors_name_file_and_line);
	tcase_add_test(tc, test_syntax_errors);
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_env_keys);
	tcase_add_test(tc, test_binds);
	tcase_add_test(tc, test_artifacts);
	tcase_add_test(tc, test_paths_relative_to_profile);
	tcase_add_test(tc, test_list_reset);
	tcase_add_test(tc, test_inherit_chain);
	tcase_add_test(tc, test_inherit_errors);
	tcase_add_test(tc, test_unreadable);
	tcase_add_test(tc, test_xdg_search);
	tcase_add_test(tc, test_installed_layers);
	tcase_add_test(tc, test_shipped_profiles);
	tcase_add_test(tc, test_print_round_trip);
	tcase_add_test(tc, test_print_unrepresentable);
	tcase_add_test(tc, test_suggest);
	tcase_add_test(tc, test_validate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(profile_suite());
}
