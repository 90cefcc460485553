// tools/bench_llamacpp.mjs — llama.cpp's side of tools/bench_compare.py:
// prompt and generation speed of one GGUF through node-llama-cpp (its
// prebuilt CPU build), measured the way `llmctl bench` measures ours.
//
//   node tools/bench_llamacpp.mjs PREFIX MODEL THREADS PP TG REPS
//
// PREFIX is the npm prefix node-llama-cpp was installed under (build/...).
// Each repetition evaluates PP prompt tokens in one batch into an empty
// context (ppN), then, from an empty context again, generates TG tokens one
// at a time, greedy (tgN), as llama-bench does: the same token ids every
// time (random in [3, vocab), seed fixed). Prints one JSON line: the t/s of
// each repetition, the llama.cpp release, and the ggml CPU variant the
// process loaded (from /proc/self/maps: ggml picks the best its CPU runs).
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

const [prefix, model, threadsArg, ppArg, tgArg, repsArg] = process.argv.slice(2);
if (!repsArg) {
	console.error("usage: node bench_llamacpp.mjs PREFIX MODEL THREADS PP TG REPS");
	process.exit(2);
}
const threads = Number(threadsArg), pp = Number(ppArg), tg = Number(tgArg), reps = Number(repsArg);
const entry = path.join(prefix, "node_modules", "node-llama-cpp", "dist", "index.js");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(entry).href);

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error,
	progressLogs: false, skipDownload: true, maxThreads: threads});
const loaded = await llama.loadModel({modelPath: model, gpuLayers: 0});
const context = await loaded.createContext({contextSize: pp + tg + 16, batchSize: Math.max(pp, 1),
	threads: {ideal: threads, min: threads}, sequences: 1});
const seq = context.getSequence();

// a small xorshift: the same ids every run, none of the first three
// (unknown, begin, end of text in llama vocabularies)
let state = 0x9e3779b97f4a7c15n;
function nextId(n) {
	state ^= state << 13n; state &= 0xffffffffffffffffn;
	state ^= state >> 7n;
	state ^= state << 17n; state &= 0xffffffffffffffffn;
	return 3 + Number(state % BigInt(n - 3));
}
const nVocab = loaded.fileInfo?.metadata?.tokenizer?.ggml?.tokens?.length ?? 32000;
const prompt = Array.from({length: pp}, () => nextId(nVocab));
const first = nextId(nVocab);

// a warm-up, not counted (page in the mapped weights, start the threads)
await seq.clearHistory();
await seq.evaluateWithoutGeneratingNewTokens(prompt.slice(0, Math.min(pp, 16)).length
	? prompt.slice(0, Math.min(pp, 16)) : [first]);

const ppRates = [], tgRates = [];
for (let r = 0; r < reps; r++) {
	await seq.clearHistory();
	let t0 = process.hrtime.bigint();
	if (pp > 0)
		await seq.evaluateWithoutGeneratingNewTokens(prompt);
	let t1 = process.hrtime.bigint();
	if (pp > 0)
		ppRates.push(pp / (Number(t1 - t0) / 1e9));
	if (tg > 0) {
		// as llama-bench and `llmctl bench`: from an empty context, one
		// token in, then each generated token fed back
		let n = 0;
		await seq.clearHistory();
		t0 = process.hrtime.bigint();
		for await (const tok of seq.evaluate([first], {temperature: 0})) {
			if (++n >= tg)
				break;
		}
		t1 = process.hrtime.bigint();
		tgRates.push(n / (Number(t1 - t0) / 1e9));
	}
}

const maps = fs.readFileSync("/proc/self/maps", "utf8");
const variant = (maps.match(/libggml-cpu-([a-z0-9_]+)\.so/) || [])[1] ?? "unknown";
console.log(JSON.stringify({
	engine: "node-llama-cpp", version: JSON.parse(fs.readFileSync(path.join(prefix,
		"node_modules", "node-llama-cpp", "package.json"), "utf8")).version,
	llama_cpp: llama.llamaCppRelease, cpu_variant: variant, threads, pp, tg,
	pp_tps: ppRates, tg_tps: tgRates,
}));
await context.dispose();
await loaded.dispose();
await llama.dispose();
