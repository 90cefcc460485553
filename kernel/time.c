/*
 * kernel/time.c — time from the arch counter (TSC / CNTVCT), which counts
 * from reset, converted with the frequency arch_counter_calibrate() measured.
 * Conversion is a 64x64->128 multiply by a 32.32 fixed-point factor: no
 * division on the hot path and no libgcc 128-bit division at all.
 */
#include "kernel.h"
#include "arch.h"

static struct {
	uint64_t hz;
	uint64_t ns_mult; /* (1e9 << 32) / hz */
	uint64_t prompt_ns;
} tm;

void time_init(uint64_t counter_hz)
{
	if (counter_hz < 1000)
		plat_panic("time: counter frequency %llu Hz is not usable",
			   (unsigned long long)counter_hz);
	tm.hz = counter_hz;
	tm.ns_mult = (1000000000ull << 32) / counter_hz;
}

uint64_t time_counter_hz(void)
{
	return tm.hz;
}

uint64_t time_counter_to_ns(uint64_t c)
{
	return (uint64_t)(((unsigned __int128)c * tm.ns_mult) >> 32);
}

uint64_t plat_time_ns(void)
{
	return time_counter_to_ns(arch_counter());
}

/* The counter starts at reset, so uptime and monotonic time are the same. */
uint64_t plat_uptime_ns(void)
{
	return plat_time_ns();
}

uint64_t plat_boot_ns(void)
{
	return tm.prompt_ns;
}

void plat_mark_prompt(void)
{
	if (!tm.prompt_ns)
		tm.prompt_ns = plat_uptime_ns();
}
