/*
 * Call sites for strict mode: the frames of the program that called a verb, from backtrace(3), past the frames
 * of this library. Names appear for exported functions (link the program with -rdynamic); otherwise the
 * object and offset, which addr2line -e PROGRAM turns into a file and line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
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
