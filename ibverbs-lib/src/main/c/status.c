/*
 * rnicsim-status STATUS_FILE PROGRAM [ARG...]: runs the program as its child, waits for it, and appends to
 * STATUS_FILE how it ended, as waitpid(2) tells it: "exit N" (WIFEXITED, WEXITSTATUS) or "signal N" with " core"
 * when it dumped core (WIFSIGNALED, WTERMSIG, WCOREDUMP); or "unstartable ERRNO TEXT" when execvp(3) refused it.
 * Then it ends with the program's status (128 + N for a signal, as a shell's $?).
 *
 * rnicsim exec runs programs through it because the JVM cannot tell the two apart: Process.waitFor reports a
 * program ended by signal N as 128 + N, the same number as a program's own exit(128 + N) ("exit 130" in a shell
 * script looks like SIGINT). The signals that ask a run to end (SIGINT, SIGTERM, SIGHUP, SIGQUIT) are caught and
 * dropped here, so that this process outlives its program whoever sends them (the run sends them to the program
 * itself, a terminal to its whole foreground process group); a signal ignored when this process started stays
 * ignored, for the program too, as a shell's commands inherit it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void dropped(int sig)
{
	(void)sig;
}

static void append(const char *file, const char *format, int a, const char *b)
{
	FILE *f = fopen(file, "a");
	if (!f)
		return;
	fprintf(f, format, a, b);
	fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rnicsim-status STATUS_FILE PROGRAM [ARG...]\n");
		return 2;
	}
	const int caught[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
		struct sigaction old;
		if (sigaction(caught[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = dropped; /* reset to the default in the program by execve(2) */
		sigemptyset(&sa.sa_mask);
		sigaction(caught[i], &sa, NULL);
	}
	pid_t child = fork();
	if (child < 0) {
		int e = errno;
		append(argv[1], "unstartable %d %s\n", e, strerror(e));
		return 126;
	}
	if (child == 0) {
		execvp(argv[2], argv + 2);
		int e = errno;
		append(argv[1], "unstartable %d %s\n", e, strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	int status;
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("rnicsim-status: waitpid");
			return 126;
		}
	}
	if (WIFSIGNALED(status)) {
		append(argv[1], "signal %d%s\n", WTERMSIG(status), WCOREDUMP(status) ? " core" : "");
		return 128 + WTERMSIG(status);
	}
	append(argv[1], "exit %d%s\n", WEXITSTATUS(status), "");
	return WEXITSTATUS(status);
}
