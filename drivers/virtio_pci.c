/*
 * drivers/virtio_pci.c — virtio 1.2 PCI modern transport (§4.1) and split
 * virtqueue helpers (§2.7). Written in the spec's order; polled, no MSI-X.
 */
#include "../kernel/kernel.h"
#include "../kernel/arch.h"
#include "virtio.h"
#include "cc_pages.h"

/* §4.1.4 virtio_pci_cap: cap_len covers these fields (16 bytes; 20 with the
 * notify capability's multiplier, §4.1.4.4). */
#define PCI_CAP_VENDOR 0x09
enum { CAP_LEN = 2, CAP_TYPE = 3, CAP_BAR = 4, CAP_OFFSET = 8, CAP_LENGTH = 12,
       CAP_NOTIFY_MULT = 16 };
enum { CFG_COMMON = 1, CFG_NOTIFY = 2, CFG_ISR = 3, CFG_DEVICE = 4 };

/* §4.1.4.3 struct virtio_pci_common_cfg field offsets */
enum {
	DEVICE_FEATURE_SELECT = 0, DEVICE_FEATURE = 4, DRIVER_FEATURE_SELECT = 8,
	DRIVER_FEATURE = 12, NUM_QUEUES = 18, DEVICE_STATUS = 20, CONFIG_GENERATION = 21,
	QUEUE_SELECT = 22, QUEUE_SIZE = 24, QUEUE_MSIX_VECTOR = 26, QUEUE_ENABLE = 28,
	QUEUE_NOTIFY_OFF = 30, QUEUE_DESC = 32, QUEUE_DRIVER = 40, QUEUE_DEVICE = 48,
	COMMON_CFG_SIZE = 56,
};
#define VIRTIO_MSI_NO_VECTOR 0xffff
/* §4.1.4.3.1: a driver re-reads while config_generation moves; a device
 * whose generation never settles is given up on. */
#define CONFIG_TRIES 8

/*
 * One capability's structure, checked before any access to it: cap_len
 * holds the fields read, the structure is at least `need` bytes, lies
 * inside its BAR (offset + length within the BAR's size, sized the PCI
 * way), and the BAR is memory the firmware's map does not call RAM and
 * our page tables map shared (cc_mmio_shared): in a confidential guest a
 * store to private memory lands there without a trap. The fields are read once, into locals. 1: a reserved BAR number
 * (§4.1.4: the capability is ignored); 0: *addr, *len set; <0: refused.
 */
static int take_cap(struct virtio_pci *vp, unsigned cap, uint8_t type, uint32_t need,
		    uint64_t *addr, uint32_t *len)
{
	const struct pci_dev *d = vp->pci;
	uint8_t cap_len = pci_read8(d, cap + CAP_LEN), bar = pci_read8(d, cap + CAP_BAR);
	uint32_t off = pci_read32(d, cap + CAP_OFFSET), n = pci_read32(d, cap + CAP_LENGTH);
	uint64_t base, size;

	if (bar > 5)
		return 1;
	if (cap_len < (type == CFG_NOTIFY ? 20 : 16) || cap + cap_len > 0x100 || n < need) {
		plat_snprintf(vp->err, sizeof vp->err, "capability %u at %#x: cap_len %u, "
			      "structure of %u bytes (want %u)", type, cap, cap_len, n, need);
		return -LLMK_EFORMAT;
	}
	base = pci_bar(d, bar);
	size = pci_bar_size(d, bar);
	if (!base || !size) {
		plat_snprintf(vp->err, sizeof vp->err, "capability %u: BAR %u (%#llx) is not a "
			      "sized memory BAR", type, bar, (unsigned long long)base);
		return -LLMK_EFORMAT;
	}
	if ((uint64_t)off + n > size) {
		plat_snprintf(vp->err, sizeof vp->err, "capability %u: structure at BAR %u + %#x, "
			      "%u bytes, runs past the BAR's %#llx", type, bar, off, n,
			      (unsigned long long)size);
		return -LLMK_ERANGE;
	}
	if (mem_is_ram(base, size)) {
		plat_snprintf(vp->err, sizeof vp->err, "BAR %u at %#llx (%#llx bytes) lies in RAM",
			      bar, (unsigned long long)base, (unsigned long long)size);
		return -LLMK_EFORMAT;
	}
	if (!cc_mmio_shared(base + off, n)) {
		plat_snprintf(vp->err, sizeof vp->err, "BAR %u at %#llx: our page tables map it "
			      "private, not shared", bar, (unsigned long long)base);
		return -LLMK_EFORMAT;
	}
	*addr = base + off;
	*len = n;
	return 0;
}

