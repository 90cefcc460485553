/* tests/unit/tool_templates.h: two real chat templates with tools, for
 * test_api_format.c's Jinja path, and what python3-jinja2 renders of them
 * (as HF's apply_chat_template: trim_blocks, lstrip_blocks, tojson as
 * json.dumps with ensure_ascii off; the calls' arguments objects and null
 * contents "", as llama.cpp's --jinja gives them; bos_token "").
 * TT_QWEN25: Qwen/Qwen2.5-7B-Instruct's tokenizer_config.json chat_template
 * (llama.cpp models/templates/Qwen-Qwen2.5-7B-Instruct.jinja, commit
 * de3ff815); TT_NEMO: mistralai/Mistral-Nemo-Instruct-2407's (llama.cpp
 * models/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja, the same
 * commit). TT_BODY1: a call of two tools, their results, an answer, a new
 * question; TT_BODY2: a call and its result (the prompt for the answer). */
#define TT_QWEN25 \
	"{%- if tools %}\n" \
	"    {{- '<|im_start|>system\\n' }}\n" \
	"    {%- if messages[0]['role'] == 'system' %}\n" \
	"        {{- messages[0]['content'] }}\n" \
	"    {%- else %}\n" \
	"        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n" \
	"    {%- endif %}\n" \
	"    {{- \"\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user que" \
	"ry.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tool" \
	"s>\" }}\n" \
	"    {%- for tool in tools %}\n" \
	"        {{- \"\\n\" }}\n" \
	"        {{- tool | tojson }}\n" \
	"    {%- endfor %}\n" \
	"    {{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name " \
	"and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <func" \
	"tion-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}\n" \
	"{%- else %}\n" \
	"    {%- if messages[0]['role'] == 'system' %}\n" \
	"        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n" \
	"    {%- else %}\n" \
	"        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful" \
	" assistant.<|im_end|>\\n' }}\n" \
	"    {%- endif %}\n" \
	"{%- endif %}\n" \
	"{%- for message in messages %}\n" \
	"    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or" \
	" (message.role == \"assistant\" and not message.tool_calls) %}\n" \
	"        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' " \
	"}}\n" \
	"    {%- elif message.role == \"assistant\" %}\n" \
	"        {{- '<|im_start|>' + message.role }}\n" \
	"        {%- if message.content %}\n" \
	"            {{- '\\n' + message.content }}\n" \
	"        {%- endif %}\n" \
	"        {%- for tool_call in message.tool_calls %}\n" \
	"            {%- if tool_call.function is defined %}\n" \
	"                {%- set tool_call = tool_call.function %}\n" \
	"            {%- endif %}\n" \
	"            {{- '\\n<tool_call>\\n{\"name\": \"' }}\n" \
	"            {{- tool_call.name }}\n" \
	"            {{- '\", \"arguments\": ' }}\n" \
	"            {{- tool_call.arguments | tojson }}\n" \
	"            {{- '}\\n</tool_call>' }}\n" \
	"        {%- endfor %}\n" \
	"        {{- '<|im_end|>\\n' }}\n" \
	"    {%- elif message.role == \"tool\" %}\n" \
	"        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != \"tool\") %}\n" \
	"            {{- '<|im_start|>user' }}\n" \
	"        {%- endif %}\n" \
	"        {{- '\\n<tool_response>\\n' }}\n" \
	"        {{- message.content }}\n" \
	"        {{- '\\n</tool_response>' }}\n" \
	"        {%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}\n" \
	"            {{- '<|im_end|>\\n' }}\n" \
	"        {%- endif %}\n" \
	"    {%- endif %}\n" \
	"{%- endfor %}\n" \
	"{%- if add_generation_prompt %}\n" \
	"    {{- '<|im_start|>assistant\\n' }}\n" \
	"{%- endif %}\n"
