/*
 * tools/verify/cmd_measure_snp.h — `verifier measure snp`: the SEV-SNP
 * launch digest of a QEMU + OVMF guest, offline (docs/measure-snp.md).
 */
#ifndef LLMK_CMD_MEASURE_SNP_H
#define LLMK_CMD_MEASURE_SNP_H

/* argv[0] is "snp", the options follow. Prints the digest (96 hex digits
 * and a newline) on stdout and returns 0; on bad input one "error:" line on
 * stderr and 1. --help prints the usage and returns 0. */
int verifier_measure_snp_main(int argc, char **argv);

#endif
