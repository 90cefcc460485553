/*
 * drivers/virtio_blk.c — virtio-blk (virtio 1.2 §5.2), read-only, polled,
 * many requests in flight.
 *
 * Each request is a fixed three-descriptor chain (§5.2.6: header, data,
 * status), so a queue of 256 entries holds 85 requests at once; slot s owns
 * descriptors 3s..3s+2 for its whole life and the chain is only re-aimed.
 * A plat_io read is cut into requests of at most VBLK_CHUNK bytes that are
 * all queued before the device is kicked; the plat_io completes when the
 * last of them comes back (its priv[] counts them).
 *
 * In a confidential guest (SEV, TDX) the device can reach only pages the
 * guest shares with the host (drivers/cc_pages.c): the rings and request
 * headers live there, and each slot owns a piece of a shared bounce buffer
 * that its data is read into and copied out of when the request completes.
 * Requests are then at most VBLK_CC_CHUNK bytes, VBLK_CC_SLOTS at a time.
 * What the host sees this way is what it has anyway: the disk's contents
 * (sealed models are ciphertext on the disk). On other machines none of
 * this happens: the device writes straight into the caller's buffer.
 *
 * Capacity is what the device reports (§5.2.4: in 512-byte sectors). QEMU
 * rounds a raw image whose size is not a multiple of 512 up to the next
 * sector and reads the missing tail as zeros, so such a disk shows its size
 * rounded up; the engine takes a file's real extent from its own header.
 */
#include "../kernel/kernel.h"
#include "../kernel/arch.h"
#include "pci.h"
#include "virtio.h"
#include "virtio_blk.h"
#include "cc_pages.h"

#define VBLK_MAX_DISKS 16
#define VBLK_QUEUE 256           /* descriptors per queue (QEMU offers 256) */
#define VBLK_SLOTS (VBLK_QUEUE / 3)
#define VBLK_CHUNK (1u << 20)    /* bytes per request */
#define VBLK_BOUNCE (64u << 10)  /* unaligned edges of synchronous reads */
#define SECTOR 512u
#define VBLK_STALL_NS (60ull * 1000000000) /* no completion for this long: device is gone */
#define VBLK_CC_CHUNK (64u << 10)  /* confidential guests: bytes per bounced request */
#define VBLK_CC_SLOTS 16           /* ... and requests in flight: 1 MiB of bounce a disk */

/* §5.2.3 feature bits */
#define VIRTIO_BLK_F_SIZE_MAX (1ull << 1)
#define VIRTIO_BLK_F_SEG_MAX (1ull << 2)
#define VIRTIO_BLK_F_RO (1ull << 5)
#define VIRTIO_BLK_F_BLK_SIZE (1ull << 6)
/* §5.2.4 struct virtio_blk_config offsets */
enum { CFG_CAPACITY = 0, CFG_SIZE_MAX = 8, CFG_SEG_MAX = 12, CFG_BLK_SIZE = 20 };
/* §5.2.6 request types and status */
#define VIRTIO_BLK_T_IN 0
#define VIRTIO_BLK_T_GET_ID 8
#define VIRTIO_BLK_S_OK 0
#define VIRTIO_BLK_ID_BYTES 20

struct vblk_hdr { /* §5.2.6 struct virtio_blk_req, the device-readable part */
	uint32_t type;
	uint32_t reserved;
	uint64_t sector;
};

/* Per-slot DMA memory: one page holds every header and status byte. */
struct vblk_dma {
	struct vblk_hdr hdr[VBLK_SLOTS];
	uint8_t status[VBLK_SLOTS];
};
_Static_assert(sizeof(struct vblk_dma) <= 4096, "one page");

/* plat_io.priv[] use */
enum { IO_PENDING = 0, IO_SUBMITTING = 1, IO_DISK = 2 };

struct vblk_disk {
	struct virtio_pci vp;
	struct virtq q;
	struct vblk_dma *dma;
	struct plat_io *owner[VBLK_SLOTS];
	uint16_t free[VBLK_SLOTS];
	int n_free, n_slots;
	uint64_t capacity; /* bytes */
	uint32_t sector;
	uint32_t chunk;
	char id[VIRTIO_BLK_ID_BYTES + 1];
	char where[24];
	uint64_t progress_ns; /* last completion, or when the queue became busy */
	bool broken;
	/* confidential guests: n_slots * chunk shared bytes, and where each
	 * slot's data goes when it completes; NULL elsewhere */
	uint8_t *bounce;
	void *dest[VBLK_SLOTS];
	uint32_t dest_len[VBLK_SLOTS];
};

static struct {
	struct vblk_disk disks[VBLK_MAX_DISKS];
	int n;
	uint8_t *bounce;
} vblk;

