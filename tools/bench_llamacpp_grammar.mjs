// tools/bench_llamacpp_grammar.mjs — llama.cpp's side of the grammar
// benchmark (tools/bench_grammar.sh): decode speed through node-llama-cpp
// with and without a GBNF grammar, the same prompt, count and sampler kind.
//
//   node tools/bench_llamacpp_grammar.mjs PREFIX MODEL GRAMMAR_FILE THREADS ROUNDS
//
// Each round, alternating: 128 tokens plain, then 128 under the grammar,
// (N tokens: the environment's N, 128 by default), sampled (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, seed = round)
// and greedy (temperature 0). The clock runs from the first generated token
// to the last (the prompt's pass excluded). Prints one line a run.
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

const [prefix, model, gfile, threadsArg, roundsArg] = process.argv.slice(2);
if (!roundsArg) {
	console.error("usage: node bench_llamacpp_grammar.mjs PREFIX MODEL GRAMMAR_FILE THREADS ROUNDS");
	process.exit(2);
}
const threads = Number(threadsArg), rounds = Number(roundsArg), N = Number(process.env.N ?? 128);
const entry = path.join(prefix, "node_modules", "node-llama-cpp", "dist", "index.js");
const {getLlama, LlamaLogLevel, LlamaGrammarEvaluationState} = await import(pathToFileURL(entry).href);
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error,
	progressLogs: false, skipDownload: true, maxThreads: threads});
const loaded = await llama.loadModel({modelPath: model, gpuLayers: 0});
const grammar = await llama.createGrammar({grammar: fs.readFileSync(gfile, "utf8")});
const prompt = loaded.tokenize("The answer:", true);

async function run(seed, temp, withGrammar) {
	const context = await loaded.createContext({contextSize: 512, batchSize: 64,
		threads: {ideal: threads, min: threads}, sequences: 1});
	const seq = context.getSequence();
	const opts = {temperature: temp, topK: 40, topP: 0.95, minP: 0.05, seed};
	if (withGrammar)
		opts.grammarEvaluationState = new LlamaGrammarEvaluationState({model: loaded, grammar});
	let n = 0, t0 = 0;
	for await (const tok of seq.evaluate(prompt, opts)) {
		if (n === 0)
			t0 = performance.now();
		if (++n === N)
			break;
	}
	const s = (performance.now() - t0) / 1000;
	await context.dispose();
	return {n, tps: (n - 1) / s};
}

for (let r = 1; r <= rounds; r++)
	for (const temp of [0.8, 0]) {
		const a = await run(r, temp, false), b = await run(r, temp, true);
		console.log(`round ${r} ${temp ? "sampled" : "--temp 0"}: plain ${a.tps.toFixed(1)} tok/s ` +
			`(${a.n} tokens); json ${b.tps.toFixed(1)} tok/s (${b.n} tokens)`);
	}
