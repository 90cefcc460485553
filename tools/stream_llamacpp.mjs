// tools/stream_llamacpp.mjs — llama.cpp's side of tools/bench_stream7b.py:
// load one GGUF through node-llama-cpp (its prebuilt CPU build, the weights
// mmap'd as llama.cpp does by default), evaluate a prompt and generate N
// tokens greedily, the way `llmctl -c 'load 0' -c 'infer ... -n N'` does.
//
//   node tools/stream_llamacpp.mjs PREFIX MODEL THREADS N PROMPT
//
// PREFIX is the npm prefix node-llama-cpp was installed under (build/...).
// MODEL "-" loads no model: the JSON line names the CPU build only.
// Prints one JSON line: milliseconds for the module's start, the model load,
// the prompt and the generation (N tokens: the first comes from the
// prompt's pass, each later one from a pass of its own), the prompt's token
// count, and the ggml CPU variant the process loaded (/proc/self/maps).
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

const t0 = performance.now();
const [prefix, model, threadsArg, nArg, prompt] = process.argv.slice(2);
if (prompt === undefined) {
	console.error("usage: node stream_llamacpp.mjs PREFIX MODEL THREADS N PROMPT");
	process.exit(2);
}
const threads = Number(threadsArg), n = Number(nArg);
const entry = path.join(prefix, "node_modules", "node-llama-cpp", "dist", "index.js");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(entry).href);

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error,
	progressLogs: false, skipDownload: true, maxThreads: threads});
const t1 = performance.now();
function cpuVariant() {
	const maps = fs.readFileSync("/proc/self/maps", "utf8");
	return (maps.match(/libggml-cpu-([a-z0-9_]+)\.so/) || [])[1] ?? "unknown";
}
if (model === "-") {
	console.log(JSON.stringify({engine: "node-llama-cpp", cpu_variant: cpuVariant()}));
	await llama.dispose();
	process.exit(0);
}
const loaded = await llama.loadModel({modelPath: model, gpuLayers: 0});
const context = await loaded.createContext({contextSize: 512, batchSize: 512,
	threads: {ideal: threads, min: threads}, sequences: 1});
const seq = context.getSequence();
const t2 = performance.now();

const ids = loaded.tokenize(prompt);
let tFirst = 0, got = 0;
for await (const tok of seq.evaluate(ids, {temperature: 0})) {
	if (++got === 1)
		tFirst = performance.now();
	if (got >= n)
		break;
}
const t3 = performance.now();

const variant = cpuVariant();
console.log(JSON.stringify({
	engine: "node-llama-cpp", llama_cpp: llama.llamaCppRelease, cpu_variant: variant, threads,
	start_ms: t1 - t0, load_ms: t2 - t1, prompt_ms: tFirst - t2, gen_ms: t3 - tFirst,
	prompt_tokens: ids.length, tokens: got,
}));
await context.dispose();
await loaded.dispose();
await llama.dispose();
