/*
 * tests/unit/test_chat_cases.c — the cases of llama.cpp's
 * tests/test-chat-template.cpp as our vectors: for each model, an excerpt of
 * its Jinja template (the part that names the format), the format it must
 * be detected as, and the text llama.cpp's built-in formatter writes for
 * one fixed conversation with the generation prompt, byte for byte.
 */
#include "test.h"
#include "../../llm/chat.h"

static const struct chat_msg conv[] = {
	{"system", "You are a helpful assistant"},
	{"user", "Hello"},
	{"assistant", "Hi there"},
	{"user", "Who are you"},
	{"assistant", "   I am an assistant   "},
	{"user", "Another question"},
	/* the granite tool-call cases go on */
	{"user", "What is the weather?"},
	{"assistant_tool_call", "[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]"},
	{"tool_response", "{\"temperature\": 72}"},
};

static const struct chat_msg conv_g4[] = {
	{"user", "What is the weather?"},
	{"assistant_tool_call",
	 "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</tool_call>"},
	{"tool_response", "{\"temperature\": 72}"},
};

struct llama_case {
	const char *model, *tmpl;
	enum chat_tmpl want;
	const char *out;
	int extra; /* 1: conv's tool-call messages go on; 2: conv_g4's; else 0 */
};

#define GR_HEAD "<|start_of_role|>system<|end_of_role|>You are a helpful assistant<|end_of_text|>\n" \
	"<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n" \
	"<|start_of_role|>assistant<|end_of_role|>Hi there<|end_of_text|>\n" \
	"<|start_of_role|>user<|end_of_role|>Who are you<|end_of_text|>\n" \
	"<|start_of_role|>assistant<|end_of_role|>   I am an assistant   <|end_of_text|>\n" \
	"<|start_of_role|>user<|end_of_role|>Another question<|end_of_text|>\n"
#define GR_G4 GR_HEAD "<|start_of_role|>user<|end_of_role|>What is the weather?<|end_of_text|>\n" \
	"<|start_of_role|>assistant<|end_of_role|><|tool_call|><tool_call>\n{\"name\": \"get_weather\", " \
	"\"arguments\": {\"location\": \"NYC\"}}\n</tool_call><|end_of_text|>\n" \
	"<|start_of_role|>tool_response<|end_of_role|>{\"temperature\": 72}<|end_of_text|>\n" \
	"<|start_of_role|>assistant<|end_of_role|>"
#define PHI3_OUT "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n" \
	"<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n" \
	"   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"
#define PHI3_USER "{{'<|user|>' + '\\n' + message['content'] + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}"
#define PHI3_ROLE "{{'<|' + message['role'] + '|>' + '\\n' + message['content'] + '<|end|>\\n' }}"

