/* SPDX-License-Identifier: MIT */
/* --print-config: the effective configuration as a profile that loads back to the same. */
#include "config.h"

#include "units.h"
#include "util.h"

#include <ctype.h>
#include <inttypes.h>
#include <ini.h>

/*
 * What inih cannot read back: it strips blanks around a value, cuts it at a
 * ';' that starts it or follows a blank (an inline comment), cannot continue
 * it past a newline, and reads at most INI_MAX_LINE bytes per line.
 */
static bool ini_representable(const char *key, const char *v)
{
	size_t n = strlen(v);

	if (n > 0 && (isspace((unsigned char)v[0]) || isspace((unsigned char)v[n - 1])))
		return false;
	if (strlen(key) + strlen(" = ") + n > INI_MAX_LINE - 2)
		return false;
	for (const char *p = v; *p; p++) {
		if (*p == '\n' || *p == '\r')
			return false;
		if (*p == ';' && (p == v || isspace((unsigned char)p[-1])))
			return false;
	}
	return true;
}

static void print_kv(FILE *f, const char *key, const char *value)
{
	if (value[0] == '\0')
		fprintf(f, "%s =\n", key);
	else if (ini_representable(key, value))
		fprintf(f, "%s = %s\n", key, value);
	else
		fprintf(f,
			"# %s: value not representable in a profile (blanks at an end, ' ;', "
			"a newline, or too long)\n",
			key);
}

/* A comment line cannot hold a newline: show control characters as '?'. */
static void print_comment_word(FILE *f, const char *s)
{
	fputc(' ', f);
	for (; *s; s++)
		fputc(iscntrl((unsigned char)*s) ? '?' : *s, f);
}

static void print_command_line(const struct sr_config *c, FILE *f)
{
	if (c->workspace) {
		fputs("# --workspace", f);
		print_comment_word(f, c->workspace);
		fputc('\n', f);
	}
	if (c->result_path) {
		fputs("# --result", f);
		print_comment_word(f, c->result_path);
		fputc('\n', f);
	}
	if (c->argc > 0) {
		fputs(c->command_mode ? "# command:" : "# agent:", f);
		for (int i = 0; i < c->argc; i++)
			print_comment_word(f, c->argv[i]);
		fputc('\n', f);
	}
}

static void print_limits(const struct sr_config *c, FILE *f)
{
	char buf[SR_UNITS_BUF_MAX];

	fputs("\n[limits]\n", f);
	sr_format_size(c->memory_bytes, buf, sizeof(buf));
	fprintf(f, "memory = %s\n", buf);
	sr_format_cpus(c->cpus_milli, buf, sizeof(buf));
	fprintf(f, "cpus = %s\n", buf);
	fprintf(f, "pids = %" PRIu64 "\n", c->pids);
	sr_format_duration(c->timeout_ms, buf, sizeof(buf));
	fprintf(f, "timeout = %s\n", buf);
	sr_format_size(c->disk_bytes, buf, sizeof(buf));
	fprintf(f, "disk = %s\n", buf);
	fprintf(f, "disk-backing = %s\n", sr_disk_backing_to_string(c->disk_backing));
	fprintf(f, "strict = %s\n", c->strict ? "true" : "false");
}

/* Only where it differs from the defaults: a run's configuration has no use for it. */
static void print_deploy(const struct sr_config *c, FILE *f)
{
	char buf[SR_UNITS_BUF_MAX];

	if (!c->install && c->install_timeout_ms == SR_DEFAULT_INSTALL_TIMEOUT_MS &&
	    c->keep_versions == SR_DEFAULT_KEEP_VERSIONS)
		return;
	fputs("\n[deploy]\n", f);
	if (c->install)
		print_kv(f, "install", c->install);
	sr_format_duration(c->install_timeout_ms, buf, sizeof(buf));
	fprintf(f, "install-timeout = %s\n", buf);
	fprintf(f, "keep = %" PRIu64 "\n", c->keep_versions);
}

int sr_config_print(const struct sr_config *c, FILE *f)
{
	fputs("# sandbox-run: effective configuration", f);
	if (c->profile) {
		fputs(" (profile", f);
		print_comment_word(f, c->profile);
		if (c->profile_path && !sr_streq(c->profile, c->profile_path)) {
			fputs(" from", f);
			print_comment_word(f, c->profile_path);
		}
		fputc(')', f);
	}
	fputc('\n', f);
	print_command_line(c, f);
	print_limits(c, f);

	fprintf(f, "\n[network]\nmode = %s\nhelper = %s\n", sr_net_mode_to_string(c->net),
		sr_net_helper_to_string(c->net_helper));
	for (size_t i = 0; i < c->allow.n; i++)
		print_kv(f, "allow", c->allow.items[i]);
	for (size_t i = 0; i < c->deny.n; i++)
		print_kv(f, "deny", c->deny.items[i]);
	for (size_t i = 0; i < c->allow_host.n; i++)
		print_kv(f, "allow-host", c->allow_host.items[i]);

	if (c->env_file || c->pass_env.n > 0 || c->env.n > 0)
		fputs("\n[env]\n", f);
	if (c->env_file)
		print_kv(f, "file", c->env_file);
	for (size_t i = 0; i < c->pass_env.n; i++)
		print_kv(f, "pass", c->pass_env.items[i]);
	for (size_t i = 0; i < c->env.n; i++) {
		const char *eq = strchr(c->env.items[i], '=');
		_cleanup_free_ char *name =
		    strndup(c->env.items[i], (size_t)(eq - c->env.items[i]));

		if (!name)
			return -ENOMEM;
		print_kv(f, name, eq + 1);
	}

	if (c->n_binds > 0)
		fputs("\n[filesystem]\n", f);
	for (size_t i = 0; i < c->n_binds; i++) {
		_cleanup_free_ char *v = NULL;

		if (asprintf(&v, "%s:%s", c->binds[i].src, c->binds[i].dst) < 0)
			return -ENOMEM;
		print_kv(f, c->binds[i].writable ? "bind" : "ro-bind", v);
	}

	if (c->entry) {
		fputs("\n[agent]\n", f);
		print_kv(f, "entry", c->entry);
	}
	if (c->n_exports > 0 || c->changes_path)
		fputs("\n[artifacts]\n", f);
	for (size_t i = 0; i < c->n_exports; i++) {
		_cleanup_free_ char *v = NULL;

		if (asprintf(&v, "%s:%s%s", c->exports[i].path, c->exports[i].host,
			     c->exports[i].into && strcmp(c->exports[i].host, "/") ? "/" : "") < 0)
			return -ENOMEM;
		print_kv(f, "export", v);
	}
	if (c->changes_path)
		print_kv(f, "changes", c->changes_path);
	print_deploy(c, f);
	/* c->secrets never: they are the deployment's store's alone (deploy.h). */
	if (fflush(f) != 0 || ferror(f))
		return sr_negerrno();
	return 0;
}
