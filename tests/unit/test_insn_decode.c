/*
 * tests/unit/test_insn_decode.c — kernel/x86_64/insn.c, the decoder the
 * #VC (SEV-ES/SNP) and #VE (TDX) handlers use to emulate port I/O and MMIO.
 *
 * The byte sequences marked "ours" are what the kernel contains: the MOVs
 * of kernel/kernel.h's mmio_read8..32 / mmio_write8..32 (fixed forms in
 * inline assembly; GCC picks the registers and the addressing) as they come
 * out in drivers/pci.c, drivers/virtio_pci.c, drivers/acpi.c and
 * kernel/x86_64/smp.c, and arch_io_in/out's IN/OUT; found with the kernel's
 * flags plus -g and `objdump -dl` (the instructions whose line is in
 * kernel.h). The others cover the encodings around them (SIB, RIP-relative,
 * REX.B bases, the MOVZX/MOVSX a plain volatile load compiles to) and the
 * refusals.
 */
#include "test.h"

#include <stdlib.h>

#include "../../kernel/platform.h"
#include "../../kernel/x86_64/insn.h"

static int dec(struct insn *in, const uint8_t *b, size_t n)
{
	return insn_decode(b, n, in);
}
#define DEC(in, ...)                                                                  \
	({                                                                            \
		static const uint8_t b_[] = { __VA_ARGS__ };                          \
		dec(in, b_, sizeof b_);                                               \
	})

TEST(insn_decodes_our_mmio_reads_with_their_width_register_and_address)
{
	struct insn in;
	uint64_t g[16] = { 0 };

	/* mov 0xe(%rax),%al: the PCI header type (ours) */
	CHECK_EQ_INT(DEC(&in, 0x8a, 0x40, 0x0e), 0);
	CHECK_EQ_INT(in.op, INSN_MMIO_READ);
	CHECK_EQ_INT(in.len, 3);
	CHECK_EQ_INT(in.size, 1);
	CHECK_EQ_INT(in.reg, INSN_RAX);
	CHECK_EQ_INT(in.reg_size, 1);
	CHECK(!in.high8 && !in.sign_extend);
	CHECK_EQ_INT(in.base, INSN_RAX);
	CHECK_EQ_INT(in.index, INSN_NO_REG);
	g[INSN_RAX] = 0xb0000000;
	CHECK(insn_mem_addr(&in, g, 0x1000) == 0xb000000e);

	/* mov 0x300(%rax),%eax: disp32 (ours, xAPIC ICR) */
	CHECK_EQ_INT(DEC(&in, 0x8b, 0x80, 0x00, 0x03, 0x00, 0x00), 0);
	CHECK_EQ_INT(in.len, 6);
	CHECK_EQ_INT(in.size, 4);
	CHECK_EQ_INT(in.base, INSN_RAX);
	CHECK_EQ_INT(in.disp, 0x300);

	/* mov 0x1e(%rax),%dx: queue_notify_off (ours) */
	CHECK_EQ_INT(DEC(&in, 0x66, 0x8b, 0x50, 0x1e), 0);
	CHECK_EQ_INT(in.len, 4);
	CHECK_EQ_INT(in.size, 2);
	CHECK_EQ_INT(in.reg, INSN_RDX);
	CHECK_EQ_INT(in.reg_size, 2);

	/* mov 0x18(%rax),%r12w: 66 + REX.R (ours, queue_size) */
	CHECK_EQ_INT(DEC(&in, 0x66, 0x44, 0x8b, 0x60, 0x18), 0);
	CHECK_EQ_INT(in.len, 5);
	CHECK_EQ_INT(in.size, 2);
	CHECK_EQ_INT(in.reg, 12);

	/* mov (%rax),%r10d and mov (%rcx),%eax (ours) */
	CHECK_EQ_INT(DEC(&in, 0x44, 0x8b, 0x10), 0);
	CHECK_EQ_INT(in.reg, 10);
	CHECK_EQ_INT(in.size, 4);
	CHECK_EQ_INT(in.disp, 0);
	CHECK_EQ_INT(DEC(&in, 0x8b, 0x01), 0);
	CHECK_EQ_INT(in.len, 2);
	CHECK_EQ_INT(in.base, INSN_RCX);
}

