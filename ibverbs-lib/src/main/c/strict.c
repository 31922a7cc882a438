/*
 * Call sites for strict mode: the frames of the program that called a verb, from backtrace(3), past the frames
 * of this library. Names appear for exported functions (link the program with -rdynamic); otherwise the
 * object and offset, which addr2line -e PROGRAM turns into a file and line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rnicsim_verbs.h"

void rnicsim_callsite(const char *verb, char *out, size_t cap)
{
	void *frames[16];
	int n = backtrace(frames, 16);
	Dl_info self;
	size_t off = snprintf(out, cap, "%s", verb);
	if (!dladdr((void *)rnicsim_callsite, &self))
		self.dli_fbase = NULL;
	char **names = backtrace_symbols(frames, n);
	int shown = 0;
	for (int i = 0; i < n && shown < 3 && off < cap; i++) {
		Dl_info info;
		if (dladdr(frames[i], &info) && info.dli_fbase == self.dli_fbase)
			continue; /* a frame of this library */
		off += snprintf(out + off, cap - off, "%s%s", shown ? " < " : " called from ",
				names ? names[i] : "?");
		shown++;
	}
	free(names);
}

/* Strict mode's report of a verb refused with an errno: the simulator's reason (the rule, the objects, the fix: from
 * the library's own post checks, or from the model through the server's REFUSAL message) and the call site, once per
 * refusal. A real libibverbs says nothing beyond the errno; strict mode is where a program asks for more. */
void rnicsim_report_refusal(const char *verb, int err, const char *why)
{
	char site[CALLSITE_BYTES];
	rnicsim_callsite(verb, site, sizeof(site));
	const char *name = strerrorname_np(err);
	fprintf(stderr, "rnicsim strict: %s refused with %s (errno %d): %s\n  %s\n", verb, name ? name : "an errno", err,
		why, site);
	fflush(stderr);
}

/* A refusal of this library's own checks, explained in strict mode as the model's refusals are: the rule, the value
 * and the fix, under the verb the program called, with its call site. */
int rnicsim_refuse(const char *verb, int err, const char *fmt, ...)
{
	if (!rnicsim_strict())
		return err;
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	rnicsim_report_refusal(verb, err, why);
	return err;
}

/* ibv_post_send in strict mode: its call site goes to the server as a doorbell of its own, just before the post's,
 * so that the device records where the requests were posted and a failure's diagnosis names that line of the
 * program. Without strict mode ibv_post_send is rnicsim_post_send itself and pays for none of this. */
int rnicsim_post_send_sited(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	char site[CALLSITE_BYTES];
	rnicsim_callsite("ibv_post_send", site, sizeof(site));
	struct wire_hdr h;
	struct wire_post at = {.qp = ((struct sim_qp *)qp)->handle, .count = 0};
	struct iovec iov[3] = {{&h, sizeof(h)}, {&at, sizeof(at)}, {site, strlen(site)}};
	rnicsim_lock();
	rnicsim_doorbell(OP_POST_SITE, iov, 3);
	rnicsim_unlock();
	return rnicsim_post_send(qp, wr, bad_wr);
}
