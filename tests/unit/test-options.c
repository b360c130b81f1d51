/* SPDX-License-Identifier: MIT */
#include "config.h"
#include "options.h"
#include "profile.h"
#include "secmem.h"
#include "secrets.h"
#include "testutil.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

static char tmpdir[64];
static char oldcwd[PATH_MAX];

/* Each test runs in an empty temp directory with no user profiles. */
static void setup(void)
{
	char xdg[128];

	sr_test_mkdtemp(tmpdir, sizeof(tmpdir), "/tmp", "sr-test-options");
	snprintf(xdg, sizeof(xdg), "%s/xdg", tmpdir);
	ck_assert_int_eq(mkdir(xdg, 0700), 0);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	ck_assert_ptr_nonnull(getcwd(oldcwd, sizeof(oldcwd)));
	ck_assert_int_eq(chdir(tmpdir), 0);
}

static void teardown(void)
{
	ck_assert_int_eq(chdir(oldcwd), 0);
	sr_test_rmtree(tmpdir);
}

struct run {
	struct sr_config c;
	struct sr_error err;
	enum sr_action action;
	int r;
};

/* Parses a NULL-terminated argument list (argv[0] added). */
static void parse_v(struct run *run, char **args)
{
	static char *argv[64];
	int argc = 0;

	argv[argc++] = "sandbox-run";
	while (*args)
		argv[argc++] = *args++;
	argv[argc] = NULL;
	memset(run, 0, sizeof(*run));
	run->action = _SR_ACTION_MAX;
	sr_config_init(&run->c);
	run->r = sr_options_parse(argc, argv, &run->c, &run->action, &run->err);
}

#define PARSE(run, ...) parse_v(run, (char *[]){__VA_ARGS__, NULL})

static void parse_ok(struct run *run)
{
	ck_assert_msg(run->r == 0, "parse failed: %s", run->err.msg);
}

static const char *parse_error(struct run *run)
{
	ck_assert_msg(run->r < 0, "parse succeeded");
	ck_assert_int_eq(run->err.status, 125);
	return run->err.msg;
}

START_TEST(test_defaults)
{
	struct run run;

	PARSE(&run, "./agent", "--memory", "1G", "x");
	parse_ok(&run);
	ck_assert_int_eq(run.action, SR_ACTION_RUN);
	ck_assert_str_eq(run.c.profile, "default");
	ck_assert_uint_eq(run.c.memory_bytes, 2 * GiB); /* after AGENT: the agent's args */
	ck_assert_uint_eq(run.c.cpus_milli, 2000);
	ck_assert_uint_eq(run.c.timeout_ms, 120000);
	ck_assert_int_eq(run.c.argc, 4);
	ck_assert_str_eq(run.c.argv[0], "./agent");
	ck_assert_str_eq(run.c.argv[1], "--memory");
	ck_assert(!run.c.command_mode);
	ck_assert_int_eq(run.c.log_level, SR_LOG_WARNING);
	sr_config_free(&run.c);
}
END_TEST