static void finish(struct plat_io *io, int status)
{
	if (status && io->status == 0)
		io->status = status;
	if (--io->priv[IO_PENDING] == 0 && !io->priv[IO_SUBMITTING])
		io->done = 1;
}

/* Collect every finished request of one disk. */
static void reap(struct vblk_disk *d)
{
	uint32_t id, len;

	while (virtq_pop(&d->q, &id, &len)) {
		unsigned s = id / 3;
		struct plat_io *io;

		if (id % 3 || s >= (unsigned)d->n_slots || !d->owner[s])
			plat_panic("virtio-blk %s: device returned bad descriptor id %u", d->where,
				   id);
		io = d->owner[s];
		d->owner[s] = NULL;
		d->free[d->n_free++] = (uint16_t)s;
		d->progress_ns = plat_time_ns();
		bool ok = d->dma->status[s] == VIRTIO_BLK_S_OK;
		if (ok && d->bounce)
			memcpy(d->dest[s], d->bounce + (size_t)s * d->chunk, d->dest_len[s]);
		finish(io, ok ? 0 : -LLMK_EIO);
	}
}

/*
 * A device that holds requests and answers none for VBLK_STALL_NS is taken
 * offline: a reset (§2.1.2: afterwards the device no longer touches the
 * rings or buffers) makes it safe to fail every request it held.
 */
static bool stalled(struct vblk_disk *d)
{
	if (d->broken || d->n_free == d->n_slots)
		return false;
	if (plat_time_ns() - d->progress_ns < VBLK_STALL_NS)
		return false;
	plat_printf("virtio-blk %s: no completion in %llu s; disk taken offline\n", d->where,
		    (unsigned long long)(VBLK_STALL_NS / 1000000000));
	virtio_pci_reset(&d->vp);
	d->broken = true;
	for (int s = 0; s < d->n_slots; s++) {
		struct plat_io *io = d->owner[s];
		if (!io)
			continue;
		d->owner[s] = NULL;
		d->free[d->n_free++] = (uint16_t)s;
		finish(io, -LLMK_EIO);
	}
	return true;
}

/* §2.7.13: fill a slot's chain and make it available. The device-writable
 * descriptors (data, status) follow the device-readable header (§2.7.4.2). */
static int submit(struct vblk_disk *d, uint32_t type, uint64_t sector, void *buf,
		  uint32_t len, struct plat_io *io)
{
	struct virtq_desc *desc;
	unsigned s;

	while (d->n_free == 0 && !d->broken) {
		virtq_kick(&d->q);
		reap(d);
		if (!stalled(d))
			arch_relax();
	}
	if (d->broken)
		return -LLMK_EIO;
	if (d->n_free == d->n_slots)
		d->progress_ns = plat_time_ns();
	s = d->free[--d->n_free];
	d->owner[s] = io;
	io->priv[IO_PENDING]++;
	d->dma->hdr[s] = (struct vblk_hdr){ type, 0, sector };
	d->dma->status[s] = 0xff;
	if (d->bounce) {
		d->dest[s] = buf;
		d->dest_len[s] = len;
		buf = d->bounce + (size_t)s * d->chunk;
	}
	desc = &d->q.desc[3 * s];
	desc[0] = (struct virtq_desc){ (uintptr_t)&d->dma->hdr[s], sizeof(struct vblk_hdr),
				       VIRTQ_DESC_F_NEXT, (uint16_t)(3 * s + 1) };
	desc[1] = (struct virtq_desc){ (uintptr_t)buf, len, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE,
				       (uint16_t)(3 * s + 2) };
	desc[2] = (struct virtq_desc){ (uintptr_t)&d->dma->status[s], 1, VIRTQ_DESC_F_WRITE, 0 };
	virtq_push(&d->q, (uint16_t)(3 * s));
	return 0;
}

static void io_begin(struct vblk_disk *d, struct plat_io *io)
{
	io->priv[IO_DISK] = (uintptr_t)d;
	io->status = 0;
	io->done = 0;
	io->priv[IO_PENDING] = 0;
	io->priv[IO_SUBMITTING] = 1;
}

static void io_end_submit(struct vblk_disk *d, struct plat_io *io)
{
	io->priv[IO_SUBMITTING] = 0;
	if (io->priv[IO_PENDING] == 0)
		io->done = 1;
	virtq_kick(&d->q);
}

/* Queue a sector-aligned read; the buffer may have any alignment (virtio
 * descriptors take any guest-physical address). */
static void read_sectors(struct vblk_disk *d, uint64_t off, void *buf, uint64_t len,
			 struct plat_io *io)
{
	uint8_t *p = buf;

