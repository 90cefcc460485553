/*
 * drivers/virtio_net.h — one virtio-net device (drivers/virtio_net.c),
 * polled: Ethernet frames in and out, nothing else. lwIP sits on top of it
 * (drivers/lwip/vnetif.c).
 */
#ifndef LLMK_VIRTIO_NET_H
#define LLMK_VIRTIO_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VNET_MTU 1500
#define VNET_FRAME_MAX 1514 /* Ethernet header + MTU, no FCS, no VLAN tag */

/* Find and start the first virtio-net PCI function; prints one line.
 * 0, or -LLMK_ENOENT when there is none, another -LLMK_E* when it failed. */
int vnet_init(void);
/* The device's MAC address (§5.1.4 mac, or a fixed local one without
 * VIRTIO_NET_F_MAC). False before vnet_init succeeded. */
bool vnet_mac(uint8_t mac[6]);
/* Queue one frame of len bytes (14..VNET_FRAME_MAX) for sending: copied
 * into the device's buffer before this returns. -LLMK_EBUSY when every
 * transmit buffer is still with the device, -LLMK_EINVAL for a bad len. */
int vnet_send(const void *frame, size_t len);
/* The next received frame, copied into buf (cap >= VNET_FRAME_MAX): its
 * length, 0 when none is waiting. Frames the device reported with an
 * impossible length are dropped and counted. */
int vnet_recv(void *buf, size_t cap);

struct vnet_stats {
	uint64_t rx, tx, rx_bad, tx_full;
};
void vnet_stats(struct vnet_stats *out);

#endif
