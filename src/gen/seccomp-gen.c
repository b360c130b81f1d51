/* SPDX-License-Identifier: MIT */
/*
 * sr-seccomp-gen: compiles the rule table (seccomp-rules.c) to a classic
 * BPF program with libseccomp and prints it as a C header. Run at build
 * time only; sandbox-run installs the result without libseccomp.
 *
 * With --oci it prints the same rules, call by call and case by case, as
 * the seccomp profile of the OCI runtime spec (config.json's
 * linux.seccomp; Kubernetes' and Docker's profile files have the same
 * shape), also as a C header: `sandbox-run export` hands it to crun or a
 * cluster, which compiles it with their own libseccomp. One table, one
 * reading of it, two outputs.
 *
 * The output depends only on the table, the host architecture and the
 * libseccomp version, never on the time or the build directory.
 */
#include "config.h"

#include "seccomp-cubes.h"
#include "seccomp-rules.h"
#include "seccomp-syscalls.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * The allow list names the 64-bit ABIs' calls. A 32-bit build would need
 * stat64, _llseek, mmap2, socketcall and the *_time64 calls, which every
 * program there makes: without them its filter would refuse everything.
 */
#if !defined(__LP64__)
#error "the seccomp allow list is written for 64-bit architectures"
#endif

static void ctx_releasep(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

/* The calls a row's first condition matches, as cubes. */
static int first_cubes(const struct sr_seccomp_rule *r, struct sr_cubes *out)
{
	struct sr_cube values[SR_SCMP_VALUES_MAX];

	if (r->cmp != SR_SCMP_ALWAYS && r->arg >= SR_CUBE_ARGS)
		return -EINVAL;
	switch (r->cmp) {
	case SR_SCMP_ALWAYS:
		return r->n_and ? -EINVAL : sr_cubes_add(out, (struct sr_cube){0});
	case SR_SCMP_ARG_MASKED_EQ:
		return sr_cubes_add(out, sr_cube_of(r->arg, r->mask, r->values[0]));
	case SR_SCMP_ARG_MASKED_NOT_IN:
		if (r->n_values == 0 || r->n_values > SR_SCMP_VALUES_MAX)
			return -EINVAL;
		for (size_t i = 0; i < r->n_values; i++) {
			if (r->values[i] & ~r->mask)
				return -EINVAL;
			values[i] = sr_cube_of(r->arg, r->mask, r->values[i]);
		}
		return sr_cubes_complement(values, r->n_values, (struct sr_cube){0}, out);
	case _SR_SCMP_CMP_MAX:
		break;
	}
	return -EINVAL;
}

/* The calls a row matches, as cubes: its first condition and each further one. */
static int row_cubes(const struct sr_seccomp_rule *r, struct sr_cubes *out)
{
	__attribute__((cleanup(sr_cubes_free))) struct sr_cubes acc = {0};
	int rc;

	if (r->n_and > SR_SCMP_AND_MAX)
		return -EINVAL;
	rc = first_cubes(r, &acc);
	for (size_t k = 0; rc >= 0 && k < r->n_and; k++) {
		const struct sr_seccomp_and *t = &r->and[k];
		__attribute__((cleanup(sr_cubes_free))) struct sr_cubes term = {0}, next = {0};
		struct sr_cube eq = sr_cube_of(t->arg, t->mask, t->value);

		if (t->arg >= SR_CUBE_ARGS || t->mask == 0 || (t->value & ~t->mask))
			return -EINVAL;
		rc = t->ne ? sr_cubes_complement(&eq, 1, (struct sr_cube){0}, &term)
			   : sr_cubes_add(&term, eq);
		for (size_t i = 0; rc >= 0 && i < acc.n; i++)
			for (size_t j = 0; rc >= 0 && j < term.n; j++)
				if (sr_cubes_meet(acc.items[i], term.items[j]))
					rc = sr_cubes_add(
					    &next, sr_cubes_both(acc.items[i], term.items[j]));
		sr_cubes_free(&acc);
		acc = next;
		next = (struct sr_cubes){0};
	}
	for (size_t i = 0; rc >= 0 && i < acc.n; i++)
		rc = sr_cubes_add(out, acc.items[i]);
	return rc;
}

static const char *errno_name(int e)
{
	switch (e) {
	case 0:
		return "ALLOW";
	case SR_SECCOMP_SKIP:
		return "skipped, 0";
	case EPERM:
		return "EPERM";
	case ENOSYS:
		return "ENOSYS";
	case EAFNOSUPPORT:
		return "EAFNOSUPPORT";
	default:
		return NULL;
	}
}

static void describe(FILE *out, const struct sr_seccomp_rule *r)
{
	const char *name = errno_name(r->err);

	if (name)
		fprintf(out, "%s -> %s", r->syscall, name);
	else
		fprintf(out, "%s -> errno %d", r->syscall, r->err);

	if (r->cmp == SR_SCMP_ARG_MASKED_EQ) {
		fprintf(out, " if (arg%u & 0x%" PRIx64 ") == 0x%" PRIx64, r->arg, r->mask,
			r->values[0]);
	} else if (r->cmp == SR_SCMP_ARG_MASKED_NOT_IN) {
		fprintf(out, " unless (arg%u & 0x%" PRIx64 ") in {", r->arg, r->mask);
		for (size_t i = 0; i < r->n_values; i++)
			fprintf(out, "%s0x%" PRIx64, i ? ", " : "", r->values[i]);
		fprintf(out, "}");
	}
	for (size_t k = 0; k < r->n_and; k++)
		fprintf(out, " and (arg%u & 0x%" PRIx64 ") %s 0x%" PRIx64, r->and[k].arg,
			r->and[k].mask, r->and[k].ne ? "!=" : "==", r->and[k].value);
}

/*
 * NAME's number here: libseccomp's, or where it does not know the name,
 * seccomp-syscalls.c's. >= 0; -ENOSYS: not a system call on this
 * architecture; -ENOENT: unknown to both. Where both know it they must
 * agree: a wrong number in the table would refuse or allow another call.
 */
static int resolve(const char *name, int *ret_nr, bool *ret_from_table)
{
	uint32_t arch = seccomp_arch_native();
	int nr = seccomp_syscall_resolve_name(name);
	int ours = sr_syscall_number(name, arch);

	if (nr != __NR_SCMP_ERROR && ours != -ENOENT && (nr < 0 ? -ENOSYS : nr) != ours) {
		fprintf(stderr, "sr-seccomp-gen: %s: libseccomp says %d, seccomp-syscalls.c %d\n",
			name, nr, ours);
		return -EINVAL;
	}
	*ret_from_table = nr == __NR_SCMP_ERROR;
	if (nr == __NR_SCMP_ERROR)
		nr = ours;
	if (nr == -ENOENT)
		return -ENOENT;
	/* libseccomp's negative numbers stand for calls this architecture lacks. */
	*ret_nr = nr < 0 ? -ENOSYS : nr;
	return 0;
}

static int add_cube_rule(scmp_filter_ctx ctx, uint32_t action, int nr, struct sr_cube c)
{
	struct scmp_arg_cmp cmps[SR_CUBE_ARGS];
	unsigned n = 0;

	for (unsigned a = 0; a < SR_CUBE_ARGS; a++)
		if (c.mask[a])
			cmps[n++] = SCMP_CMP(a, SCMP_CMP_MASKED_EQ, c.mask[a], c.value[a]);
	return seccomp_rule_add_array(ctx, action, nr, n, cmps);
}

/* The rows of one call, read: its refusals as cubes, each with its err. */
struct call_rows {
	struct sr_cubes denied;
	int *errs;    /* errs[k]: the row's err of denied.items[k] */
	bool allowed; /* an allow row names the call */
};

static void call_rows_free(struct call_rows *c)
{
	sr_cubes_free(&c->denied);
	free(c->errs);
}

static int add_refusal(struct call_rows *c, const struct sr_seccomp_rule *row)
{
	size_t before = c->denied.n;
	int *errs, r;

	r = row_cubes(row, &c->denied);
	if (r < 0)
		return r;
	errs = realloc(c->errs, c->denied.n * sizeof(*errs));
	if (!errs)
		return -ENOMEM;
	c->errs = errs;
	for (size_t k = before; k < c->denied.n; k++)
		errs[k] = row->err;
	return 0;
}

/* Reads every row of the call first named at row `first`. */
static int read_call(size_t first, struct call_rows *c)
{
	const char *name = sr_seccomp_rules[first].syscall;
	int r;

	for (size_t i = first; i < sr_seccomp_n_rules; i++) {
		const struct sr_seccomp_rule *row = &sr_seccomp_rules[i];

		if (strcmp(row->syscall, name) != 0)
			continue;
		if (row->err == 0 && row->cmp != SR_SCMP_ALWAYS) {
			fprintf(stderr,
				"sr-seccomp-gen: rule %zu (%s): an allow row has no condition; "
				"write the refused case as a row of its own\n",
				i, name);
			return -EINVAL;
		}
		if (row->err == 0) {
			c->allowed = true;
			continue;
		}
		r = add_refusal(c, row);
		if (r < 0)
			return r;
	}
	/* Overlapping refusals with different errnos would leave the answer to libseccomp. */
	for (size_t a = 0; a < c->denied.n; a++)
		for (size_t b = a + 1; b < c->denied.n; b++)
			if (c->errs[a] != c->errs[b] &&
			    sr_cubes_meet(c->denied.items[a], c->denied.items[b])) {
				fprintf(stderr,
					"sr-seccomp-gen: %s: rows with different errnos match the "
					"same call\n",
					name);
				return -EINVAL;
			}
	return 0;
}

/*
 * The same rules as an OCI profile: unconditional ones gathered by action
 * (the allow list, the EPERM list, ...), each conditional case an entry of
 * its own. Built beside the BPF program, from the same cubes.
 */
struct oci {
	json_t *allow;	 /* names allowed in every case */
	json_t *refused; /* errno (as text) -> names refused in every case */
	json_t *entries; /* the conditional cases */
};

static void oci_free(struct oci *o)
{
	json_decref(o->allow);
	json_decref(o->refused);
	json_decref(o->entries);
}

static int oci_add(struct oci *o, const char *name, int err, struct sr_cube c)
{
	json_t *entry, *conds;
	char key[16];

	if (!o)
		return 0;
	if (sr_cube_is_all(c) && err == 0)
		return json_array_append_new(o->allow, json_string(name)) < 0 ? -ENOMEM : 0;
	if (sr_cube_is_all(c)) {
		json_t *names;

		snprintf(key, sizeof(key), "%d", sr_seccomp_errno(err));
		names = json_object_get(o->refused, key);
		if (!names && json_object_set_new(o->refused, key, names = json_array()) < 0)
			return -ENOMEM;
		return json_array_append_new(names, json_string(name)) < 0 ? -ENOMEM : 0;
	}
	conds = json_array();
	if (!conds)
		return -ENOMEM;
	for (unsigned a = 0; a < SR_CUBE_ARGS; a++) {
		/* jansson writes signed 64-bit integers; the spec's values are unsigned. */
		if (c.mask[a] > INT64_MAX) {
			json_decref(conds);
			return -ERANGE;
		}
		if (c.mask[a] &&
		    json_array_append_new(
			conds, json_pack("{s:I, s:I, s:I, s:s}", "index", (json_int_t)a, "value",
					 (json_int_t)c.mask[a], "valueTwo", (json_int_t)c.value[a],
					 "op", "SCMP_CMP_MASKED_EQ")) < 0) {
			json_decref(conds);
			return -ENOMEM;
		}
	}
	/* "o" takes conds' reference, also when packing fails. */
	entry = json_pack("{s:[s], s:s, s:o}", "names", name, "action",
			  err ? "SCMP_ACT_ERRNO" : "SCMP_ACT_ALLOW", "args", conds);
	if (!entry || (err && json_object_set_new(entry, "errnoRet",
						  json_integer(sr_seccomp_errno(err))) < 0)) {
		json_decref(entry);
		return -ENOMEM;
	}
	return json_array_append_new(o->entries, entry) < 0 ? -ENOMEM : 0;
}

/*
 * The rules for the call first named at row `first`: its refusals with
 * their errnos, then, for an allowed call, exactly the complement of the
 * refusals allowed. libseccomp cannot be left to combine an unconditional
 * allow with conditional refusals: it keeps the allow and drops the rest.
 * The OCI profile (o, when not NULL) gets the same rules, for the same
 * reason: a runtime compiles it with libseccomp too.
 */
static int add_call(scmp_filter_ctx ctx, struct oci *o, size_t first, int nr)
{
	__attribute__((cleanup(call_rows_free))) struct call_rows c = {0};
	__attribute__((cleanup(sr_cubes_free))) struct sr_cubes allowed = {0};
	const char *name = sr_seccomp_rules[first].syscall;
	int r;

	r = read_call(first, &c);
	if (r < 0)
		return r;
	for (size_t k = 0; k < c.denied.n; k++) {
		/* What the default answers anyway: libseccomp refuses such a rule. */
		if (c.errs[k] == SR_SECCOMP_DEFAULT_ERRNO)
			continue;
		r = add_cube_rule(ctx, SCMP_ACT_ERRNO((uint16_t)sr_seccomp_errno(c.errs[k])), nr,
				  c.denied.items[k]);
		if (r >= 0)
			r = oci_add(o, name, c.errs[k], c.denied.items[k]);
		if (r < 0)
			return r;
	}
	if (!c.allowed)
		return 0;
	r = sr_cubes_complement(c.denied.items, c.denied.n, (struct sr_cube){0}, &allowed);
	if (r < 0)
		return r;
	if (allowed.n == 0) {
		fprintf(stderr, "sr-seccomp-gen: %s: allowed, but every case is refused\n", name);
		return -EINVAL;
	}
	for (size_t k = 0; k < allowed.n; k++) {
		r = add_cube_rule(ctx, SCMP_ACT_ALLOW, nr, allowed.items[k]);
		if (r >= 0)
			r = oci_add(o, name, 0, allowed.items[k]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Whether row i is the first of its call. */
static bool first_of_call(size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(sr_seccomp_rules[j].syscall, sr_seccomp_rules[i].syscall) == 0)
			return false;
	return true;
}

/* How a row's name was resolved: where it came from and what it says. */
struct resolved {
	int nr; /* -ENOSYS: not a system call on this architecture */
	bool from_table;
};

static const char *note(const struct resolved *res, char *buf, size_t size)
{
	if (res->nr < 0)
		return " [skipped: not a system call on this architecture]";
	if (!res->from_table)
		return "";
	snprintf(buf, size, " [number %d from seccomp-syscalls.c]", res->nr);
	return buf;
}

/* The header's comment: what the program does, row by row. */
static void print_summary(FILE *out, const struct resolved *res)
{
	const struct scmp_version *v = seccomp_version();
	size_t n_allowed = 0, column = 0;
	char buf[64];

	for (size_t i = 0; i < sr_seccomp_n_rules; i++)
		n_allowed += sr_seccomp_rules[i].err == 0;
	fprintf(out,
		"/*\n * Generated by sr-seccomp-gen from src/gen/seccomp-rules.c with libseccomp "
		"%u.%u.%u. Do not edit.\n",
		v->major, v->minor, v->micro);
	fprintf(out,
		" * Default action: ENOSYS, for every call the table does not name.\n"
		" * Other architectures (i386 via int 0x80, x32): kill the process.\n"
		" *\n * Allowed (%zu rows; the refused cases below excepted):\n *  ",
		n_allowed);
	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		const char *name = sr_seccomp_rules[i].syscall;

		if (sr_seccomp_rules[i].err != 0 || res[i].nr < 0)
			continue;
		if (column + strlen(name) + 1 > 72) {
			fprintf(out, "\n *  ");
			column = 0;
		}
		column += (size_t)fprintf(out, " %s", name);
	}
	fprintf(out, "\n *\n");
	for (size_t i = 0; i < sr_seccomp_n_rules; i++)
		if (sr_seccomp_rules[i].err == 0 && (res[i].nr < 0 || res[i].from_table))
			fprintf(out, " *   %s%s\n", sr_seccomp_rules[i].syscall,
				note(&res[i], buf, sizeof(buf)));
	fprintf(out, " *\n * Refused:\n");
	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		const struct sr_seccomp_rule *r = &sr_seccomp_rules[i];

		if (r->err == 0)
			continue;
		fprintf(out, " *   ");
		describe(out, r);
		if (res[i].nr >= 0 && r->err == SR_SECCOMP_DEFAULT_ERRNO &&
		    r->cmp == SR_SCMP_ALWAYS)
			fprintf(out, " [the default action]");
		fprintf(out, "%s\n", note(&res[i], buf, sizeof(buf)));
	}
	fprintf(out, " */\n");
}

static int add_rules(FILE *out, scmp_filter_ctx ctx, struct oci *o)
{
	_cleanup_free_ struct resolved *res = NULL;
	int rc;

	res = calloc(sr_seccomp_n_rules, sizeof(*res));
	if (!res)
		return -ENOMEM;
	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		rc = resolve(sr_seccomp_rules[i].syscall, &res[i].nr, &res[i].from_table);
		if (rc == -ENOENT)
			fprintf(stderr,
				"sr-seccomp-gen: rule %zu (%s): unknown to libseccomp %u.%u and "
				"not in seccomp-syscalls.c\n",
				i, sr_seccomp_rules[i].syscall, seccomp_version()->major,
				seccomp_version()->minor);
		if (rc < 0)
			return rc;
	}
	if (!o)
		print_summary(out, res);
	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		if (res[i].nr < 0 || !first_of_call(i))
			continue;
		rc = add_call(ctx, o, i, res[i].nr);
		if (rc < 0) {
			fprintf(stderr, "sr-seccomp-gen: rule %zu (%s): %s\n", i,
				sr_seccomp_rules[i].syscall, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static int export_program(scmp_filter_ctx ctx, struct sock_filter **ret_insns, size_t *ret_n)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ struct sock_filter *insns = NULL;
	off_t size;
	ssize_t got;
	int rc;

	fd = memfd_create("sr-seccomp-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return rc;
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0)
		return -EINVAL;
	insns = malloc((size_t)size);
	if (!insns)
		return -ENOMEM;
	got = pread(fd, insns, (size_t)size, 0);
	if (got != size)
		return got < 0 ? -errno : -EIO;
	*ret_n = (size_t)size / sizeof(struct sock_filter);
	*ret_insns = steal_pointer(&insns);
	return 0;
}

/* The profile's name for the architecture the program is built for. */
static const char *oci_arch(void)
{
	switch (seccomp_arch_native()) {
	case SCMP_ARCH_X86_64:
		return "SCMP_ARCH_X86_64";
	case SCMP_ARCH_AARCH64:
		return "SCMP_ARCH_AARCH64";
	case SCMP_ARCH_PPC64LE:
		return "SCMP_ARCH_PPC64LE";
	case SCMP_ARCH_S390X:
		return "SCMP_ARCH_S390X";
	case SCMP_ARCH_RISCV64:
		return "SCMP_ARCH_RISCV64";
	default:
		return NULL;
	}
}

/*
 * The profile: ENOSYS by default, as the program's; the native
 * architecture alone, so that a runtime's libseccomp answers a call
 * through another ABI with its bad-architecture action (a kill), as the
 * program does; then the allowed names, the refused ones by errno, and
 * every conditional case.
 */
static json_t *oci_profile(struct oci *o)
{
	json_t *syscalls = json_array(), *profile;
	const char *key;
	json_t *names;

	if (!syscalls || !oci_arch() ||
	    json_array_append_new(syscalls, json_pack("{s:O, s:s}", "names", o->allow, "action",
						      "SCMP_ACT_ALLOW")) < 0)
		goto fail;
	json_object_foreach (o->refused, key, names) {
		if (json_array_append_new(syscalls,
					  json_pack("{s:O, s:s, s:i}", "names", names, "action",
						    "SCMP_ACT_ERRNO", "errnoRet", atoi(key))) < 0)
			goto fail;
	}
	if (json_array_extend(syscalls, o->entries) < 0)
		goto fail;
	profile = json_pack("{s:s, s:i, s:[s], s:o}", "defaultAction", "SCMP_ACT_ERRNO",
			    "defaultErrnoRet", SR_SECCOMP_DEFAULT_ERRNO, "architectures",
			    oci_arch(), "syscalls", syscalls);
	return profile;
fail:
	json_decref(syscalls);
	return NULL;
}

/* The profile as a C string, cut into lines of adjacent literals. */
static int print_oci(FILE *out, struct oci *o)
{
	const struct scmp_version *v = seccomp_version();
	json_t *profile = oci_profile(o);
	char *text = profile ? json_dumps(profile, JSON_COMPACT) : NULL;
	size_t col = 0;

	json_decref(profile);
	if (!text) {
		fprintf(stderr, "sr-seccomp-gen: --oci: cannot build the profile\n");
		return -ENOMEM;
	}
	fprintf(out,
		"/*\n * Generated by sr-seccomp-gen --oci from src/gen/seccomp-rules.c with "
		"libseccomp %u.%u.%u. Do not edit.\n"
		" * The rules of seccomp-bpf.h as an OCI runtime-spec seccomp profile\n"
		" * (linux.seccomp of config.json; Kubernetes' Localhost profiles read the\n"
		" * same JSON): what `sandbox-run export` writes.\n */\n"
		"#pragma once\n\nstatic const char sr_seccomp_oci_json[] =\n\t\"",
		v->major, v->minor, v->micro);
	for (const char *c = text; *c; c++) {
		/* Names, numbers and the spec's words: no byte but '"' needs escaping. */
		if (*c == '"' || *c == '\\')
			fputc('\\', out);
		fputc(*c, out);
		if (++col >= 80 && *c == ',' && c[1]) {
			fputs("\"\n\t\"", out);
			col = 0;
		}
	}
	fputs("\";\n", out);
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	__attribute__((cleanup(ctx_releasep))) scmp_filter_ctx ctx = NULL;
	__attribute__((cleanup(oci_free))) struct oci oci = {0};
	_cleanup_free_ struct sock_filter *insns = NULL;
	bool want_oci = argc == 2 && strcmp(argv[1], "--oci") == 0;
	size_t n = 0;
	int rc;

	if (argc > 1 && !want_oci) {
		fprintf(stderr, "usage: sr-seccomp-gen [--oci]\n");
		return 2;
	}
	if (want_oci) {
		oci.allow = json_array();
		oci.refused = json_object();
		oci.entries = json_array();
		if (!oci.allow || !oci.refused || !oci.entries)
			return 1;
	}
	ctx = seccomp_init(SCMP_ACT_ERRNO(SR_SECCOMP_DEFAULT_ERRNO));
	if (!ctx) {
		fprintf(stderr, "sr-seccomp-gen: seccomp_init failed\n");
		return 1;
	}
	/*
	 * The rows name native system calls. A call through another entry
	 * point (int 0x80 reaches the i386 table, __X32_SYSCALL_BIT the x32
	 * one) carries different numbers for different calls, so the native
	 * rows would not match them. Such calls kill the process: no program
	 * in the sandbox has a reason to make them, so one that does is
	 * evading the filter, and a kill (logged by the kernel) says so
	 * where an errno would let it probe quietly. libseccomp applies this
	 * action to x32 numbers too when only x86_64 is in the filter.
	 */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	/*
	 * Every call walks the program until its number matches: a binary
	 * tree makes that ~log2(calls) jumps instead of a scan of ~300.
	 */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		fprintf(stderr, "sr-seccomp-gen: filter attributes: %s\n", strerror(-rc));
		return 1;
	}

	fprintf(stdout, "/* SPDX-License-Identifier: MIT */\n");
	if (add_rules(stdout, ctx, want_oci ? &oci : NULL) < 0)
		return 1;
	rc = export_program(ctx, &insns, &n);
	if (rc < 0) {
		fprintf(stderr, "sr-seccomp-gen: export BPF: %s\n", strerror(-rc));
		return 1;
	}
	if (n > BPF_MAXINSNS) {
		fprintf(stderr, "sr-seccomp-gen: program has %zu instructions, more than %d\n", n,
			BPF_MAXINSNS);
		return 1;
	}

	if (want_oci) {
		if (print_oci(stdout, &oci) < 0)
			return 1;
	} else {
		fprintf(stdout, "#pragma once\n\n#include <linux/filter.h>\n\n"
				"static const struct sock_filter sr_seccomp_bpf[] = {\n");
		for (size_t i = 0; i < n; i++)
			fprintf(stdout, "\t{0x%02x, %u, %u, 0x%08x},\n", insns[i].code, insns[i].jt,
				insns[i].jf, insns[i].k);
		fprintf(stdout, "};\n");
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "sr-seccomp-gen: write: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
