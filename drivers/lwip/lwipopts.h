/*
 * drivers/lwip/lwipopts.h — lwIP 2.1 configured for llmk (src/include/
 * lwip/opt.h names every option): NO_SYS (no threads, the raw API only,
 * polled by net_poll), IPv4 with DHCP, TCP and UDP; no sockets, netconn,
 * DNS or statistics. lwIP's own heap and pools, sized here, are static
 * arrays in its .bss.
 */
#ifndef LLMK_LWIPOPTS_H
#define LLMK_LWIPOPTS_H

#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0 /* one CPU calls lwIP, never from an interrupt */
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#define LWIP_TIMERS 1

#define MEM_ALIGNMENT 8
#define MEM_SIZE (512 * 1024)  /* send queues: up to TCP_SND_BUF per connection, ERR_MEM past it */
#define MEMP_NUM_PBUF 32
#define PBUF_POOL_SIZE 64
#define MEMP_NUM_TCP_PCB 80   /* net_tcp.c's 72 handles, and TIME_WAIT */
#define MEMP_NUM_TCP_PCB_LISTEN 4
#define MEMP_NUM_TCP_SEG 256

#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_RAW 0
#define LWIP_UDP 1
#define LWIP_TCP 1
#define LWIP_DHCP 1
#define DHCP_DOES_ARP_CHECK 0 /* slirp's lease is ours; no 0.5 s probe */
#define LWIP_DNS 0
#define LWIP_IGMP 0
#define LWIP_AUTOIP 0

#define TCP_MSS 1460
#define TCP_WND (8 * TCP_MSS)
#define TCP_SND_BUF (8 * TCP_MSS)
#define TCP_SND_QUEUELEN 32
#define LWIP_TCP_KEEPALIVE 1

#define LWIP_NETIF_STATUS_CALLBACK 1
#define LWIP_NETIF_LINK_CALLBACK 0
#define LWIP_STATS 0
#define LWIP_CHKSUM_ALGORITHM 3

#endif
