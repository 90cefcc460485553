#!/bin/sh
# tools/check_circles.sh — no two files call each other (issue 31: "no file
# calls back into a file that calls it").
#
# A file calls another when it names, followed by '(', a function the other
# defines (a definition: a line starting with a return type and the name,
# not static). Comments and strings are dropped first. Files compiled into
# the same unit by #include (tests) are not looked at: only the directories
# given (default: the kernel, its drivers, the shell and its HTTP server,
# the engine, and the host tools). Prints each pair that calls
# both ways, then "1 passed, 0 failed" (exit 0) or "0 passed, 1 failed"
# (exit 1) for tests/stage.sh. A function defined in two of the files
# (kernel/x86_64/ and kernel/aarch64/ behind kernel/arch.h) is an
# interface, not a file: calling it is no edge.
set -eu
cd "$(dirname "$0")/.."
dirs=${*:-"kernel kernel/x86_64 kernel/aarch64 drivers shell shell/http llm tools/host tools/verify tools/writer boot"}
files=
for d in $dirs; do
	for f in "$d"/*.c; do
		[ -f "$f" ] && files="$files $f"
	done
done
# shellcheck disable=SC2086
awk '
function strip(line,    out, i, c, n) {
	# comments (across lines: incomment) and string/char literals out
	out = ""
	n = length(line)
	for (i = 1; i <= n; i++) {
		c = substr(line, i, 1)
		if (incomment) {
			if (c == "*" && substr(line, i + 1, 1) == "/") { incomment = 0; i++ }
			continue
		}
		if (c == "/" && substr(line, i + 1, 1) == "*") { incomment = 1; i++; continue }
		if (c == "/" && substr(line, i + 1, 1) == "/") break
		if (c == "\"" || c == "\x27") {
			q = c
			for (i++; i <= n; i++) {
				c = substr(line, i, 1)
				if (c == "\\") { i++; continue }
				if (c == q) break
			}
			out = out " "
			continue
		}
		out = out c
	}
	return out
}
FNR == 1 { incomment = 0; nf++; name[nf] = FILENAME; idx[FILENAME] = nf }
{
	s = strip($0)
	sub(/^__attribute__\(\([^)]*\)\)[ \t]*/, "", s)
	text[nf] = text[nf] "\n" s
	# a definition: at column 0, not static, a type then NAME( ; the body
	# follows (no ";" on the line)
	if (s ~ /^[A-Za-z_]/ && s !~ /^(static|typedef|extern|struct [A-Za-z_0-9]+ *\{|enum|union|#)/ &&
	    s ~ /[A-Za-z_0-9]+\(/ && s !~ /;[ \t]*$/) {
		t = s
		sub(/\(.*/, "", t)
		n = split(t, w, /[ \t*]+/)
		fn = w[n]
		if (fn != "" && !(fn in owner))
			owner[fn] = nf
		else if (fn in owner && owner[fn] != nf)
			shared[fn] = 1  # defined twice (per-architecture files): no edge
	}
}
END {
	for (i = 1; i <= nf; i++) {
		t = text[i]
		while (match(t, /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/)) {
			id = substr(t, RSTART, RLENGTH)
			sub(/[ \t]*\($/, "", id)
			t = substr(t, RSTART + RLENGTH)
			if ((id in owner) && !(id in shared) && owner[id] != i) {
				j = owner[id]
				if (!((i, j) in via))
					via[i, j] = id
			}
		}
	}
	bad = 0
	for (k in via) {
		split(k, ij, SUBSEP)
		i = ij[1]; j = ij[2]
		if (i < j && ((j, i) in via)) {
			printf "circle: %s calls %s (%s) and %s calls %s (%s)\n", name[i], name[j],
			       via[i, j], name[j], name[i], via[j, i]
			bad = 1
		}
	}
	printf "%d passed, %d failed\n", !bad, bad
	exit bad
}
' $files