START_TEST(test_overrides_beat_profile)
{
	struct run run;

	PARSE(&run, "--memory", "1G", "-p", "tx", "--timeout=90s", "--cpus", "0.5", "--pids", "10",
	      "--disk", "0", "--strict", "--net", "none", "--net-helper", "pasta", "--env", "A=1",
	      "--env", "A=2", "--env", "B=x=y", "--pass-env", "TERM", "--env-file", "s.env",
	      "--entry", "python3 main.py", "--result", "r.json", "--memory", "3G", "agentdir");
	parse_ok(&run);
	ck_assert_str_eq(run.c.profile, "tx");
	ck_assert_uint_eq(run.c.memory_bytes, 3 * GiB); /* the last --memory wins */
	ck_assert_uint_eq(run.c.cpus_milli, 500);
	ck_assert_uint_eq(run.c.timeout_ms, 90000);
	ck_assert_uint_eq(run.c.pids, 10);
	ck_assert_uint_eq(run.c.disk_bytes, 0);
	ck_assert(run.c.strict);
	ck_assert_int_eq(run.c.net, SR_NET_NONE);
	ck_assert_int_eq(run.c.net_helper, SR_NET_HELPER_PASTA);
	ck_assert_uint_eq(run.c.env.n, 2);
	ck_assert_str_eq(run.c.env.items[0], "A=2");
	ck_assert_str_eq(run.c.env.items[1], "B=x=y");
	ck_assert_str_eq(run.c.pass_env.items[0], "TERM");
	ck_assert_ptr_nonnull(strstr(run.c.env_file, "/s.env"));
	ck_assert_int_eq(run.c.env_file[0], '/');
	ck_assert_str_eq(run.c.entry, "python3 main.py");
	ck_assert_str_eq(run.c.result_path, "r.json");
	ck_assert_int_eq(run.c.argc, 1);
	sr_config_free(&run.c);

	/* Options apply over the profile: tx's 1 CPU stays unless overridden. */
	PARSE(&run, "-p", "tx", "--memory", "64M", "a");
	parse_ok(&run);
	ck_assert_uint_eq(run.c.memory_bytes, 64 * MiB);
	ck_assert_uint_eq(run.c.cpus_milli, 1000);
	ck_assert_uint_eq(run.c.disk_bytes, 1 * GiB);
	sr_config_free(&run.c);
}
END_TEST

START_TEST(test_lists_and_binds)
{
	struct run run;

	ck_assert_int_eq(mkdir("data", 0700), 0);
	PARSE(&run, "--allow", "10.0.0.0/8", "--allow", "example.com:443", "--deny", "192.0.2.1",
	      "--allow", "*.example.org", "--allow-host", "8080", "--allow-host", "08080",
	      "--allow-host", "5432", "--ro-bind", "data", "/data", "--bind", "/srv", "/srv", "a");
	parse_ok(&run);
	ck_assert_uint_eq(run.c.allow.n, 3);
	ck_assert_str_eq(run.c.allow.items[1], "example.com:443");
	ck_assert_str_eq(run.c.allow.items[2], "*.example.org");
	ck_assert_uint_eq(run.c.deny.n, 1);
	/* Each port once, as a number. */
	ck_assert_uint_eq(run.c.allow_host.n, 2);
	ck_assert_str_eq(run.c.allow_host.items[0], "8080");
	ck_assert_str_eq(run.c.allow_host.items[1], "5432");
	ck_assert_uint_eq(run.c.n_binds, 2);
	ck_assert_int_eq(run.c.binds[0].src[0], '/');
	ck_assert_str_eq(run.c.binds[0].src + strlen(run.c.binds[0].src) - 5, "/data");
	ck_assert_str_eq(run.c.binds[0].dst, "/data");
	ck_assert(!run.c.binds[0].writable);
	ck_assert(run.c.binds[1].writable);
	ck_assert_str_eq(run.c.argv[0], "a");
	sr_config_free(&run.c);
}
END_TEST

START_TEST(test_command_mode)
{
	struct run run;

	PARSE(&run, "--memory", "1G", "--", "ls", "-l", "--", "x");
	parse_ok(&run);
	ck_assert(run.c.command_mode);
	ck_assert_int_eq(run.c.argc, 4);
	ck_assert_str_eq(run.c.argv[0], "ls");
	ck_assert_str_eq(run.c.argv[2], "--");
	ck_assert_uint_eq(run.c.memory_bytes, 1 * GiB);
	sr_config_free(&run.c);

	PARSE(&run, "--workspace", "/tmp", "--", "make", "check");
	parse_ok(&run);
	ck_assert(run.c.command_mode);
	ck_assert_str_eq(run.c.workspace, "/tmp");
	sr_config_free(&run.c);

	/* "--" as the value of an option does not start command mode. */
	PARSE(&run, "--entry", "--", "agentdir");
	parse_ok(&run);
	ck_assert(!run.c.command_mode);
	ck_assert_str_eq(run.c.entry, "--");
	ck_assert_str_eq(run.c.argv[0], "agentdir");
	sr_config_free(&run.c);

	/* An executable-file agent takes one too: what AGENT is, test-agent says. */
	PARSE(&run, "--workspace", "/tmp", "agentdir");
	parse_ok(&run);
	ck_assert_str_eq(run.c.workspace, "/tmp");
	sr_config_free(&run.c);

	PARSE(&run, "--");
	ck_assert_str_eq(parse_error(&run), "missing COMMAND after '--' (see --help)");
	sr_config_free(&run.c);
}
END_TEST

