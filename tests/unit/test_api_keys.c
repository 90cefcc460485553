/*
 * tests/unit/test_api_keys.c — the request of POST /v1/keys
 * (shell/http/api_keys.c, docs/tls.md "Releasing a sealed model's key"):
 * what it takes, and every malformed body refused with 400 and the parsed
 * request wiped. The endpoint itself (the attestation it needs, the disk
 * the key must open, the measurement) is tests/host/serve_keys.py's.
 */
#include "test.h"

#include "../../shell/http/serve.h"
#include "../../llm/seal.h"

static struct json_node nodes[256];
static char store[64 * 1024];

/* 44 base64 characters: 32 bytes 0x00, 0x01, ... 0x1f */
static const char KEY_B64[] = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

static int parse(const char *body, struct tls_release_req *r, char *why, size_t whyn)
{
	struct json_doc d = {nodes, 256, 0, store, sizeof store, 0, 8, 64 * 1024};
	memset(r, 0x5a, sizeof *r);
	why[0] = 0;
	return api_keys_parse(&d, body, strlen(body), r, why, whyn);
}

static bool wiped(const struct tls_release_req *r)
{
	static const struct tls_release_req zero;
	return memcmp(r, &zero, sizeof *r) == 0;
}

TEST(api_keys_parse_takes_nonce_key_and_load)
{
	struct tls_release_req r;
	char why[240], body[256];

	snprintf(body, sizeof body, "{\"nonce\":\"0aFf\",\"key\":\"%s\",\"load\":true}", KEY_B64);
	CHECK_EQ_INT(parse(body, &r, why, sizeof why), 0);
	CHECK_EQ_INT((int)r.nonce_len, 2);
	CHECK(r.nonce[0] == 0x0a && r.nonce[1] == 0xff);
	for (int i = 0; i < 32; i++)
		CHECK(r.key[i] == i);
	CHECK(r.load);
	/* load is optional, and false by default */
	snprintf(body, sizeof body, "{\"key\":\"%s\",\"nonce\":\"%0128d\"}", KEY_B64, 7);
	CHECK_EQ_INT(parse(body, &r, why, sizeof why), 0);
	CHECK_EQ_INT((int)r.nonce_len, 64);
	CHECK(!r.load);
	snprintf(body, sizeof body, "{\"key\":\"%s\",\"nonce\":\"00\",\"load\":false}", KEY_B64);
	CHECK_EQ_INT(parse(body, &r, why, sizeof why), 0);
	CHECK(!r.load);
}

TEST(api_keys_parse_refuses_every_malformed_body_with_400_and_wipes_the_request)
{
	static const struct {
		const char *body, *why;
	} bad[] = {
		{"", "not a JSON object"},
		{"{\"nonce\":\"00\",\"key\":\"AAEC", "not a JSON object"},           /* truncated */
		{"[\"00\"]", "not a JSON object"},
		{"{\"key\":\"%s\"}", "'nonce'"},
		{"{\"nonce\":\"0\",\"key\":\"%s\"}", "'nonce'"},
		{"{\"nonce\":\"zz\",\"key\":\"%s\"}", "hex digits"},
		{"{\"nonce\":5,\"key\":\"%s\"}", "'nonce'"},
		{"{\"nonce\":\"00\"}", "'key'"},
		{"{\"nonce\":\"00\",\"key\":\"not base64!\"}", "'key'"},
		{"{\"nonce\":\"00\",\"key\":\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\"}", "'key'"},
		{"{\"nonce\":\"00\",\"key\":\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg==\"}", "'key'"},
		{"{\"nonce\":\"00\",\"key\":\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g\"}", "'key'"},
		{"{\"nonce\":\"00\",\"key\":12}", "'key'"},
		{"{\"nonce\":\"00\",\"key\":\"%s\",\"load\":\"yes\"}", "'load'"},
		{"{\"nonce\":\"00\",\"key\":\"%s\",\"load\":1}", "'load'"},
		{"{\"nonce\":\"00\",\"key\":\"%s\",\"disk\":0}", "unknown member 'disk'"},
		{"{\"nonce\":\"00\",\"key\":\"%s\",\"key\":\"%s\"}", "duplicate key"},
	};
	struct tls_release_req r;
	char why[240], body[512];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(body, sizeof body, bad[i].body, KEY_B64, KEY_B64);
		int st = parse(body, &r, why, sizeof why);
		if (st != 400 || !strstr(why, bad[i].why) || !wiped(&r))
			fprintf(stderr, "    body %s: %d, %s\n", body, st, why);
		CHECK_EQ_INT(st, 400);
		CHECK(strstr(why, bad[i].why) != NULL);
		CHECK(wiped(&r));
	}
	/* a key string far past 32 bytes is refused before it is decoded */
	static char big[48 * 1024];
	int n = snprintf(big, sizeof big, "{\"nonce\":\"00\",\"key\":\"");
	memset(big + n, 'A', 40000);
	strcpy(big + n + 40000, "\"}");
	CHECK_EQ_INT(parse(big, &r, why, sizeof why), 400);
	CHECK(strstr(why, "'key'") != NULL && wiped(&r));
}