TEST(insn_decodes_the_movzx_and_movsx_a_plain_volatile_load_compiles_to)
{
	struct insn in;

	/* movzbl 0x14(%rdx),%eax */
	CHECK_EQ_INT(DEC(&in, 0x0f, 0xb6, 0x42, 0x14), 0);
	CHECK_EQ_INT(in.op, INSN_MMIO_READ);
	CHECK_EQ_INT(in.len, 4);
	CHECK_EQ_INT(in.size, 1);
	CHECK_EQ_INT(in.reg_size, 4);
	CHECK(!in.sign_extend);
	CHECK_EQ_INT(in.base, INSN_RDX);
	/* movzwl 0x18(%rax),%r12d: REX.R */
	CHECK_EQ_INT(DEC(&in, 0x44, 0x0f, 0xb7, 0x60, 0x18), 0);
	CHECK_EQ_INT(in.len, 5);
	CHECK_EQ_INT(in.size, 2);
	CHECK_EQ_INT(in.reg, 12);
	CHECK_EQ_INT(in.reg_size, 4);
	/* movsbl 0xe(%rax),%eax: a bit 7 tested as a sign */
	CHECK_EQ_INT(DEC(&in, 0x0f, 0xbe, 0x40, 0x0e), 0);
	CHECK(in.sign_extend);
	CHECK_EQ_INT(in.size, 1);
	CHECK_EQ_INT(in.reg_size, 4);
	/* movzwl (%rdi),%eax */
	CHECK_EQ_INT(DEC(&in, 0x0f, 0xb7, 0x07), 0);
	CHECK_EQ_INT(in.base, 7);
}

TEST(insn_decodes_our_mmio_writes_from_registers_and_immediates)
{
	struct insn in;
	uint64_t g[16] = { 0 };

	/* mov %al,0x14(%rdx) (ours) */
	CHECK_EQ_INT(DEC(&in, 0x88, 0x42, 0x14), 0);
	CHECK_EQ_INT(in.op, INSN_MMIO_WRITE);
	CHECK_EQ_INT(in.size, 1);
	CHECK_EQ_INT(in.reg, INSN_RAX);
	g[INSN_RAX] = 0x1234;
	CHECK(insn_src_value(&in, g) == 0x34);

	/* movb $0x0,0x14(%rax) (ours: device reset) */
	CHECK_EQ_INT(DEC(&in, 0xc6, 0x40, 0x14, 0x00), 0);
	CHECK_EQ_INT(in.len, 4);
	CHECK_EQ_INT(in.reg, INSN_NO_REG);
	CHECK(insn_src_value(&in, g) == 0);

	/* movl $0x1,0x8(%rax) (ours) */
	CHECK_EQ_INT(DEC(&in, 0xc7, 0x40, 0x08, 0x01, 0x00, 0x00, 0x00), 0);
	CHECK_EQ_INT(in.len, 7);
	CHECK_EQ_INT(in.size, 4);
	CHECK(insn_src_value(&in, g) == 1);

	/* mov %edi,0x310(%rax) (ours) */
	CHECK_EQ_INT(DEC(&in, 0x89, 0xb8, 0x10, 0x03, 0x00, 0x00), 0);
	CHECK_EQ_INT(in.reg, 7);
	CHECK_EQ_INT(in.size, 4);
	g[7] = 0xaabbccdd11223344ull;
	CHECK(insn_src_value(&in, g) == 0x11223344);

	/* mov %si,0x16(%rax) and mov %r12w,0x18(%rax) (ours: 66, 66 + REX.R) */
	CHECK_EQ_INT(DEC(&in, 0x66, 0x89, 0x70, 0x16), 0);
	CHECK_EQ_INT(in.len, 4);
	CHECK_EQ_INT(in.size, 2);
	CHECK_EQ_INT(in.reg, 6);
	CHECK_EQ_INT(DEC(&in, 0x66, 0x44, 0x89, 0x60, 0x18), 0);
	CHECK_EQ_INT(in.len, 5);
	CHECK_EQ_INT(in.size, 2);
	CHECK_EQ_INT(in.reg, 12);
	g[12] = 0x55667788;
	CHECK(insn_src_value(&in, g) == 0x7788);

	/* mov %sil,(%rdi): REX 40 makes register 6 SIL, not DH (ours) */
	CHECK_EQ_INT(DEC(&in, 0x40, 0x88, 0x37), 0);
	CHECK(!in.high8);
	CHECK_EQ_INT(in.reg, 6);
	g[6] = 0x1ff;
	CHECK(insn_src_value(&in, g) == 0xff);

	/* mov %dh,(%rdi): without REX it is DH, RDX bits 15:8 (GCC never picks it
	 * for our "q" operands, but the encoding must not be misread) */
	CHECK_EQ_INT(DEC(&in, 0x88, 0x37), 0);
	CHECK(in.high8);
	CHECK_EQ_INT(in.reg, INSN_RDX);
	g[INSN_RDX] = 0xabcd;
	CHECK(insn_src_value(&in, g) == 0xab);

	/* movw $0x1,0x1c(%rax): 66 C7 takes an imm16 (ours: queue_enable) */
	CHECK_EQ_INT(DEC(&in, 0x66, 0xc7, 0x40, 0x1c, 0x01, 0x00), 0);
	CHECK_EQ_INT(in.len, 6);
	CHECK_EQ_INT(in.size, 2);
	CHECK(insn_src_value(&in, g) == 1);

	/* movq $-1,(%rax): REX.W C7 sign-extends its imm32 */
	CHECK_EQ_INT(DEC(&in, 0x48, 0xc7, 0x00, 0xff, 0xff, 0xff, 0xff), 0);
	CHECK_EQ_INT(in.size, 8);
	CHECK(insn_src_value(&in, g) == ~0ull);
}

