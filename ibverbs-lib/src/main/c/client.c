/*
 * The connection to the fabric server (RNICSIM_FABRIC_SOCKET, set by `rnicsim exec`).
 *
 * No thread of its own: whoever needs something from the server drives the connection under the mutex (a control
 * verb waits for its answer, ibv_poll_cq reads what has arrived without blocking, ibv_get_cq_event blocks). On a
 * small machine where the program busy-polls its CQ this keeps completions a load from shared memory away (ring.c;
 * a system call with RNICSIM_RING=0), with no thread to wake.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rnicsim_verbs.h"
#include "wire_tm.h"

static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;
static int sock = -1;
static int connect_errno;
static int strict_mode;
static uint32_t next_seq = 1;
static struct wire_device *devices;
static unsigned device_count;

/* the answer being waited for */
static uint32_t want_seq;
static int got_answer;
static int32_t answer_err;
static void *answer_buf;
static size_t answer_cap, answer_len;

/* strict mode: the model's reason for the errno of the answer being waited for (REFUSAL), reported with the call site */
static char refusal[2048];
static size_t refusal_len;

/* bytes read and not yet parsed */
static char *rbuf;
static size_t rbuf_cap, rbuf_len;

/* Sends posted and not yet retired by the device, on every QP: how deep the pipeline to the server is (read without
 * the lock, as a hint for rnicsim_idle). */
static long sends_due;
/* Reads of the server's messages that brought something: rnicsim_idle's sign that the wait has been answered. */
static unsigned long reads;

/* handle -> object, for completions */
static struct sim_cq **cqs;
static unsigned cqs_cap;
static struct sim_qp **qps;
static unsigned qps_cap;

void rnicsim_lock(void) { pthread_mutex_lock(&lock); }
void rnicsim_unlock(void) { pthread_mutex_unlock(&lock); }

/* In the child of a fork (fork.c): the only thread left takes the locks afresh (the parent's holder is gone). */
void rnicsim_locks_reset(void)
{
	pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, fresh_send = PTHREAD_MUTEX_INITIALIZER;
	lock = fresh;
	send_lock = fresh_send;
}
int rnicsim_strict(void) { return strict_mode; }
int rnicsim_socket(void) { return sock; }

static void grow(void ***arr, unsigned *cap, unsigned need)
{
	if (need < *cap)
		return;
	unsigned n = *cap ? *cap : 64;
	while (n <= need)
		n *= 2;
	void **a = realloc(*arr, n * sizeof(void *));
	if (!a)
		abort();
	memset(a + *cap, 0, (n - *cap) * sizeof(void *));
	*arr = a;
	*cap = n;
}

void rnicsim_register_cq(struct sim_cq *cq)
{
	rnicsim_lock();
	grow((void ***)&cqs, &cqs_cap, cq->handle);
	cqs[cq->handle] = cq;
	rnicsim_unlock();
}

void rnicsim_unregister_cq(struct sim_cq *cq)
{
	rnicsim_lock();
	if (cq->handle < cqs_cap)
		cqs[cq->handle] = NULL;
	rnicsim_unlock();
}

struct sim_cq *rnicsim_cq_of(uint32_t handle)
{
	return handle < cqs_cap ? cqs[handle] : NULL;
}

void rnicsim_register_qp(struct sim_qp *qp)
{
	rnicsim_lock();
	grow((void ***)&qps, &qps_cap, qp->handle);
	qps[qp->handle] = qp;
	rnicsim_unlock();
}

void rnicsim_unregister_qp(struct sim_qp *qp)
{
	rnicsim_lock();
	if (qp->handle < qps_cap)
		qps[qp->handle] = NULL;
	rnicsim_unlock();
}

