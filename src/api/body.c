/* SPDX-License-Identifier: MIT */
#include "body.h"
#include "profile.h"
#include "secmem.h"
#include "units.h"
#include "util.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <strings.h>

/* The longest duration a number may say: ten years, far below what the timers take. */
#define DURATION_MAX_S (10.0 * 365 * 24 * 3600)
#define ARGV_MAX       4096

void sr_api_create_free(struct sr_api_create *c)
{
	/* Its --env values may be secrets, which a keeper forked later would copy. */
	sr_strv_wipe(&c->argv);
	free(c->profile);
	free(c->from);
	if (c->metadata)
		json_decref(c->metadata);
	*c = (struct sr_api_create){0};
}

void sr_api_exec_free(struct sr_api_exec *x)
{
	if (x->argv)
		json_decref(x->argv);
	if (x->env)
		json_decref(x->env);
	free(x->cwd);
	free(x->input);
	*x = (struct sr_api_exec){0};
}

int sr_api_duration(json_t *v, uint64_t *ret_ms)
{
	double s;

	if (json_is_string(v))
		return sr_parse_duration(json_string_value(v), ret_ms);
	if (!json_is_number(v))
		return -EINVAL;
	s = json_number_value(v);
	/* Under a millisecond but not 0 would be 0: no deadline at all. */
	if (!isfinite(s) || s < 0 || s > DURATION_MAX_S || (s > 0 && s < 0.001))
		return -ERANGE;
	*ret_ms = (uint64_t)(s * 1000.0);
	return 0;
}

/* v as a message shows it: a string in quotes, anything else as JSON, cut to fit len. */
static void shown_value(json_t *v, char *buf, size_t len)
{
	_cleanup_free_ char *text = NULL;

	if (json_is_string(v)) {
		snprintf(buf, len, "'%s'", json_string_value(v));
		return;
	}
	text = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	snprintf(buf, len, "%s", text ? text : "nothing");
}

int sr_api_duration_field(const char *key, json_t *v, uint64_t *ret_ms, struct sr_error *err)
{
	char shown[100];

	if (sr_api_duration(v, ret_ms) == 0)
		return 0;
	shown_value(v, shown, sizeof(shown));
	if (json_is_string(v))
		return sr_error_msg(err, -EINVAL,
				    "%s: %s is not a duration (e.g. 90s, 5m, 1h, or a number of "
				    "seconds; 0: none)",
				    key, shown);
	return sr_error_msg(err, -EINVAL,
			    "%s: %s is not a duration (a number of seconds from 0 to 10 years, "
			    "or a string: 90s, 5m, 1h)",
			    key, shown);
}

enum kind {
	K_STR,	 /* a string */
	K_NUM,	 /* a string, or a number written as one */
	K_SIZE,	 /* a string, or a number of bytes */
	K_DUR,	 /* a string, or a number of seconds */
	K_BOOL,	 /* true: the option alone */
	K_LIST,	 /* strings: the option once each */
	K_MAP,	 /* {K: V}: the option once each with K=V */
	K_PAIRS, /* [[A, B]..]: the option once each with two values */
};

static const struct create_key {
	const char *key;
	const char *option; /* NULL: AGENT, the positional argument */
	enum kind kind;
} create_keys[] = {
    {"profile", "--profile", K_STR},
    {"name", "--name", K_STR},
    {"timeout", "--timeout", K_DUR},
    {"memory", "--memory", K_SIZE},
    {"cpus", "--cpus", K_NUM},
    {"pids", "--pids", K_NUM},
    {"disk", "--disk", K_SIZE},
    {"net", "--net", K_STR},
    {"net_helper", "--net-helper", K_STR},
    {"allow", "--allow", K_LIST},
    {"deny", "--deny", K_LIST},
    {"env", "--env", K_MAP},
    {"env_file", "--env-file", K_STR},
    {"workspace", "--workspace", K_STR},
    {"from", "--from", K_STR},
    {"strict", "--strict", K_BOOL},
    {"ro_bind", "--ro-bind", K_PAIRS},
    {"bind", "--bind", K_PAIRS},
    {"agent", NULL, K_STR},
};

static int push(struct sr_strv *v, const char *s, struct sr_error *err)
{
	if (sr_strv_push(v, s) < 0)
		return sr_error_errno(err, -ENOMEM, "request");
	return 0;
}