int virtio_pci_probe(struct virtio_pci *vp, const struct pci_dev *d)
{
	unsigned cap = 0;

	memset(vp, 0, sizeof *vp);
	vp->pci = d;
	for (int i = 0; i < PCI_CAP_MAX && (cap = pci_next_cap(d, cap, PCI_CAP_VENDOR)) != 0; i++) {
		uint8_t type = pci_read8(d, cap + CAP_TYPE);
		uint64_t addr;
		uint32_t len;
		int e;

		/* §4.1.4.1: the first capability of each type is the preferred one. */
		if (type == CFG_COMMON && !vp->common) {
			if ((e = take_cap(vp, cap, type, COMMON_CFG_SIZE, &addr, &len)) < 0)
				return e;
			if (e == 0)
				vp->common = addr;
		} else if (type == CFG_NOTIFY && !vp->notify) {
			if ((e = take_cap(vp, cap, type, 2, &addr, &len)) < 0)
				return e;
			if (e == 0) {
				vp->notify = addr;
				vp->notify_len = len;
				vp->notify_mult = pci_read32(d, cap + CAP_NOTIFY_MULT);
			}
		} else if (type == CFG_DEVICE && !vp->device) {
			if ((e = take_cap(vp, cap, type, 1, &addr, &len)) < 0)
				return e;
			if (e == 0) {
				vp->device = addr;
				vp->device_len = len;
			}
		}
	}
	if (!vp->common || !vp->notify || !vp->device) {
		plat_snprintf(vp->err, sizeof vp->err, "no common, notify and device capabilities "
			      "(a legacy device?)");
		return -LLMK_ENOTSUP;
	}
	pci_enable(d);
	return 0;
}

static void set_status(struct virtio_pci *vp, uint8_t bits)
{
	mmio_write8(vp->common + DEVICE_STATUS, mmio_read8(vp->common + DEVICE_STATUS) | bits);
}

void virtio_pci_fail(struct virtio_pci *vp)
{
	set_status(vp, VIRTIO_STATUS_FAILED);
}

/* §4.1.4.3.2: writing 0 resets; the reset is done when 0 reads back. */
int virtio_pci_reset(struct virtio_pci *vp)
{
	mmio_write8(vp->common + DEVICE_STATUS, 0);
	for (uint64_t t = plat_time_ns(); mmio_read8(vp->common + DEVICE_STATUS) != 0;) {
		if (plat_time_ns() - t > 1000000000ull)
			return -LLMK_EIO;
		arch_relax();
	}
	return 0;
}

int virtio_pci_start(struct virtio_pci *vp, uint64_t wanted, uint64_t *got)
{
	uint64_t offered;

	if (virtio_pci_reset(vp) < 0)
		return -LLMK_EIO;
	set_status(vp, VIRTIO_STATUS_ACKNOWLEDGE);
	set_status(vp, VIRTIO_STATUS_DRIVER);
	mmio_write32(vp->common + DEVICE_FEATURE_SELECT, 0);
	offered = mmio_read32(vp->common + DEVICE_FEATURE);
	mmio_write32(vp->common + DEVICE_FEATURE_SELECT, 1);
	offered |= (uint64_t)mmio_read32(vp->common + DEVICE_FEATURE) << 32;
	if (!(offered & VIRTIO_F_VERSION_1)) {
		virtio_pci_fail(vp);
		return -LLMK_ENOTSUP;
	}
	*got = offered & (wanted | VIRTIO_F_VERSION_1);
	mmio_write32(vp->common + DRIVER_FEATURE_SELECT, 0);
	mmio_write32(vp->common + DRIVER_FEATURE, (uint32_t)*got);
	mmio_write32(vp->common + DRIVER_FEATURE_SELECT, 1);
	mmio_write32(vp->common + DRIVER_FEATURE, (uint32_t)(*got >> 32));
	/* §3.1.1 step 5-6: FEATURES_OK must still be set when read back. */
	set_status(vp, VIRTIO_STATUS_FEATURES_OK);
	if (!(mmio_read8(vp->common + DEVICE_STATUS) & VIRTIO_STATUS_FEATURES_OK)) {
		virtio_pci_fail(vp);
		return -LLMK_ENOTSUP;
	}
	return 0;
}

