/*
 * tools/tlscert.c — build/host/tlscert: a TEST TOOL. A P-256 key and its
 * self-signed certificate made exactly as the guest makes its TLS identity
 * (shell/http/tls_cert.c, tls_key_make), written as PEM for another TLS
 * server: the stranger of tests/host/proxy.py, a relay that shows the
 * proxy a key the guest's evidence does not bind.
 *
 *   tlscert CERT.pem KEY.pem     (prints "k: HEX", the binding K of the key)
 */
#include <stdio.h>
#include <string.h>

#include "../shell/http/tls.h"
#include "host/der_write.h"

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "error: tlscert: cannot write %s\n", path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct tls_key k;
	uint8_t der[512];
	char pem[2048], hex[65];

	if (argc != 3) {
		fprintf(stderr, "usage: tlscert CERT.pem KEY.pem\n");
		return 2;
	}
	if (tls_key_make(&k)) {
		fprintf(stderr, "error: tlscert: no key made\n");
		return 1;
	}
	if (der_pem(k.cert, k.cert_len, "CERTIFICATE", pem, sizeof pem) < 0 ||
	    write_file(argv[1], pem))
		return 1;
	br_ec_public_key pub = {BR_EC_secp256r1, k.pub, k.pub_len};
	size_t n = br_encode_ec_pkcs8_der(der, &k.sk, &pub);
	if (!n || n > sizeof der || der_pem(der, n, "PRIVATE KEY", pem, sizeof pem) < 0 ||
	    write_file(argv[2], pem))
		return 1;
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", k.k[i]);
	printf("k: %s\n", hex);
	tls_key_wipe(&k);
	return 0;
}
