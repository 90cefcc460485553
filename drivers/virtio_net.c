/*
 * drivers/virtio_net.c — virtio-net (virtio 1.2 §5.1), one device, polled,
 * no offloads: whole Ethernet frames in and out of receiveq1 and
 * transmitq1.
 *
 * Every buffer the device touches is memory from cc_dma_alloc (shared pages
 * in a confidential guest, drivers/cc_pages.c), and every frame is copied
 * across: the driver copies an outgoing frame into a transmit slot, and a
 * received frame out of its receive slot into the caller's private buffer
 * before anyone looks at it. What the host sees this way is what it sees
 * anyway: the frames on its virtual wire. Every byte that comes from the
 * device is hostile: a used element's id and length are checked against
 * the slot they name before the copy, and each poll looks at no more used
 * elements than the queue holds.
 *
 * Slot s of a queue owns descriptor s and NET_BUF bytes of the queue's
 * buffer for the whole boot; one descriptor holds the virtio_net_hdr and the
 * frame together (§5.1.6: with VIRTIO_F_VERSION_1 the device takes any
 * framing, §2.6.4).
 */
#include "../kernel/kernel.h"
#include "pci.h"
#include "virtio.h"
#include "virtio_net.h"
#include "cc_pages.h"

#define NET_SLOTS 32     /* descriptors per queue, receive and transmit */
#define NET_BUF 2048     /* bytes per slot: header + the largest frame */
#define RXQ 0            /* §5.1.2 receiveq1 */
#define TXQ 1            /* §5.1.2 transmitq1 */

/* §5.1.3 feature bits */
#define VIRTIO_NET_F_MAC (1ull << 5)
/* §5.1.4 struct virtio_net_config offsets */
enum { CFG_MAC = 0 };

/* §5.1.6 struct virtio_net_hdr; with VIRTIO_F_VERSION_1 num_buffers is
 * always there (12 bytes). All zero on transmit: no checksum or
 * segmentation offload was negotiated (§5.1.6.2). */
struct virtio_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
};
_Static_assert(sizeof(struct virtio_net_hdr) == 12, "§5.1.6 header");
#define HDR sizeof(struct virtio_net_hdr)
_Static_assert(HDR + VNET_FRAME_MAX <= NET_BUF, "a frame fits a slot (§5.1.6.3.1: 1526)");

static struct {
	bool up;
	struct virtio_pci vp;
	struct virtq rx, tx;
	uint8_t *rx_buf, *tx_buf;    /* NET_SLOTS * NET_BUF each, device memory */
	bool rx_busy[NET_SLOTS];     /* with the device: may be returned once */
	bool tx_busy[NET_SLOTS];
	uint16_t tx_free[NET_SLOTS];
	int n_tx_free;
	uint16_t n_slots;            /* per queue: min(NET_SLOTS, both queue sizes) */
	uint8_t mac[6];
	char where[24];
	struct vnet_stats st;
} vnet;

/* §5.1.6.3: give receive slot s (back) to the device, device-writable. */
static void rx_post(uint16_t s)
{
	vnet.rx_busy[s] = true;
	vnet.rx.desc[s] = (struct virtq_desc){ (uintptr_t)(vnet.rx_buf + (size_t)s * NET_BUF),
					       NET_BUF, VIRTQ_DESC_F_WRITE, 0 };
	virtq_push(&vnet.rx, s);
}

/* Transmit slots the device is done with (§5.1.6.2.1: it returns them in
 * the used ring). An id that is out of range or not outstanding is the
 * device lying: the driver stops using it. */
static void tx_reap(void)
{
	uint32_t id, len;

	for (int n = 0; n < vnet.n_slots && virtq_pop(&vnet.tx, &id, &len); n++) {
		if (id >= vnet.n_slots || !vnet.tx_busy[id]) {
			plat_printf("virtio-net %s: device returned bad transmit id %u; "
				    "device stopped\n", vnet.where, id);
			virtio_pci_reset(&vnet.vp);
			vnet.up = false;
			return;
		}
		vnet.tx_busy[id] = false;
		vnet.tx_free[vnet.n_tx_free++] = (uint16_t)id;
	}
}

int vnet_send(const void *frame, size_t len)
{
	uint16_t s;
	uint8_t *p;

	if (!vnet.up)
		return -LLMK_EIO;
	if (len < 14 || len > VNET_FRAME_MAX)
		return -LLMK_EINVAL;
	tx_reap();
	if (vnet.n_tx_free == 0) {
		vnet.st.tx_full++;
		return -LLMK_EBUSY;
	}
	s = vnet.tx_free[--vnet.n_tx_free];
	vnet.tx_busy[s] = true;
	p = vnet.tx_buf + (size_t)s * NET_BUF;
	memset(p, 0, HDR);
	memcpy(p + HDR, frame, len);
	/* §5.1.6.2: header then packet, device-readable. */
	vnet.tx.desc[s] = (struct virtq_desc){ (uintptr_t)p, (uint32_t)(HDR + len), 0, 0 };
	virtq_push(&vnet.tx, s);
	virtq_kick(&vnet.tx);
	vnet.st.tx++;
	return 0;
}