/*
 * A size in a string that is none, said in the API's terms: the field and
 * the value it got. create's parser refuses it too, but as its option's
 * ("option --memory: bad size 'lots'"), which no client gave; what it
 * checks beyond the form (a range) it still says (sr_api_create_error()).
 */
static int check_size(const char *key, json_t *v, struct sr_error *err)
{
	char shown[100];
	uint64_t n;

	if (sr_parse_size(json_string_value(v), &n) == 0)
		return 0;
	shown_value(v, shown, sizeof(shown));
	return sr_error_msg(err, -EINVAL,
			    "%s: %s is not a size (e.g. 512M, 2G, or a number of bytes; 0: "
			    "unlimited)",
			    key, shown);
}

static int push_value(struct sr_strv *v, const char *key, enum kind kind, json_t *val,
		      struct sr_error *err)
{
	char buf[64];
	double d;
	int r;

	if (json_is_string(val))
		return kind == K_SIZE && (r = check_size(key, val, err)) < 0
			   ? r
			   : push(v, json_string_value(val), err);
	if (!json_is_number(val) || kind == K_STR)
		return sr_error_msg(err, -EINVAL, "\"%s\": expected a string", key);
	d = json_number_value(val);
	if (!isfinite(d) || d < 0)
		return sr_error_msg(err, -EINVAL, "\"%s\": expected a number of 0 or more", key);
	if (json_is_integer(val))
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT "%s", json_integer_value(val),
			 kind == K_DUR	  ? "s"
			 : kind == K_SIZE ? "B"
					  : "");
	else if (kind == K_SIZE)
		return sr_error_msg(err, -EINVAL, "\"%s\": a size is a whole number of bytes", key);
	else
		snprintf(buf, sizeof(buf), "%.15g%s", d, kind == K_DUR ? "s" : "");
	return push(v, buf, err);
}

/*
 * A variable's name as create's --env takes it (sr_config_set_env(): its
 * characters, and not a name [env] keeps for a setting), checked here to
 * be said of the field that gave it: "env: bad variable name 'A B' (...)".
 */
static int check_env_name(const char *key, const char *name, struct sr_error *err)
{
	struct sr_config scratch;
	int r;

	sr_config_init(&scratch);
	r = sr_config_set_env(&scratch, name, "", err);
	sr_config_free(&scratch);
	if (r < 0)
		sr_error_prefix(err, "%s", key);
	return r;
}

/* {K: V}: the option once each with K=V (the values may be secrets: never in a message). */
static int push_env(struct sr_strv *v, const struct create_key *k, json_t *val,
		    struct sr_error *err)
{
	const char *name;
	json_t *e;
	int r;

	if (!json_is_object(val))
		return sr_error_msg(err, -EINVAL,
				    "\"%s\": expected an object of strings, {\"KEY\": \"VALUE\"}",
				    k->key);
	json_object_foreach (val, name, e) {
		_cleanup_free_wiped_ char *kv = NULL;

		if (!*name || strchr(name, '='))
			return sr_error_msg(
			    err, -EINVAL,
			    "\"%s\": \"%s\" is not a variable's name (empty, or with '=')", k->key,
			    name);
		if (!json_is_string(e))
			return sr_error_msg(err, -EINVAL, "\"%s\": \"%s\" is not a string", k->key,
					    name);
		if ((r = check_env_name(k->key, name, err)) < 0)
			return r;
		if (asprintf(&kv, "%s=%s", name, json_string_value(e)) < 0)
			return sr_error_errno(err, -ENOMEM, "request");
		if ((r = push(v, k->option, err)) < 0 || (r = push(v, kv, err)) < 0)
			return r;
	}
	return 0;
}

static int push_key(struct sr_strv *v, const struct create_key *k, json_t *val,
		    struct sr_error *err)
{
	json_t *e;
	size_t i;
	int r = 0;

