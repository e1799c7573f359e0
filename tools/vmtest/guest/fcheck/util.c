// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: the TAP report of a case, its failure details, errno names,
 * and what the cases ask of the system under test (its filesystem type,
 * the clock).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>

#include "fcheck.h"

int ntest, nfail;
static char why[4096];		/* failure details of the current case */

void fail(const char *fmt, ...)
{
	size_t n = strlen(why);
	va_list ap;

	if (n + 4 >= sizeof(why))
		return;
	strcat(why, "# ");
	va_start(ap, fmt);
	vsnprintf(why + n + 2, sizeof(why) - n - 3, fmt, ap);
	va_end(ap);
	strncat(why, "\n", sizeof(why) - strlen(why) - 1);
}

static const struct {
	int e;
	const char *name;
} errnames[] = {
	{ 0, "OK" }, { ANSWER_SKIP, "SKIP" }, { EINVAL, "EINVAL" },
	{ EPERM, "EPERM" }, { EBADF, "EBADF" }, { EFBIG, "EFBIG" },
	{ EOPNOTSUPP, "EOPNOTSUPP" }, { ENOSPC, "ENOSPC" }, { EIO, "EIO" },
	{ ENOTTY, "ENOTTY" }, { EXDEV, "EXDEV" }, { ETXTBSY, "ETXTBSY" },
	{ EFAULT, "EFAULT" }, { ENOMEM, "ENOMEM" },
};

const char *ename(int e)
{
	static char buf[16];
	size_t i;

	for (i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].e == e)
			return errnames[i].name;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

/* ------------------------------------------------------------------ */
/* Reporting. */

/* What a filesystem supporting the flags answers, and what this one must. */
int expect_of(int vfs, int fsans)
{
	if (vfs)
		return vfs;
	return supported ? fsans : EOPNOTSUPP;
}

void report(const char *name, int answer, int vfs, int fsans,
	    const char *skip)
{
	int expect = expect_of(vfs, fsans), model = vfs ? vfs : fsans;
	int ok;

	ntest++;
	if (answer == ANSWER_SKIP) {
		printf("ok %d - %s %s answer=SKIP expect=%s model=%s # SKIP %s\n",
		       ntest, fs_name, name, ename(expect), ename(model),
		       skip ? skip : "");
		why[0] = 0;
		fflush(stdout);
		return;
	}
	if (answer != expect)
		fail("answered %s, expected %s", ename(answer), ename(expect));
	ok = !why[0];
	nfail += !ok;
	printf("%sok %d - %s %s answer=%s expect=%s model=%s\n", ok ? "" : "not ",
	       ntest, fs_name, name, ename(answer), ename(expect),
	       ename(model));
	fputs(why, stdout);
	why[0] = 0;
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Is the directory under test on a filesystem of this magic number? */
int on_fs(long magic)
{
	struct statfs sfs;

	return !statfs(dir, &sfs) && sfs.f_type == magic;
}

/* Seconds on the monotonic clock, for the cases' time limits. */
double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Is the filesystem under test tmpfs (what shmem cases need)? */
int on_tmpfs(void)
{
	return on_fs(TMPFS_MAGIC);
}