#define TT_NEMO \
	"{%- if messages[0][\"role\"] == \"system\" %}\n" \
	"    {%- set system_message = messages[0][\"content\"] %}\n" \
	"    {%- set loop_messages = messages[1:] %}\n" \
	"{%- else %}\n" \
	"    {%- set loop_messages = messages %}\n" \
	"{%- endif %}\n" \
	"{%- if not tools is defined %}\n" \
	"    {%- set tools = none %}\n" \
	"{%- endif %}\n" \
	"{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list " \
	"%}\n" \
	"\n" \
	"{#- This block checks for alternating user/assistant messages, skipping tool calling messag" \
	"es #}\n" \
	"{%- set ns = namespace() %}\n" \
	"{%- set ns.index = 0 %}\n" \
	"{%- for message in loop_messages %}\n" \
	"    {%- if not (message.role == \"tool\" or message.role == \"tool_results\" or (message.to" \
	"ol_calls is defined and message.tool_calls is not none)) %}\n" \
	"        {%- if (message[\"role\"] == \"user\") != (ns.index % 2 == 0) %}\n" \
	"            {{- raise_exception(\"After the optional system message, conversation roles mus" \
	"t alternate user/assistant/user/assistant/...\") }}\n" \
	"        {%- endif %}\n" \
	"        {%- set ns.index = ns.index + 1 %}\n" \
	"    {%- endif %}\n" \
	"{%- endfor %}\n" \
	"\n" \
	"{{- bos_token }}\n" \
	"{%- for message in loop_messages %}\n" \
	"    {%- if message[\"role\"] == \"user\" %}\n" \
	"        {%- if tools is not none and (message == user_messages[-1]) %}\n" \
	"            {{- \"[AVAILABLE_TOOLS][\" }}\n" \
	"            {%- for tool in tools %}\n" \
	"                {%- set tool = tool.function %}\n" \
	"                {{- '{\"type\": \"function\", \"function\": {' }}\n" \
	"                {%- for key, val in tool.items() if key != \"return\" %}\n" \
	"                    {%- if val is string %}\n" \
	"                        {{- '\"' + key + '\": \"' + val + '\"' }}\n" \
	"                    {%- else %}\n" \
	"                        {{- '\"' + key + '\": ' + val|tojson }}\n" \
	"                    {%- endif %}\n" \
	"                    {%- if not loop.last %}\n" \
	"                        {{- \", \" }}\n" \
	"                    {%- endif %}\n" \
	"                {%- endfor %}\n" \
	"                {{- \"}}\" }}\n" \
	"                {%- if not loop.last %}\n" \
	"                    {{- \", \" }}\n" \
	"                {%- else %}\n" \
	"                    {{- \"]\" }}\n" \
	"                {%- endif %}\n" \
	"            {%- endfor %}\n" \
	"            {{- \"[/AVAILABLE_TOOLS]\" }}\n" \
	"            {%- endif %}\n" \
	"        {%- if loop.last and system_message is defined %}\n" \
	"            {{- \"[INST]\" + system_message + \"\\n\\n\" + message[\"content\"] + \"[/INST]" \
	"\" }}\n" \
	"        {%- else %}\n" \
	"            {{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}\n" \
	"        {%- endif %}\n" \
	"    {%- elif (message.tool_calls is defined and message.tool_calls is not none) %}\n" \
	"        {{- \"[TOOL_CALLS][\" }}\n" \
	"        {%- for tool_call in message.tool_calls %}\n" \
	"            {%- set out = tool_call.function|tojson %}\n" \
	"            {{- out[:-1] }}\n" \
	"            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}\n" \
	"                {{- raise_exception(\"Tool call IDs should be alphanumeric strings with len" \
	"gth 9!\") }}\n" \
	"            {%- endif %}\n" \
	"            {{- ', \"id\": \"' + tool_call.id + '\"}' }}\n" \
	"            {%- if not loop.last %}\n" \
	"                {{- \", \" }}\n" \
	"            {%- else %}\n" \
	"                {{- \"]\" + eos_token }}\n" \
	"            {%- endif %}\n" \
	"        {%- endfor %}\n" \
	"    {%- elif message[\"role\"] == \"assistant\" %}\n" \
	"        {{- message[\"content\"] + eos_token}}\n" \
	"    {%- elif message[\"role\"] == \"tool_results\" or message[\"role\"] == \"tool\" %}\n" \
	"        {%- if message.content is defined and message.content.content is defined %}\n" \
	"            {%- set content = message.content.content %}\n" \
	"        {%- else %}\n" \
	"            {%- set content = message.content %}\n" \
	"        {%- endif %}\n" \
	"        {{- '[TOOL_RESULTS]{\"content\": ' + content|string + \", \" }}\n" \
	"        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}\n" \
	"            {{- raise_exception(\"Tool call IDs should be alphanumeric strings with length " \
	"9!\") }}\n" \
	"        {%- endif %}\n" \
	"        {{- '\"call_id\": \"' + message.tool_call_id + '\"}[/TOOL_RESULTS]' }}\n" \
	"    {%- else %}\n" \
	"        {{- raise_exception(\"Only user and assistant roles are supported, with the excepti" \
	"on of an initial optional system message!\") }}\n" \
	"    {%- endif %}\n" \
	"{%- endfor %}\n"
