#!/bin/sh
# Install what llmk needs to build and test, from Debian's packages by name.
# Idempotent: does nothing when everything is already there.
# Usage: tools/deps.sh [--check]
set -e
PKGS="gnu-efi qemu-system-x86 qemu-system-arm ovmf qemu-efi-aarch64 mtools dosfstools
 libbearssl-dev swtpm swtpm-tools clang lld llvm libclang-rt-14-dev gcc-aarch64-linux-gnu
 binutils-aarch64-linux-gnu dpkg-dev xz-utils qemu-user libc6-dev-arm64-cross tpm2-tools openssl"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# Sources built into the kernel, from Debian's source packages: BearSSL
# (TLS, sealing) and lwIP 2.1.x (TCP/IP over virtio-net, docs/network.md).
SRCS="bearssl lwip"
need_src=0
src_missing=""
for s in $SRCS; do
	[ -d build/deps/$s ] || { need_src=1; src_missing="$src_missing $s-source"; }
done
need_arm=0
[ -f build/deps/gnu-efi-arm64/usr/lib/crt0-efi-aarch64.o ] || need_arm=1
if [ "$1" = "--check" ]; then
	[ -z "$missing" ] && [ $need_src = 0 ] && [ $need_arm = 0 ] && exit 0
	echo "deps: missing:$missing$src_missing $( [ $need_arm = 1 ] && echo gnu-efi:arm64)"
	exit 1
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
updated=0
apt_update() {
	[ $updated = 1 ] && return 0
	$SUDO apt-get update -qq
	updated=1
}
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	apt_update
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
# The deb-src entry apt-get source needs: same URIs and suites as the deb entry.
if [ $need_src = 1 ] || [ $need_arm = 1 ]; then
	if ! grep -rqs "^Types:.*deb-src" /etc/apt/sources.list.d/ && ! grep -qs "^deb-src" /etc/apt/sources.list; then
		if [ -f /etc/apt/sources.list.d/debian.sources ]; then
			sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
				$SUDO tee /etc/apt/sources.list.d/llmk-src.sources >/dev/null
		else
			grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
				$SUDO tee /etc/apt/sources.list.d/llmk-src.list >/dev/null
		fi
		updated=0
	fi
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		$SUDO dpkg --add-architecture arm64
		updated=0
	fi
	apt_update
fi
mkdir -p build/deps
for s in $SRCS; do
	[ -d build/deps/$s ] && continue
	echo "deps: fetching $s source"
	rm -rf build/deps/src && mkdir -p build/deps/src
	(cd build/deps/src && apt-get source -qq --download-only $s >/dev/null &&
		dpkg-source -x --no-check *.dsc $s >/dev/null)
	mv build/deps/src/$s build/deps/$s
	rm -rf build/deps/src
done
if [ $need_arm = 1 ]; then
	echo "deps: fetching gnu-efi:arm64"
	rm -rf build/deps/arm && mkdir -p build/deps/arm
	(cd build/deps/arm && apt-get download -qq gnu-efi:arm64 >/dev/null &&
		dpkg-deb -x gnu-efi_*_arm64.deb ../gnu-efi-arm64)
	rm -rf build/deps/arm
fi
exit 0
