#!/bin/sh
# tools/jinja_ref.sh [PREFIX] — llm/jinja.c against @huggingface/jinja (HF's JS port of
# Jinja for chat templates) on every template llama.cpp keeps in models/templates
# (taken from the llama.cpp source node-llama-cpp 3.22.1 bundles, unpacked once
# into build/llamacpp-src), each for three conversations (tools/jinja_render.c
# says which). A case passes when both give the same bytes; when only the
# reference fails (its own gaps: an undefined value iterated or filtered, a
# filter it lacks) it is skipped, named. Then each as chat runs it (with
# llama.cpp's system merge) must render each conversation. Then, through llmctl (`chat --show-prompt
# --messages` with --chat-template-file, then with --chat-template NAME), the
# templates whose format llmk also builds in must give the built-in's bytes
# (Qwen2.5, Qwen3 as chatml, Phi-3.5 as phi3, Gemma 2 as gemma without a system
# message: with one, llama.cpp's Jinja path joins it with one newline where
# the built-in gemma writes two). Without node or node-llama-cpp under
# PREFIX (default build/llamacpp) it skips, saying so. Ends with the stage line.
set -u
PREFIX=${1:-build/llamacpp}
SRC=build/llamacpp-src
render=build/host/jinja_render
bundle=$PREFIX/node_modules/node-llama-cpp/llama/gitRelease.bundle
if ! command -v node >/dev/null || [ ! -f "$bundle" ] ||
	[ ! -f "$PREFIX/node_modules/@huggingface/jinja/dist/index.js" ]; then
	echo "skip jinja-ref: node or node-llama-cpp (with @huggingface/jinja) is not under $PREFIX"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
if [ ! -d "$SRC/models/templates" ]; then
	# only models/templates checked out (the objects stay packed, ~34 MB)
	rm -rf "$SRC"
	{ git init -q "$SRC" && git -C "$SRC" fetch -q "$(realpath "$bundle")" HEAD &&
		git -C "$SRC" checkout -q FETCH_HEAD -- models/templates; } 2>/dev/null ||
		{ echo "jinja-ref: cannot unpack $bundle"; echo "0 passed, 1 failed, 0 skipped"; exit 0; }
fi
pass=0 fail=0 skip=0
tmp=$(mktemp -d)
node tools/jinja_ref.mjs --prefix "$PREFIX" "$tmp" "$SRC"/models/templates/*.jinja || {
	echo "jinja-ref: the reference did not run"; echo "0 passed, 1 failed, 0 skipped"; exit 0; }
for f in "$SRC"/models/templates/*.jinja; do
	for c in sys nosys tools; do
		"$render" "$f" $c >"$tmp/ours" 2>&1
		cp "$tmp/$(basename "$f").$c" "$tmp/ref"
		if cmp -s "$tmp/ours" "$tmp/ref"; then
			pass=$((pass + 1))
		elif head -c 7 "$tmp/ref" | grep -q '^ERROR: ' && ! head -c 7 "$tmp/ours" | grep -q '^ERROR: '; then
			skip=$((skip + 1))
			echo "skip $(basename "$f") $c: the reference fails: $(head -1 "$tmp/ref" | cut -c1-100)"
		elif head -c 7 "$tmp/ours" | grep -q '^ERROR: ' && head -c 7 "$tmp/ref" | grep -q '^ERROR: '; then
			pass=$((pass + 1)) # both refuse (e.g. gemma's raise_exception on a system message)
		else
			fail=$((fail + 1))
			echo "FAIL $(basename "$f") $c:"
			diff "$tmp/ours" "$tmp/ref" | head -8
		fi
	done
done
# as chat runs them (llama.cpp's system merge): every one renders every
# conversation, the last user message in it
for f in "$SRC"/models/templates/*.jinja; do
	for c in sys nosys tools; do
		if "$render" "$f" $c --chat >"$tmp/ours" 2>&1 && grep -q 'Who are you' "$tmp/ours"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL $(basename "$f") $c --chat: $(head -c 200 "$tmp/ours")"
		fi
	done
done
# the model's own template against the built-in format of the same name
M='[{\"role\": \"system\", \"content\": \"You are a helpful assistant\"}, {\"role\": \"user\", \"content\": \"Hello\"}, {\"role\": \"assistant\", \"content\": \"Hi there\"}, {\"role\": \"user\", \"content\": \"Who are you\"}]'
M2='[{\"role\": \"user\", \"content\": \"Hello\"}, {\"role\": \"assistant\", \"content\": \"Hi there\"}, {\"role\": \"user\", \"content\": \"Who are you\"}]'
for row in Qwen-Qwen2.5-7B-Instruct:chatml:M Qwen-Qwen3-0.6B:chatml:M Qwen-Qwen3-0.6B:chatml:M2 \
	microsoft-Phi-3.5-mini-instruct:phi3:M google-gemma-2-2b-it:gemma:M2; do
	f=${row%%:*} rest=${row#*:}
	name=${rest%%:*}
	[ "${rest#*:}" = M ] && msgs=$M || msgs=$M2
	build/host/llmctl -c "chat --show-prompt --chat-template-file $SRC/models/templates/$f.jinja --messages \"$msgs\"" >"$tmp/ours" 2>&1
	build/host/llmctl -c "chat --show-prompt --chat-template $name --messages \"$msgs\"" >"$tmp/ref" 2>&1
	if cmp -s "$tmp/ours" "$tmp/ref" && grep -q '^chat: prompt' "$tmp/ours"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $f as the built-in $name (${rest#*:}):"
		diff "$tmp/ours" "$tmp/ref" | head -8
	fi
done
rm -rf "$tmp"
echo "$pass passed, $fail failed, $skip skipped"
