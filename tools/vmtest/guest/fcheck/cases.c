// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: the table of shift cases, each a layout, a range and what the
 * VFS and the filesystem must answer, and the runner of one of them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fcheck.h"

/* Cases driven by fallocate(2) on a file built from a layout. */

enum pre { NONE, RDONLY, RLIMIT, KEEPSIZE };

struct shift_case {
	const char *name;
	const char *layout;
	long long size_adj;	/* bytes added to the layout's size (<= 0) */
	int mode;
	long long ou, oh, lu, lh;	/* offset, length: units + half units */
	enum pre pre;
	int vfs, fsans;		/* expected: from the VFS (0: passed on), the fs */
};

/*
 * Files of many extents, so that a shift walks and rewrites an extent
 * tree of more than one level: "WHUH" over and over, a written and an
 * unwritten extent, each between holes.  300 extents: ext4 depth 1 (the
 * inode holds 4, a leaf block 340 with 4 KiB blocks), xfs a B-tree fork
 * (an inode of 512 bytes holds 21 extents in its fork, the root of a
 * B-tree 20 pointers to leaf blocks of 251).  2000 extents: ext4 depth 2
 * (more leaves than the inode's 4 index slots), xfs 8 leaf blocks under
 * the root.  make_many_extents() writes them before the cases run.
 */
#define MANY_FEW	300
#define MANY_MORE	2000
static char many_few[MANY_FEW * 2 + 1], many_more[MANY_MORE * 2 + 1];

static void make_many_extents(char *layout, int extents)
{
	int i;

	for (i = 0; i < extents * 2; i++)
		layout[i] = "WHUH"[i % 4];
	layout[i] = 0;
}

static const struct shift_case shift_cases[] = {
	/* R1: data moves, at the start, middle and end. */
	{ "collapse_dense_start", DENSE, 0, COLLAPSE, 0, 0, 2, 0, NONE, 0, 0 },
	{ "collapse_dense_middle", DENSE, 0, COLLAPSE, 5, 0, 2, 0, NONE, 0, 0 },
	{ "collapse_dense_end", DENSE, 0, COLLAPSE, 9, 0, 2, 0, NONE, 0, 0 },
	{ "insert_dense_start", DENSE, 0, INSERT, 0, 0, 2, 0, NONE, 0, 0 },
	{ "insert_dense_middle", DENSE, 0, INSERT, 6, 0, 2, 0, NONE, 0, 0 },
	{ "insert_dense_end", DENSE, 0, INSERT, 11, 0, 2, 0, NONE, 0, 0 },
	{ "collapse_sparse_start", SPARSE, 0, COLLAPSE, 0, 0, 2, 0, NONE, 0, 0 },
	{ "collapse_sparse_middle", SPARSE, 0, COLLAPSE, 4, 0, 2, 0, NONE, 0, 0 },
	{ "collapse_sparse_end", SPARSE, 0, COLLAPSE, 9, 0, 2, 0, NONE, 0, 0 },
	{ "insert_sparse_start", SPARSE, 0, INSERT, 0, 0, 2, 0, NONE, 0, 0 },
	{ "insert_sparse_middle", SPARSE, 0, INSERT, 6, 0, 2, 0, NONE, 0, 0 },
	{ "insert_sparse_end", SPARSE, 0, INSERT, 9, 0, 2, 0, NONE, 0, 0 },
	/* A size that is not a multiple of the unit. */
	{ "collapse_partial_tail", DENSE, -123, COLLAPSE, 4, 0, 2, 0, NONE, 0, 0 },
	{ "insert_partial_tail", DENSE, -123, INSERT, 11, 0, 1, 0, NONE, 0, 0 },
	/* R3: alignment. */
	{ "collapse_unaligned_offset", DENSE, 0, COLLAPSE, 1, 1, 2, 0, NONE, 0, EINVAL },
	{ "collapse_unaligned_len", DENSE, 0, COLLAPSE, 2, 0, 1, 1, NONE, 0, EINVAL },
	{ "insert_unaligned_offset", DENSE, 0, INSERT, 1, 1, 2, 0, NONE, 0, EINVAL },
	{ "insert_unaligned_len", DENSE, 0, INSERT, 2, 0, 1, 1, NONE, 0, EINVAL },
	/* R4: end of file. */
	{ "collapse_reaching_eof", DENSE, 0, COLLAPSE, 10, 0, 2, 0, NONE, 0, EINVAL },
	{ "collapse_crossing_eof", DENSE, 0, COLLAPSE, 10, 0, 4, 0, NONE, 0, EINVAL },
	{ "collapse_past_eof", DENSE, 0, COLLAPSE, 14, 0, 1, 0, NONE, 0, EINVAL },
	{ "collapse_partial_tail_eof", DENSE, -123, COLLAPSE, 10, 0, 2, 0, NONE, 0, EINVAL },
	{ "insert_at_eof", DENSE, 0, INSERT, 12, 0, 1, 0, NONE, 0, EINVAL },
	{ "insert_past_eof", DENSE, 0, INSERT, 16, 0, 1, 0, NONE, 0, EINVAL },
	/*
	 * R5: permissions, decided by the VFS.  Append-only and immutable
	 * files are the kselftest's (shift.*.append_only, shift.*.immutable,
	 * patch 0017): the same rule and check, and nothing more to see here
	 * where the VFS refuses before any filesystem code runs.  A read-only
	 * open stays: on vfat it shows the VFS's EBADF before fat's
	 * EOPNOTSUPP, where the kselftest skips.
	 */
	{ "collapse_rdonly", DENSE, 0, COLLAPSE, 2, 0, 2, 0, RDONLY, EBADF, EBADF },
	{ "insert_rdonly", DENSE, 0, INSERT, 2, 0, 2, 0, RDONLY, EBADF, EBADF },
	/* R2: KEEP_SIZE is refused by the VFS. */
	{ "collapse_keep_size", DENSE, 0, COLLAPSE, 2, 0, 2, 0, KEEPSIZE, EOPNOTSUPP, EOPNOTSUPP },
	{ "insert_keep_size", DENSE, 0, INSERT, 2, 0, 2, 0, KEEPSIZE, EOPNOTSUPP, EOPNOTSUPP },
	/* R6: RLIMIT_FSIZE (EFBIG and one SIGXFSZ), checked by the filesystem. */
	{ "insert_rlimit_fsize", DENSE, 0, INSERT, 2, 0, 2, 0, RLIMIT, 0, EFBIG },
	/* Extent trees of more than one level: across leaves, from the start. */
	{ "collapse_300_extents", many_few, 0, COLLAPSE, 301, 0, 6, 0, NONE, 0, 0 },
	{ "insert_300_extents", many_few, 0, INSERT, 302, 0, 6, 0, NONE, 0, 0 },
	{ "collapse_2000_extents", many_more, 0, COLLAPSE, 2001, 0, 10, 0, NONE, 0, 0 },
	{ "insert_2000_extents", many_more, 0, INSERT, 4, 0, 10, 0, NONE, 0, 0 },
};