static void write64(uint64_t addr, uint64_t v)
{
	mmio_write32(addr, (uint32_t)v);
	mmio_write32(addr + 4, (uint32_t)(v >> 32));
}

int virtio_pci_queue(struct virtio_pci *vp, uint16_t index, uint16_t max_size, struct virtq *q)
{
	uint16_t size;
	uint64_t notify_off;

	mmio_write16(vp->common + QUEUE_SELECT, index);
	size = mmio_read16(vp->common + QUEUE_SIZE);
	if (size == 0)
		return -LLMK_ENOENT;
	if (size > max_size)
		size = max_size;
	/* §4.1.4.4: the doorbell is notify + queue_notify_off * multiplier, two
	 * bytes that must lie inside the notification structure. */
	notify_off = (uint64_t)mmio_read16(vp->common + QUEUE_NOTIFY_OFF) * vp->notify_mult;
	if (notify_off + 2 > vp->notify_len) {
		plat_snprintf(vp->err, sizeof vp->err, "queue %u: notify offset %#llx outside the "
			      "%u-byte notification structure", index, (unsigned long long)notify_off,
			      vp->notify_len);
		return -LLMK_ERANGE;
	}
	/* §2.7: desc 16-byte, driver ring 2-byte, device ring 4-byte aligned;
	 * page allocations satisfy all three and come zeroed. The device reads
	 * and writes them: in a confidential guest they are shared pages. */
	q->desc = cc_dma_alloc(sizeof(struct virtq_desc) * size);
	q->avail = cc_dma_alloc(6 + 2u * size);
	q->used = cc_dma_alloc(6 + 8u * size);
	if (!q->desc || !q->avail || !q->used)
		return -LLMK_ENOMEM;
	q->size = size;
	q->index = index;
	q->last_used = 0;
	mmio_write16(vp->common + QUEUE_SIZE, size);
	mmio_write16(vp->common + QUEUE_MSIX_VECTOR, VIRTIO_MSI_NO_VECTOR);
	write64(vp->common + QUEUE_DESC, (uintptr_t)q->desc);
	write64(vp->common + QUEUE_DRIVER, (uintptr_t)q->avail);
	write64(vp->common + QUEUE_DEVICE, (uintptr_t)q->used);
	q->notify = vp->notify + notify_off;
	mmio_write16(vp->common + QUEUE_ENABLE, 1);
	return 0;
}

void virtio_pci_driver_ok(struct virtio_pci *vp)
{
	set_status(vp, VIRTIO_STATUS_DRIVER_OK);
}

int virtio_pci_config(struct virtio_pci *vp, unsigned off, void *buf, unsigned len)
{
	uint8_t gen, *b = buf;

	/* the reads are 4 bytes wide: all of them inside the structure */
	if ((uint64_t)off + ALIGN_UP(len, 4) > vp->device_len)
		return -LLMK_ERANGE;
	for (int t = 0; t < CONFIG_TRIES; t++) {
		gen = mmio_read8(vp->common + CONFIG_GENERATION);
		for (unsigned i = 0; i < len; i += 4) {
			uint32_t v = mmio_read32(vp->device + off + i);
			memcpy(b + i, &v, len - i < 4 ? len - i : 4);
		}
		if (gen == mmio_read8(vp->common + CONFIG_GENERATION))
			return 0;
	}
	return -LLMK_EIO;
}

void virtq_push(struct virtq *q, uint16_t head)
{
	q->avail->ring[q->avail->idx % q->size] = head;
	/* §2.7.13.3.1: the ring entry must be visible before the index. */
	arch_dma_barrier();
	q->avail->idx++;
}

void virtq_kick(struct virtq *q)
{
	/* §2.7.13.4: the index must be visible before the notification. */
	arch_dma_barrier();
	mmio_write16(q->notify, q->index);
}

bool virtq_pop(struct virtq *q, uint32_t *id, uint32_t *len)
{
	volatile struct virtq_used *u = q->used;
	struct virtq_used_elem e;

	if (u->idx == q->last_used)
		return false;
	/* §2.7.14: read the element only after seeing the index move. */
	arch_dma_barrier();
	e = ((struct virtq_used_elem *)u->ring)[q->last_used % q->size];
	q->last_used++;
	*id = e.id;
	*len = e.len;
	return true;
}