START_TEST(test_verbs)
{
	struct run run;

	PARSE(&run, "run", "--memory", "1G", "./agent", "arg");
	parse_ok(&run);
	ck_assert_int_eq(run.c.argc, 2);
	ck_assert_str_eq(run.c.argv[0], "./agent");
	ck_assert_uint_eq(run.c.memory_bytes, 1 * GiB);
	sr_config_free(&run.c);

	PARSE(&run, "-q", "run", "--", "true");
	parse_ok(&run);
	ck_assert(run.c.command_mode);
	ck_assert_str_eq(run.c.argv[0], "true");
	sr_config_free(&run.c);

	/* "run run": the second is the agent. */
	PARSE(&run, "run", "run");
	parse_ok(&run);
	ck_assert_int_eq(run.c.argc, 1);
	ck_assert_str_eq(run.c.argv[0], "run");
	sr_config_free(&run.c);

	/* A verb with options of its own, reached through run's options: where they go. */
	PARSE(&run, "--memory", "1G", "deploy", "./agent");
	ck_assert_str_eq(parse_error(&run), "'deploy' is a verb: its options follow it "
					    "(sandbox-run deploy [OPTIONS] ...; see sandbox-run "
					    "deploy --help)");
	ck_assert_int_eq(run.r, -EINVAL);
	sr_config_free(&run.c);

	PARSE(&run, "-p", "tx", "sessions");
	ck_assert_ptr_nonnull(strstr(parse_error(&run), "'sessions' is not available yet"));
	sr_config_free(&run.c);

	/* An existing path is always AGENT, even when named like a verb. */
	ck_assert_int_eq(mkdir("invoke", 0700), 0);
	PARSE(&run, "invoke");
	parse_ok(&run);
	ck_assert_str_eq(run.c.argv[0], "invoke");
	sr_config_free(&run.c);

	PARSE(&run, "run");
	ck_assert_ptr_nonnull(strstr(parse_error(&run), "missing AGENT"));
	sr_config_free(&run.c);
}
END_TEST

