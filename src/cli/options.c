/* SPDX-License-Identifier: MIT */
/*
 * The run options (options.h): their table, their collecting from argv
 * (a verb's own beside them), the word that may follow them (run, a verb
 * of its own, "--"), the words after them and the parse. What the
 * collected options set in the configuration is options-apply.c's.
 */
#include "options-internal.h"

#include "util.h"

#include <getopt.h>
#include <sys/stat.h>

/* getopt's short options, after the mode characters each parse puts first. */
#define SHORT_OPTIONS "p:qvh"

static const struct option long_options[] = {
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"cpus", required_argument, NULL, OPT_CPUS},
    {"pids", required_argument, NULL, OPT_PIDS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"disk", required_argument, NULL, OPT_DISK},
    {"net", required_argument, NULL, OPT_NET},
    {"net-helper", required_argument, NULL, OPT_NET_HELPER},
    {"allow", required_argument, NULL, OPT_ALLOW},
    {"deny", required_argument, NULL, OPT_DENY},
    {"allow-host", required_argument, NULL, OPT_ALLOW_HOST},
    {"env", required_argument, NULL, OPT_ENV},
    {"env-file", required_argument, NULL, OPT_ENV_FILE},
    {"pass-env", required_argument, NULL, OPT_PASS_ENV},
    {"ro-bind", required_argument, NULL, OPT_RO_BIND},
    {"bind", required_argument, NULL, OPT_BIND},
    {"workspace", required_argument, NULL, OPT_WORKSPACE},
    {"entry", required_argument, NULL, OPT_ENTRY},
    {"result", required_argument, NULL, OPT_RESULT},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, OPT_HELP},
    {"name", required_argument, NULL, OPT_NAME},
    {"from", required_argument, NULL, OPT_FROM},
    {"install", required_argument, NULL, OPT_INSTALL},
    {"install-timeout", required_argument, NULL, OPT_INSTALL_TIMEOUT},
    {"keep", required_argument, NULL, OPT_KEEP},
    {"disk-backing", required_argument, NULL, OPT_DISK_BACKING},
    {"export", required_argument, NULL, OPT_EXPORT},
    {"changes", required_argument, NULL, OPT_CHANGES},
    {},
};

/* Verbs of later versions: a clear message rather than "agent 'deploy' not found". */
static const char *const future_verbs[] = {"sessions", NULL};
/* Verbs with options of their own, named after run's options: say where the options go. */
static const char *const own_option_verbs[] = {"deploy", "invoke", "deployments", "secrets", NULL};

static const char *name_in(const struct option *options, int id)
{
	for (const struct option *o = options; o->name; o++)
		if (o->val == id)
			return o->name;
	return "?";
}

/* The long option of options named by name's first n bytes, or NULL. */
static const struct option *long_option(const struct option *options, const char *name, size_t n)
{
	for (const struct option *o = options; o->name; o++)
		if (strlen(o->name) == n && strncmp(name, o->name, n) == 0)
			return o;
	return NULL;
}

const char *options_name(const struct parsed *p, int id)
{
	return name_in(p->options, id);
}

static bool path_exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

static int unknown_option(const struct option *options, int argc, char **argv, struct sr_error *err)
{
	const char *bad = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
	_cleanup_free_ const char **names = NULL;
	_cleanup_free_ char *word = NULL;
	const char *s;
	size_t n = 0;

	if (!bad || strncmp(bad, "--", 2) != 0)
		return sr_error_msg(err, -EINVAL, "unknown option '-%c' (see --help)",
				    optopt > ' ' && optopt < 127 ? optopt : '?');
	word = strndup(bad + 2, strcspn(bad + 2, "="));
	if (!word)
		return sr_error_errno(err, -ENOMEM, "options");
	if (long_option(options, word, strlen(word)))
		return sr_error_msg(err, -EINVAL, "option --%s takes no value", word);
	for (const struct option *o = options; o->name; o++)
		n++;
	names = calloc(n + 1, sizeof(*names));
	if (!names)
		return sr_error_errno(err, -ENOMEM, "options");
	n = 0;
	for (const struct option *o = options; o->name; o++)
		names[n++] = o->name;
	names[n] = NULL;
	s = sr_suggest(word, names);
	if (s)
		return sr_error_msg(err, -EINVAL, "unknown option '--%s' (did you mean '--%s'?)",
				    word, s);
	return sr_error_msg(err, -EINVAL, "unknown option '--%s' (see --help)", word);
}

