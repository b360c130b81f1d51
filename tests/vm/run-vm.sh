#!/bin/bash
# Runs a command as root inside a small VM with a real cgroup v2 host:
# Debian's kernel under qemu-system-x86_64 (TCG), a busybox initramfs, and
# this machine's root shared read-only over 9p (see docs/limits.md).
#
#   tests/vm/run-vm.sh [--cache DIR] -- COMMAND [ARG...]
#
# COMMAND sees the host's files at their usual paths, read-only, with a
# writable tmpfs /tmp, and /sys/fs/cgroup a cgroup2 hierarchy with every
# controller. Its output is printed; the script exits with its status.
# The kernel package is downloaded once into the cache (never committed).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${SR_VM_CACHE:-$PWD/tests/vm/cache}
if [ "${1:-}" = --cache ]; then
	cache=$2
	shift 2
fi
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: $0 [--cache DIR] -- COMMAND [ARG...]" >&2; exit 2; }

for tool in qemu-system-x86_64 busybox dpkg-deb apt-get; do
	if ! command -v "$tool" >/dev/null; then
		echo "run-vm: $tool is missing (apt-get install qemu-system-x86 busybox-static)" >&2
		exit 77
	fi
done
if ldd "$(command -v busybox)" >/dev/null 2>&1; then
	echo "run-vm: busybox must be static (apt-get install busybox-static)" >&2
	exit 77
fi

# The unprivileged rounds need an account the guest can see: it reads the
# host's /etc read-only, so it is made here, as the integration tests do.
if [ "$(id -u)" = 0 ] && ! id -u "${SR_TEST_USER:-sr-test}" >/dev/null 2>&1; then
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
		"${SR_TEST_USER:-sr-test}"
fi

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# The kernel: Debian's generic flavour (the cloud one has no 9p).
if ! ls "$cache"/kernel/boot/vmlinuz-* >/dev/null 2>&1; then
	pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: \(linux-image-6[^ ]*\)/\1/p' | head -1)
	[ -n "$pkg" ] || { echo "run-vm: no linux-image package known to apt" >&2; exit 77; }
	rm -rf "$cache/kernel" "$cache"/*.deb
	(cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) ||
		{ echo "run-vm: apt-get download $pkg failed" >&2; exit 77; }
	dpkg-deb -x "$cache"/"$pkg"_*.deb "$cache/kernel"
	rm -f "$cache"/*.deb
fi
kernel=$(ls "$cache"/kernel/boot/vmlinuz-* | head -1)
moddir=$(ls -d "$cache"/kernel/lib/modules/* | head -1)

# The initramfs: static busybox, the modules for 9p, our init.
initrd=$cache/initrd.cpio.gz
if [ ! -f "$initrd" ] || [ "$here/init" -nt "$initrd" ]; then
	root=$cache/initrd
	rm -rf "$root"
	mkdir -p "$root"/{bin,proc,sys,dev,modules,host}
	install -m 0755 "$(command -v busybox)" "$root/bin/busybox"
	install -m 0755 "$here/init" "$root/init"
	for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
		netfs fscache 9pnet 9pnet_virtio 9p overlay; do
		f=$(find "$moddir" -name "$m.ko" | head -1)
		[ -n "$f" ] && cp "$f" "$root/modules/"
	done
	(cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
fi

# The command, as a script on the host: the guest reads it over 9p (not
# from /tmp: the guest has its own).
work=$(mktemp -d "$cache/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
{
	echo '#!/bin/sh'
	printf 'cd %q\n' "$PWD"
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$work/cmd"
chmod 0755 "$work/cmd"

# -enable-kvm does not work on these hosts (docs/limits.md): TCG.
timeout "${SR_VM_TIMEOUT:-900}" qemu-system-x86_64 \
	-accel tcg,thread=multi -smp 2 -m "${SR_VM_MEMORY:-1024}" \
	-display none -monitor none -no-reboot \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 quiet panic=-1 sr_script=$work/cmd" \
	-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
	-serial "file:$work/console" -serial "file:$work/out" || true

# The guest's console has NUL bytes.
tr -d '\000\r' <"$work/out" >"$work/out.txt" || true
status=$(sed -n 's/^SR-VM-EXIT \([0-9]*\).*/\1/p' "$work/out.txt" | tail -1)
grep -v '^SR-VM-EXIT ' "$work/out.txt" || true
if [ -z "$status" ]; then
	echo "run-vm: the VM ended without a status; its console:" >&2
	tr -d '\000' <"$work/console" | tail -40 >&2
	exit 125
fi
exit "$status"