#define TT_BODY1 \
	"{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"" \
	"content\": \"Weather in Paris?\"}, {\"role\": \"assistant\", \"content\": null, \"tool_call" \
	"s\": [{\"id\": \"abc123XYZ\", \"type\": \"function\", \"function\": {\"name\": \"get_weathe" \
	"r\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\", \\\"unit\\\": \\\"c\\\"}\"}}, {\"id\": " \
	"\"def456uvw\", \"type\": \"function\", \"function\": {\"name\": \"now\", \"arguments\": \"{" \
	"}\"}}]}, {\"role\": \"tool\", \"tool_call_id\": \"abc123XYZ\", \"name\": \"get_weather\", \"" \
	"content\": \"18 C\"}, {\"role\": \"tool\", \"tool_call_id\": \"def456uvw\", \"name\": \"now" \
	"\", \"content\": \"noon\"}, {\"role\": \"assistant\", \"content\": \"18 C at noon.\"}, {\"r" \
	"ole\": \"user\", \"content\": \"And Rome?\"}], \"tools\": [{\"type\": \"function\", \"funct" \
	"ion\": {\"name\": \"get_weather\", \"description\": \"Weather of a city\", \"parameters\": " \
	"{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, \"unit\": {\"type" \
	"\": \"string\", \"enum\": [\"c\", \"f\"]}}, \"required\": [\"city\"]}}}, {\"type\": \"funct" \
	"ion\", \"function\": {\"name\": \"now\", \"description\": \"The time\", \"parameters\": {\"" \
	"type\": \"object\", \"properties\": {}}}}]}"
#define TT_BODY2 \
	"{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"" \
	"content\": \"Weather in Paris?\"}, {\"role\": \"assistant\", \"content\": null, \"tool_call" \
	"s\": [{\"id\": \"abc123XYZ\", \"type\": \"function\", \"function\": {\"name\": \"get_weathe" \
	"r\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}}]}, {\"role\": \"tool\", \"tool_call" \
	"_id\": \"abc123XYZ\", \"content\": \"{\\\"temp\\\": 18}\"}], \"tools\": [{\"type\": \"funct" \
	"ion\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weather of a city\", \"" \
	"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, \"u" \
	"nit\": {\"type\": \"string\", \"enum\": [\"c\", \"f\"]}}, \"required\": [\"city\"]}}}, {\"t" \
	"ype\": \"function\", \"function\": {\"name\": \"now\", \"description\": \"The time\", \"par" \
	"ameters\": {\"type\": \"object\", \"properties\": {}}}}]}"
#define TT_QWEN25_1 \
	"<|im_start|>system\n" \
	"Be brief.\n" \
	"\n" \
	"# Tools\n" \
	"\n" \
	"You may call one or more functions to assist with the user query.\n" \
	"\n" \
	"You are provided with function signatures within <tools></tools> XML tags:\n" \
	"<tools>\n" \
	"{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weath" \
	"er of a city\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\"" \
	": \"string\"}, \"unit\": {\"type\": \"string\", \"enum\": [\"c\", \"f\"]}}, \"required\": [" \
	"\"city\"]}}}\n" \
	"{\"type\": \"function\", \"function\": {\"name\": \"now\", \"description\": \"The time\", \"" \
	"parameters\": {\"type\": \"object\", \"properties\": {}}}}\n" \
	"</tools>\n" \
	"\n" \
	"For each function call, return a json object with function name and arguments within <tool_" \
	"call></tool_call> XML tags:\n" \
	"<tool_call>\n" \
	"{\"name\": <function-name>, \"arguments\": <args-json-object>}\n" \
	"</tool_call><|im_end|>\n" \
	"<|im_start|>user\n" \
	"Weather in Paris?<|im_end|>\n" \
	"<|im_start|>assistant\n" \
	"<tool_call>\n" \
	"{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n" \
	"</tool_call>\n" \
	"<tool_call>\n" \
	"{\"name\": \"now\", \"arguments\": {}}\n" \
	"</tool_call><|im_end|>\n" \
	"<|im_start|>user\n" \
	"<tool_response>\n" \
	"18 C\n" \
	"</tool_response>\n" \
	"<tool_response>\n" \
	"noon\n" \
	"</tool_response><|im_end|>\n" \
	"<|im_start|>assistant\n" \
	"18 C at noon.<|im_end|>\n" \
	"<|im_start|>user\n" \
	"And Rome?<|im_end|>\n" \
	"<|im_start|>assistant\n"