int sr_options_value_missing(const struct option *options, int argc, char **argv,
			     struct sr_error *err)
{
	const char *w = optarg;

	/* Written as --OPT=VALUE, or from the same word ("-pNAME"): meant as it is. */
	if (!w || optind < 1 || optind > argc || w != argv[optind - 1] || strncmp(w, "--", 2) != 0)
		return 0;
	if (long_option(options, w + 2, strcspn(w + 2, "=")))
		return sr_error_msg(err, -EINVAL,
				    "option %s needs a value ('%s' is an option; see --help)",
				    argv[optind - 2], w);
	return 0;
}

int sr_options_getopt_error(int o, const struct option *options, int argc, char **argv,
			    struct sr_error *err)
{
	if (o == ':')
		return sr_error_msg(err, -EINVAL, "option --%s needs a value (see --help)",
				    name_in(options, optopt));
	return unknown_option(options, argc, argv, err);
}

/*
 * After the options: "--" (command mode), the verb "run" (the explicit
 * form of the default, options may follow it), a verb of a later version,
 * or AGENT. A word that names an existing path is always AGENT.
 */
static int first_word(int argc, char **argv, int last_end, bool *verb_seen, struct parsed *p,
		      struct sr_error *err)
{
	const char *w;

	if (optind - 1 == last_end && last_end < argc && strcmp(argv[last_end], "--") == 0) {
		if (p->verb == SR_OPTIONS_CREATE)
			return sr_error_msg(
			    err, -EINVAL,
			    "create runs nothing: make the sandbox, then run commands "
			    "in it with sandbox-run exec ID -- COMMAND");
		if (p->verb == SR_OPTIONS_DEPLOY || p->verb == SR_OPTIONS_INVOKE)
			return sr_error_msg(err, -EINVAL,
					    "%s takes no COMMAND: the agent's entry point runs "
					    "(--entry CMD names another)",
					    p->verb == SR_OPTIONS_DEPLOY ? "deploy" : "invoke");
		p->command_mode = true;
		return 0;
	}
	if (optind >= argc || *verb_seen || p->verb != SR_OPTIONS_RUN)
		return 0;
	w = argv[optind];
	if (path_exists(w))
		return 0;
	if (strcmp(w, "run") == 0) {
		*verb_seen = true;
		optind++;
		return 1;
	}
	for (size_t i = 0; own_option_verbs[i]; i++)
		if (strcmp(w, own_option_verbs[i]) == 0)
			return sr_error_msg(err, -EINVAL,
					    "'%s' is a verb: its options follow it (sandbox-run %s "
					    "[OPTIONS] ...; see sandbox-run %s --help)",
					    w, w, w);
	for (size_t i = 0; future_verbs[i]; i++)
		if (strcmp(w, future_verbs[i]) == 0)
			return sr_error_msg(err, -ENOTSUP,
					    "'%s' is not available yet in this version (use "
					    "sandbox-run [run] AGENT or sandbox-run -- COMMAND)",
					    w);
	return 0;
}

static int two_args(const struct parsed *p, int id, int argc, char **argv, struct collected *o,
		    struct sr_error *err)
{
	if (optind >= argc)
		return sr_error_msg(err, -EINVAL, "option --%s needs two values: SRC DST",
				    options_name(p, id));
	o->arg2 = argv[optind++];
	return 0;
}