	io_begin(d, io);
	while (len) {
		uint32_t n = len < d->chunk ? (uint32_t)len : d->chunk;
		if (submit(d, VIRTIO_BLK_T_IN, off / SECTOR, p, n, io) < 0) {
			io->status = -LLMK_EIO;
			break;
		}
		off += n;
		p += n;
		len -= n;
	}
	io_end_submit(d, io);
}

int plat_io_poll(struct plat_io *io)
{
	struct vblk_disk *d = (struct vblk_disk *)(uintptr_t)io->priv[IO_DISK];

	if (!io->done && d) {
		reap(d);
		if (!io->done)
			stalled(d);
	}
	return io->done ? 1 : 0;
}

int plat_io_wait(struct plat_io *io)
{
	while (!plat_io_poll(io))
		arch_relax();
	return io->status;
}

static struct vblk_disk *disk_of(int disk)
{
	return disk >= 0 && disk < vblk.n ? &vblk.disks[disk] : NULL;
}

/* The disk to read from: -LLMK_ENOENT for no such index, -LLMK_EIO once the
 * device was taken offline. */
static int usable(int disk, struct vblk_disk **out)
{
	*out = disk_of(disk);
	if (!*out)
		return -LLMK_ENOENT;
	return (*out)->broken ? -LLMK_EIO : 0;
}

static bool in_range(const struct vblk_disk *d, uint64_t off, uint64_t len)
{
	return off <= d->capacity && len <= d->capacity - off;
}

int plat_disk_read_async(int disk, uint64_t off, void *buf, size_t len, struct plat_io *io)
{
	struct vblk_disk *d;
	int err = usable(disk, &d);

	if (err)
		return err;
	if (off % SECTOR || len % SECTOR || (uintptr_t)buf % SECTOR)
		return -LLMK_EINVAL;
	if (!in_range(d, off, len))
		return -LLMK_ERANGE;
	read_sectors(d, off, buf, len, io);
	return 0;
}

/* Any byte range: whole sectors go straight into the caller's buffer, a
 * partial first or last sector through the bounce buffer. */
int plat_disk_read(int disk, uint64_t off, void *buf, size_t len)
{
	struct vblk_disk *d;
	uint8_t *p = buf;
	struct plat_io io;
	int err = usable(disk, &d);

	if (err)
		return err;
	if (!in_range(d, off, len))
		return -LLMK_ERANGE;
	while (len) {
		uint64_t head = off % SECTOR, n;

		if (head == 0 && len >= SECTOR) {
			n = len & ~(uint64_t)(SECTOR - 1);
			read_sectors(d, off, p, n, &io);
			if ((err = plat_io_wait(&io)) < 0)
				return err;
		} else {
			uint64_t span = ALIGN_UP(head + len, SECTOR);
			if (span > VBLK_BOUNCE)
				span = VBLK_BOUNCE;
			read_sectors(d, off - head, vblk.bounce, span, &io);
			if ((err = plat_io_wait(&io)) < 0)
				return err;
			n = span - head < len ? span - head : len;
			memcpy(p, vblk.bounce + head, n);
		}
		off += n;
		p += n;
		len -= n;
	}
	return 0;
}

int plat_disk_count(void)
{
	return vblk.n;
}

int plat_disk_info(int disk, struct plat_disk_info *out)
{
	struct vblk_disk *d = disk_of(disk);

	if (!d)
		return -LLMK_ENOENT;
	memset(out, 0, sizeof *out);
	out->capacity = d->capacity;
	out->sector = d->sector;
	memcpy(out->id, d->id, sizeof d->id);
	plat_snprintf(out->where, sizeof out->where, "%s", d->where);
	return 0;
}

/* Requests go to the device by DMA whatever the engine does: no cache to
 * read round (reads stays ""). */
int plat_disk_stream(int disk, bool on)
{
	(void)on;
	return disk_of(disk) ? 0 : -LLMK_ENOENT;
}

/* §5.2.6 VIRTIO_BLK_T_GET_ID: up to 20 bytes, NUL-padded when shorter. */
static void read_id(struct vblk_disk *d)
{
	struct plat_io io;

	io_begin(d, &io);
	if (submit(d, VIRTIO_BLK_T_GET_ID, 0, vblk.bounce, VIRTIO_BLK_ID_BYTES, &io) < 0)
		io.status = -LLMK_EIO;
	io_end_submit(d, &io);
	if (plat_io_wait(&io) == 0) {
		for (int i = 0; i < VIRTIO_BLK_ID_BYTES && vblk.bounce[i]; i++)
			d->id[i] = vblk.bounce[i] >= 0x20 && vblk.bounce[i] < 0x7f ?
					   (char)vblk.bounce[i] : '?';
	}
}

