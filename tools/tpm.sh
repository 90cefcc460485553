#!/bin/sh
# tools/tpm.sh — a software TPM 2.0 (swtpm) for `make run TPM=1`, the QEMU
# attestation test and the host unit tests.
#
#   tools/tpm.sh setup DIR         manufacture a TPM in DIR/state once: EK
#                                  (RSA 2048 and ECC) with certificates in NV
#                                  signed by a local CA kept in DIR/ca
#   tools/tpm.sh start DIR qemu    swtpm for QEMU: control socket DIR/ctrl.sock
#                                  (-tpmdev emulator; QEMU sends INIT and the
#                                  firmware TPM2_Startup); ends with QEMU
#   tools/tpm.sh start DIR host    swtpm for tools/host/attest.c: command socket
#                                  DIR/swtpm.sock (LLMK_VTPM), control socket
#                                  DIR/swtpm.sock.ctrl (tpm2-tools' swtpm TCTI),
#                                  already started (startup-clear)
#   tools/tpm.sh run DIR host      the host one in the foreground (exec: the caller owns
#                                  the process, e.g. a test that must not leave it behind)
#   tools/tpm.sh stop DIR          end the swtpm this script started in DIR (its pid file)
#
# Everything lives in DIR: swtpm_setup gets its own configuration files
# there, so nothing under /etc or /var/lib is needed or touched, and it
# works as root on a fresh machine (swtpm-tools: swtpm_setup, swtpm_localca).
set -eu

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: tools/tpm.sh setup|start|run|stop DIR [qemu|host]" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

need() {
	command -v "$1" >/dev/null 2>&1 || { echo "tools/tpm.sh: $1 not found (Debian package $2; make deps)" >&2; exit 3; }
}

setup() {
	need swtpm swtpm
	need swtpm_setup swtpm-tools
	need swtpm_localca swtpm-tools
	[ -f "$dir/state/tpm2-00.permall" ] && return 0
	rm -rf "$dir/state" "$dir/ca"
	mkdir -p "$dir/state" "$dir/ca"
	cat > "$dir/swtpm-localca.conf" <<EOF
statedir = $dir/ca
signingkey = $dir/ca/signkey.pem
issuercert = $dir/ca/issuercert.pem
certserial = $dir/ca/certserial
EOF
	cat > "$dir/swtpm-localca.options" <<EOF
--platform-manufacturer llmk
--platform-version 1.0
--platform-model QEMU
EOF
	cat > "$dir/swtpm_setup.conf" <<EOF
create_certs_tool = $(command -v swtpm_localca)
create_certs_tool_config = $dir/swtpm-localca.conf
create_certs_tool_options = $dir/swtpm-localca.options
active_pcr_banks = sha256
EOF
	if ! swtpm_setup --tpm2 --tpmstate "$dir/state" --config "$dir/swtpm_setup.conf" \
		--create-ek-cert --create-platform-cert --overwrite >"$dir/setup.log" 2>&1; then
		echo "tools/tpm.sh: swtpm_setup failed; its output:" >&2
		cat "$dir/setup.log" >&2
		exit 1
	fi
	# the local CA's root, for a verifier's --ek-ca
	cat "$dir/ca/issuercert.pem" "$dir/ca/swtpm-localca-rootca-cert.pem" > "$dir/ek-ca.pem"
}

stop() {
	[ -f "$dir/swtpm.pid" ] || return 0
	pid=$(cat "$dir/swtpm.pid")
	rm -f "$dir/swtpm.pid"
	# only the swtpm this script started: the pid file's process, if it is swtpm
	if [ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = swtpm ]; then
		kill "$pid" 2>/dev/null || true
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
}

start() {
	setup
	stop
	case ${1:-} in
	qemu)
		rm -f "$dir/ctrl.sock"
		swtpm socket --tpm2 --tpmstate dir="$dir/state" --ctrl type=unixio,path="$dir/ctrl.sock" \
			--terminate --log file="$dir/swtpm.log" --pid file="$dir/swtpm.pid" --daemon
		sock=$dir/ctrl.sock ;;
	host)
		rm -f "$dir/swtpm.sock" "$dir/swtpm.sock.ctrl"
		swtpm socket --tpm2 --tpmstate dir="$dir/state" \
			--server type=unixio,path="$dir/swtpm.sock" \
			--ctrl type=unixio,path="$dir/swtpm.sock.ctrl" \
			--flags not-need-init,startup-clear --log file="$dir/swtpm.log" \
			--pid file="$dir/swtpm.pid" --daemon
		sock=$dir/swtpm.sock ;;
	*)
		echo "usage: tools/tpm.sh start DIR qemu|host" >&2; exit 2 ;;
	esac
	for _ in $(seq 50); do
		[ -S "$sock" ] && [ -f "$dir/swtpm.pid" ] && return 0
		sleep 0.1
	done
	echo "tools/tpm.sh: swtpm did not create $sock; its log:" >&2
	cat "$dir/swtpm.log" >&2 2>/dev/null || true
	exit 1
}

run() {
	setup
	rm -f "$dir/swtpm.sock" "$dir/swtpm.sock.ctrl"
	exec swtpm socket --tpm2 --tpmstate dir="$dir/state" \
		--server type=unixio,path="$dir/swtpm.sock" \
		--ctrl type=unixio,path="$dir/swtpm.sock.ctrl" \
		--flags not-need-init,startup-clear --log file="$dir/swtpm.log"
}

case $cmd in
setup) setup ;;
start) start "${3:-}" ;;
run) run ;;
stop) stop ;;
*) echo "usage: tools/tpm.sh setup|start|run|stop DIR [qemu|host]" >&2; exit 2 ;;
esac
