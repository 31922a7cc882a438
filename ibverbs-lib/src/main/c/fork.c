/*
 * fork(): a child that calls verbs on a context its parent opened uses the parent's connection to the fabric, as a
 * child shares the parent's uverbs file with the kernel (rdma-core tests/test_device.py test_multi_process_alloc_dm
 * allocates device memory from five children at once). One connection cannot carry two conversations at a time, so
 * once a fork happened, each control verb of the parent and of its children holds an exclusive lock on a file
 * (flock(2)) from its request to its answer: RNICSIM_FORK_LOCK, in the run's own directory that rnicsim exec removes
 * when the run ends (the processes sharing a connection are all of one run), or without it a file beside the
 * fabric's socket, and so does the parent's events thread (events.c)
 * for each read. Completions the parent's main thread polls while a child waits for an answer are not covered: a
 * program that does both at once is outside this model.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include "rnicsim_verbs.h"

static pid_t loaded_by;
static pid_t current_pid;
static int parent_forked;

/* The library's lock is held across fork(), so that no thread of the parent is inside a conversation with the
 * server (holding the lock, and the lock file with it) when the child is made: the child inherits neither. */
static void before_fork(void)
{
	rnicsim_lock();
}

static void after_fork_in_parent(void)
{
	parent_forked = 1;
	rnicsim_unlock();
}

static void after_fork_in_child(void)
{
	rnicsim_locks_reset(); /* held by the parent's thread, whose id the child's thread does not have */
	current_pid = getpid();
}

__attribute__((constructor)) static void note_loader(void)
{
	loaded_by = current_pid = getpid();
	pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}

/* This process's id without a system call (glibc no longer caches getpid). */
pid_t rnicsim_pid(void)
{
	return current_pid;
}

int rnicsim_fork_lock(void)
{
	if (!parent_forked && getpid() == loaded_by)
		return -1;
	/* the run's own directory (rnicsim exec removes it when its program ends), else beside the socket */
	const char *run_lock = getenv("RNICSIM_FORK_LOCK");
	const char *path = getenv("RNICSIM_FABRIC_SOCKET");
	if (!run_lock && !path)
		return -1;
	char lock_path[PATH_MAX];
	if (run_lock)
		snprintf(lock_path, sizeof(lock_path), "%s", run_lock);
	else
		snprintf(lock_path, sizeof(lock_path), "%s.fork-lock", path);
	int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0)
		;
	return fd;
}

void rnicsim_fork_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the lock */
}
