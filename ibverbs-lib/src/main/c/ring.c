/*
 * The fabric server's messages through shared memory: after HELLO the library offers the server a byte ring in a
 * memfd of this process (OP_RING: its fd and size; the server maps /proc/PID/fd/N, dev.rnicsim.ibverbs.MessageRing).
 * The server then writes into the ring the bytes it wrote to the socket (answers, WC, PLACE, DIAG, in the same
 * order), and the library reads them from memory: ibv_poll_cq on an empty CQ costs a load, not a recvfrom(2), and
 * the server's completions cost a copy, not a write(2). The doorbells and requests to the server take a second ring
 * the same way (below; on the socket with RNICSIM_DOORBELL_RING=0). The socket wakes this process: whoever sleeps until the server writes (a control verb waiting for its answer,
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
#include <sched.h>
#include <signal.h>
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

/* Creates a memfd of data_offset + capacity bytes, maps it and offers it to the server with op (OP_RING,
 * OP_DOORBELL_RING); the answer comes on the socket, and the fd stays open while the server may map it.
 * Returns the mapping, or NULL when anything fails (the socket carries everything then). */
static void *offer_shared(const char *name, int op, size_t data_offset, uint64_t capacity)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t size = data_offset + capacity;
	void *m = MAP_FAILED;
	if (ftruncate(fd, size) == 0)
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	struct {
		uint32_t fd;
		uint32_t pad;
		uint64_t capacity;
	} req = {(uint32_t)fd, 0, capacity};
	if (rnicsim_rpc(op, &req, sizeof(req), NULL, 0, NULL, 0, NULL) != 0) {
		munmap(m, size);
		close(fd);
		return NULL;
	}
	return m;
}