TEST(insn_decodes_our_port_io_in_every_width)
{
	struct insn in;

	/* arch_io_in/out: inb (%dx),%al; outb %al,(%dx); 66 ed; ef (ours) */
	CHECK_EQ_INT(DEC(&in, 0xec), 0);
	CHECK_EQ_INT(in.op, INSN_IN);
	CHECK_EQ_INT(in.size, 1);
	CHECK(in.port_dx);
	CHECK_EQ_INT(in.len, 1);
	CHECK_EQ_INT(DEC(&in, 0xee), 0);
	CHECK_EQ_INT(in.op, INSN_OUT);
	CHECK_EQ_INT(in.size, 1);
	CHECK_EQ_INT(DEC(&in, 0x66, 0xed), 0);
	CHECK_EQ_INT(in.op, INSN_IN);
	CHECK_EQ_INT(in.size, 2);
	CHECK_EQ_INT(in.len, 2);
	CHECK_EQ_INT(DEC(&in, 0xef), 0);
	CHECK_EQ_INT(in.op, INSN_OUT);
	CHECK_EQ_INT(in.size, 4);
	/* outb %al,$0x80 (outb() with a constant port: 0xcf9 does not fit, 0x80 would) */
	CHECK_EQ_INT(DEC(&in, 0xe6, 0x80), 0);
	CHECK_EQ_INT(in.op, INSN_OUT);
	CHECK(!in.port_dx);
	CHECK_EQ_INT(in.port, 0x80);
	CHECK_EQ_INT(in.len, 2);
	CHECK_EQ_INT(DEC(&in, 0xe5, 0x70), 0);
	CHECK_EQ_INT(in.op, INSN_IN);
	CHECK_EQ_INT(in.size, 4);
	/* REX.W does not widen port I/O */
	CHECK_EQ_INT(DEC(&in, 0x48, 0xed), 0);
	CHECK_EQ_INT(in.size, 4);
}

