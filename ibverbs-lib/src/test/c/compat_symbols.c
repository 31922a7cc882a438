/*
 * The compatibility symbols of libibverbs (rdma-core's IBVERBS_1.0 versions of compat-1_0.c, and
 * ibv_register_driver@IBVERBS_1.1), looked up by name and version as a program linked against libibverbs 1.0 binds
 * them, and called: none may crash, and each answers as a verb the library does not model does. Arguments: triples
 * NAME VERSION KIND, KIND one of int (returns EOPNOTSUPP), ptr (NULL, errno EOPNOTSUPP) and void. Prints one line per
 * symbol ("ok compat: ..." or "FAIL compat: ...") and exits 0 when every one answered so.
 *
 * Build: gcc -g compat_symbols.c -libverbs
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int failures;

int main(int argc, char **argv)
{
	void *lib = dlopen("libibverbs.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	for (int i = 1; i + 2 < argc; i += 3) {
		const char *name = argv[i], *version = argv[i + 1], *kind = argv[i + 2];
		void *f = dlvsym(lib, name, version);
		int ok = f != NULL;
		if (ok && !strcmp(kind, "int")) {
			errno = 0;
			ok = ((int (*)(void))f)() == EOPNOTSUPP;
		} else if (ok && !strcmp(kind, "ptr")) {
			errno = 0;
			ok = ((void *(*)(void))f)() == NULL && errno == EOPNOTSUPP;
		} else if (ok) {
			((void (*)(void))f)();
		}
		printf("%s compat: %s@%s (%s)\n", ok ? "ok" : "FAIL", name, version, kind);
		if (!ok)
			failures++;
	}
	return failures ? 1 : 0;
}