#define TT_QWEN25_2 \
	"<|im_start|>system\n" \
	"Be brief.\n" \
	"\n" \
	"# Tools\n" \
	"\n" \
	"You may call one or more functions to assist with the user query.\n" \
	"\n" \
	"You are provided with function signatures within <tools></tools> XML tags:\n" \
	"<tools>\n" \
	"{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Weath" \
	"er of a city\", \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\"" \
	": \"string\"}, \"unit\": {\"type\": \"string\", \"enum\": [\"c\", \"f\"]}}, \"required\": [" \
	"\"city\"]}}}\n" \
	"{\"type\": \"function\", \"function\": {\"name\": \"now\", \"description\": \"The time\", \"" \
	"parameters\": {\"type\": \"object\", \"properties\": {}}}}\n" \
	"</tools>\n" \
	"\n" \
	"For each function call, return a json object with function name and arguments within <tool_" \
	"call></tool_call> XML tags:\n" \
	"<tool_call>\n" \
	"{\"name\": <function-name>, \"arguments\": <args-json-object>}\n" \
	"</tool_call><|im_end|>\n" \
	"<|im_start|>user\n" \
	"Weather in Paris?<|im_end|>\n" \
	"<|im_start|>assistant\n" \
	"<tool_call>\n" \
	"{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n" \
	"</tool_call><|im_end|>\n" \
	"<|im_start|>user\n" \
	"<tool_response>\n" \
	"{\"temp\": 18}\n" \
	"</tool_response><|im_end|>\n" \
	"<|im_start|>assistant\n"
#define TT_NEMO_1 \
	"[INST]Weather in Paris?[/INST][TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"ci" \
	"ty\": \"Paris\", \"unit\": \"c\"}, \"id\": \"abc123XYZ\"}, {\"name\": \"now\", \"arguments\"" \
	": {}, \"id\": \"def456uvw\"}]</s>[TOOL_RESULTS]{\"content\": 18 C, \"call_id\": \"abc123XYZ" \
	"\"}[/TOOL_RESULTS][TOOL_RESULTS]{\"content\": noon, \"call_id\": \"def456uvw\"}[/TOOL_RESUL" \
	"TS]18 C at noon.</s>[AVAILABLE_TOOLS][{\"type\": \"function\", \"function\": {\"name\": \"g" \
	"et_weather\", \"description\": \"Weather of a city\", \"parameters\": {\"type\": \"object\"" \
	", \"properties\": {\"city\": {\"type\": \"string\"}, \"unit\": {\"type\": \"string\", \"enu" \
	"m\": [\"c\", \"f\"]}}, \"required\": [\"city\"]}}}, {\"type\": \"function\", \"function\": " \
	"{\"name\": \"now\", \"description\": \"The time\", \"parameters\": {\"type\": \"object\", \"" \
	"properties\": {}}}}][/AVAILABLE_TOOLS][INST]Be brief.\n" \
	"\n" \
	"And Rome?[/INST]"
#define TT_NEMO_2 \
	"[AVAILABLE_TOOLS][{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"desc" \
	"ription\": \"Weather of a city\", \"parameters\": {\"type\": \"object\", \"properties\": {\"" \
	"city\": {\"type\": \"string\"}, \"unit\": {\"type\": \"string\", \"enum\": [\"c\", \"f\"]}}" \
	", \"required\": [\"city\"]}}}, {\"type\": \"function\", \"function\": {\"name\": \"now\", \"" \
	"description\": \"The time\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}}][" \
	"/AVAILABLE_TOOLS][INST]Weather in Paris?[/INST][TOOL_CALLS][{\"name\": \"get_weather\", \"a" \
	"rguments\": {\"city\": \"Paris\"}, \"id\": \"abc123XYZ\"}]</s>[TOOL_RESULTS]{\"content\": {" \
	"\"temp\": 18}, \"call_id\": \"abc123XYZ\"}[/TOOL_RESULTS]"
