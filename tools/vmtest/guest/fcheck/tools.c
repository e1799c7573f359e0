// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: collapse and insert through the real tools, xfs_io and
 * util-linux fallocate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fcheck.h"

/* The real tools: xfs_io fcollapse/finsert, util-linux fallocate. */

static int errno_of_message(const char *msg)
{
	static const int known[] = { EINVAL, EPERM, EBADF, EFBIG, EOPNOTSUPP,
				     ENOSPC, EIO, ETXTBSY };
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strstr(msg, strerror(known[i])))
			return known[i];
	return EIO;
}

/* Run argv with its output in @out; returns 0 when it exited 0 without a
 * message, otherwise the errno its message names (EIO if none).
 */
static int run_tool(char *const argv[], char *out, size_t size)
{
	int pfd[2], st = 0;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(pfd))
		return EIO;
	pid = fork();
	if (pid < 0)
		return EIO;
	if (!pid) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execv(argv[0], argv);
		printf("exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], out + got, size - 1 - got)) > 0)
		got += n;
	out[got] = 0;
	for (n = 0; n < got; n++)
		if (out[n] == '\n')
			out[n] = n == got - 1 ? 0 : '|';
	close(pfd[0]);
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && !got)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return EIO;
	return got ? errno_of_message(out) : EIO;
}

void case_tool(const char *tool, int mode, long long off,
	       long long len, int fsans, const char *name)
{
	char a[32], b[32], cmd[128], prog[PATH_MAX], out[1024];
	long long overhead;
	struct model m;
	int fd, answer;

	set_paths(name);
	fd = build(DENSE, 12 * unit, &m);
	if (fd < 0) {
		report(name, EIO, 0, fsans, NULL);
		return;
	}
	overhead = blocks_of(fd) - model_blocks(&m);
	close(fd);
	snprintf(a, sizeof(a), "%lld", off);
	snprintf(b, sizeof(b), "%lld", len);
	if (!strcmp(tool, "xfs_io")) {
		char *argv[] = { prog, "-c", cmd, path, NULL };

		snprintf(prog, sizeof(prog), "%s/xfs_io", tooldir);
		snprintf(cmd, sizeof(cmd), "%s %lld %lld",
			 mode == COLLAPSE ? "fcollapse" : "finsert", off, len);
		answer = run_tool(argv, out, sizeof(out));
	} else {
		char *argv[] = { prog, mode == COLLAPSE ? "--collapse-range" :
				 "--insert-range", "-o", a, "-l", b, path, NULL };

		snprintf(prog, sizeof(prog), "%s/fallocate", tooldir);
		answer = run_tool(argv, out, sizeof(out));
	}
	/* A message naming the expected errno is the tool doing its job. */
	if (answer != expect_of(0, fsans) && out[0])
		fail("%s said: %.300s", tool, out);
	model_shift(&m, answer, mode, off, len);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fail("reopen: %s", strerror(errno));
	} else {
		verify(fd, &m, overhead, 1, answer ? "after the failed call" :
						     "after the call");
		close(fd);
	}
	unlink(path);
	model_free(&m);
	report(name, answer, 0, fsans, NULL);
}