static int write_all(const struct iovec *iov_in, int iovcnt)
{
	struct iovec iov[2 * CARRY_MAX_SEGS + 2];
	if (iovcnt > 2 * CARRY_MAX_SEGS + 2)
		return EINVAL;
	memcpy(iov, iov_in, iovcnt * sizeof(*iov));
	int i = 0;
	pthread_mutex_lock(&send_lock);
	if (rnicsim_doorbells_active()) {
		int e = rnicsim_doorbells_write(sock, iov, iovcnt);
		pthread_mutex_unlock(&send_lock);
		return e;
	}
	while (i < iovcnt) {
		ssize_t n = writev(sock, iov + i, iovcnt - i);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			pthread_mutex_unlock(&send_lock);
			return e;
		}
		while (i < iovcnt && (size_t)n >= iov[i].iov_len) {
			n -= iov[i].iov_len;
			i++;
		}
		if (i < iovcnt) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= n;
		}
	}
	pthread_mutex_unlock(&send_lock);
	return 0;
}

static void handle_message(const struct wire_hdr *h, const char *payload, size_t len)
{
	if (h->op == OP_WC) {
		const struct wire_post *p = (const struct wire_post *)payload;
		const struct wire_wc *w = (const struct wire_wc *)(payload + sizeof(*p));
		for (uint32_t i = 0; i < p->count; i++) {
			if (w[i].qp < qps_cap && qps[w[i].qp] && (w[i].opcode < IBV_WC_RECV) &&
			    qps[w[i].qp]->outstanding_sends > 0)
				qps[w[i].qp]->outstanding_sends--;
			if (w[i].qp < qps_cap && qps[w[i].qp] && w[i].opcode >= IBV_WC_RECV &&
			    qps[w[i].qp]->outstanding_recvs > 0)
				qps[w[i].qp]->outstanding_recvs--;
			if (w[i].qp < qps_cap && qps[w[i].qp] && w[i].opcode >= IBV_WC_RECV && qps[w[i].qp]->qpx.qp_base.srq)
				rnicsim_srq_consumed(qps[w[i].qp]->qpx.qp_base.srq);
			if (w[i].opcode < IBV_WC_RECV && __atomic_load_n(&sends_due, __ATOMIC_RELAXED) > 0)
				__atomic_fetch_sub(&sends_due, 1, __ATOMIC_RELAXED);
			if (!(w[i].flags & WIRE_WC_HIDDEN) && w[i].cq < cqs_cap && cqs[w[i].cq])
				rnicsim_cq_push(cqs[w[i].cq], &w[i]);
		}
	} else if (h->op == OP_TM_WC) {
		rnicsim_tm_wcs(payload, len);
	} else if (h->op == OP_PLACE) {
		rnicsim_place(payload, len);
	} else if (h->op == OP_REFUSAL) {
		refusal_len = len < sizeof(refusal) - 1 ? len : sizeof(refusal) - 1;
		memcpy(refusal, payload, refusal_len);
		refusal[refusal_len] = 0;
	} else if (h->op == OP_DIAG) {
		fprintf(stderr, "%.*s", (int)len, payload);
		fflush(stderr);
	} else if (h->seq == want_seq) {
		answer_err = h->err;
		answer_len = len < answer_cap ? len : answer_cap;
		if (answer_buf && answer_len)
			memcpy(answer_buf, payload, answer_len);
		got_answer = 1;
	}
}

void rnicsim_server_gone(void)
{
	fprintf(stderr, "rnicsim: the fabric server closed the connection; exiting\n");
	_exit(70);
}

/* Reads what the server sent (waiting for something when block) and handles each whole message. */
void rnicsim_drive(int block)
{
	if (sock < 0)
		return;
	if (rbuf_cap - rbuf_len < 65536) {
		size_t n = rbuf_cap ? rbuf_cap * 2 : 1 << 20;
		rbuf = realloc(rbuf, n);
		if (!rbuf)
			abort();
		rbuf_cap = n;
	}
	ssize_t n;
	if (rnicsim_ring_active()) {
		/* the server's messages come through shared memory (ring.c) */
		while ((n = rnicsim_ring_read(sock, rbuf + rbuf_len, rbuf_cap - rbuf_len)) == 0 && block)
			rnicsim_ring_wait(sock, -1);
		if (n == 0)
			return;
	} else {
		n = recv(sock, rbuf + rbuf_len, rbuf_cap - rbuf_len, block ? 0 : MSG_DONTWAIT);
		if (n == 0)
			rnicsim_server_gone();
		if (n < 0)
			return;
	}
	rbuf_len += n;
	__atomic_fetch_add(&reads, 1, __ATOMIC_RELAXED);
	size_t off = 0;
	while (rbuf_len - off >= sizeof(struct wire_hdr)) {
		struct wire_hdr h;
		memcpy(&h, rbuf + off, sizeof(h));
		if (rbuf_len - off < h.len)
			break;
		handle_message(&h, rbuf + off + sizeof(h), h.len - sizeof(h));
		off += h.len;
	}
	memmove(rbuf, rbuf + off, rbuf_len - off);
	rbuf_len -= off;
}