START_TEST(test_usage_errors)
{
	struct run run;

	PARSE(&run, "--memory", "1G");
	ck_assert_str_eq(parse_error(&run),
			 "missing AGENT (usage: sandbox-run [OPTIONS] AGENT "
			 "[ARG...] or sandbox-run [OPTIONS] -- COMMAND [ARG...]; "
			 "see --help)");
	sr_config_free(&run.c);

	PARSE(&run, "--memory", "lots", "a");
	ck_assert_str_eq(parse_error(&run), "option --memory: bad size 'lots' (use e.g. 512M, "
					    "2G, or 0 for unlimited)");
	sr_config_free(&run.c);

	PARSE(&run, "--timeout", "-5", "a");
	ck_assert_str_eq(parse_error(&run), "option --timeout: bad duration '-5' (use e.g. 120, "
					    "90s, 5m, 1h, or 0 for none)");
	sr_config_free(&run.c);

	PARSE(&run, "--memory", "512", "a");
	ck_assert_str_eq(parse_error(&run), "option --memory: size '512' is below 1M (did you "
					    "mean 512M?)");
	sr_config_free(&run.c);

	PARSE(&run, "--disk", "4K", "a");
	ck_assert_str_eq(parse_error(&run), "option --disk: size '4K' is below 1M (use e.g. "
					    "512M, 2G, or 0 for unlimited)");
	sr_config_free(&run.c);

	PARSE(&run, "--memroy", "1G", "a");
	ck_assert_str_eq(parse_error(&run), "unknown option '--memroy' (did you mean '--memory'?)");
	sr_config_free(&run.c);

	PARSE(&run, "--frobnicate=3", "a");
	ck_assert_str_eq(parse_error(&run), "unknown option '--frobnicate' (see --help)");
	sr_config_free(&run.c);

	PARSE(&run, "-x", "a");
	ck_assert_str_eq(parse_error(&run), "unknown option '-x' (see --help)");
	sr_config_free(&run.c);

	PARSE(&run, "--strict=yes", "a");
	ck_assert_str_eq(parse_error(&run), "option --strict takes no value");
	sr_config_free(&run.c);

	PARSE(&run, "a", "--memory");
	parse_ok(&run); /* after AGENT: the agent's own argument */
	sr_config_free(&run.c);

	PARSE(&run, "--memory");
	ck_assert_str_eq(parse_error(&run), "option --memory needs a value (see --help)");
	sr_config_free(&run.c);

	PARSE(&run, "-p");
	ck_assert_str_eq(parse_error(&run), "option --profile needs a value (see --help)");
	sr_config_free(&run.c);

	/*
	 * The value forgotten before another option: "--net" was taken for the
	 * workspace and "none" for the agent ("agent 'none' not found").
	 */
	PARSE(&run, "--workspace", "--net", "none", "--", "true");
	ck_assert_str_eq(parse_error(&run),
			 "option --workspace needs a value ('--net' is an option; see --help)");
	sr_config_free(&run.c);
	PARSE(&run, "-p", "--memory=1G", "a");
	ck_assert_str_eq(parse_error(&run),
			 "option -p needs a value ('--memory=1G' is an option; see --help)");
	sr_config_free(&run.c);
	/* Written in one word, such a value is meant; any other word is a value. */
	PARSE(&run, "--entry=--net", "a");
	parse_ok(&run);
	ck_assert_str_eq(run.c.entry, "--net");
	sr_config_free(&run.c);
	PARSE(&run, "--entry", "--netx", "a");
	parse_ok(&run);
	ck_assert_str_eq(run.c.entry, "--netx");
	sr_config_free(&run.c);

	PARSE(&run, "--ro-bind", "/a");
	ck_assert_str_eq(parse_error(&run), "option --ro-bind needs two values: SRC DST");
	sr_config_free(&run.c);

	PARSE(&run, "--bind", "/a", "relative", "x");
	ck_assert_str_eq(parse_error(&run), "option --bind: destination 'relative' is not "
					    "absolute (e.g. /data)");
	sr_config_free(&run.c);

	PARSE(&run, "--env", "TOKEN", "a");
	ck_assert_str_eq(parse_error(&run), "option --env: expected KEY=VALUE, got 'TOKEN' (use "
					    "--pass-env TOKEN to copy it from your environment)");
	sr_config_free(&run.c);

	PARSE(&run, "--env", "9X=1", "a");
	ck_assert_str_eq(parse_error(&run), "option --env: bad variable name '9X' (use letters, "
					    "digits and '_', not starting with a digit)");
	sr_config_free(&run.c);

	PARSE(&run, "--net-helper", "vde", "a");
	ck_assert_str_eq(parse_error(&run), "option --net-helper: bad network helper 'vde' (use "
					    "auto, slirp4netns or pasta)");
	sr_config_free(&run.c);

	PARSE(&run, "--allow", "10.1.0.0/8", "a");
	ck_assert_str_eq(parse_error(&run), "option --allow: '10.1.0.0/8' has host bits set (did "
					    "you mean 10.0.0.0/8?)");
	sr_config_free(&run.c);

	PARSE(&run, "--allow-host", "65536", "a");
	ck_assert_str_eq(parse_error(&run), "option --allow-host: bad port '65536' (use a port "
					    "number from 1 to 65535)");
	sr_config_free(&run.c);
	PARSE(&run, "-p", "offline", "--allow-host", "8080", "a");
	ck_assert_str_eq(parse_error(&run), "network: allow-host 8080 given but the network "
					    "mode is none (use --net egress, or drop the "
					    "allow-host entries)");
	sr_config_free(&run.c);
	PARSE(&run, "-p", "offline", "--allow", "192.0.2.1", "a");
	ck_assert_str_eq(parse_error(&run), "network: allow '192.0.2.1' given but the network "
					    "mode is none (use --net egress, or drop the allow "
					    "entries)");
	sr_config_free(&run.c);

	PARSE(&run, "-p", "nosuch", "a");
	ck_assert_ptr_nonnull(strstr(parse_error(&run), "profile 'nosuch' not found"));
	sr_config_free(&run.c);
}
END_TEST

