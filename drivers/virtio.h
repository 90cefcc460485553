/*
 * drivers/virtio.h — virtio 1.2 over the PCI modern transport (§4.1) with
 * split virtqueues (§2.7). Shared by every virtio driver; arch-neutral.
 */
#ifndef LLMK_VIRTIO_H
#define LLMK_VIRTIO_H

#include <stdbool.h>
#include <stdint.h>
#include "pci.h"

/* §2.1 device status bits */
#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER 2
#define VIRTIO_STATUS_DRIVER_OK 4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_FAILED 128

#define VIRTIO_F_VERSION_1 (1ull << 32) /* §6 */

/* §2.7.5 descriptor table */
struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};
#define VIRTQ_DESC_F_NEXT 1
#define VIRTQ_DESC_F_WRITE 2

/* §2.7.6 driver (available) ring */
struct virtq_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];
};

/* §2.7.8 device (used) ring */
struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
};
struct virtq_used {
	uint16_t flags;
	uint16_t idx;
	struct virtq_used_elem ring[];
};

struct virtq {
	uint16_t size;
	uint16_t index;
	uint16_t last_used;
	struct virtq_desc *desc;
	struct virtq_avail *avail;
	struct virtq_used *used;
	uint64_t notify; /* where to write the queue index to kick the device */
};

struct virtio_pci {
	const struct pci_dev *pci;
	uint64_t common; /* §4.1.4.3 common configuration structure */
	uint64_t notify; /* §4.1.4.4 notification area base */
	uint32_t notify_mult, notify_len;
	uint64_t device; /* §4.1.4.6 device-specific configuration */
	uint32_t device_len;
	char err[128];   /* why probe or queue set-up refused the device */
};

/* Find the vendor capabilities (§4.1.4), each checked against its BAR and
 * the memory map; -LLMK_ENOTSUP for a legacy-only device, another
 * -LLMK_E* (and why in vp->err) for one whose structures cannot be used. */
int virtio_pci_probe(struct virtio_pci *vp, const struct pci_dev *d);
/* §4.1.4.3.2 device reset; waits up to a second for it to complete. */
int virtio_pci_reset(struct virtio_pci *vp);
/* §3.1.1 steps 1-6: reset, ACKNOWLEDGE, DRIVER, negotiate `wanted` out of
 * what the device offers (VERSION_1 is required), FEATURES_OK. Returns the
 * accepted features through *got. */
int virtio_pci_start(struct virtio_pci *vp, uint64_t wanted, uint64_t *got);
/* §4.1.5.1.3: queue set-up, at most max_size entries; -LLMK_ERANGE (why in
 * vp->err) when the device's doorbell lies outside its notify structure. */
int virtio_pci_queue(struct virtio_pci *vp, uint16_t index, uint16_t max_size, struct virtq *q);
void virtio_pci_driver_ok(struct virtio_pci *vp);
void virtio_pci_fail(struct virtio_pci *vp);
/* §4.1.4.3.1: read device config consistently (config_generation loop,
 * bounded): 0, -LLMK_ERANGE outside the device structure, -LLMK_EIO when
 * the generation keeps changing. */
int virtio_pci_config(struct virtio_pci *vp, unsigned off, void *buf, unsigned len);

/* §2.7.13: make the chain starting at `head` available; kick separately. */
void virtq_push(struct virtq *q, uint16_t head);
void virtq_kick(struct virtq *q);
/* §2.7.14: next used element, false when none. */
bool virtq_pop(struct virtq *q, uint32_t *id, uint32_t *len);

#endif