/* virtio 1.2 §3.1.1 device initialization, in order, for one function. */
static int start_disk(struct vblk_disk *d, const struct pci_dev *pd)
{
	uint64_t feat, sectors;
	uint32_t v;
	int err;

	plat_snprintf(d->where, sizeof d->where, "pci %02x:%02x.%x", pd->bus, pd->dev, pd->fn);
	if ((err = virtio_pci_probe(&d->vp, pd)) < 0)
		return err;
	err = virtio_pci_start(&d->vp, VIRTIO_BLK_F_SIZE_MAX | VIRTIO_BLK_F_SEG_MAX |
				       VIRTIO_BLK_F_RO | VIRTIO_BLK_F_BLK_SIZE, &feat);
	if (err < 0)
		return err;
	if ((err = virtio_pci_config(&d->vp, CFG_CAPACITY, &sectors, 8)) < 0)
		goto config;
	if (sectors > UINT64_MAX / SECTOR) {
		plat_snprintf(d->vp.err, sizeof d->vp.err, "capacity of %llu sectors",
			      (unsigned long long)sectors);
		virtio_pci_fail(&d->vp);
		return -LLMK_ERANGE;
	}
	d->capacity = sectors * SECTOR;
	d->sector = SECTOR;
	if (feat & VIRTIO_BLK_F_BLK_SIZE) {
		if ((err = virtio_pci_config(&d->vp, CFG_BLK_SIZE, &v, 4)) < 0)
			goto config;
		if (v >= SECTOR && !(v & (v - 1)))
			d->sector = v;
	}
	d->chunk = VBLK_CHUNK;
	if (feat & VIRTIO_BLK_F_SIZE_MAX) {
		if ((err = virtio_pci_config(&d->vp, CFG_SIZE_MAX, &v, 4)) < 0)
			goto config;
		if (v >= SECTOR && v < d->chunk)
			d->chunk = v & ~(SECTOR - 1);
	}
	if (cc_dma_bounce() && d->chunk > VBLK_CC_CHUNK)
		d->chunk = VBLK_CC_CHUNK;
	if ((err = virtio_pci_queue(&d->vp, 0, VBLK_QUEUE, &d->q)) < 0) {
		virtio_pci_fail(&d->vp);
		return err;
	}
	d->dma = cc_dma_alloc(sizeof *d->dma);
	if (!d->dma) {
		virtio_pci_fail(&d->vp);
		return -LLMK_ENOMEM;
	}
	d->n_slots = d->q.size / 3;
	if (d->n_slots == 0) {
		virtio_pci_fail(&d->vp);
		return -LLMK_ENOTSUP;
	}
	if (cc_dma_bounce()) {
		if (d->n_slots > VBLK_CC_SLOTS)
			d->n_slots = VBLK_CC_SLOTS;
		d->bounce = cc_dma_alloc((size_t)d->n_slots * d->chunk);
		if (!d->bounce) {
			virtio_pci_fail(&d->vp);
			return -LLMK_ENOMEM;
		}
	}
	for (int s = d->n_slots - 1; s >= 0; s--)
		d->free[d->n_free++] = (uint16_t)s;
	virtio_pci_driver_ok(&d->vp);
	read_id(d);
	return 0;
config:
	plat_snprintf(d->vp.err, sizeof d->vp.err, "device configuration unreadable (%s)",
		      err == -LLMK_EIO ? "config_generation never settled" :
					 "past the device structure");
	virtio_pci_fail(&d->vp);
	return err;
}

/* virtio 1.2 §4.1.2: vendor 0x1af4, device 0x1040 + 2 (modern) or the
 * transitional 0x1001. */
int virtio_blk_init(void)
{
	vblk.bounce = plat_alloc(VBLK_BOUNCE, PAGE_SIZE);
	if (!vblk.bounce)
		return 0;
	for (int i = 0; i < pci_count() && vblk.n < VBLK_MAX_DISKS; i++) {
		const struct pci_dev *pd = pci_get(i);
		struct vblk_disk *d = &vblk.disks[vblk.n];
		int err;

		if (pd->vendor != 0x1af4 || (pd->device != 0x1042 && pd->device != 0x1001))
			continue;
		if ((err = start_disk(d, pd)) < 0) {
			plat_printf("virtio-blk %s: not started: %s%s%s\n", d->where,
				    plat_strerror(err), d->vp.err[0] ? ": " : "", d->vp.err);
			memset(d, 0, sizeof *d);
			continue;
		}
		plat_printf("disk %d: %llu bytes, id \"%s\", %s, %d requests in flight\n", vblk.n,
			    (unsigned long long)d->capacity, d->id, d->where, d->n_slots);
		vblk.n++;
	}
	return vblk.n;
}