/* An option that only some verbs take, given to another: said so. */
static int check_verb(const struct parsed *p, int o, struct sr_error *err)
{
	switch (o) {
	case OPT_NAME:
	case OPT_FROM:
		if (p->verb != SR_OPTIONS_CREATE &&
		    !(o == OPT_NAME &&
		      (p->verb == SR_OPTIONS_DEPLOY || p->verb == SR_OPTIONS_EXPORT)))
			return sr_error_msg(err, -EINVAL,
					    "option --%s is for sandbox-run %s (see --help)",
					    options_name(p, o),
					    o == OPT_NAME ? "create, deploy or export" : "create");
		return 0;
	case OPT_INSTALL:
	case OPT_INSTALL_TIMEOUT:
	case OPT_KEEP:
		if (p->verb != SR_OPTIONS_DEPLOY)
			return sr_error_msg(err, -EINVAL,
					    "option --%s is for sandbox-run deploy (see --help)",
					    options_name(p, o));
		return 0;
	case OPT_RESULT:
		/*
		 * A record is of a run, an exec or an invocation: create and
		 * deploy took --result and wrote nothing, ever, and said nothing.
		 */
		if (p->verb == SR_OPTIONS_CREATE)
			return sr_error_msg(err, -EINVAL,
					    "option --result: create runs nothing (sandbox-run "
					    "exec --result FILE ID -- COMMAND records a command)");
		if (p->verb == SR_OPTIONS_DEPLOY)
			return sr_error_msg(err, -EINVAL,
					    "option --result: deploy writes no record (sandbox-run "
					    "deployments log NAME shows the install; invoke "
					    "--result FILE NAME records an invocation)");
		return 0;
	}
	return 0;
}

/* Option o (getopt_long()'s answer, not -h or --version) taken into p. */
static int take_option(struct parsed *p, int o, int argc, char **argv, struct sr_error *err)
{
	struct collected *c = &p->opts[p->n];
	int r;

	switch (o) {
	case OPT_PROFILE:
		p->profile = optarg;
		return 0;
	case OPT_QUIET:
		p->verbosity--;
		return 0;
	case OPT_VERBOSE:
		p->verbosity++;
		return 0;
	case OPT_PRINT_CONFIG:
		p->print_config = true;
		return 0;
	}
	if (o >= SR_OPTIONS_EXTRA_FIRST && p->extra) {
		/* The verb's own: no profile key, taken as it comes. */
		r = p->extra->take(p->extra->ctx, o, optarg, err);
		if (r < 0)
			return sr_error_prefix(err, "option --%s", options_name(p, o));
		return 0;
	}
	if ((r = check_verb(p, o, err)) < 0)
		return r;
	if ((o == OPT_RO_BIND || o == OPT_BIND) && (r = two_args(p, o, argc, argv, c, err)) < 0)
		return r;
	c->id = o;
	c->arg = optarg;
	p->n++;
	return 0;
}

static int collect(int argc, char **argv, struct parsed *p, struct sr_error *err)
{
	bool verb_seen = false;
	int last_end = 1, r;

	/* 0, not 1: glibc then also resets its internal state (tests parse many times). */
	optind = 0;
	opterr = 0;
	for (;;) {
		int o = getopt_long(argc, argv, "+:" SHORT_OPTIONS, p->options, NULL);

		if (o == -1) {
			r = first_word(argc, argv, last_end, &verb_seen, p, err);
			if (r < 0)
				return r;
			if (r > 0) {
				last_end = optind;
				continue;
			}
			break;
		}
		if (sr_options_value_missing(p->options, argc, argv, err) < 0)
			return -EINVAL;
		if (o == '?' || o == ':')
			return sr_options_getopt_error(o, p->options, argc, argv, err);
		if (o == OPT_HELP || o == OPT_VERSION) {
			p->action = o == OPT_HELP ? SR_ACTION_HELP : SR_ACTION_VERSION;
			return 0;
		}
		r = take_option(p, o, argc, argv, err);
		if (r < 0)
			return r;
		last_end = optind;
	}
	p->first_arg = optind;
	return 0;
}

enum sr_log_level sr_options_log_level(int verbosity)
{
	int level = SR_LOG_WARNING + verbosity;

	if (level < SR_LOG_ERROR)
		level = SR_LOG_ERROR;
	if (level > SR_LOG_DEBUG)
		level = SR_LOG_DEBUG;
	return (enum sr_log_level)level;
}

int sr_options_parse(int argc, char **argv, struct sr_config *c, enum sr_action *ret_action,
		     struct sr_error *err)
{
	return sr_options_parse_verb(argc, argv, SR_OPTIONS_RUN, c, ret_action, err);
}

static int parse(int argc, char **argv, enum sr_options_verb verb, const char *base_profile,
		 const struct sr_options_extra *extra, struct sr_config *c,
		 enum sr_action *ret_action, struct sr_error *err);

