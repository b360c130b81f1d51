/* SPDX-License-Identifier: MIT */
#include "layout.h"
#include "setup.h"
#include "util.h"

const struct sr_layout_dir sr_layout_skeleton[] = {
    {"proc", 0555},	 {"dev", 0755},	      {"tmp", 01777}, {"home", 0755},
    {"home/user", 0755}, {"workspace", 0755}, {"run", 0755},  {"var", 0755},
};
const size_t sr_layout_n_skeleton = SR_ARRAY_SIZE(sr_layout_skeleton);

const char *const sr_layout_host_top[] = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"};
const size_t sr_layout_n_host_top = SR_ARRAY_SIZE(sr_layout_host_top);

/*
 * The parts of /etc that programs need: the dynamic linker's cache, name
 * service and TLS configuration, time zone, alternatives. Not the rest:
 * host accounts, hostname, network and service configuration stay hidden.
 *
 * Of /etc/ssl and /etc/pki, what TLS clients read -- the trusted
 * certificates, OpenSSL's configuration -- and not the rest: /etc/ssl/private
 * and /etc/pki/tls/private hold the host's private keys, readable by
 * group ssl-cert (Debian) or root, and an unprivileged caller's groups
 * stay in force inside (docs/security.md). Debian and Alpine keep the
 * certificates in ssl/certs, Arch and SUSE a bundle beside them, Fedora
 * in pki/tls and pki/ca-trust/extracted (with crypto-policies).
 */
const char *const sr_layout_host_etc[] = {
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "services",
    "protocols",
    "mime.types",
    "localtime",
    "timezone",
    "os-release",
    "debian_version",
    "ssl/certs",
    "ssl/openssl.cnf",
    "ssl/cert.pem",
    "ssl/ca-bundle.pem",
    "ca-certificates",
    "ca-certificates.conf",
    "alternatives",
    "pki/tls/certs",
    "pki/tls/cert.pem",
    "pki/tls/openssl.cnf",
    "pki/tls/ct_log_list.cnf",
    "pki/ca-trust/extracted",
    "pki/java",
    "crypto-policies",
    "inputrc",
    "mailcap",
};
const size_t sr_layout_n_host_etc = SR_ARRAY_SIZE(sr_layout_host_etc);

const char *const sr_layout_proc_hidden_files[] = {
    "kcore",	     "keys",	  "timer_list",	 "sched_debug",	 "latency_stats",
    "timer_stats",   "kallsyms",  "kpagecount",	 "kpageflags",	 "kpagecgroup",
    "sysrq-trigger", "config.gz", "vmallocinfo", "pagetypeinfo",
};
const size_t sr_layout_n_proc_hidden_files = SR_ARRAY_SIZE(sr_layout_proc_hidden_files);
const char *const sr_layout_proc_hidden_dirs[] = {"acpi", "asound", "scsi", "firmware", "driver"};
const size_t sr_layout_n_proc_hidden_dirs = SR_ARRAY_SIZE(sr_layout_proc_hidden_dirs);
const char *const sr_layout_proc_readonly[] = {"sys", "bus", "fs", "irq"};
const size_t sr_layout_n_proc_readonly = SR_ARRAY_SIZE(sr_layout_proc_readonly);

const char *const sr_layout_dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
const size_t sr_layout_n_dev_nodes = SR_ARRAY_SIZE(sr_layout_dev_nodes);

const char sr_layout_passwd[] =
    "root:x:0:0:root:/root:/usr/sbin/nologin\n" SR_SANDBOX_USER ":x:" SR_LAYOUT_UID
    ":" SR_LAYOUT_GID ":" SR_SANDBOX_USER ":" SR_SANDBOX_HOME ":/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
const char sr_layout_group[] =
    "root:x:0:\n" SR_SANDBOX_USER ":x:" SR_LAYOUT_GID ":\nnogroup:x:65534:\n";
const char sr_layout_hosts[] = "127.0.0.1\tlocalhost\n127.0.1.1\t" SR_SANDBOX_HOSTNAME "\n"
			       "::1\tlocalhost ip6-localhost ip6-loopback\n";
const char sr_layout_hostname[] = SR_SANDBOX_HOSTNAME "\n";