	switch (k->kind) {
	case K_BOOL:
		if (!json_is_boolean(val))
			return sr_error_msg(err, -EINVAL, "\"%s\": expected true or false", k->key);
		return json_is_true(val) ? push(v, k->option, err) : 0;
	case K_LIST:
		if (!json_is_array(val))
			return sr_error_msg(err, -EINVAL, "\"%s\": expected an array of strings",
					    k->key);
		json_array_foreach (val, i, e) {
			if (!json_is_string(e))
				return sr_error_msg(err, -EINVAL,
						    "\"%s\": expected an array of strings", k->key);
			if ((r = push(v, k->option, err)) < 0 ||
			    (r = push(v, json_string_value(e), err)) < 0)
				return r;
		}
		return 0;
	case K_MAP:
		return push_env(v, k, val, err);
	case K_PAIRS:
		if (!json_is_array(val))
			return sr_error_msg(err, -EINVAL, "\"%s\": expected [[SRC, DST], ...]",
					    k->key);
		json_array_foreach (val, i, e) {
			json_t *a = json_array_get(e, 0), *b = json_array_get(e, 1);

			if (json_array_size(e) != 2 || !json_is_string(a) || !json_is_string(b))
				return sr_error_msg(err, -EINVAL,
						    "\"%s\": expected [[SRC, DST], ...]", k->key);
			if ((r = push(v, k->option, err)) < 0 ||
			    (r = push(v, json_string_value(a), err)) < 0 ||
			    (r = push(v, json_string_value(b), err)) < 0)
				return r;
		}
		return 0;
	default:
		if ((r = push(v, k->option, err)) < 0)
			return r;
		return push_value(v, k->key, k->kind, val, err);
	}
}

static const struct create_key *create_key(const char *key)
{
	for (size_t i = 0; i < SR_ARRAY_SIZE(create_keys); i++)
		if (strcmp(create_keys[i].key, key) == 0)
			return &create_keys[i];
	return NULL;
}

void sr_api_create_error(struct sr_error *err)
{
	static const char opt[] = "option ";
	char rest[SR_ERROR_MSG_MAX];

	if (strncmp(err->msg, opt, sizeof(opt) - 1) != 0)
		return;
	for (size_t i = 0; i < SR_ARRAY_SIZE(create_keys); i++) {
		const char *o = create_keys[i].option;
		size_t n = o ? strlen(o) : 0;

		if (!o || strncmp(err->msg + sizeof(opt) - 1, o, n) != 0 ||
		    err->msg[sizeof(opt) - 1 + n] != ':')
			continue;
		snprintf(rest, sizeof(rest), "%s", err->msg + sizeof(opt) - 1 + n);
		if (snprintf(err->msg, sizeof(err->msg), "%s%s", create_keys[i].key, rest) < 0)
			err->msg[0] = '\0';
		return;
	}
}

/* The keys create takes, from the table itself, so that the message never drifts from it. */
static void create_key_names(char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < SR_ARRAY_SIZE(create_keys) && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", create_keys[i].key);
}

/* E2B's metadata: string values (its map[string]string), SR_API_METADATA_MAX bytes of JSON. */
static int check_metadata(json_t *meta, struct sr_error *err)
{
	const char *k;
	json_t *v;
	char *text;
	size_t len;

	json_object_foreach (meta, k, v) {
		if (!json_is_string(v))
			return sr_error_msg(err, -EINVAL, "metadata: '%s': expected a string", k);
	}
	text = json_dumps(meta, JSON_COMPACT);
	if (!text)
		return sr_error_errno(err, -ENOMEM, "metadata");
	len = strlen(text);
	free(text);
	if (len > SR_API_METADATA_MAX)
		return sr_error_msg(err, -EINVAL, "metadata: %zu bytes (as JSON), at most %d", len,
				    SR_API_METADATA_MAX);
	return 0;
}

/* A string's copy into *field, NULL if val is none; false when out of memory. */
static bool note_string(char **field, json_t *val)
{
	free(*field);
	*field = json_is_string(val) ? strdup(json_string_value(val)) : NULL;
	return !json_is_string(val) || *field;
}

/*
 * profile and timeout into ret's own fields too (a warm pool serves them);
 * profile and from to name what did not load as the request named it.
 */
