// tests/host/proxy_openai.mjs PREFIX BASEURL [MAX_TOKENS] — the official `openai` npm
// package (installed under PREFIX by tests/host/proxy.py) makes a greedy
// chat request, whole and streamed, through `llmctl proxy` at BASEURL;
// prints {"whole": TEXT, "streamed": TEXT}.
import path from "node:path";
import {createRequire} from "node:module";
import {pathToFileURL} from "node:url";

const [prefix, baseURL, maxTokens = "20"] = process.argv.slice(2);
const require = createRequire(path.join(prefix, "package.json"));
const {default: OpenAI} = await import(pathToFileURL(require.resolve("openai")).href);
const client = new OpenAI({baseURL, apiKey: "none", maxRetries: 0, timeout: 60000});
const req = {model: "llama", messages: [{role: "user", content: "hello"}], temperature: 0,
	max_tokens: Number(maxTokens)};
const whole = await client.chat.completions.create(req);
let streamed = "";
for await (const ev of await client.chat.completions.create({...req, stream: true}))
	streamed += ev.choices[0]?.delta?.content ?? "";
console.log(JSON.stringify({whole: whole.choices[0].message.content, streamed}));