START_TEST(test_profile_file_and_errors)
{
	struct run run;
	FILE *f = fopen("p.ini", "w");

	ck_assert_ptr_nonnull(f);
	fputs("[profile]\ninherit = e2b\n[limits]\npids = 5\n", f);
	fclose(f);
	PARSE(&run, "-p", "./p.ini", "a");
	parse_ok(&run);
	ck_assert_uint_eq(run.c.pids, 5);
	ck_assert_uint_eq(run.c.memory_bytes, 4 * GiB);
	ck_assert_str_eq(run.c.profile_path, "./p.ini");
	sr_config_free(&run.c);

	f = fopen("bad.ini", "w");
	ck_assert_ptr_nonnull(f);
	fputs("[limits]\n\nmemroy = 1G\n", f);
	fclose(f);
	PARSE(&run, "--profile=./bad.ini", "a");
	ck_assert_str_eq(parse_error(&run), "profile ./bad.ini:3: unknown key 'memroy' in "
					    "[limits] (did you mean 'memory'?)");
	sr_config_free(&run.c);
}
END_TEST

START_TEST(test_actions_and_verbosity)
{
	struct run run;

	PARSE(&run, "--help");
	parse_ok(&run);
	ck_assert_int_eq(run.action, SR_ACTION_HELP);
	sr_config_free(&run.c);

	PARSE(&run, "--memory", "lots", "-h");
	parse_ok(&run);
	ck_assert_int_eq(run.action, SR_ACTION_HELP);
	sr_config_free(&run.c);

	PARSE(&run, "--version");
	parse_ok(&run);
	ck_assert_int_eq(run.action, SR_ACTION_VERSION);
	sr_config_free(&run.c);

	PARSE(&run, "--print-config");
	parse_ok(&run);
	ck_assert_int_eq(run.action, SR_ACTION_PRINT_CONFIG);
	ck_assert(run.c.print_config);
	sr_config_free(&run.c);

	PARSE(&run, "-vv", "a");
	parse_ok(&run);
	ck_assert_int_eq(run.c.log_level, SR_LOG_DEBUG);
	sr_config_free(&run.c);

	PARSE(&run, "-v", "a");
	parse_ok(&run);
	ck_assert_int_eq(run.c.log_level, SR_LOG_INFO);
	sr_config_free(&run.c);

	PARSE(&run, "--quiet", "a");
	parse_ok(&run);
	ck_assert_int_eq(run.c.log_level, SR_LOG_ERROR);
	sr_config_free(&run.c);
}
END_TEST

static void assert_same_strv(const struct sr_strv *a, const struct sr_strv *b)
{
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		ck_assert_str_eq(a->items[i], b->items[i]);
}