static int note_key(struct sr_api_create *ret, const char *key, json_t *val, struct sr_error *err)
{
	if (strcmp(key, "profile") == 0) {
		if (!note_string(&ret->profile, val))
			return sr_error_errno(err, -ENOMEM, "request");
	} else if (strcmp(key, "from") == 0) {
		if (!note_string(&ret->from, val))
			return sr_error_errno(err, -ENOMEM, "request");
		ret->poolable = false;
	} else if (strcmp(key, "timeout") == 0) {
		char shown[100];

		if (sr_api_duration_field(key, val, &ret->timeout_ms, err) < 0)
			return err->code;
		/* The keeper's bound, which it says as the option's. */
		if (ret->timeout_ms > SR_DEADLINE_MAX_MS) {
			shown_value(val, shown, sizeof(shown));
			return sr_error_msg(err, -EINVAL,
					    "%s: %s is more than %d days, the longest a living "
					    "sandbox lives (0: no end)",
					    key, shown, SR_DEADLINE_MAX_DAYS);
		}
		ret->has_timeout = true;
	} else {
		ret->poolable = false;
	}
	return 0;
}

int sr_api_parse_create(json_t *body, struct sr_api_create *ret, struct sr_error *err)
{
	struct sr_api_create c = {.poolable = true};
	const char *key, *agent = NULL;
	json_t *val;
	int r;

	if (!json_is_object(body))
		return sr_error_msg(err, -EINVAL, "the request is not a JSON object");
	if ((r = push(&c.argv, "create", err)) < 0)
		goto fail;
	json_object_foreach (body, key, val) {
		const struct create_key *k = create_key(key);

		if (!k) {
			char names[256];

			create_key_names(names, sizeof(names));
			r = sr_error_msg(err, -EINVAL, "unknown key \"%s\" (see docs/api.md: %s)",
					 key, names);
			goto fail;
		}
		if (json_is_null(val))
			continue;
		if ((r = note_key(&c, key, val, err)) < 0)
			goto fail;
		if (!k->option) {
			if (!json_is_string(val) || json_string_value(val)[0] == '-' ||
			    !json_string_value(val)[0]) {
				r = sr_error_msg(err, -EINVAL, "\"agent\": expected a path");
				goto fail;
			}
			agent = json_string_value(val);
			continue;
		}
		if ((r = push_key(&c.argv, k, val, err)) < 0)
			goto fail;
	}
	/* After every option: getopt stops at the first argument that is not one. */
	if (agent && (r = push(&c.argv, agent, err)) < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	sr_api_create_free(&c);
	return r;
}

/*
 * E2B's templateID: a profile's name as -p takes one (profile.c's rule),
 * never a path (the server's files are no client's to name) nor
 * "builtin:NAME" (the copy built in, past an operator's file of that
 * name), "base" the server's --e2b-profile.
 */
static int e2b_profile(json_t *tmpl, const char *base_profile, struct sr_api_create *c,
		       struct sr_error *err)
{
	const char *name = json_is_string(tmpl) ? json_string_value(tmpl) : "base";
	char shown[100];
	int r;

	if ((tmpl && !json_is_null(tmpl) && !json_is_string(tmpl)) ||
	    !sr_profile_name_valid(name)) {
		shown_value(tmpl, shown, sizeof(shown));
		return sr_error_msg(err, -EINVAL,
				    "templateID: %s is not a template (a profile's name: letters, "
				    "digits, '-', '_' and '.'; base for the server's)",
				    shown);
	}
	if (strcmp(name, "base") == 0)
		name = base_profile;
	if ((r = push(&c->argv, "--profile", err)) < 0 || (r = push(&c->argv, name, err)) < 0)
		return r;
	c->profile = strdup(name);
	return c->profile ? 0 : sr_error_errno(err, -ENOMEM, "request");
}

/* E2B's timeout: whole seconds, up to a living sandbox's longest. */
static int e2b_timeout(json_t *t, struct sr_api_create *c, struct sr_error *err)
{
	const json_int_t max_s = (json_int_t)(SR_DEADLINE_MAX_MS / 1000);
	char shown[100];

	if (!t || json_is_null(t))
		return 0;
	shown_value(t, shown, sizeof(shown));
	if (!json_is_integer(t) || json_integer_value(t) < 0)
		return sr_error_msg(err, -EINVAL,
				    "timeout: %s is not a number of seconds (a whole number, 0 to "
				    "%" JSON_INTEGER_FORMAT ")",
				    shown, max_s);
	if (json_integer_value(t) > max_s)
		return sr_error_msg(err, -EINVAL,
				    "timeout: %s is more than %d days (%" JSON_INTEGER_FORMAT
				    " seconds), the longest a living sandbox lives",
				    shown, SR_DEADLINE_MAX_DAYS, max_s);
	c->timeout_ms = (uint64_t)json_integer_value(t) * 1000;
	/*
	 * A cold create's deadline is its argv's, as /v1's "timeout" is. 0 is
	 * not create's "none" (E2B has no sandbox without an end): the
	 * profile's, or the warm pool's.
	 */
	c->has_timeout = c->timeout_ms > 0;
	if (!c->has_timeout)
		return 0;
	snprintf(shown, sizeof(shown), "%" JSON_INTEGER_FORMAT "s", json_integer_value(t));
	return push(&c->argv, "--timeout", err) < 0 ? err->code : push(&c->argv, shown, err);
}

/*
 * A boolean of E2B's, or nothing: any other value refused, never taken
 * for its default (a string "false" left the network on).
 */
static int e2b_bool(json_t *body, const char *key, struct sr_error *err)
{
	json_t *v = json_object_get(body, key);
	char shown[100];

	if (!v || json_is_null(v) || json_is_boolean(v))
		return 0;
	shown_value(v, shown, sizeof(shown));
	return sr_error_msg(err, -EINVAL, "%s: %s is not true or false", key, shown);
}

static int e2b_refused(json_t *body, struct sr_error *err)
{
	static const char *const refused[] = {"mcp", "volumeMounts", "network", "iam"};

	for (size_t i = 0; i < SR_ARRAY_SIZE(refused); i++) {
		json_t *v = json_object_get(body, refused[i]);

		if (v && !json_is_null(v) && !(json_is_object(v) && json_object_size(v) == 0))
			return sr_error_msg(err, -ENOTSUP,
					    "%s: not supported by sandbox-run serve (docs/api.md)",
					    refused[i]);
	}
	/*
	 * Paused at its timeout (the SDK's lifecycle: {onTimeout: 'pause'}):
	 * here it would end, what it held lost. Refused, as pause itself is.
	 */
	if (json_is_true(json_object_get(body, "autoPause")))
		return sr_error_msg(err, -ENOTSUP,
				    "autoPause (onTimeout: 'pause'): not supported by sandbox-run "
				    "serve, whose sandboxes end at their timeout (docs/api.md)");
	/*
	 * The SDK's option, which it sends as allow_internet_access: a body
	 * written by hand with this spelling would get the network it asked
	 * to be without.
	 */
	if (json_object_get(body, "allowInternetAccess"))
		return sr_error_msg(err, -EINVAL,
				    "allowInternetAccess: not a field of E2B's create (the SDK's "
				    "allowInternetAccess is sent as allow_internet_access)");
	return 0;
}

int sr_api_parse_e2b_create(json_t *body, const char *base_profile, struct sr_api_create *ret,
			    struct sr_error *err)
{
	static const struct create_key env = {"envVars", "--env", K_MAP};
	struct sr_api_create c = {.poolable = true};
	json_t *envs = json_object_get(body, "envVars"), *meta = json_object_get(body, "metadata");
	json_t *net = json_object_get(body, "allow_internet_access");
	int r;

	if (!json_is_object(body))
		return sr_error_msg(err, -EINVAL, "the request is not a JSON object");
	if ((r = e2b_bool(body, "autoPause", err)) < 0 || (r = e2b_refused(body, err)) < 0 ||
	    (r = e2b_bool(body, "allow_internet_access", err)) < 0)
		return r;
	if ((r = push(&c.argv, "create", err)) < 0 ||
	    (r = e2b_profile(json_object_get(body, "templateID"), base_profile, &c, err)) < 0 ||
	    (r = e2b_timeout(json_object_get(body, "timeout"), &c, err)) < 0)
		goto fail;
	if (json_is_false(net)) {
		if ((r = push(&c.argv, "--net", err)) < 0 || (r = push(&c.argv, "none", err)) < 0)
			goto fail;
		c.poolable = false;
	}
	if (envs && !json_is_null(envs)) {
		if ((r = push_env(&c.argv, &env, envs, err)) < 0)
			goto fail;
		c.poolable = c.poolable && json_object_size(envs) == 0;
	}
	if (meta && !json_is_null(meta)) {
		if (!json_is_object(meta)) {
			char shown[100];

			shown_value(meta, shown, sizeof(shown));
			r = sr_error_msg(err, -EINVAL, "metadata: %s is not an object of strings",
					 shown);
			goto fail;
		}
		if ((r = check_metadata(meta, err)) < 0)
			goto fail;
		c.metadata = json_incref(meta);
	}
	*ret = c;
	return 0;
fail:
	sr_api_create_free(&c);
	return r;
}

static int set_env(struct sr_api_exec *x, json_t *env, const char *what, struct sr_error *err)
{
	const char *key;
	json_t *val;

	if (!json_is_object(env))
		return sr_error_msg(err, -EINVAL, "%s: expected an object of strings", what);
	json_object_foreach (env, key, val) {
		_cleanup_free_ char *kv = NULL;

		if (!json_is_string(val) || !*key || strchr(key, '='))
			return sr_error_msg(err, -EINVAL, "%s: expected {\"KEY\": \"VALUE\"}",
					    what);
		if (asprintf(&kv, "%s=%s", key, json_string_value(val)) < 0 ||
		    json_array_append_new(x->env, json_string(kv)) < 0)
			return sr_error_errno(err, -ENOMEM, "request");
	}
	return 0;
}

static int set_argv(struct sr_api_exec *x, json_t *argv, struct sr_error *err)
{
	size_t i;
	json_t *a;

	if (!json_is_array(argv) || json_array_size(argv) == 0 || json_array_size(argv) > ARGV_MAX)
		return sr_error_msg(err, -EINVAL, "argv: expected an array of 1 to %d strings",
				    ARGV_MAX);
	json_array_foreach (argv, i, a)
		if (!json_is_string(a) || !json_string_value(a)[0])
			return sr_error_msg(err, -EINVAL, "argv: an empty or non-string argument");
	x->argv = json_incref(argv);
	return 0;
}

static int set_input(struct sr_api_exec *x, json_t *text, json_t *b64, struct sr_error *err)
{
	const char *s;
	size_t n;

	if (text && b64)
		return sr_error_msg(err, -EINVAL, "give stdin or stdin_base64, not both");
	if (text && !json_is_string(text))
		return sr_error_msg(err, -EINVAL, "stdin: expected a string");
	if (b64 && !json_is_string(b64))
		return sr_error_msg(err, -EINVAL, "stdin_base64: expected a string");
	if (!text && !b64)
		return 0;
	s = json_string_value(text ? text : b64);
	n = json_string_length(text ? text : b64);
	x->input = malloc(n + 1);
	if (!x->input)
		return sr_error_errno(err, -ENOMEM, "request");
	x->has_input = true;
	if (text) {
		memcpy(x->input, s, n);
		x->input_len = n;
	} else if (sr_base64_decode(s, n, (unsigned char *)x->input, &x->input_len) < 0) {
		return sr_error_msg(err, -EINVAL, "stdin_base64: not base64");
	}
	return 0;
}

int sr_api_parse_exec(json_t *body, struct sr_api_exec *ret, struct sr_error *err)
{
	static const char *const known[] = {"argv",	    "cmd",     "env",	 "cwd",	  "stdin",
					    "stdin_base64", "timeout", "stream", "output"};
	struct sr_api_exec x = {0};
	json_t *argv = json_object_get(body, "argv"), *cmd = json_object_get(body, "cmd");
	json_t *v;
	const char *key;
	int r = 0;

	if (!json_is_object(body))
		return sr_error_msg(err, -EINVAL, "the request is not a JSON object");
	x.env = json_array();
	json_object_foreach (body, key, v) {
		size_t i = 0;

		while (i < SR_ARRAY_SIZE(known) && strcmp(known[i], key) != 0)
			i++;
		if (i == SR_ARRAY_SIZE(known)) {
			r = sr_error_msg(
			    err, -EINVAL,
			    "unknown key \"%s\" (see docs/api.md: argv or cmd, env, cwd, "
			    "stdin or stdin_base64, timeout, stream, output)",
			    key);
			goto fail;
		}
	}
	if (!x.env || (!argv == !cmd)) {
		r = x.env ? sr_error_msg(err, -EINVAL, "give argv (an array) or cmd (a string)")
			  : sr_error_errno(err, -ENOMEM, "request");
		goto fail;
	}
	if (cmd) {
		json_t *sh = json_pack("[sss]", "/bin/sh", "-c", json_string_value(cmd));

		if (!json_is_string(cmd) || !sh) {
			if (sh)
				json_decref(sh);
			r = sr_error_msg(err, -EINVAL, "cmd: expected a string");
			goto fail;
		}
		r = set_argv(&x, sh, err);
		json_decref(sh);
	} else {
		r = set_argv(&x, argv, err);
	}
	if (r < 0 || ((v = json_object_get(body, "env")) && (r = set_env(&x, v, "env", err)) < 0))
		goto fail;
	if ((v = json_object_get(body, "cwd"))) {
		if (!json_is_string(v) || !(x.cwd = strdup(json_string_value(v)))) {
			r = sr_error_msg(err, -EINVAL, "cwd: expected a string");
			goto fail;
		}
	}
	r = set_input(&x, json_object_get(body, "stdin"), json_object_get(body, "stdin_base64"),
		      err);
	if (r < 0)
		goto fail;
	if ((v = json_object_get(body, "timeout")) &&
	    (r = sr_api_duration_field("timeout", v, &x.timeout_ms, err)) < 0)
		goto fail;
	if ((v = json_object_get(body, "stream")) && !json_is_boolean(v)) {
		r = sr_error_msg(err, -EINVAL, "stream: expected true or false");
		goto fail;
	}
	x.stream = json_is_true(v);
	v = json_object_get(body, "output");
	if (v && (!json_is_string(v) || (strcmp(json_string_value(v), "text") != 0 &&
					 strcmp(json_string_value(v), "base64") != 0))) {
		r = sr_error_msg(err, -EINVAL, "output: \"text\" or \"base64\"");
		goto fail;
	}
	x.base64 = v && strcmp(json_string_value(v), "base64") == 0;
	*ret = x;
	return 0;
fail:
	sr_api_exec_free(&x);
	return r;
}

int sr_api_parse_envd_start(json_t *body, const char *home, struct sr_api_exec *ret,
			    struct sr_error *err)
{
	struct sr_api_exec x = {.env = json_array()};
	json_t *proc = json_object_get(body, "process"), *pty = json_object_get(body, "pty");
	json_t *cmd = json_object_get(proc, "cmd"), *args = json_object_get(proc, "args");
	json_t *envs = json_object_get(proc, "envs"), *cwd = json_object_get(proc, "cwd");
	json_t *argv = NULL, *a;
	size_t i;
	int r;

	if (!x.env)
		return sr_error_errno(err, -ENOMEM, "request");
	if (pty && !json_is_null(pty)) {
		r = sr_error_msg(err, -ENOTSUP, "a pty: not supported by sandbox-run serve");
		goto fail;
	}
	if (!json_is_string(cmd) || !json_string_value(cmd)[0] || (args && !json_is_array(args)) ||
	    (cwd && !json_is_null(cwd) && !json_is_string(cwd))) {
		r = sr_error_msg(err, -EINVAL, "process: expected cmd, args, envs, cwd");
		goto fail;
	}
	argv = json_array();
	if (!argv || json_array_append(argv, cmd) < 0) {
		r = sr_error_errno(err, -ENOMEM, "request");
		goto fail;
	}
	json_array_foreach (args, i, a)
		json_array_append(argv, a);
	/* envd's own before the client's (which may replace them): the user it runs as. */
	if (json_array_append_new(x.env, json_string("USER=user")) < 0 ||
	    json_array_append_new(x.env, json_string("LOGNAME=user")) < 0) {
		r = sr_error_errno(err, -ENOMEM, "request");
		goto fail;
	}
	if ((r = set_argv(&x, argv, err)) < 0 ||
	    (envs && !json_is_null(envs) && (r = set_env(&x, envs, "envs", err)) < 0))
		goto fail;
	if (json_is_string(cwd) && json_string_value(cwd)[0] == '/')
		x.cwd = strdup(json_string_value(cwd));
	else if (json_is_string(cwd) && json_string_value(cwd)[0])
		r = asprintf(&x.cwd, "%s/%s", home, json_string_value(cwd));
	else
		x.cwd = strdup(home);
	if (!x.cwd || r < 0) {
		x.cwd = NULL;
		r = sr_error_errno(err, -ENOMEM, "request");
		goto fail;
	}
	json_decref(argv);
	x.stream = true;
	x.base64 = true;
	*ret = x;
	return 0;
fail:
	if (argv)
		json_decref(argv);
	sr_api_exec_free(&x);
	return r;
}
