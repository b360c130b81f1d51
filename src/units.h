/* SPDX-License-Identifier: MIT */
/* Sizes, durations and CPU counts as users write them. Pure functions. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "0", "4096", "512K", "512M", "2G", "1T" (binary multiples; optional "B"/"iB"). */
int sr_parse_size(const char *s, uint64_t *ret_bytes);
/* "0", "120" (seconds), "90s", "1.5s", "250ms", "5m", "1h"; ret in milliseconds. */
int sr_parse_duration(const char *s, uint64_t *ret_ms);
/* "0.5", "2", "1.25"; ret in thousandths of a CPU; 0 = unlimited. */
int sr_parse_cpus(const char *s, uint32_t *ret_milli);
/* A positive integer count (pids); "0" = unlimited. */
int sr_parse_count(const char *s, uint64_t *ret);
int sr_parse_bool(const char *s, bool *ret);

/* Canonical forms that parse back to the same value ("2G", "90s", "0.5"). */
int sr_format_size(uint64_t bytes, char *buf, size_t len);
int sr_format_duration(uint64_t ms, char *buf, size_t len);
int sr_format_cpus(uint32_t milli, char *buf, size_t len);