TEST(insn_computes_sib_rip_relative_and_r13_addresses)
{
	struct insn in;
	uint64_t g[16] = { 0 };

	g[INSN_RCX] = 3;
	/* mov 0xfee00000(,%rcx,4),%eax: SIB without a base */
	CHECK_EQ_INT(DEC(&in, 0x8b, 0x04, 0x8d, 0x00, 0x00, 0xe0, 0xfe), 0);
	CHECK_EQ_INT(in.base, INSN_NO_REG);
	CHECK_EQ_INT(in.index, INSN_RCX);
	CHECK_EQ_INT(in.scale, 4);
	/* disp32 is sign-extended: an address at or above 2 GiB needs a base */
	CHECK(insn_mem_addr(&in, g, 0) == 0xfffffffffee0000cull);
	/* mov 0x10(%rip),%eax: RIP of the next instruction + disp */
	CHECK_EQ_INT(DEC(&in, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00), 0);
	CHECK(in.rip_rel);
	CHECK(insn_mem_addr(&in, g, 0x4000) == 0x4000 + 6 + 0x10);
	/* mov 0x8(%rsp),%eax: base RSP needs a SIB, index 100 = none */
	g[INSN_RSP] = 0x7000;
	CHECK_EQ_INT(DEC(&in, 0x8b, 0x44, 0x24, 0x08), 0);
	CHECK_EQ_INT(in.base, INSN_RSP);
	CHECK_EQ_INT(in.index, INSN_NO_REG);
	CHECK(insn_mem_addr(&in, g, 0) == 0x7008);
	/* mov 0x0(%r13),%eax: mod 01 (mod 00 rm 101 would be RIP-relative even with REX.B) */
	g[13] = 0x9000;
	CHECK_EQ_INT(DEC(&in, 0x41, 0x8b, 0x45, 0x00), 0);
	CHECK_EQ_INT(in.base, 13);
	CHECK(insn_mem_addr(&in, g, 0) == 0x9000);
	CHECK_EQ_INT(DEC(&in, 0x41, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00), 0);
	CHECK(in.rip_rel);
	/* mov -0x8(%rax,%r12,8),%rdx: REX.W REX.X, disp8 negative */
	g[INSN_RAX] = 0x100;
	g[12] = 2;
	CHECK_EQ_INT(DEC(&in, 0x4a, 0x8b, 0x54, 0xe0, 0xf8), 0);
	CHECK_EQ_INT(in.size, 8);
	CHECK_EQ_INT(in.index, 12);
	CHECK(insn_mem_addr(&in, g, 0) == 0x100 + 16 - 8);
}

TEST(insn_writes_destinations_as_the_hardware_would)
{
	struct insn in;
	uint64_t g[16];

	for (int i = 0; i < 16; i++)
		g[i] = 0x1111111111111111ull * (uint64_t)(i + 1) | 0x8000000000000000ull;
	/* a byte into AL keeps RAX's other bits */
	CHECK_EQ_INT(DEC(&in, 0xec), 0);
	insn_dst_write(&in, g, 0xab);
	CHECK(g[INSN_RAX] == 0x91111111111111abull);
	/* a word into AX keeps bits 63:16 */
	CHECK_EQ_INT(DEC(&in, 0x66, 0xed), 0);
	insn_dst_write(&in, g, 0x12345);
	CHECK(g[INSN_RAX] == 0x9111111111112345ull);
	/* a dword into EAX clears bits 63:32 */
	CHECK_EQ_INT(DEC(&in, 0xed), 0);
	insn_dst_write(&in, g, 0xdeadbeef);
	CHECK(g[INSN_RAX] == 0xdeadbeefull);
	/* mov 0xe(%rax),%al (ours) keeps RAX's bits 63:8 */
	CHECK_EQ_INT(DEC(&in, 0x8a, 0x40, 0x0e), 0);
	insn_dst_write(&in, g, 0x5a);
	CHECK(g[INSN_RAX] == 0xdeadbe5aull);
	/* mov (%rdi),%ch: into bits 15:8 of RCX */
	CHECK_EQ_INT(DEC(&in, 0x8a, 0x2f), 0);
	CHECK(in.high8);
	CHECK_EQ_INT(in.reg, INSN_RCX);
	insn_dst_write(&in, g, 0x5a);
	CHECK(g[INSN_RCX] == 0xa222222222225a22ull);
	/* movsbl: 0x80 becomes 0xffffff80 in EDX, bits 63:32 cleared */
	CHECK_EQ_INT(DEC(&in, 0x0f, 0xbe, 0x10), 0);
	insn_dst_write(&in, g, 0x80);
	CHECK(g[INSN_RDX] == 0xffffff80ull);
	/* movzbl: 0x80 stays 0x80 */
	CHECK_EQ_INT(DEC(&in, 0x0f, 0xb6, 0x10), 0);
	insn_dst_write(&in, g, 0x180);
	CHECK(g[INSN_RDX] == 0x80);
	/* REX.W movsx of a word fills all 64 bits */
	CHECK_EQ_INT(DEC(&in, 0x48, 0x0f, 0xbf, 0x18), 0);
	insn_dst_write(&in, g, 0x8001);
	CHECK(g[3] == 0xffffffffffff8001ull);
	/* mov (%rax),%r9: 64 bits */
	CHECK_EQ_INT(DEC(&in, 0x4c, 0x8b, 0x08), 0);
	insn_dst_write(&in, g, 0x0123456789abcdefull);
	CHECK(g[9] == 0x0123456789abcdefull);
}