int sr_options_parse_verb(int argc, char **argv, enum sr_options_verb verb, struct sr_config *c,
			  enum sr_action *ret_action, struct sr_error *err)
{
	return parse(argc, argv, verb, NULL, NULL, c, ret_action, err);
}

int sr_options_parse_from(int argc, char **argv, enum sr_options_verb verb,
			  const char *base_profile, struct sr_config *c, enum sr_action *ret_action,
			  struct sr_error *err)
{
	return parse(argc, argv, verb, base_profile, NULL, c, ret_action, err);
}

int sr_options_parse_extra(int argc, char **argv, enum sr_options_verb verb,
			   const struct sr_options_extra *extra, struct sr_config *c,
			   enum sr_action *ret_action, struct sr_error *err)
{
	return parse(argc, argv, verb, NULL, extra, c, ret_action, err);
}

/* long_options, then the verb's own. */
static struct option *merge_options(const struct sr_options_extra *extra)
{
	size_t n = SR_ARRAY_SIZE(long_options) - 1, m = 0;
	struct option *all;

	while (extra && extra->options[m].name)
		m++;
	all = calloc(n + m + 1, sizeof(*all));
	if (!all)
		return NULL;
	memcpy(all, long_options, n * sizeof(*all));
	if (m)
		memcpy(all + n, extra->options, m * sizeof(*all));
	return all;
}

void sr_options_words_last(int argc, char **argv)
{
	_cleanup_free_ struct option *options = merge_options(NULL);
	_cleanup_free_ char **words = calloc((size_t)argc + 1, sizeof(*words));
	int to = 1, from = 1, n = 0;

	if (!options || !words || argc < 2)
		return;
	optind = 0;
	opterr = 0;
	/*
	 * A leading '-' has getopt return each word as option 1, in place,
	 * rather than permute argv by its own rules (which POSIXLY_CORRECT
	 * turns off): what is moved, and where, is decided here alone.
	 */
	for (;;) {
		int o = getopt_long(argc, argv, "-:" SHORT_OPTIONS, options, NULL);

		/*
		 * A value missing at the end (`invoke NAME --net`) stays where
		 * it is: moved before NAME it would take NAME as its value.
		 */
		if (o == -1 || o == ':')
			break;
		if ((o == OPT_RO_BIND || o == OPT_BIND) && optind < argc)
			optind++; /* DST: the parse takes it as collect() does */
		if (o == 1)
			words[n++] = argv[from];
		else
			while (from < optind)
				argv[to++] = argv[from++];
		from = optind;
	}
	/* Every word before `from` was taken out, so the words fill the gap exactly. */
	for (int i = 0; i < n; i++)
		argv[to++] = words[i];
}

/*
 * Is word an option that takes a value ("--net", "-p")? Left after the
 * words only when its value is missing (sr_options_words_last()).
 */
static bool wants_value(const char *word)
{
	const struct option *o;

	if (word[0] == '-' && word[1] && word[1] != '-' && word[1] != ':' && !word[2]) {
		const char *s = strchr(SHORT_OPTIONS, word[1]);

		return s && s[1] == ':';
	}
	if (strncmp(word, "--", 2) != 0)
		return false;
	o = long_option(long_options, word + 2, strlen(word + 2));
	return o && o->has_arg == required_argument;
}

/* After the options, deploy's AGENT or invoke's NAME: exactly one, and no --workspace. */
static int one_word(const struct sr_config *c, enum sr_options_verb verb, struct sr_error *err)
{
	const char *verb_name = verb == SR_OPTIONS_DEPLOY ? "deploy" : "invoke";
	const char *what = verb == SR_OPTIONS_DEPLOY ? "AGENT" : "NAME";

	if (c->workspace)
		return sr_error_msg(err, -EINVAL, "%s takes no --workspace: %s", verb_name,
				    verb == SR_OPTIONS_DEPLOY
					? "the AGENT directory or archive is the code"
					: "the deployment's version is the workspace");
	if (c->argc == 0)
		return sr_error_msg(err, -EINVAL, "%s: missing %s (see sandbox-run %s --help)",
				    verb_name, what, verb_name);
	if (c->argc == 2 && wants_value(c->argv[1]))
		return sr_error_msg(err, -EINVAL, "%s: option %s needs a value (see --help)",
				    verb_name, c->argv[1]);
	if (c->argc > 1)
		return sr_error_msg(
		    err, -EINVAL, "%s takes one %s ('%s' follows it)%s", verb_name, what,
		    c->argv[1],
		    verb == SR_OPTIONS_INVOKE ? ": the prompt comes on standard input" : "");
	return 0;
}

