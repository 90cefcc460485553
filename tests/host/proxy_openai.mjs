// tests/host/proxy_openai.mjs PREFIX BASEURL [MAX_TOKENS [PROMPTS]] — the official
// `openai` npm package (installed under PREFIX by tests/host/proxy.py) makes a
// greedy chat request, whole and streamed, through `llmctl proxy` at BASEURL;
// with PROMPTS (a JSON array of user messages) also one streamed chat for each,
// all at once; prints {"whole": TEXT, "streamed": TEXT, "at_once": [TEXT, ...]}.
import path from "node:path";
import {createRequire} from "node:module";
import {pathToFileURL} from "node:url";

const [prefix, baseURL, maxTokens = "20", prompts = "[]"] = process.argv.slice(2);
const require = createRequire(path.join(prefix, "package.json"));
const {default: OpenAI} = await import(pathToFileURL(require.resolve("openai")).href);
const client = new OpenAI({baseURL, apiKey: "none", maxRetries: 0, timeout: 60000});
const req = {model: "llama", messages: [{role: "user", content: "hello"}], temperature: 0,
	max_tokens: Number(maxTokens)};
const whole = await client.chat.completions.create(req);
async function stream(r) {
	let text = "";
	for await (const ev of await client.chat.completions.create({...r, stream: true}))
		text += ev.choices[0]?.delta?.content ?? "";
	return text;
}
const streamed = await stream(req);
const at_once = await Promise.all(JSON.parse(prompts).map(
	(content) => stream({...req, messages: [{role: "user", content}]})));
console.log(JSON.stringify({whole: whole.choices[0].message.content, streamed, at_once}));