TEST(insn_refuses_what_it_does_not_emulate_and_says_why)
{
	struct insn in;

	CHECK_EQ_INT(DEC(&in, 0xf3, 0x6c), -LLMK_ENOTSUP); /* rep insb */
	CHECK(strstr(in.why, "REP") != NULL);
	CHECK_EQ_INT(DEC(&in, 0x6e), -LLMK_ENOTSUP); /* outsb */
	CHECK(strstr(in.why, "string") != NULL);
	CHECK_EQ_INT(DEC(&in, 0xf0, 0x89, 0x07), -LLMK_ENOTSUP);
	CHECK(strstr(in.why, "LOCK") != NULL);
	CHECK_EQ_INT(DEC(&in, 0x67, 0x8b, 0x07), -LLMK_ENOTSUP);
	CHECK_EQ_INT(DEC(&in, 0x65, 0x8b, 0x07), -LLMK_ENOTSUP);
	CHECK_EQ_INT(DEC(&in, 0x89, 0xc0), -LLMK_ENOTSUP); /* mov %eax,%eax */
	CHECK(strstr(in.why, "register operand") != NULL);
	CHECK_EQ_INT(DEC(&in, 0xc7, 0x48, 0x08, 0, 0, 0, 0), -LLMK_ENOTSUP); /* C7 /1 */
	CHECK_EQ_INT(DEC(&in, 0x0f, 0x0b), -LLMK_ENOTSUP); /* ud2 */
	CHECK_EQ_INT(DEC(&in, 0x01, 0x07), -LLMK_ENOTSUP); /* add %eax,(%rdi) */
	CHECK_EQ_INT(DEC(&in, 0x8b, 0x20), -LLMK_ENOTSUP); /* mov (%rax),%esp */
	CHECK(strstr(in.why, "RSP") != NULL);
	/* cut short at every point */
	CHECK_EQ_INT(DEC(&in, 0x8b, 0x80, 0x00, 0x03), -LLMK_EINVAL);
	CHECK_EQ_INT(DEC(&in, 0x66), -LLMK_EINVAL);
	CHECK_EQ_INT(DEC(&in, 0x48), -LLMK_EINVAL);
	CHECK_EQ_INT(DEC(&in, 0x8b), -LLMK_EINVAL);
	CHECK_EQ_INT(DEC(&in, 0x8b, 0x04), -LLMK_EINVAL);
	CHECK_EQ_INT(DEC(&in, 0xe4), -LLMK_EINVAL);
	CHECK_EQ_INT(DEC(&in, 0xc7, 0x00, 0x01, 0x00), -LLMK_EINVAL);
	CHECK_EQ_INT(dec(&in, (const uint8_t *)"", 0), -LLMK_EINVAL);
}

TEST(insn_never_reads_past_the_bytes_it_is_given)
{
	/* every prefix of every valid sequence above is refused as cut short or
	 * decoded within its length; run under ASan this also proves no overread */
	static const uint8_t seqs[][8] = {
		{ 6, 0x66, 0x44, 0x89, 0x60, 0x18 },
		{ 8, 0x8b, 0x04, 0x8d, 0x00, 0x00, 0xe0, 0xfe },
		{ 8, 0x48, 0xc7, 0x00, 0xff, 0xff, 0xff, 0xff },
		{ 6, 0x4a, 0x8b, 0x54, 0xe0, 0xf8 },
	};
	for (unsigned s = 0; s < sizeof seqs / sizeof seqs[0]; s++) {
		size_t full = seqs[s][0] - 1;
		for (size_t n = 0; n <= full; n++) {
			uint8_t *b = malloc(n ? n : 1);
			struct insn in;
			memcpy(b, seqs[s] + 1, n);
			int e = insn_decode(b, n, &in);
			CHECK(n == full ? e == 0 && in.len == full : e == -LLMK_EINVAL);
			free(b);
		}
	}
}