static const struct llama_case cases[] = {
	{"teknium/OpenHermes-2.5-Mistral-7B",
	 "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}",
	 CHAT_CHATML,
	 "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
	 "<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n"
	 "<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question"
	 "<|im_end|>\n<|im_start|>assistant\n", 0},
	{"mistralai/Mistral-7B-Instruct-v0.2",
	 "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}"
	 "{{ message['content'] + eos_token}}", CHAT_LLAMA2,
	 "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am "
	 "an assistant   </s>[INST] Another question [/INST]", 0},
	{"TheBloke/FusionNet_34Bx2_MoE-AWQ",
	 "{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}\n{%- else -%}\n{{- "
	 "messages[idx]['content'] + ' [/INST]' -}}\n{%- endif -%}\n{% elif messages[idx]['role'] == "
	 "'system' %}\n{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}",
	 CHAT_LLAMA2_SYS_BOS,
	 "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who "
	 "are you [/INST]   I am an assistant   </s><s>[INST] Another question [/INST]", 0},
	{"bofenghuang/vigogne-2-70b-chat",
	 "{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif "
	 "message['role'] == 'system' %}{{ '<<SYS>>\\n' + content.strip() + '\\n<</SYS>>\\n\\n' }}",
	 CHAT_LLAMA2_SYS_STRIP,
	 "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who "
	 "are you [/INST]I am an assistant</s>[INST] Another question [/INST]", 0},
	{"mlabonne/AlphaMonarch-7B",
	 "{% for message in messages %}{{bos_token + message['role'] + '\\n' + message['content'] + "
	 "eos_token + '\\n'}}{% endfor %}", CHAT_MONARCH,
	 "system\nYou are a helpful assistant</s>\n<s>user\nHello</s>\n<s>assistant\nHi there</s>\n<s>user"
	 "\nWho are you</s>\n<s>assistant\n   I am an assistant   </s>\n<s>user\nAnother question</s>\n"
	 "<s>assistant\n", 0},
	{"google/gemma-7b-it",
	 "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}",
	 CHAT_GEMMA,
	 "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\n"
	 "Hi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am "
	 "an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>"
	 "model\n", 0},
	{"OrionStarAI/Orion-14B-Chat",
	 "{{ 'Human: ' + message['content'] + '\\n\\nAssistant: ' + eos_token }}", CHAT_ORION,
	 "Human: You are a helpful assistant\n\nHello\n\nAssistant: </s>Hi there</s>Human: Who are you\n\n"
	 "Assistant: </s>   I am an assistant   </s>Human: Another question\n\nAssistant: </s>", 0},
	{"openchat/openchat-3.5-0106",
	 "{{ 'GPT4 Correct ' + message['role'].title() + ': ' + message['content'] + '<|end_of_turn|>'}}",
	 CHAT_OPENCHAT,
	 "You are a helpful assistant<|end_of_turn|>GPT4 Correct User: Hello<|end_of_turn|>GPT4 Correct "
	 "Assistant: Hi there<|end_of_turn|>GPT4 Correct User: Who are you<|end_of_turn|>GPT4 Correct "
	 "Assistant:    I am an assistant   <|end_of_turn|>GPT4 Correct User: Another question"
	 "<|end_of_turn|>GPT4 Correct Assistant:", 0},
	{"deepseek-ai/deepseek-coder-33b-instruct",
	 "{{'### Instruction:\\n' + message['content'] + '\\n'}}\n        {%- else %}\n{{'### Response:\\n'"
	 " + message['content'] + '\\n<|EOT|>\\n'}}", CHAT_DEEPSEEK,
	 "You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### "
	 "Instruction:\nWho are you\n### Response:\n   I am an assistant   \n<|EOT|>\n### Instruction:\n"
	 "Another question\n### Response:\n", 0},
	{"eachadea/vicuna-13b-1.1",
	 "{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + "
	 "'</s>\n' -}}", CHAT_VICUNA,
	 "You are a helpful assistant\n\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\n"
	 "ASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:", 0},
	{"Orca-Vicuna",
	 "{{-'SYSTEM: ' + message['content'] + '\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}"
	 "{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + "
	 "'</s>\n' -}}", CHAT_VICUNA_ORCA,
	 "SYSTEM: You are a helpful assistant\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are you\n"
	 "ASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:", 0},
	{"CohereForAI/c4ai-command-r-plus",
	 "{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + '<|END_OF_TURN_TOKEN|>' }}",
	 CHAT_COMMAND_R,
	 "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|>"
	 "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|>"
	 "<|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you"
	 "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an assistant"
	 "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another question<|END_OF_TURN_TOKEN|>"
	 "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", 0},
	{"Llama-3",
	 "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ "
	 "message['content'] | trim + '<|eot_id|>' %}", CHAT_LLAMA3,
	 "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
	 "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant"
	 "<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you"
	 "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|>"
	 "<|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>"
	 "assistant<|end_header_id|>\n\n", 0},
	{"Phi-3-mini", "{{ bos_token }}{% for message in messages %}" PHI3_USER, CHAT_PHI3, PHI3_OUT, 0},
	{"Phi-3-small", "{{ bos_token }}{% for message in messages %}" PHI3_ROLE
	 "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}", CHAT_PHI3, PHI3_OUT, 0},
	{"Phi-3-medium", "{% for message in messages %}" PHI3_USER, CHAT_PHI3, PHI3_OUT, 0},
	{"Phi-3-vision", PHI3_ROLE "{% endfor %}{% if add_generation_prompt and messages[-1]['role'] != "
	 "'assistant' %}{{- '<|assistant|>\n' -}}{% endif %}", CHAT_PHI3, PHI3_OUT, 0},
	{"ChatGLM3",
	 "{% if loop.first %}[gMASK]sop<|{{ message['role'] }}|>\n {{ message['content'] }}", CHAT_CHATGLM3,
	 "[gMASK]sop<|system|>\n You are a helpful assistant<|user|>\n Hello<|assistant|>\n Hi there"
	 "<|user|>\n Who are you<|assistant|>\n    I am an assistant   <|user|>\n Another question"
	 "<|assistant|>", 0},
	{"ChatGLM4",
	 "[gMASK]<sop>{% for item in messages %}{% if item['tools'] is defined %}<|system|>\n",
	 CHAT_CHATGLM4,
	 "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there"
	 "<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question"
	 "<|assistant|>\n", 0},
	{"GLMEdge",
	 "{% elif item['role'] == 'user' %}<|user|>\n{{ item['content'] }}{% elif item['role'] == "
	 "'assistant' %}<|assistant|>\n{{ item['content'] }}{% endif %}{% endfor %}<|assistant|>",
	 CHAT_GLMEDGE,
	 "<|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho are "
	 "you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>", 0},
	{"MiniCPM-3B-OpenHermes-2.5-v2-GGUF",
	 "{{'<\xe7\x94\xa8\xe6\x88\xb7>' + message['content'].strip() + '<AI>'}}", CHAT_MINICPM,
	 "You are a helpful assistant<\xe7\x94\xa8\xe6\x88\xb7>Hello<AI>Hi there<\xe7\x94\xa8\xe6\x88\xb7>"
	 "Who are you<AI>I am an assistant<\xe7\x94\xa8\xe6\x88\xb7>Another question<AI>", 0},
	{"DeepSeek-V2",
	 "{{ 'User: ' + message['content'] + '\n\n' }}{% elif message['role'] == 'assistant' %}{{ "
	 "'Assistant: ' + message['content'] + eos_token }}", CHAT_DEEPSEEK2,
	 "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there"
	 "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>User: Who are you\n\n"
	 "Assistant:    I am an assistant   <\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence"
	 "\xef\xbd\x9c>User: Another question\n\nAssistant:", 0},
	{"ibm-granite/granite-3.0-8b-instruct",
	 "{{- '<|start_of_role|>assistant<|end_of_role|><|tool_call|>' + message['content'] + "
	 "'<|end_of_text|>\n' }}", CHAT_GRANITE, GR_HEAD "<|start_of_role|>assistant<|end_of_role|>", 0},
	{"mistralai/Mistral-7B-Instruct-v0.2 (v1 with a system prompt)",
	 "{{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}",
	 CHAT_MISTRAL_V1,
	 " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you [/INST]    "
	 "I am an assistant   </s> [INST] Another question [/INST]", 0},
	{"Mistral-Large-Instruct-2407 (v3)",
	 "{{- \"[AVAILABLE_TOOLS] [\" }}\n{{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}",
	 CHAT_MISTRAL_V3,
	 "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I am an "
	 "assistant</s>[INST] Another question[/INST]", 0},
	{"Mistral-Nemo-Instruct-2407 (v3-tekken)",
	 "{{- \"[AVAILABLE_TOOLS][\" }}\n{{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}",
	 CHAT_MISTRAL_V3_TEKKEN,
	 "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you[/INST]   I am an "
	 "assistant   </s>[INST]Another question[/INST]", 0},
	{"mistralai/Mistral-Large-Instruct-2411 (v7)",
	 "{{ '[INST] ' + message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}{{ "
	 "'[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}", CHAT_MISTRAL_V7,
	 "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST]"
	 " Who are you[/INST]    I am an assistant   </s>[INST] Another question[/INST]", 0},
	{"ai-sage/GigaChat-20B-A3B-instruct",
	 "{{ message['role'] + additional_special_tokens[0] + message['content'] + "
	 "additional_special_tokens[1] -}}", CHAT_GIGACHAT,
	 "<s>You are a helpful assistant<|message_sep|>user<|role_sep|>Hello<|message_sep|>available "
	 "functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>Hi there<|message_sep|>user"
	 "<|role_sep|>Who are you<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant"
	 "<|role_sep|>   I am an assistant   <|message_sep|>user<|role_sep|>Another question"
	 "<|message_sep|>available functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>", 0},
	{"Infinigence/Megrez-3B-Instruct",
	 "{{ '<|role_start|>' + message['role'] + '<|role_end|>' + message['content'] + '<|turn_end|>' }}",
	 CHAT_MEGREZ,
	 "<|role_start|>system<|role_end|>You are a helpful assistant<|turn_end|><|role_start|>user"
	 "<|role_end|>Hello<|turn_end|><|role_start|>assistant<|role_end|>Hi there<|turn_end|>"
	 "<|role_start|>user<|role_end|>Who are you<|turn_end|><|role_start|>assistant<|role_end|>   I am "
	 "an assistant   <|turn_end|><|role_start|>user<|role_end|>Another question<|turn_end|>"
	 "<|role_start|>assistant<|role_end|>", 0},
	{"phi-4",
	 "{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}", CHAT_PHI4,
	 "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|><|im_start|>user<|im_sep|>Hello"
	 "<|im_end|><|im_start|>assistant<|im_sep|>Hi there<|im_end|><|im_start|>user<|im_sep|>Who are "
	 "you<|im_end|><|im_start|>assistant<|im_sep|>   I am an assistant   <|im_end|><|im_start|>user"
	 "<|im_sep|>Another question<|im_end|><|im_start|>assistant<|im_sep|>", 0},
#define YA_U " \xd0\x9f\xd0\xbe\xd0\xbb\xd1\x8c\xd0\xb7\xd0\xbe\xd0\xb2\xd0\xb0\xd1\x82\xd0\xb5\xd0\xbb\xd1\x8c:"
#define YA_A " \xd0\x90\xd1\x81\xd1\x81\xd0\xb8\xd1\x81\xd1\x82\xd0\xb5\xd0\xbd\xd1\x82:"
	{"yandex/YandexGPT-5-Lite-8B-instruct",
	 "<s>{%- set names = {'assistant': '" YA_A "', 'user': '" YA_U "'} %}", CHAT_YANDEX,
	 YA_U " Hello\n\n" YA_A " Hi there\n\n" YA_U " Who are you\n\n" YA_A "    I am an assistant   \n\n"
	 YA_U " Another question\n\n" YA_A "[SEP]", 0},
	{"inclusionAI/Ling-lite",
	 "{% if role == 'user' %}{% set role = 'HUMAN' %}{% endif %}{% set role = role | upper %}{{ '<role>'"
	 " + role + '</role>' + message['content'] }}{% endfor %}{% if add_generation_prompt %}{{ "
	 "'<role>ASSISTANT</role>' }}", CHAT_BAILING,
	 "<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello<role>ASSISTANT</role>Hi "
	 "there<role>HUMAN</role>Who are you<role>ASSISTANT</role>   I am an assistant   <role>HUMAN</role>"
	 "Another question<role>ASSISTANT</role>", 0},
	{"ByteDance-Seed/Seed-OSS-36B-Instruct",
	 "{# <seed:bos> #}{%- for message in messages %}{%- if message.role in [\"user\", \"system\"] %}",
	 CHAT_SEED_OSS,
	 "<seed:bos>system\nYou are a helpful assistant<seed:eos><seed:bos>user\nHello<seed:eos><seed:bos>"
	 "assistant\nHi there<seed:eos><seed:bos>user\nWho are you<seed:eos><seed:bos>assistant\nI am an "
	 "assistant<seed:eos><seed:bos>user\nAnother question<seed:eos><seed:bos>assistant\n", 0},
	{"ibm-granite/granite-3.x (tool call)",
	 "{%- if message['role'] == 'assistant_tool_call' %}\n    {{- '<|start_of_role|>assistant"
	 "<|end_of_role|><|tool_call|>' + message['content'] + '<|end_of_text|>\\n' }}", CHAT_GRANITE,
	 GR_HEAD "<|start_of_role|>user<|end_of_role|>What is the weather?<|end_of_text|>\n"
	 "<|start_of_role|>assistant_tool_call<|end_of_role|><|tool_call|>[{\"name\": \"get_weather\", "
	 "\"arguments\": {\"location\": \"NYC\"}}]<|end_of_text|>\n<|start_of_role|>tool_response"
	 "<|end_of_role|>{\"temperature\": 72}<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>",
	 1},
	{"ibm-granite/granite-4.0 (tool call)",
	 "{{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + "
	 "'<|end_of_text|>\\n' }}\n{# <tool_call> <tools> g4_default_system_message #}", CHAT_GRANITE4,
	 GR_G4, 2},
	{"ibm-granite/granite-4.1 (tool call)",
	 "{{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + "
	 "'<|end_of_text|>\\n' }}\n{# <tool_call> <tools> #}", CHAT_GRANITE4, GR_G4, 2},
};

/* Every case: detected as llama.cpp detects it, formatted as it formats. */
TEST(chat_formats_llama_cpp_test_cases_byte_for_byte)
{
	static char buf[4096];
	struct chat_msg m[12];
	size_t pass = 0;

	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const struct llama_case *k = &cases[c];
		size_t n = 6, len = 0;

		memcpy(m, conv, 6 * sizeof m[0]);
		if (k->extra == 1)
			memcpy(m + 6, conv + 6, 3 * sizeof m[0]), n = 9;
		if (k->extra == 2)
			memcpy(m + 6, conv_g4, 3 * sizeof m[0]), n = 9;
		enum chat_tmpl got = chat_detect(k->tmpl);
		int r = chat_format(k->want, m, n, true, buf, sizeof buf, &len);
		bool ok = got == k->want && r == 0 && len == strlen(k->out) && !strcmp(buf, k->out);
		if (!ok)
			fprintf(stderr, "  case '%s': detected %s (want %s), r %d\n    got  [%s]\n    want [%s]\n",
			       k->model, chat_tmpl_name(got), chat_tmpl_name(k->want), r, buf, k->out);
		pass += ok;
	}
	CHECK_EQ_INT(pass, sizeof cases / sizeof cases[0]);
}