void rnicsim_sends_posted(unsigned count)
{
	__atomic_fetch_add(&sends_due, (long)count, __ATOMIC_RELAXED);
}

/*
 * After a poll found nothing, called without the lock. With a deep pipeline (IDLE_SLEEP_DEPTH sends or more not yet
 * retired: a bandwidth test) the server has work queued and needs a core: the caller watches the socket for
 * IDLE_SPIN_NS, then sleeps until the server writes, for IDLE_WAIT_NS at most, so on a small machine the program no
 * longer takes the core from the server that produces its completions. With one or two requests in flight (a
 * latency test, a ping-pong) the answer is close: the caller yields and polls again, which keeps the round trip short,
 * until it has waited RNICSIM_POLL_SPIN_NS (30 us) with nothing read: then it sleeps until the server's kick
 * (ring.c, rnicsim_poll_long_wait). Measured with perftest on 2 cores: docs/c-programs.md, "Speed".
 */
#define IDLE_SLEEP_DEPTH 4
#define IDLE_SPIN_NS 20000
#define IDLE_WAIT_NS 200000
void rnicsim_idle(void)
{
	if (sock < 0 || __atomic_load_n(&sends_due, __ATOMIC_RELAXED) < IDLE_SLEEP_DEPTH) {
		if (rnicsim_ring_active() && rnicsim_poll_long_wait(__atomic_load_n(&reads, __ATOMIC_RELAXED)))
			rnicsim_ring_wait(sock, IDLE_WAIT_NS);
		else
			sched_yield();
		return;
	}
	struct pollfd p = {.fd = sock, .events = POLLIN};
	struct timespec start, now;
	int ring = rnicsim_ring_active();
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		if (ring ? rnicsim_ring_pending() : poll(&p, 1, 0) > 0)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < IDLE_SPIN_NS);
	if (ring) {
		rnicsim_ring_wait(sock, IDLE_WAIT_NS);
		return;
	}
	struct timespec t = {0, IDLE_WAIT_NS};
	ppoll(&p, 1, &t, NULL);
}

int rnicsim_rpc(uint16_t op, const void *req, size_t req_len, const void *extra, size_t extra_len, void *resp,
		size_t resp_cap, size_t *resp_len)
{
	int e = rnicsim_connect();
	if (e)
		return e;
	rnicsim_lock();
	int fork_lock = rnicsim_fork_lock();
	uint32_t seq = next_seq++;
	struct wire_hdr h = {.len = sizeof(h) + req_len + extra_len, .op = op, .seq = seq};
	struct iovec iov[3] = {{&h, sizeof(h)}, {(void *)req, req_len}, {(void *)extra, extra_len}};
	e = write_all(iov, extra_len ? 3 : 2);
	if (e) {
		rnicsim_fork_unlock(fork_lock);
		rnicsim_unlock();
		return e;
	}
	uint32_t saved_seq = want_seq;
	void *saved_buf = answer_buf;
	size_t saved_cap = answer_cap;
	want_seq = seq;
	got_answer = 0;
	answer_buf = resp;
	answer_cap = resp_cap;
	refusal_len = 0;
	while (!got_answer)
		rnicsim_drive(1);
	e = answer_err;
	if (e && refusal_len) {
		char *nl = strchr(refusal, '\n');
		if (nl) {
			*nl = 0;
			rnicsim_report_refusal(refusal, e, nl + 1);
		}
		refusal_len = 0;
	}
	if (resp_len)
		*resp_len = answer_len;
	want_seq = saved_seq;
	answer_buf = saved_buf;
	answer_cap = saved_cap;
	got_answer = 0;
	rnicsim_fork_unlock(fork_lock);
	rnicsim_unlock();
	return e;
}