void rnicsim_ring_offer(void)
{
	const char *env = getenv("RNICSIM_RING");
	if (env && strcmp(env, "0") == 0)
		return;
	void *m = offer_shared("rnicsim-ring", OP_RING, RING_DATA_OFFSET, RING_CAPACITY);
	if (!m)
		return;
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

static struct db_header *db;
static void db_rekick(int sock);

/*
 * Sleeps until the server writes into the ring (it kicks the socket), timeout_ns at most (-1: until then, in slices
 * of RING_WAIT_SLICE_NS). The kicks stay on the socket for the next rnicsim_ring_read to take, under the lock; with
 * or without it held here. The rule that makes a kick never missed: count in `waiters` first, then look at the tail
 * once more (both seq_cst: the store before the load; the server stores the tail, full fence, loads `waiters`),
 * and sleep only when it has not moved; a write the look did not see then finds `waiters` set and kicks. Bytes
 * already there cost no system call: the caller's read takes them without a wait.
 *
 * An unlimited wait still sleeps RING_WAIT_SLICE_NS at most, then returns to its caller, which looks at the ring
 * again and waits again: a slice that ends without a kick changes nothing but the look, and recovers from a kick
 * lost anyway (by a server bug; no rule of the protocol loses one). At such a time it also kicks the server when
 * the doorbell ring holds bytes the server has not taken (the request awaited may be among them): a kick the server
 * did not need is read and dropped there. 100 ms keeps an idle completion-channel thread at 10 wake-ups a second.
 */
#define RING_WAIT_SLICE_NS 100000000L
void rnicsim_ring_wait(int sock, long timeout_ns)
{
	__atomic_add_fetch(&hdr->waiters, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&hdr->tail, __ATOMIC_SEQ_CST) == __atomic_load_n(&hdr->head, __ATOMIC_RELAXED)) {
		long ns = timeout_ns < 0 ? RING_WAIT_SLICE_NS : timeout_ns;
		struct pollfd p = {.fd = sock, .events = POLLIN};
		struct timespec t = {ns / 1000000000L, ns % 1000000000L};
		int r = ppoll(&p, 1, &t, NULL);
		if (r > 0 && (p.revents & (POLLHUP | POLLERR)))
			rnicsim_server_gone();
		if (r == 0 && timeout_ns < 0)
			db_rekick(sock);
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
 * CPU at each poll (client.c, rnicsim_idle), but a yield leaves its core only to a thread queued on that same core.
 * On 2 cores, two programs polling and the fabric's poller are three threads that want a core; when a fourth that
 * never yields (the fabric JVM's JIT compiler threads, which compile the server's SEND path during the first
 * thousands of round trips; any other process) takes one core, the fabric's thread and one program queue behind it
 * there (the kernel preempts it at a tick: 4 ms at HZ=250), while on the other core the second program polls alone,
 * its yields finding no one to hand the core to, and the load balancer moves a queued thread to a busy core only
 * every few ms. That is the ~1 % of round trips near 2 ms that ib_send_lat showed even at idle (seen with `perf
 * sched`: docs/c-programs.md, "Send latency: the 2 ms round trips at idle"). After RNICSIM_POLL_SPIN_NS of empty
 * polls with nothing read (0: never; unset: POLL_SPIN_DEFAULT_NS) the caller sleeps until the server's next write
 * into the ring (a kick) instead, 200 us at most: its core falls idle, and an idle core takes a queued thread at
 * once. 30 us is two round trips of a ping-pong that runs well (10 to 20 us), so its waits seldom sleep; measured
 * against 0, 10, 20, 50 and 100 us in the same document. `reads` is the caller's count of reads that brought
 * something; called without the lock.
 */
#define POLL_SPIN_DEFAULT_NS 30000
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

/*
 * Doorbells through shared memory: the other direction. After the message ring, the library offers a second memfd
 * (OP_DOORBELL_RING) and from the server's answer on writes into it the bytes it wrote to the socket (doorbells and
 * requests, in the same order), so ibv_post_send and ibv_post_recv cost stores into memory instead of a writev(2),
 * and the server takes them with a load instead of a read(2). The server's threads poll the ring for a while after
 * work and then sleep on the socket: a thread about to sleep sets `asleep` first, checks the ring once more, and a
 * producer that finds `asleep` set after it published (tail, full fence, then `asleep`, the reverse of the server)
 * clears it and writes one byte on the socket (a kick), so one kick wakes the server for a burst of doorbells. The
 * socket stays the way to wake the server and to learn that either side has gone.
 *
 * One producer at a time: the threads of this process and, after a fork, its children (which share the mapping and
 * the connection, fork.c) take `lock` (the holder's pid) around a write; a waiter that finds the holder gone takes
 * the lock over. A message longer than the free room goes in pieces as the server makes room, like a stream.
 *
 * Layout: head (consumed, written by the server) at 0, tail (published, written here) at 64, asleep at 128 (an int,
 * written by both), lock at 192 (an int, the holder's pid or 0), the data from DB_DATA_OFFSET, DB_CAPACITY bytes.
 */
#define DB_DATA_OFFSET 4096
#define DB_CAPACITY (1u << 20)

struct db_header {
	uint64_t head;
	char pad0[56];
	uint64_t tail;
	char pad1[56];
	int32_t asleep;
	char pad2[60];
	int32_t lock;
};

static char *db_data;
static pid_t db_pid; /* the process that offered the ring (a fork's child shares it) */

int rnicsim_doorbells_active(void)
{
	return db != NULL;
}

void rnicsim_doorbells_offer(void)
{
	const char *env = getenv("RNICSIM_DOORBELL_RING");
	if (!hdr || (env && strcmp(env, "0") == 0))
		return;
	/* the server reads the ring from its answer on */
	void *m = offer_shared("rnicsim-doorbells", OP_DOORBELL_RING, DB_DATA_OFFSET, DB_CAPACITY);
	if (!m)
		return;
	db = m;
	db_data = (char *)m + DB_DATA_OFFSET;
	db_pid = rnicsim_pid();
}

static void server_check(int sock)
{
	struct pollfd p = {.fd = sock, .events = 0};
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
		rnicsim_server_gone();
}

static void db_lock(int sock)
{
	int32_t me = (int32_t)rnicsim_pid();
	unsigned spins = 0;
	for (;;) {
		int32_t holder = 0;
		if (__atomic_compare_exchange_n(&db->lock, &holder, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		if (++spins % 4096 == 0 && kill(holder, 0) != 0 && errno == ESRCH)
			__atomic_compare_exchange_n(&db->lock, &holder, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		if (spins % 65536 == 0)
			server_check(sock);
		sched_yield();
	}
}

/* After a publish: wakes the server when none of its threads polls the ring. */
static void db_kick(int sock)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* the tail's store before the asleep's load: the server does the reverse */
	if (__atomic_load_n(&db->asleep, __ATOMIC_RELAXED) && __atomic_exchange_n(&db->asleep, 0, __ATOMIC_SEQ_CST)) {
		char k = 1;
		/* EAGAIN: the socket is full of kicks, the server is readable already */
		if (send(sock, &k, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EPIPE)
			rnicsim_server_gone();
	}
}

/* After a wait for the server that has lasted (rnicsim_ring_wait): a kick when the server has not taken all the
 * doorbell ring holds, whatever `asleep` says. The socket carries only one-byte kicks from here, so this needs no
 * lock. */
static void db_rekick(int sock)
{
	if (!db || __atomic_load_n(&db->head, __ATOMIC_ACQUIRE) == __atomic_load_n(&db->tail, __ATOMIC_ACQUIRE))
		return;
	char k = 1;
	if (send(sock, &k, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EPIPE)
		rnicsim_server_gone();
}

/* Writes a message (the library's own memory only) into the ring; called under the library's lock and send lock. */
int rnicsim_doorbells_write(int sock, const struct iovec *iov, int iovcnt)
{
	db_lock(sock);
	uint64_t tail = db->tail;
	unsigned waits = 0;
	for (int i = 0; i < iovcnt; i++) {
		const char *from = iov[i].iov_base;
		size_t left = iov[i].iov_len;
		while (left) {
			uint64_t head = __atomic_load_n(&db->head, __ATOMIC_ACQUIRE);
			size_t room = DB_CAPACITY - (size_t)(tail - head);
			if (room == 0) {
				/* full: publish what is written, make sure the server is awake, and wait for it; meanwhile take
				 * the server's messages, which it may be waiting to write into a full message ring (the caller
				 * holds the library's lock; a fork's child leaves them to its parent) */
				__atomic_store_n(&db->tail, tail, __ATOMIC_RELEASE);
				db_kick(sock);
				if (rnicsim_pid() == db_pid)
					rnicsim_drive(0);
				if (++waits % 4096 == 0)
					server_check(sock);
				sched_yield();
				continue;
			}
			size_t n = left < room ? left : room;
			size_t at = tail % DB_CAPACITY;
			size_t first = n < DB_CAPACITY - at ? n : DB_CAPACITY - at;
			memcpy(db_data + at, from, first);
			memcpy(db_data, from + first, n - first);
			tail += n;
			from += n;
			left -= n;
		}
	}
	__atomic_store_n(&db->tail, tail, __ATOMIC_RELEASE);
	__atomic_store_n(&db->lock, 0, __ATOMIC_RELEASE);
	db_kick(sock);
	return 0;
}