static volatile sig_atomic_t sigxfsz_seen;

static void count_sigxfsz(int sig)
{
	(void)sig;
	sigxfsz_seen++;
}

/* The child's exit status when EFBIG came without exactly one SIGXFSZ. */
#define EFBIG_WITHOUT_SIGXFSZ	254

/*
 * Run fallocate in a child limited to RLIMIT_FSIZE @limit.  SIGXFSZ is
 * caught, not left to kill the child: like every growth path, a refusal
 * above the limit must both raise it once and fail with EFBIG.
 */
static int fallocate_limited(int fd, int mode, long long off, long long len,
			     long long limit)
{
	int st, e;
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (!pid) {
		struct rlimit rl;

		signal(SIGXFSZ, count_sigxfsz);
		getrlimit(RLIMIT_FSIZE, &rl);
		rl.rlim_cur = limit;
		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(255);
		e = xfallocate(fd, mode, off, len);
		if (e == EFBIG && sigxfsz_seen != 1)
			_exit(EFBIG_WITHOUT_SIGXFSZ);
		_exit(e > 250 ? 250 : e);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) == 255) {
		fail("rlimit child failed (status 0x%x)", st);
		return EIO;
	}
	if (WEXITSTATUS(st) == EFBIG_WITHOUT_SIGXFSZ) {
		fail("EFBIG without exactly one SIGXFSZ");
		return EFBIG;
	}
	return WEXITSTATUS(st);
}

static void run_shift_case(const struct shift_case *c)
{
	long long size = (long long)strlen(c->layout) * unit, off, len;
	long long overhead;
	struct model m;
	int fd, wfd = -1, answer, mode = c->mode;
	const char *p;

	for (p = c->layout; *p; p++)
		size -= (*p == '|') * unit;
	size += c->size_adj;
	off = c->ou * unit + c->oh * (unit / 2);
	len = c->lu * unit + c->lh * (unit / 2);
	set_paths(c->name);
	fd = build(c->layout, size, &m);
	if (fd < 0) {
		report(c->name, EIO, c->vfs, c->fsans, NULL);
		return;
	}
	verify(fd, &m, blocks_of(fd) - model_blocks(&m), 0, "after setup");
	overhead = blocks_of(fd) - model_blocks(&m);
	if (c->pre == NONE && !c->fsans)
		printf("# %s: %d extents before the call (FIEMAP)\n", c->name,
		       fiemap_extents(fd));

	switch (c->pre) {
	case RDONLY:
		wfd = fd;
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			fail("open O_RDONLY: %s", strerror(errno));
			fd = wfd;
			wfd = -1;
		}
		break;
	case KEEPSIZE:
		mode |= FALLOC_FL_KEEP_SIZE;
		break;
	default:
		break;
	}

	if (c->pre == RLIMIT)
		answer = fallocate_limited(fd, mode, off, len, size);
	else
		answer = xfallocate(fd, mode, off, len);

	if (!answer && expect_of(c->vfs, c->fsans))
		fail("the call succeeded where it must fail, and changed the file: size %lld -> %lld",
		     m.size, m.size + (mode == INSERT ? len : -len));
	model_shift(&m, answer, mode, off, len);
	verify(fd, &m, overhead, 1, answer ? "after the failed call" :
					     "after the call");
	if (wfd >= 0)
		close(wfd);
	close(fd);
	unlink(path);
	model_free(&m);
	report(c->name, answer, c->vfs, c->fsans, NULL);
}

/*
 * Every case of the table, in its order, once the layouts of many
 * extents are written: main() runs them before the special cases.
 */
void run_shift_cases(void)
{
	size_t i;

	make_many_extents(many_few, MANY_FEW);
	make_many_extents(many_more, MANY_MORE);
	for (i = 0; i < sizeof(shift_cases) / sizeof(shift_cases[0]); i++)
		run_shift_case(&shift_cases[i]);
}
