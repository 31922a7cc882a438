/*
 * Completion events without the program's help: once the program has a completion channel, a thread of the library
 * reads what the fabric server sends whenever something arrives, so a CQ's event reaches its channel's fd (an
 * eventfd, readable by poll(2), select(2) and epoll(7)) while the program blocks in read() or poll() and calls no
 * verb, as the kernel signals the fd of a real channel. Programs without a channel keep the library threadless:
 * the caller that needs the server's answers reads the socket (see client.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>

#include "rnicsim_verbs.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int started;

static void *pump(void *arg)
{
	int s = rnicsim_socket();
	if (rnicsim_ring_active()) {
		/* the server kicks the socket at each of its writes into the ring from now on */
		rnicsim_ring_listen();
		for (;;) {
			/* after a fork the ring is the children's too: not while a child waits for its answer (fork.c) */
			rnicsim_lock();
			int fork_lock = rnicsim_fork_lock();
			rnicsim_drive(0);
			rnicsim_fork_unlock(fork_lock);
			rnicsim_unlock();
			rnicsim_ring_wait(s, -1);
		}
	}
	for (;;) {
		struct pollfd p = {.fd = s, .events = POLLIN};
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		/* whoever holds the lock may be reading already; this read does not wait. After a fork, not while a
		 * child of this process waits for its answer on the shared connection (fork.c) */
		rnicsim_lock();
		int fork_lock = rnicsim_fork_lock();
		rnicsim_drive(0);
		rnicsim_fork_unlock(fork_lock);
		rnicsim_unlock();
	}
	return NULL;
}

static void start(void)
{
	if (rnicsim_socket() < 0)
		return;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	/* the program's signals go to its own threads */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	started = pthread_create(&t, &a, pump, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
}

int rnicsim_events_start(void)
{
	pthread_once(&once, start);
	return started ? 0 : EAGAIN;
}
