/*
 * The fabric server's messages through shared memory: after HELLO the library offers the server a byte ring in a
 * memfd of this process (OP_RING: its fd and size; the server maps /proc/PID/fd/N, dev.rnicsim.ibverbs.MessageRing).
 * The server then writes into the ring the bytes it wrote to the socket (answers, WC, PLACE, DIAG, in the same
 * order), and the library reads them from memory: ibv_poll_cq on an empty CQ costs a load, not a recvfrom(2), and
 * the server's completions cost a copy, not a write(2). The socket still carries the doorbells and requests to the
 * server, and wakes this process: whoever sleeps until the server writes (a control verb waiting for its answer,
 * the completion-channel thread, a pipeline's wait in rnicsim_idle) counts itself in `waiters` first, and the server,
 * once it has published, writes one byte (a kick) on the socket when `waiters` is not 0. Each side stores before it
 * loads with a full barrier between (the tail then the waiters there, the waiters then the tail here), so a sleeper
 * is never missed. RNICSIM_RING=0 in the environment keeps everything on the socket.
 *
 * Layout: head (consumed, written here) at 0, tail (published, written by the server) at 64, waiters at 128, kicks
 * (kick bytes written by the server) at 192, the data from RING_DATA_OFFSET, RING_CAPACITY bytes; head and tail only
 * grow, and the byte at position p lies at RING_DATA_OFFSET + p % RING_CAPACITY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rnicsim_verbs.h"

#define RING_DATA_OFFSET 4096
#define RING_CAPACITY (1u << 20)

struct ring_header {
	uint64_t head;
	char pad0[56];
	uint64_t tail;
	char pad1[56];
	int32_t waiters;
	char pad2[60];
	uint64_t kicks;
};

static struct ring_header *hdr;
static char *data;
static uint64_t kicks_seen;

int rnicsim_ring_active(void)
{
	return hdr != NULL;
}

void rnicsim_ring_offer(void)
{
	const char *env = getenv("RNICSIM_RING");
	if (env && strcmp(env, "0") == 0)
		return;
	int fd = memfd_create("rnicsim-ring", MFD_CLOEXEC);
	if (fd < 0)
		return;
	size_t size = RING_DATA_OFFSET + RING_CAPACITY;
	void *m = MAP_FAILED;
	if (ftruncate(fd, size) == 0)
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return;
	}
	struct {
		uint32_t fd;
		uint32_t pad;
		uint64_t capacity;
	} req = {(uint32_t)fd, 0, RING_CAPACITY};
	/* the answer comes on the socket, the last message there; the fd stays open while the server may map it */
	if (rnicsim_rpc(OP_RING, &req, sizeof(req), NULL, 0, NULL, 0, NULL) != 0) {
		munmap(m, size);
		close(fd);
		return;
	}
	hdr = m;
	data = (char *)m + RING_DATA_OFFSET;
}

/* The socket's bytes are kicks now: read those the server counted as written (it counts each before it writes
 * it, so a kick that can be read is always counted). Called under the library's lock. */
static void drain_kicks(int sock)
{
	char junk[256];
	while (kicks_seen != __atomic_load_n(&hdr->kicks, __ATOMIC_ACQUIRE)) {
		ssize_t n = recv(sock, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0)
			rnicsim_server_gone();
		if (n < 0)
			return; /* a kick counted but not written yet: the next call reads it */
		kicks_seen += n;
	}
}

size_t rnicsim_ring_read(int sock, char *to, size_t cap)
{
	drain_kicks(sock);
	uint64_t head = hdr->head;
	uint64_t tail = __atomic_load_n(&hdr->tail, __ATOMIC_ACQUIRE);
	size_t n = tail - head < cap ? (size_t)(tail - head) : cap;
	if (n == 0)
		return 0;
	size_t at = head % RING_CAPACITY;
	size_t first = n < RING_CAPACITY - at ? n : RING_CAPACITY - at;
	memcpy(to, data + at, first);
	memcpy(to + first, data, n - first);
	__atomic_store_n(&hdr->head, head + n, __ATOMIC_RELEASE);
	return n;
}

int rnicsim_ring_pending(void)
{
	return __atomic_load_n(&hdr->tail, __ATOMIC_ACQUIRE) != __atomic_load_n(&hdr->head, __ATOMIC_RELAXED);
}

/* Sleeps until the server writes into the ring (it kicks the socket), timeout_ns at most (-1: no limit). The kicks
 * stay on the socket for the next rnicsim_ring_read to take, under the lock; with or without it held here. */
void rnicsim_ring_wait(int sock, long timeout_ns)
{
	__atomic_add_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
	if (!rnicsim_ring_pending()) {
		struct pollfd p = {.fd = sock, .events = POLLIN};
		struct timespec t = {timeout_ns / 1000000000L, timeout_ns % 1000000000L};
		int r = ppoll(&p, 1, timeout_ns < 0 ? NULL : &t, NULL);
		if (r > 0 && (p.revents & (POLLHUP | POLLERR)))
			rnicsim_server_gone();
	}
	__atomic_sub_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
}

/* The completion-channel thread: kicked at every write of the server from now on. */
void rnicsim_ring_listen(void)
{
	__atomic_add_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
}

/*
 * A ping-pong's wait that has lasted: a program that busy-polls an empty CQ with few requests in flight yields the
 * CPU at each poll (client.c, rnicsim_idle), but a yield hands the core over only to a thread the scheduler deems
 * due (EEVDF picks the eligible thread with the earliest deadline, and one that ran recently is not eligible), so two
 * spinning programs and the fabric's session threads sharing 2 cores can hold one another off for a time slice. After
 * RNICSIM_POLL_SPIN_NS of empty polls with nothing read (0: never; unset: POLL_SPIN_DEFAULT_NS) the caller sleeps
 * until the server's next write into the ring (a kick) instead, 200 us at most, and leaves the core whole.
 * `reads` is the caller's count of reads that brought something; called without the lock.
 */
#define POLL_SPIN_DEFAULT_NS 0
int rnicsim_poll_long_wait(unsigned long reads)
{
	static long spin_ns = -1;
	static __thread unsigned long last_reads;
	static __thread struct timespec since;
	if (spin_ns < 0) {
		const char *env = getenv("RNICSIM_POLL_SPIN_NS");
		spin_ns = env && *env ? atol(env) : POLL_SPIN_DEFAULT_NS;
	}
	if (spin_ns <= 0)
		return 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (reads != last_reads || since.tv_sec == 0) {
		last_reads = reads;
		since = now;
		return 0;
	}
	return (now.tv_sec - since.tv_sec) * 1000000000L + (now.tv_nsec - since.tv_nsec) >= spin_ns;
}