/* The words after the options (c->argv), as many as verb takes. */
static int check_words(struct sr_config *c, enum sr_options_verb verb, struct sr_error *err)
{
	if (verb == SR_OPTIONS_CREATE) {
		/* A sandbox with nothing to run yet: its AGENT, if any, is its workspace. */
		c->no_entry = true;
		if (c->argc > 1)
			return sr_error_msg(err, -EINVAL,
					    "create takes one AGENT at most ('%s' follows it): run "
					    "commands with sandbox-run exec ID -- COMMAND",
					    c->argv[1]);
		if (c->argc == 1 && c->workspace)
			return sr_error_msg(err, -EINVAL,
					    "create takes an AGENT or --workspace DIR, not both");
		if (c->from && (c->argc == 1 || c->workspace))
			return sr_error_msg(err, -EINVAL,
					    "--from SNAPSHOT is the workspace: no AGENT or "
					    "--workspace with it");
	} else if (verb == SR_OPTIONS_DEPLOY || verb == SR_OPTIONS_INVOKE) {
		return one_word(c, verb, err);
	} else if (c->argc == 0 && !c->print_config && verb != SR_OPTIONS_EXPORT) {
		if (c->command_mode)
			return sr_error_msg(err, -EINVAL,
					    "missing COMMAND after '--' (see --help)");
		return sr_error_msg(err, -EINVAL,
				    "missing AGENT (usage: sandbox-run [OPTIONS] AGENT [ARG...] "
				    "or sandbox-run [OPTIONS] -- COMMAND [ARG...]; see --help)");
	} else if (c->argc > 0 && c->command_mode && c->argv[0][0] == '\0') {
		/* A PATH search for "" tries each directory itself: ": Permission denied", 126. */
		return sr_error_msg(err, -EINVAL,
				    "COMMAND after '--' is an empty word: name a command (see "
				    "--help)");
	}
	return 0;
}

/* The options of verb, over base_profile (NULL: the default) where no -p names one. */
static int parse(int argc, char **argv, enum sr_options_verb verb, const char *base_profile,
		 const struct sr_options_extra *extra, struct sr_config *c,
		 enum sr_action *ret_action, struct sr_error *err)
{
	_cleanup_free_ struct collected *opts = calloc((size_t)argc + 1, sizeof(*opts));
	_cleanup_free_ struct option *options = merge_options(extra);
	struct parsed p = {.verb = verb,
			   .options = options,
			   .extra = extra,
			   .opts = opts,
			   .action = SR_ACTION_RUN};
	int r;

	if (!opts || !options)
		return sr_error_errno(err, -ENOMEM, "options");
	if (argc < 1)
		return sr_error_msg(err, -EINVAL, "empty command line");
	r = collect(argc, argv, &p, err);
	if (r < 0)
		return r;
	if (p.action != SR_ACTION_RUN) {
		*ret_action = p.action;
		return 0;
	}
	c->log_level = sr_options_log_level(p.verbosity);
	if ((r = options_take_result(&p, c, err)) < 0 ||
	    (r = options_load_profile(&p, base_profile, c, err)) < 0 ||
	    (r = options_apply(&p, c, err)) < 0)
		return r;
	c->print_config = p.print_config;
	c->command_mode = p.command_mode;
	c->argv = argv + p.first_arg;
	c->argc = argc - p.first_arg;
	r = check_words(c, verb, err);
	if (r < 0)
		return r;
	r = sr_config_validate(c, err);
	if (r < 0)
		return r;
	*ret_action = c->print_config ? SR_ACTION_PRINT_CONFIG : SR_ACTION_RUN;
	return 0;
}

