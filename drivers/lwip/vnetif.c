/*
 * drivers/lwip/vnetif.c — lwIP's network interface over drivers/virtio_net.c
 * (lwIP 2.1 doc "Porting": netif init, linkoutput, input), its clock, and
 * the poll that drives it all (NO_SYS: lwIP runs only inside vnet_poll).
 *
 * A received frame arrives here already copied out of the device's shared
 * buffer into private memory (vnet_recv); lwIP gets its own copy in a pbuf.
 */
#include "kernel/platform.h"
#include "drivers/virtio_net.h"
#include "drivers/net.h"
#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/dhcp.h"
#include "lwip/etharp.h"
#include "lwip/timeouts.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

#define NET_RX_PER_POLL 32 /* frames one vnet_poll takes from the device */

static struct {
	bool up, in_poll;
	struct netif nif;
	uint8_t frame[VNET_FRAME_MAX]; /* private: one frame in or out */
	char addr[16];
} net;

u32_t sys_now(void)
{
	return (u32_t)(plat_time_ns() / 1000000u);
}

uint32_t lwip_port_rand(void)
{
	uint32_t r = 0;

	if (plat_entropy(&r, sizeof r) < 0)
		r = (uint32_t)plat_time_ns() * 2654435761u;
	return r;
}

/* netif_find's "vn0": the digits after the name, 0..255. */
int lwip_port_atoi(const char *s)
{
	int v = 0;

	for (int i = 0; i < 3 && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

/* One pbuf chain out as one frame: flattened into private memory, then
 * copied into a transmit slot by vnet_send. */
static err_t linkoutput(struct netif *nif, struct pbuf *p)
{
	(void)nif;
	if (p->tot_len > sizeof net.frame)
		return ERR_BUF;
	if (pbuf_copy_partial(p, net.frame, p->tot_len, 0) != p->tot_len)
		return ERR_BUF;
	return vnet_send(net.frame, p->tot_len) == 0 ? ERR_OK : ERR_MEM;
}

static err_t nif_init(struct netif *nif)
{
	nif->name[0] = 'v';
	nif->name[1] = 'n';
	nif->output = etharp_output;
	nif->linkoutput = linkoutput;
	nif->mtu = VNET_MTU;
	nif->hwaddr_len = ETH_HWADDR_LEN;
	vnet_mac(nif->hwaddr);
	nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET |
		     NETIF_FLAG_LINK_UP;
	return ERR_OK;
}

static void status_changed(struct netif *nif)
{
	const ip4_addr_t *a = netif_ip4_addr(nif);

	if (ip4_addr_isany(a)) {
		net.addr[0] = 0;
		return;
	}
	ip4addr_ntoa_r(a, net.addr, sizeof net.addr);
	char mask[16], gw[16];
	ip4addr_ntoa_r(netif_ip4_netmask(nif), mask, sizeof mask);
	ip4addr_ntoa_r(netif_ip4_gw(nif), gw, sizeof gw);
	plat_printf("net: %s netmask %s gateway %s (%s)\n", net.addr, mask, gw,
		    dhcp_supplied_address(nif) ? "dhcp" : "static");
}

int net_init(void)
{
	int err = vnet_init();

	if (err < 0)
		return err;
	lwip_init();
	if (!netif_add(&net.nif, IP4_ADDR_ANY4, IP4_ADDR_ANY4, IP4_ADDR_ANY4, NULL, nif_init,
		       ethernet_input)) {
		plat_printf("net: lwIP refused the interface\n");
		return -LLMK_EIO;
	}
	netif_set_default(&net.nif);
	netif_set_status_callback(&net.nif, status_changed);
	netif_set_up(&net.nif);
	if (dhcp_start(&net.nif) != ERR_OK) {
		plat_printf("net: DHCP did not start\n");
		return -LLMK_ENOMEM;
	}
	net.up = true;
	plat_printf("net: lwIP %s, asking DHCP for an address\n", LWIP_VERSION_STRING);
	return 0;
}

/* kernel/platform.h: DHCP, or a static address (DHCP released first). */
int plat_net_ipv4(const struct plat_net_ipv4 *c)
{
	ip4_addr_t a, m, g;

	if (!net.up)
		return 0;
	dhcp_release_and_stop(&net.nif);
	if (c->dhcp) {
		netif_set_addr(&net.nif, IP4_ADDR_ANY4, IP4_ADDR_ANY4, IP4_ADDR_ANY4);
		return dhcp_start(&net.nif) == ERR_OK ? 0 : -LLMK_ENOMEM;
	}
	IP4_ADDR(&a, c->addr[0], c->addr[1], c->addr[2], c->addr[3]);
	IP4_ADDR(&m, c->mask[0], c->mask[1], c->mask[2], c->mask[3]);
	IP4_ADDR(&g, c->gw[0], c->gw[1], c->gw[2], c->gw[3]);
	netif_set_addr(&net.nif, &a, &m, &g);
	return 0;
}

bool net_ready(void)
{
	return net.up;
}

void net_addr(char *buf, size_t len)
{
	plat_snprintf(buf, len, "%s", net.addr);
}


void vnet_poll(void)
{
	int len;

	if (!net.up || net.in_poll)
		return;
	net.in_poll = true;
	for (int n = 0; n < NET_RX_PER_POLL && (len = vnet_recv(net.frame, sizeof net.frame)) > 0;
	     n++) {
		struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
		if (!p)
			break; /* out of pbufs: the frame is dropped, TCP resends */
		pbuf_take(p, net.frame, (u16_t)len);
		if (net.nif.input(p, &net.nif) != ERR_OK)
			pbuf_free(p);
	}
	sys_check_timeouts();
	net.in_poll = false;
}
