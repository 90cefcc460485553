/*
 * drivers/virtio_blk.h — virtio-blk disks; implements the plat_disk_* and
 * plat_io_* part of kernel/platform.h.
 */
#ifndef LLMK_VIRTIO_BLK_H
#define LLMK_VIRTIO_BLK_H

/* Find and start every virtio-blk PCI function; prints one line per disk.
 * Returns the number of disks. */
int virtio_blk_init(void);

#endif
