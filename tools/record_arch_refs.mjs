// tools/record_arch_refs.mjs — llama.cpp's greedy ids on the reference model
// of each architecture (mkmodel --ref ARCH), recorded once into
// tests/refs/arch/<arch>.json; `make test` compares ours against them
// (tests/unit/test_model_refs.c) and never needs npm.
//
//   node tools/record_arch_refs.mjs [--prefix DIR] [--mkmodel FILE] [--out DIR]
//                                   [--work DIR] [ARCH...]
//
// --prefix: the npm prefix of node-llama-cpp (build/llamacpp, installed there
// on first use as tools/bench_compare.py does; --prefix /work/npm-llamacpp
// reuses one install); --mkmodel build/host/mkmodel; --out tests/refs/arch;
// --work build/archrefs (the models). ARCHs default to every one `mkmodel
// --archs` lists. Per architecture: the model is written to the work dir, the
// prompt tokenized by llama.cpp (BOS first), then N_GEN tokens chosen greedily
// from llama.cpp's raw logits (CPU backend), each fed back. The end-of-text
// token is never chosen (as `infer --ignore-eos`). Each step records the gap
// between its best and second-best logit: the test's near-tie rule forgives
// a different choice only where that gap is below its tolerance.
import fs from "node:fs";
import path from "node:path";
import {execFileSync} from "node:child_process";
import {pathToFileURL} from "node:url";

const N_GEN = 32, N_LOGITS = 32;
const PROMPT = "Once upon a time there was a little girl";

const NLC_VERSION = "3.22.1";
const opt = {prefix: "build/llamacpp", mkmodel: "build/host/mkmodel", out: "tests/refs/arch",
	work: "build/archrefs"};
const argArchs = [];
for (let i = 2; i < process.argv.length; i++) {
	const a = process.argv[i];
	if (a.startsWith("--") && a.slice(2) in opt && i + 1 < process.argv.length) {
		opt[a.slice(2)] = process.argv[++i];
	} else if (a.startsWith("-")) {
		console.error("usage: node record_arch_refs.mjs [--prefix DIR] [--mkmodel FILE] " +
			"[--out DIR] [--work DIR] [ARCH...]");
		process.exit(2);
	} else {
		argArchs.push(a);
	}
}
const {prefix, mkmodel, out: outDir, work: workDir} = opt;
// node-llama-cpp and its linux-x64 CPU build, without install scripts (they
// would build llama.cpp) or the optional GPU builds
if (!fs.existsSync(path.join(prefix, "node_modules", "node-llama-cpp", "package.json"))) {
	fs.mkdirSync(prefix, {recursive: true});
	if (!fs.existsSync(path.join(prefix, "package.json")))
		fs.writeFileSync(path.join(prefix, "package.json"),
			JSON.stringify({name: "llmk-llamacpp", private: true}));
	console.error(`record_arch_refs: installing node-llama-cpp ${NLC_VERSION} under ${prefix}`);
	execFileSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts",
		"--omit=optional", `node-llama-cpp@${NLC_VERSION}`,
		`@node-llama-cpp/linux-x64@${NLC_VERSION}`], {cwd: prefix, stdio: "inherit"});
}
const archs = argArchs.length ? argArchs
	: execFileSync(mkmodel, ["--archs"], {encoding: "utf8"}).split("\n").filter(Boolean);
const pkg = path.join(prefix, "node_modules", "node-llama-cpp");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(path.join(pkg, "dist",
	"index.js")).href);
const version = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error,
	progressLogs: false, skipDownload: true, maxThreads: 1});

// the best and second-best of a token -> logit map, the end token excluded
function best2(logits, eos) {
	let b = [-1, -Infinity], c = [-1, -Infinity];
	for (const [tok, v] of logits) {
		if (tok === eos)
			continue;
		if (v > b[1] || (v === b[1] && tok < b[0])) {
			c = b;
			b = [tok, v];
		} else if (v > c[1] || (v === c[1] && tok < c[0])) {
			c = [tok, v];
		}
	}
	return [b, c];
}

fs.mkdirSync(outDir, {recursive: true});
fs.mkdirSync(workDir, {recursive: true});
// each reference model in F32 and in Q8_0 (every matrix: the quantized
// and, where the CPU has them, packed kernels); a row whose models may take
// another form records that too (llama with experts: Mixtral's layout, as
// NAME-moe.json)
const variants = [["", []], ["-q8_0", ["--type", "Q8_0", "--pure"]]];
const forms = {llama: [["", []], ["-moe", ["--experts", "4"]]]};
const runs = archs.flatMap((a) => (forms[a] || [["", []]]).flatMap(([f, fx]) =>
	variants.map(([s, x]) => [a, f + s, [...fx, ...x]])));
for (const [arch, suffix, extra] of runs) {
	const file = path.join(workDir, `${arch}${suffix}.gguf`);
	execFileSync(mkmodel, ["--ref", arch, ...extra, "-o", file]);
	const model = await llama.loadModel({modelPath: file, gpuLayers: 0});
	// an F32 cache and plain attention: llama.cpp's answer without the F16
	// roundings of its default cache and flash attention
	const ctx = await model.createContext({contextSize: 128, batchSize: 128, sequences: 1,
		threads: {ideal: 1, min: 1}, flashAttention: false,
		experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32"});
	const seq = ctx.getSequence();
	const eos = model.tokens.eos;
	const prompt = [model.tokens.bos, ...model.tokenize(PROMPT)];
	const want = {logits: true, options: {temperature: 0}};
	let input = prompt.map((t, i) => i === prompt.length - 1 ? [t, {generateNext: want}] : t);
	const tokens = [], gaps = [];
	let first = null;
	for (let i = 0; i < N_GEN; i++) {
		const out = await seq.controlledEvaluate(input);
		const logits = out[input.length - 1].next.logits;
		if (!first)
			first = Array.from({length: N_LOGITS}, (_, t) => logits.get(t));
		const [b, c] = best2(logits, eos);
		tokens.push(b[0]);
		gaps.push(Number((b[1] - c[1]).toPrecision(4)));
		input = [[b[0], {generateNext: want}]];
	}
	const rec = {arch, mkmodel: ["--ref", arch, ...extra].join(" "), llamacpp: `node-llama-cpp ${version}`,
		prompt: PROMPT, prompt_tokens: prompt, tokens, gaps,
		logits: first.map((v) => Number(v.toPrecision(7)))};
	fs.writeFileSync(path.join(outDir, `${arch}${suffix}.json`), JSON.stringify(rec) + "\n");
	console.log(`${arch}${suffix}: ${tokens.join(" ")} (smallest gap ${Math.min(...gaps)})`);
	await ctx.dispose();
	await model.dispose();
}
