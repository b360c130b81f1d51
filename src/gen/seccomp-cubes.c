/* SPDX-License-Identifier: MIT */
/* Cubes and sets of them (seccomp-cubes.h): what sr-seccomp-gen reads the rule table as. */
#include "config.h"

#include "seccomp-cubes.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>

struct sr_cube sr_cube_of(unsigned n, uint64_t mask, uint64_t value)
{
	struct sr_cube c = {0};

	c.mask[n] = mask;
	c.value[n] = value & mask;
	return c;
}

bool sr_cube_is_all(struct sr_cube c)
{
	for (unsigned n = 0; n < SR_CUBE_ARGS; n++)
		if (c.mask[n])
			return false;
	return true;
}

void sr_cubes_free(struct sr_cubes *c)
{
	free(c->items);
	*c = (struct sr_cubes){0};
}

int sr_cubes_add(struct sr_cubes *c, struct sr_cube cube)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct sr_cube *items = realloc(c->items, cap * sizeof(*items));

		if (!items)
			return -ENOMEM;
		c->items = items;
		c->cap = cap;
	}
	for (unsigned n = 0; n < SR_CUBE_ARGS; n++)
		cube.value[n] &= cube.mask[n];
	c->items[c->n++] = cube;
	return 0;
}

bool sr_cubes_meet(struct sr_cube a, struct sr_cube b)
{
	for (unsigned n = 0; n < SR_CUBE_ARGS; n++)
		if ((a.value[n] ^ b.value[n]) & a.mask[n] & b.mask[n])
			return false;
	return true;
}

struct sr_cube sr_cubes_both(struct sr_cube a, struct sr_cube b)
{
	for (unsigned n = 0; n < SR_CUBE_ARGS; n++) {
		a.mask[n] |= b.mask[n];
		a.value[n] |= b.value[n];
	}
	return a;
}

/*
 * The region is split one bit (of one argument) at a time until each part
 * is either inside some cube of `in` (dropped) or meets none (kept whole).
 * Bits on which every cube still in play agrees are split first: one side
 * then meets none of them and is kept as one cube, which keeps the result
 * small (5 values out of 2^32 leave 60 cubes).
 */
int sr_cubes_complement(const struct sr_cube *in, size_t n, struct sr_cube region,
			struct sr_cubes *out)
{
	_cleanup_free_ struct sr_cube *live = NULL;
	uint64_t free_bits[SR_CUBE_ARGS] = {0}, bit = 0;
	unsigned arg = 0;
	size_t m = 0;
	int r;

	live = malloc((n ? n : 1) * sizeof(*live));
	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (sr_cubes_meet(in[i], region))
			live[m++] = in[i];
	if (m == 0)
		return sr_cubes_add(out, region);
	for (size_t i = 0; i < m; i++) {
		bool inside = true;

		for (unsigned a = 0; a < SR_CUBE_ARGS; a++) {
			inside = inside && (live[i].mask[a] & ~region.mask[a]) == 0;
			free_bits[a] |= live[i].mask[a] & ~region.mask[a];
		}
		if (inside)
			return 0; /* the whole region is inside live[i] */
	}
	for (unsigned a = 0; a < SR_CUBE_ARGS && !bit; a++)
		for (uint64_t b = free_bits[a]; b && !bit; b &= b - 1) {
			uint64_t candidate = b & -b;
			size_t set = 0, constrained = 0;

			for (size_t i = 0; i < m; i++) {
				constrained += (live[i].mask[a] & candidate) != 0;
				set += (live[i].value[a] & candidate) != 0;
			}
			if (constrained == m && (set == 0 || set == m)) {
				bit = candidate;
				arg = a;
			}
		}
	for (unsigned a = 0; a < SR_CUBE_ARGS && !bit; a++)
		if (free_bits[a]) {
			bit = free_bits[a] & -free_bits[a];
			arg = a;
		}
	for (int side = 0; side < 2; side++) {
		struct sr_cube half = region;

		half.mask[arg] |= bit;
		half.value[arg] |= side ? bit : 0;
		r = sr_cubes_complement(live, m, half, out);
		if (r < 0)
			return r;
	}
	return 0;
}
