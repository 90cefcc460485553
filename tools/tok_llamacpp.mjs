// tools/tok_llamacpp.mjs — llama.cpp's token ids for llama.cpp's tokenizer
// test strings, through node-llama-cpp (its prebuilt CPU build).
//
//   node tools/tok_llamacpp.mjs [--prefix DIR] VOCAB.gguf STRINGS.inp > OUT
//   node tools/tok_llamacpp.mjs [--prefix DIR] --eog VOCAB.gguf > OUT.eog
//
// DIR is the npm prefix node-llama-cpp 3.22.1 was installed under
// (default build/llamacpp). STRINGS.inp holds strings separated by
// "\n__ggml_vocab_test__\n" (../shared/testdata/vocab/*.inp); OUT gets one
// line per string, the ids space-separated with a leading space, as
// llama.cpp's test-tokenizer-0 writes its .out files: no BOS/EOS added,
// special-token text not parsed (model.tokenize(text, false)). With --eog:
// one line, the ids of the tokens that end generation (model.isEogToken).
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

const args = process.argv.slice(2);
let prefix = "build/llamacpp";
if (args[0] === "--prefix") {
	prefix = args[1];
	args.splice(0, 2);
}
const eog = args[0] === "--eog";
if (eog)
	args.shift();
if (args.length !== (eog ? 1 : 2)) {
	console.error("usage: node tok_llamacpp.mjs [--prefix DIR] {VOCAB.gguf STRINGS.inp | --eog VOCAB.gguf}");
	process.exit(2);
}
const [vocab, inp] = args;
const entry = path.join(prefix, "node_modules", "node-llama-cpp", "dist", "index.js");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(entry).href);
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error,
	progressLogs: false, skipDownload: true});
const model = await llama.loadModel({modelPath: vocab, vocabOnly: true, gpuLayers: 0});

if (eog) {
	const n = model.fileInfo.metadata.tokenizer.ggml.tokens.length, ids = [];
	for (let id = 0; id < n; id++)
		if (model.isEogToken(id))
			ids.push(id);
	process.stdout.write(ids.join(" ") + "\n");
	await model.dispose();
	await llama.dispose();
	process.exit(0);
}

const raw = fs.readFileSync(inp);
const text = raw.toString("utf8");
if (!Buffer.from(text, "utf8").equals(raw)) {
	console.error(`${inp}: not valid UTF-8 (JavaScript strings would change it)`);
	process.exit(1);
}
const sep = "\n__ggml_vocab_test__\n";
const cases = text.split(sep);
cases.pop(); // the text after the last separator is not a case

let out = "";
for (const c of cases)
	out += model.tokenize(c, false).map((id) => " " + id).join("") + "\n";
process.stdout.write(out);
await model.dispose();
await llama.dispose();