void sr_options_usage(FILE *f)
{
	fputs("Usage: sandbox-run [OPTIONS] AGENT [ARG...]\n"
	      "       sandbox-run [OPTIONS] -- COMMAND [ARG...]\n"
	      "Run an AI agent (a directory, an executable or an archive) or any command\n"
	      "in a fresh, rootless, egress-only sandbox.\n"
	      "\n"
	      "  -p, --profile NAME|FILE  profile to start from (default: default)\n"
	      "      --memory SIZE        memory limit, e.g. 512M, 2G; 0 = unlimited\n"
	      "      --cpus N             CPUs, e.g. 0.5, 2; 0 = unlimited\n"
	      "      --pids N             max processes and threads\n"
	      "      --timeout DURATION   e.g. 120, 90s, 5m, 1h; 0 = none\n"
	      "      --disk SIZE          max bytes written in the sandbox\n"
	      "      --disk-backing KIND  where its writes live: auto, disk or memory\n"
	      "      --net MODE           none or egress\n"
	      "      --net-helper NAME    egress through auto (default), slirp4netns or pasta\n"
	      "      --allow DEST         allow only these destinations (CIDR, IP, host or\n"
	      "                           *.domain, optional :PORT); repeatable\n"
	      "      --deny DEST          refuse these destinations; repeatable\n"
	      "      --allow-host PORT    open PORT of the host's 127.0.0.1 at 10.0.2.2:PORT;\n"
	      "                           repeatable\n"
	      "      --env KEY=VALUE      set a variable; repeatable\n"
	      "      --env-file FILE      KEY=VALUE lines (secrets); not group/world readable\n"
	      "      --pass-env KEY       copy a variable from this environment; repeatable\n"
	      "      --ro-bind SRC DST    read-only host path inside the sandbox\n"
	      "      --bind SRC DST       host path, writable from the sandbox\n"
	      "      --workspace DIR      workspace for -- COMMAND (default: empty)\n"
	      "      --entry CMD          entry command of a directory agent\n"
	      "      --result FILE        write the result record (JSON) to FILE\n"
	      "      --export PATH[:HOSTDIR]  copy PATH out of the sandbox when it ends (also\n"
	      "                           after a failure or timeout); repeatable\n"
	      "      --changes FILE       write what changed in /workspace (tar + manifest)\n"
	      "      --strict             fail (125) when a limit cannot be enforced\n"
	      "      --print-config       print the effective configuration and exit\n"
	      "  -q, --quiet              only errors on stderr\n"
	      "  -v, --verbose            more messages; -vv for debug\n"
	      "      --version            print the version and exit\n"
	      "  -h, --help               print this help and exit\n"
	      "\n"
	      "Exit status: the agent's own; 124 timeout; 125 sandbox-run failed;\n"
	      "126 cannot execute; 127 not found; 128+N killed by signal N.\n"
	      "\n"
	      "Sandboxes that live (each verb has its own --help: sandbox-run help VERB):\n"
	      "  create [OPTIONS] [--name NAME] [AGENT | --workspace DIR | --from SNAPSHOT]\n"
	      "  exec [-i] [-t] [--env K=V] [--workdir DIR] [--timeout D] [--result FILE]\n"
	      "       ID -- COMMAND\n"
	      "  ls [--json]   inspect ID   timeout ID DURATION   port ID PORT\n"
	      "  cp ID:PATH HOSTPATH | HOSTPATH ID:PATH   rm [-f] ID...\n"
	      "  snapshot ID NAME   snapshots [--json | rm NAME...]\n"
	      "  diff ID|FILE [--stat|--patch|--json]   apply ID|FILE [--to DIR] [--force]\n"
	      "\n"
	      "Deployments: install once, a fresh sandbox per prompt (docs/deploy.md):\n"
	      "  deploy [OPTIONS] [--name NAME] [--install CMD] AGENT\n"
	      "  invoke [OPTIONS] NAME      the prompt on stdin, the response on stdout\n"
	      "  deployments [--json | rollback NAME [VERSION] | rm NAME... | log NAME]\n"
	      "  secrets set NAME KEY (the value on stdin) | ls NAME | rm NAME KEY\n"
	      "\n"
	      "The local API, other engines, this host:\n"
	      "  serve [--listen unix:PATH | [ADDR:]PORT] [--warm [PROFILE=]N]  (docs/api.md)\n"
	      "  export --oci DIR | --k8s --image IMAGE [OPTIONS] [AGENT | -- COMMAND]\n"
	      "  doctor [--json]            can this host run sandboxes, and how well\n",
	      f);
}
