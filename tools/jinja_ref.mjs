// tools/jinja_ref.mjs — the reference side of tools/jinja_ref.sh: a chat template
// rendered by @huggingface/jinja (HF's JS port of Jinja for chat templates,
// trim_blocks and lstrip_blocks on, as apply_chat_template), for the same
// fixed conversations as tools/jinja_render.c.
//
//   node tools/jinja_ref.mjs --prefix DIR OUTDIR TEMPLATE.jinja...
//
// DIR is the npm prefix node-llama-cpp 3.22.1 was installed under (it depends
// on @huggingface/jinja). Writes OUTDIR/NAME.CONV (CONV: sys, nosys, tools):
// the text, or "ERROR: ..." and a newline.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
let prefix = "build/llamacpp";
if (args[0] === "--prefix") {
	prefix = args[1];
	args.splice(0, 2);
}
const entry = path.join(prefix, "node_modules", "@huggingface", "jinja", "dist", "index.js");
const { Template } = await import(pathToFileURL(path.resolve(entry)).href);

const conv = [
	{ role: "system", content: "You are a helpful assistant" },
	{ role: "user", content: "Hello" },
	{ role: "assistant", content: "Hi there" },
	{ role: "user", content: "Who are you" },
];
const tools = [{ type: "function", function: { name: "get_weather", description: "The weather in a city",
	parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];

const [outdir, ...files] = args;
for (const file of files) {
	for (const which of ["sys", "nosys", "tools"]) {
		const ctx = {
			messages: which === "sys" ? conv : conv.slice(1),
			bos_token: "<s>",
			eos_token: "</s>",
			add_generation_prompt: true,
		};
		if (which === "tools")
			ctx.tools = tools;
		let text;
		try {
			text = new Template(fs.readFileSync(file, "utf8")).render(ctx);
		} catch (e) {
			text = "ERROR: " + String(e.message).split("\n")[0] + "\n";
		}
		fs.writeFileSync(path.join(outdir, path.basename(file) + "." + which), text);
	}
}