START_TEST(test_print_config_round_trip)
{
	struct run run;
	struct sr_config back;
	struct sr_error err = {};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	PARSE(&run, "-p", "ci", "--print-config", "--memory", "768M", "--cpus", "1.5", "--timeout",
	      "1h", "--allow", "[2001:db8::1]:443", "--allow", "*.example.com:443", "--deny",
	      "10.0.0.0/8", "--allow-host", "3000", "--env", "API_URL=https://x.example/v1?a=b",
	      "--env", "EMPTY=", "--pass-env", "HOME", "--env-file", "/run/secrets.env",
	      "--ro-bind", "/usr/share", "/opt/share", "--bind", "/srv/out", "/out", "--entry",
	      "node  index.js", "--strict", "--workspace", "/tmp", "--", "make", "-j2");
	parse_ok(&run);
	ck_assert_int_eq(run.action, SR_ACTION_PRINT_CONFIG);

	f = open_memstream(&text, &len);
	ck_assert_int_eq(sr_config_print(&run.c, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(
	    strstr(text, "# sandbox-run: effective configuration (profile ci from "));
	ck_assert_ptr_nonnull(strstr(text, "\n# command: make -j2\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nAPI_URL = https://x.example/v1?a=b\n"));
	ck_assert_ptr_nonnull(strstr(text, "\npass = HOME\n"));

	sr_config_init(&back);
	ck_assert_msg(sr_profile_load_string(&back, text, "printed", &err) == 0, "%s\n%s", err.msg,
		      text);
	ck_assert_uint_eq(back.memory_bytes, 768 * MiB);
	ck_assert_uint_eq(back.memory_bytes, run.c.memory_bytes);
	ck_assert_uint_eq(back.cpus_milli, run.c.cpus_milli);
	ck_assert_uint_eq(back.pids, run.c.pids);
	ck_assert_uint_eq(back.timeout_ms, run.c.timeout_ms);
	ck_assert_uint_eq(back.disk_bytes, run.c.disk_bytes);
	ck_assert_int_eq(back.strict, run.c.strict);
	ck_assert_int_eq(back.net, run.c.net);
	assert_same_strv(&back.allow, &run.c.allow);
	assert_same_strv(&back.deny, &run.c.deny);
	assert_same_strv(&back.allow_host, &run.c.allow_host);
	assert_same_strv(&back.env, &run.c.env);
	assert_same_strv(&back.pass_env, &run.c.pass_env);
	ck_assert_str_eq(back.env_file, run.c.env_file);
	ck_assert_str_eq(back.entry, run.c.entry);
	ck_assert_uint_eq(back.n_binds, run.c.n_binds);
	for (size_t i = 0; i < back.n_binds; i++) {
		ck_assert_str_eq(back.binds[i].src, run.c.binds[i].src);
		ck_assert_str_eq(back.binds[i].dst, run.c.binds[i].dst);
		ck_assert_int_eq(back.binds[i].writable, run.c.binds[i].writable);
	}
	/* Command-line-only settings are comments, not settings. */
	ck_assert_ptr_null(back.workspace);
	free(text);
	sr_config_free(&back);
	sr_config_free(&run.c);
}
END_TEST

START_TEST(test_usage_lists_every_option)
{
	const char *const options[] = {
	    "-p, --profile",   "--memory",	"--cpus",	"--pids",     "--timeout",
	    "--disk",	       "--net",		"--net-helper", "--allow",    "--deny",
	    "--env KEY=VALUE", "--env-file",	"--pass-env",	"--ro-bind",  "--bind",
	    "--workspace",     "--entry",	"--result",	"--strict",   "--print-config",
	    "-q, --quiet",     "-v, --verbose", "--version",	"-h, --help",
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	sr_options_usage(f);
	fclose(f);
	for (size_t i = 0; i < sizeof(options) / sizeof(*options); i++)
		ck_assert_msg(strstr(text, options[i]), "usage lacks %s", options[i]);
	free(text);
}
END_TEST

/* A verb's parse: argv[0] is the verb's name, as main.c hands it. */
static void parse_verb(struct run *run, enum sr_options_verb verb, const char *base, char **args)
{
	static char *argv[64];
	int argc = 0;

	argv[argc++] = verb == SR_OPTIONS_DEPLOY ? "deploy" : "invoke";
	while (*args)
		argv[argc++] = *args++;
	argv[argc] = NULL;
	memset(run, 0, sizeof(*run));
	sr_config_init(&run->c);
	run->r = sr_options_parse_from(argc, argv, verb, base, &run->c, &run->action, &run->err);
}

#define PARSE_VERB(run, verb, base, ...) parse_verb(run, verb, base, (char *[]){__VA_ARGS__, NULL})

/* sr_options_words_last over args (argv[0] added): the result, space-separated. */
static const char *words_last(char **args)
{
	static char *argv[64];
	static char joined[512];
	int argc = 0;

	argv[argc++] = "invoke";
	while (*args)
		argv[argc++] = *args++;
	argv[argc] = NULL;
	sr_options_words_last(argc, argv);
	joined[0] = '\0';
	for (int i = 1; i < argc; i++) {
		if (i > 1)
			strcat(joined, " ");
		strcat(joined, argv[i]);
	}
	return joined;
}

#define WORDS_LAST(...) words_last((char *[]){__VA_ARGS__, NULL})

START_TEST(test_options_after_the_word)
{
	struct run run;

	ck_assert_str_eq(WORDS_LAST("web", "--net", "none", "-q"), "--net none -q web");
	ck_assert_str_eq(WORDS_LAST("--memory", "1G", "web", "--net=none", "-qv", "-p", "tx"),
			 "--memory 1G --net=none -qv -p tx web");
	/* --bind's two values stay with it. */
	ck_assert_str_eq(WORDS_LAST("./a", "--bind", "src", "/dst", "--name", "x"),
			 "--bind src /dst --name x ./a");
	/* Words keep their order: the parse names the second one. */
	ck_assert_str_eq(WORDS_LAST("web", "hello", "-q"), "-q web hello");
	/* An unknown option stays an option, for the parse to name (with its suggestion). */
	ck_assert_str_eq(WORDS_LAST("web", "--memroy", "1G"), "--memroy web 1G");
	/* What follows -- is not looked at; a value missing at the end does not take NAME. */
	ck_assert_str_eq(WORDS_LAST("web", "--", "--net", "none"), "web -- --net none");
	ck_assert_str_eq(WORDS_LAST("web", "--net"), "web --net");
	ck_assert_str_eq(WORDS_LAST("--net", "none", "web"), "--net none web");

	PARSE_VERB(&run, SR_OPTIONS_INVOKE, NULL, "--net", "none", "web");
	parse_ok(&run);
	ck_assert_int_eq(run.c.net, SR_NET_NONE);
	sr_config_free(&run.c);
}
END_TEST

START_TEST(test_deploy_and_invoke)
{
	struct run run;
	FILE *f;

	PARSE_VERB(&run, SR_OPTIONS_DEPLOY, NULL, "--name", "web", "--install", "npm run build",
		   "--install-timeout", "20m", "--keep", "5", "--memory", "1G", "./agent");
	parse_ok(&run);
	ck_assert_str_eq(run.c.name, "web");
	ck_assert_str_eq(run.c.install, "npm run build");
	ck_assert_uint_eq(run.c.install_timeout_ms, 20 * 60 * 1000);
	ck_assert_uint_eq(run.c.keep_versions, 5);
	ck_assert_int_eq(run.c.argc, 1);
	sr_config_free(&run.c);

	PARSE_VERB(&run, SR_OPTIONS_DEPLOY, NULL, "./a", "./b");
	ck_assert_str_eq(parse_error(&run), "deploy takes one AGENT ('./b' follows it)");
	sr_config_free(&run.c);
	PARSE_VERB(&run, SR_OPTIONS_DEPLOY, NULL, "--", "npm", "start");
	ck_assert_ptr_nonnull(strstr(parse_error(&run), "deploy takes no COMMAND"));
	sr_config_free(&run.c);
	PARSE_VERB(&run, SR_OPTIONS_DEPLOY, NULL, "--name", "../x", "./a");
	ck_assert_ptr_nonnull(strstr(parse_error(&run), "bad name '../x'"));
	sr_config_free(&run.c);

	/* invoke: NAME alone, deploy's own options refused, the prompt on stdin. */
	PARSE_VERB(&run, SR_OPTIONS_INVOKE, NULL, "--install", "true", "web");
	ck_assert_str_eq(parse_error(&run),
			 "option --install is for sandbox-run deploy (see --help)");
	sr_config_free(&run.c);
	PARSE_VERB(&run, SR_OPTIONS_INVOKE, NULL, "--name", "x", "web");
	ck_assert_ptr_nonnull(strstr(parse_error(&run), "create, deploy or export"));
	sr_config_free(&run.c);
	PARSE_VERB(&run, SR_OPTIONS_INVOKE, NULL, "web", "hello");
	ck_assert_str_eq(parse_error(&run), "invoke takes one NAME ('hello' follows it): the "
					    "prompt comes on standard input");
	sr_config_free(&run.c);
	PARSE_VERB(&run, SR_OPTIONS_INVOKE, NULL, "--workspace", "/tmp", "web");
	ck_assert_ptr_nonnull(strstr(parse_error(&run), "invoke takes no --workspace"));
	sr_config_free(&run.c);
	/* An option after NAME with its value missing (words_last leaves it there): said so. */
	PARSE_VERB(&run, SR_OPTIONS_INVOKE, NULL, "web", "--net");
	ck_assert_str_eq(parse_error(&run), "invoke: option --net needs a value (see --help)");
	sr_config_free(&run.c);
	PARSE_VERB(&run, SR_OPTIONS_DEPLOY, NULL, "./a", "-p");
	ck_assert_str_eq(parse_error(&run), "deploy: option -p needs a value (see --help)");
	sr_config_free(&run.c);
	/* A flag is no value-taker: the word is refused as a word. */
	PARSE_VERB(&run, SR_OPTIONS_INVOKE, NULL, "web", "--", "--strict");
	ck_assert_ptr_nonnull(strstr(parse_error(&run), "invoke takes"));
	sr_config_free(&run.c);

	/* The deployment's configuration is the base; options go over it; -p replaces it. */
	f = fopen("deployed.ini", "w");
	ck_assert_ptr_nonnull(f);
	fputs("[limits]\nmemory = 512M\ntimeout = 30s\n[network]\nmode = none\n", f);
	ck_assert_int_eq(fclose(f), 0);
	PARSE_VERB(&run, SR_OPTIONS_INVOKE, "./deployed.ini", "--timeout", "5s", "web");
	parse_ok(&run);
	ck_assert_uint_eq(run.c.memory_bytes, 512 * MiB);
	ck_assert_uint_eq(run.c.timeout_ms, 5000);
	ck_assert_int_eq(run.c.net, SR_NET_NONE);
	ck_assert_str_eq(run.c.argv[0], "web");
	sr_config_free(&run.c);
	PARSE_VERB(&run, SR_OPTIONS_INVOKE, "./deployed.ini", "-p", "tx", "web");
	parse_ok(&run);
	ck_assert_uint_eq(run.c.memory_bytes, 256 * MiB);
	sr_config_free(&run.c);
}
END_TEST

/* A deployment's secrets are in no printed configuration, whatever else is. */
START_TEST(test_print_config_has_no_secrets)
{
	struct sr_config c;
	struct sr_error err = {0};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	sr_config_init(&c);
	ck_assert_int_eq(sr_config_set_env(&c, "PLAIN", "shown", &err), 0);
	c.secrets =
	    sr_secrets_pack((char *[]){"API_KEY=hunter2-secret", NULL}, sr_secmem_alloc, NULL);
	ck_assert_ptr_nonnull(c.secrets);
	ck_assert_int_eq(sr_config_set(&c, "deploy", "install", "make deps", &err), 0);
	f = open_memstream(&text, &len);
	ck_assert_int_eq(sr_config_print(&c, f), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "PLAIN = shown"));
	ck_assert_ptr_nonnull(strstr(text, "[deploy]\ninstall = make deps"));
	ck_assert_ptr_null(strstr(text, "hunter2"));
	ck_assert_ptr_null(strstr(text, "API_KEY"));
	free(text);
	sr_config_free(&c);
}
END_TEST

static Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_overrides_beat_profile);
	tcase_add_test(tc, test_lists_and_binds);
	tcase_add_test(tc, test_command_mode);
	tcase_add_test(tc, test_verbs);
	tcase_add_test(tc, test_usage_errors);
	tcase_add_test(tc, test_profile_file_and_errors);
	tcase_add_test(tc, test_actions_and_verbosity);
	tcase_add_test(tc, test_print_config_round_trip);
	tcase_add_test(tc, test_usage_lists_every_option);
	tcase_add_test(tc, test_deploy_and_invoke);
	tcase_add_test(tc, test_options_after_the_word);
	tcase_add_test(tc, test_print_config_has_no_secrets);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(options_suite());
}
