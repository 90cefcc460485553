// tools/bench_llamacpp_serve.mjs — llama.cpp's side of tools/bench_serve.py:
// K generations at once on one context of K sequences (node-llama-cpp
// batches the sequences' tokens into one decode), each fed the same prompt
// text our server gets, greedy, N tokens each. Prints one JSON line: the
// aggregate tokens/s (every sequence's tokens over the wall time from the
// first prompt in to the last token out) and each sequence's time to its
// first token.
//
//   node tools/bench_llamacpp_serve.mjs PREFIX MODEL THREADS K N PROMPT_TEXT...
//
// PREFIX is the npm prefix node-llama-cpp was installed under (build/llamacpp).
import path from "node:path";
import {pathToFileURL} from "node:url";

const [prefix, model, threadsArg, kArg, nArg, ...texts] = process.argv.slice(2);
if (!texts.length) {
	console.error("usage: node bench_llamacpp_serve.mjs PREFIX MODEL THREADS K N PROMPT...");
	process.exit(2);
}
const threads = Number(threadsArg), K = Number(kArg), N = Number(nArg);
const entry = path.join(prefix, "node_modules", "node-llama-cpp", "dist", "index.js");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(entry).href);

const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error,
	progressLogs: false, skipDownload: true, maxThreads: threads});
const loaded = await llama.loadModel({modelPath: model, gpuLayers: 0});
const prompts = Array.from({length: K}, (_, i) => loaded.tokenize(texts[i % texts.length], true));
const longest = Math.max(...prompts.map((p) => p.length));
// a batch of 64 (as ours carries up to 128): its logits and compute buffers
// stay small enough for the streamed round's memory cgroup
const context = await loaded.createContext({contextSize: K * (longest + N + 16),
	batchSize: Math.max(64, K), threads: {ideal: threads, min: threads}, sequences: K});
const seqs = Array.from({length: K}, () => context.getSequence());

// a warm-up, not counted (page in the weights, start the threads)
for await (const _ of seqs[0].evaluate(prompts[0].slice(0, 8), {temperature: 0}))
	break;
await seqs[0].clearHistory();

const t0 = process.hrtime.bigint();
const ttft = new Array(K).fill(0), count = new Array(K).fill(0);
await Promise.all(seqs.map(async (seq, i) => {
	for await (const _ of seq.evaluate(prompts[i], {temperature: 0})) {
		if (count[i]++ === 0)
			ttft[i] = Number(process.hrtime.bigint() - t0) / 1e9;
		if (count[i] >= N)
			break;
	}
}));
const wall = Number(process.hrtime.bigint() - t0) / 1e9;
const tokens = count.reduce((a, b) => a + b, 0);
console.log(JSON.stringify({engine: "node-llama-cpp", llama_cpp: llama.llamaCppRelease, threads, K,
	N, tokens, wall_s: wall, tps: tokens / wall, ttft_s: ttft, prompt_tokens: prompts.map((p) => p.length)}));
await context.dispose();
await loaded.dispose();
await llama.dispose();