int vnet_recv(void *buf, size_t cap)
{
	uint32_t id, len;

	if (!vnet.up || cap < VNET_FRAME_MAX)
		return 0;
	/* Bounded: a device that keeps the used index moving gets at most
	 * one queue's worth of looks per call. */
	for (int n = 0; n < vnet.n_slots && virtq_pop(&vnet.rx, &id, &len); n++) {
		if (id >= vnet.n_slots || !vnet.rx_busy[id]) {
			plat_printf("virtio-net %s: device returned bad receive id %u; "
				    "device stopped\n", vnet.where, id);
			virtio_pci_reset(&vnet.vp);
			vnet.up = false;
			return 0;
		}
		vnet.rx_busy[id] = false;
		/* §5.1.6.4: len (our copy of the used element's) covers the
		 * header and the packet written; the frame is copied once out
		 * of the shared slot, and only that copy is handed on. */
		uint32_t flen = len;
		if (flen < HDR + 14 || flen > HDR + VNET_FRAME_MAX) {
			vnet.st.rx_bad++;
			rx_post((uint16_t)id);
			virtq_kick(&vnet.rx);
			continue;
		}
		flen -= HDR;
		memcpy(buf, vnet.rx_buf + (size_t)id * NET_BUF + HDR, flen);
		rx_post((uint16_t)id);
		virtq_kick(&vnet.rx);
		vnet.st.rx++;
		return (int)flen;
	}
	return 0;
}

bool vnet_mac(uint8_t mac[6])
{
	if (!vnet.up)
		return false;
	memcpy(mac, vnet.mac, 6);
	return true;
}

void vnet_stats(struct vnet_stats *out)
{
	*out = vnet.st;
}

/* virtio 1.2 §3.1.1 device initialization and §5.1.5, in order. */
static int start(const struct pci_dev *pd)
{
	uint64_t feat;
	int err;

	plat_snprintf(vnet.where, sizeof vnet.where, "pci %02x:%02x.%x", pd->bus, pd->dev,
		      pd->fn);
	if ((err = virtio_pci_probe(&vnet.vp, pd)) < 0)
		return err;
	/* Steps 1-6: no offloads, no control queue, no mergeable buffers:
	 * every frame is one buffer each way. */
	if ((err = virtio_pci_start(&vnet.vp, VIRTIO_NET_F_MAC, &feat)) < 0)
		return err;
	/* §5.1.5: without VIRTIO_NET_F_MAC the driver picks its own
	 * (a locally administered unicast address). */
	if (feat & VIRTIO_NET_F_MAC) {
		if ((err = virtio_pci_config(&vnet.vp, CFG_MAC, vnet.mac, 6)) < 0)
			goto fail;
		vnet.mac[0] &= (uint8_t)~1u; /* a hostile MAC: never a multicast one */
	} else {
		static const uint8_t local[6] = { 0x02, 0x6c, 0x6c, 0x6d, 0x6b, 0x01 };
		memcpy(vnet.mac, local, 6);
	}
	/* Step 7: receiveq1 and transmitq1 (§5.1.2). */
	if ((err = virtio_pci_queue(&vnet.vp, RXQ, NET_SLOTS, &vnet.rx)) < 0 ||
	    (err = virtio_pci_queue(&vnet.vp, TXQ, NET_SLOTS, &vnet.tx)) < 0)
		goto fail;
	vnet.n_slots = vnet.rx.size < vnet.tx.size ? vnet.rx.size : vnet.tx.size;
	vnet.rx_buf = cc_dma_alloc((size_t)NET_SLOTS * NET_BUF);
	vnet.tx_buf = cc_dma_alloc((size_t)NET_SLOTS * NET_BUF);
	if (!vnet.rx_buf || !vnet.tx_buf) {
		err = -LLMK_ENOMEM;
		goto fail;
	}
	for (int s = vnet.n_slots - 1; s >= 0; s--)
		vnet.tx_free[vnet.n_tx_free++] = (uint16_t)s;
	/* §5.1.5 step 3: fill the receive queue before DRIVER_OK. */
	for (uint16_t s = 0; s < vnet.n_slots; s++)
		rx_post(s);
	/* Step 8: DRIVER_OK; then tell the device receive buffers wait. */
	virtio_pci_driver_ok(&vnet.vp);
	virtq_kick(&vnet.rx);
	vnet.up = true;
	return 0;
fail:
	virtio_pci_fail(&vnet.vp);
	return err;
}

/* virtio 1.2 §4.1.2: vendor 0x1af4, device 0x1040 + 1 (modern) or the
 * transitional 0x1000. */
int vnet_init(void)
{
	for (int i = 0; i < pci_count(); i++) {
		const struct pci_dev *pd = pci_get(i);
		int err;

		if (pd->vendor != 0x1af4 || (pd->device != 0x1041 && pd->device != 0x1000))
			continue;
		if ((err = start(pd)) < 0) {
			plat_printf("virtio-net %s: not started: %s%s%s\n", vnet.where,
				    plat_strerror(err), vnet.vp.err[0] ? ": " : "", vnet.vp.err);
			memset(&vnet, 0, sizeof vnet);
			return err;
		}
		plat_printf("net: virtio-net %s, mac %02x:%02x:%02x:%02x:%02x:%02x, %u buffers "
			    "each way\n", vnet.where, vnet.mac[0], vnet.mac[1], vnet.mac[2],
			    vnet.mac[3], vnet.mac[4], vnet.mac[5], vnet.n_slots);
		return 0;
	}
	return -LLMK_ENOENT;
}
