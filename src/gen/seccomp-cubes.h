/* SPDX-License-Identifier: MIT */
/*
 * Sets of system calls told apart by their arguments, for sr-seccomp-gen.
 *
 * A cube is the calls whose (arg[n] & mask[n]) == value[n] for every
 * argument n: exactly what one libseccomp rule (one SCMP_CMP_MASKED_EQ per
 * argument, all of them) or one OCI profile entry matches. The rule table's
 * conditions are not all of that shape ("none of these values", "!="), and
 * libseccomp cannot be left to combine an unconditional allow with
 * conditional refusals (it keeps the allow and drops the rest), so the
 * generator works with sets of cubes: it reads each row as cubes, checks
 * that refusals with different errnos do not meet, and allows exactly the
 * complement of a call's refusals, each cube then one rule.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A system call's arguments. */
#define SR_CUBE_ARGS 6

/*
 * The calls whose (arg[n] & mask[n]) == value[n] for every argument n, a
 * "cube": mask 0 matches every value of that argument. A row's condition
 * is a set of cubes, and so is everything the generator derives from rows.
 */
struct sr_cube {
	uint64_t mask[SR_CUBE_ARGS], value[SR_CUBE_ARGS];
};

/* A set of cubes; {0} is empty. */
struct sr_cubes {
	struct sr_cube *items;
	size_t n, cap;
};

/* (arg[n] & mask) == value, any other argument. */
struct sr_cube sr_cube_of(unsigned n, uint64_t mask, uint64_t value);

/* Whether the cube is every call (no argument constrained). */
bool sr_cube_is_all(struct sr_cube c);

void sr_cubes_free(struct sr_cubes *c);

/* Adds a cube to the set, its value bits outside its mask cleared: 0 or -ENOMEM. */
int sr_cubes_add(struct sr_cubes *c, struct sr_cube cube);

/* Whether two cubes share a call. */
bool sr_cubes_meet(struct sr_cube a, struct sr_cube b);

/* The calls both hold; they must meet. */
struct sr_cube sr_cubes_both(struct sr_cube a, struct sr_cube b);

/*
 * Adds to `out` disjoint cubes covering exactly the calls in `region`
 * that no cube of `in` (n of them) holds: 0 or -ENOMEM.
 */
int sr_cubes_complement(const struct sr_cube *in, size_t n, struct sr_cube region,
			struct sr_cubes *out);