int rnicsim_doorbell(uint16_t op, const struct iovec *iov, int iovcnt)
{
	size_t len = 0;
	for (int i = 1; i < iovcnt; i++)
		len += iov[i].iov_len;
	struct wire_hdr *h = iov[0].iov_base;
	h->len = sizeof(*h) + len;
	h->op = op;
	h->seq = 0;
	h->err = 0;
	return write_all(iov, iovcnt);
}

static int has_cap_ipc_lock(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int held = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long caps;
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			held = (caps >> 14) & 1; /* CAP_IPC_LOCK is capability 14 */
	}
	fclose(f);
	return held;
}

int rnicsim_connect(void)
{
	rnicsim_lock();
	if (sock >= 0 || connect_errno) {
		int e = connect_errno;
		rnicsim_unlock();
		return e;
	}
	const char *path = getenv("RNICSIM_FABRIC_SOCKET");
	strict_mode = getenv("RNICSIM_STRICT") && strcmp(getenv("RNICSIM_STRICT"), "0") != 0;
	if (!path || !*path) {
		connect_errno = ENODEV;
		rnicsim_unlock();
		return ENODEV;
	}
	/* The fabric server moves the bytes of RDMA READ and WRITE with process_vm_readv/writev, as a NIC does DMA
	 * without the program's help; under Yama's ptrace_scope 1 that needs this process's consent. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strncpy(a.sun_path, path, sizeof(a.sun_path) - 1);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		connect_errno = errno ? errno : ENODEV;
		fprintf(stderr, "rnicsim: cannot reach the fabric server at %s: %s\n", path, strerror(connect_errno));
		if (s >= 0)
			close(s);
		rnicsim_unlock();
		return connect_errno;
	}
	sock = s;
	/* a doorbell that carries bytes must go in one socket buffer, all or nothing (carry.c): room for many */
	int sndbuf = 1 << 20;
	setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	struct rlimit rl = {0, 0};
	getrlimit(RLIMIT_MEMLOCK, &rl);
	struct wire_hello hello = {.version = RNICSIM_WIRE_VERSION,
				   .pid = (uint32_t)getpid(),
				   .memlock_cur = rl.rlim_cur,
				   .memlock_max = rl.rlim_max,
				   .cap_ipc_lock = has_cap_ipc_lock(),
				   .strict = strict_mode};
	char answer[8 + 64 * sizeof(struct wire_device)];
	size_t len = 0;
	rnicsim_unlock();
	int e = rnicsim_rpc(OP_HELLO, &hello, sizeof(hello), NULL, 0, answer, sizeof(answer), &len);
	rnicsim_lock();
	if (e) {
		connect_errno = e;
		close(sock);
		sock = -1;
	} else {
		uint32_t n;
		memcpy(&n, answer, 4);
		devices = calloc(n ? n : 1, sizeof(*devices));
		memcpy(devices, answer + 8, n * sizeof(*devices));
		device_count = n;
		rnicsim_ring_offer();
		rnicsim_doorbells_offer();
	}
	rnicsim_unlock();
	return e;
}

struct wire_device *rnicsim_devices(unsigned *count)
{
	*count = device_count;
	return devices;
}

__attribute__((destructor)) static void report_leaks(void)
{
	if (sock < 0 || !strict_mode)
		return;
	char text[65536];
	size_t len = 0;
	if (rnicsim_rpc(OP_LEAKS, NULL, 0, NULL, 0, text, sizeof(text), &len) == 0 && len > 0)
		fprintf(stderr, "%.*s", (int)len, text);
}
