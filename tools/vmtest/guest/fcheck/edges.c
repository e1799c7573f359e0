// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: cases at the edges of a file: a unit of several blocks,
 * s_maxbytes, a last byte far away, and stale blocks a grown file must
 * not show.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcheck.h"

/* The unit is a cluster made of several blocks (ext4 bigalloc): a
 * block-aligned range that is not cluster-aligned is EINVAL.
 */
void case_block_not_unit(int mode, const char *name)
{
	struct model m;
	long long overhead;
	int fd, answer;

	if (blksz >= unit) {
		report(name, ANSWER_SKIP, 0, EINVAL,
		       "the allocation unit is one block");
		return;
	}
	set_paths(name);
	fd = build(DENSE, 12 * unit, &m);
	if (fd < 0) {
		report(name, EIO, 0, EINVAL, NULL);
		return;
	}
	overhead = blocks_of(fd) - model_blocks(&m);
	answer = xfallocate(fd, mode, 2 * unit + blksz, unit);
	if (!answer)
		fail("a block-aligned, unit-unaligned range was accepted");
	else
		verify(fd, &m, overhead, 1, "after the failed call");
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, 0, EINVAL, NULL);
}

/* ------------------------------------------------------------------ */
/* s_maxbytes, found with lseek(SEEK_SET), which refuses offsets past it,
 * and confirmed with ftruncate where the filesystem has sparse files.
 */
static long long find_maxbytes(void)
{
	long long lo = 0, hi = LLONG_MAX, mid;
	int fd;

	set_paths("maxbytes_probe");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2 + 1;
		if (lseek(fd, mid, SEEK_SET) == mid)
			lo = mid;
		else
			hi = mid - 1;
	}
	if (supported) {
		if (ftruncate(fd, lo))
			fail("ftruncate to s_maxbytes %lld: %s", lo,
			     strerror(errno));
		if (lo < LLONG_MAX && (!ftruncate(fd, lo + 1) || errno != EFBIG))
			fail("ftruncate past s_maxbytes %lld did not fail with EFBIG",
			     lo);
	}
	close(fd);
	unlink(path);
	return lo;
}

/*
 * @vfs_level: the range itself ends past s_maxbytes (the VFS refuses it);
 * otherwise the range fits but the grown file would not (the filesystem
 * must refuse it).
 */
void case_maxbytes(int mode, int vfs_level, const char *name)
{
	long long maxb = find_maxbytes(), off, len, overhead;
	int vfs = vfs_level ? EFBIG : 0, fd, answer;
	struct model m;

	if (maxb <= 0) {
		fail("cannot find s_maxbytes");
		report(name, EIO, vfs, EFBIG, NULL);
		return;
	}
	set_paths(name);
	fd = build(DENSE, 12 * unit, &m);
	if (fd < 0) {
		report(name, EIO, vfs, EFBIG, NULL);
		return;
	}
	overhead = blocks_of(fd) - model_blocks(&m);
	if (vfs_level) {
		off = unit;
		len = (maxb / unit) * unit;	/* off + len > maxb */
	} else {
		off = 0;
		len = (maxb / unit) * unit;	/* size + len > maxb >= len */
	}
	printf("# %s: s_maxbytes %lld, offset %lld, len %lld\n", name, maxb,
	       off, len);
	answer = xfallocate(fd, mode, off, len);
	if (!answer && mode == INSERT)
		model_insert(&m, off, len);
	if (answer || mode != INSERT)
		verify(fd, &m, overhead, 1, answer ? "after the failed call" :
						     "after the call");
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, vfs, EFBIG, NULL);
}

/*
 * A one-unit insert at 0 into a sparse file whose last byte is far away
 * (2^52 where s_maxbytes allows, half of s_maxbytes elsewhere) costs what
 * the file holds, not its size: it must return within FAR_SECONDS, with
 * the data in place.  A shift walking every index would run for years
 * holding the inode's locks; SIGALRM then ends fcheck and fails the row.
 */
#define FAR_SECONDS 5

void case_far_sparse(int mode, const char *name)
{
	long long maxb = find_maxbytes(), far = 1LL << 52, size;
	unsigned char *buf = malloc(unit), *got = malloc(unit), last = 0x5a;
	double start, took;
	int fd, answer;

	if (!buf || !got || maxb <= 0) {
		fail("no memory, or cannot find s_maxbytes");
		report(name, EIO, 0, 0, NULL);
		goto out;
	}
	if (on_fs(F2FS_SUPER_MAGIC)) {
		report(name, ANSWER_SKIP, 0, 0,
		       "f2fs_insert_range() exchanges blocks from EOF down in steps of len: its cost follows the size");
		goto out;
	}
	/* Without the flags there is nothing to time: stay small. */
	if (!supported)
		far = 16 * unit;
	else if (maxb < far + 2 * unit)
		far = (maxb / 2) / unit * unit;
	set_paths(name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	fill(buf, 0xfa, 0, unit);
	if (fd < 0 || pwrite_all(fd, buf, unit, 0) ||
	    pwrite_all(fd, &last, 1, far)) {
		fail("cannot build a file with a byte at %lld: %s", far,
		     strerror(errno));
		report(name, EIO, 0, 0, NULL);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	alarm(60 * FAR_SECONDS);
	start = now();
	answer = xfallocate(fd, mode, 0, unit);
	took = now() - start;
	alarm(0);
	printf("# %s: last byte at %lld, insert took %.3f s\n", name, far,
	       took);
	if (!answer) {
		size = lseek(fd, 0, SEEK_END);
		if (size != far + 1 + unit)
			fail("size %lld, expected %lld", size, far + 1 + unit);
		if (took > FAR_SECONDS)
			fail("took %.1f s, more than %d s", took, FAR_SECONDS);
		if (pread(fd, got, unit, unit) != unit || memcmp(got, buf, unit))
			fail("the first unit did not move to %lld", unit);
		if (pread(fd, got, 1, far + unit) != 1 || got[0] != last)
			fail("the last byte did not move to %lld", far + unit);
		memset(buf, 0, unit);
		if (pread(fd, got, unit, 0) != unit || memcmp(got, buf, unit))
			fail("the inserted unit does not read as zeros");
	}
	close(fd);
	unlink(path);
	report(name, answer, 0, 0, NULL);
out:
	free(buf);
	free(got);
}

/* ------------------------------------------------------------------ */
/*
 * R8: blocks freed by another file, which held a secret, and preallocated
 * past EOF with KEEP_SIZE must read zero whenever the file grows over them
 * after a collapse or insert: by truncate, by a write past EOF, and by an
 * insert near the end.
 */
void case_stale(int mode, const char *name)
{
	long long size = 8 * unit, pre = 24 * unit, off = 2 * unit;
	long long len = 2 * unit, eof;
	unsigned char *secret = malloc(pre), *buf = malloc(unit);
	struct model m;
	int fd, sfd, answer, e;

	set_paths(name);
	/* The secret: written, synced, then freed. */
	sfd = open(path2, O_RDWR | O_CREAT | O_TRUNC, 0644);
	fill(secret, TAG_SECRET, 0, pre);
	if (sfd < 0 || pwrite_all(sfd, secret, pre, 0) || fsync(sfd)) {
		fail("setup: writing the secret file failed");
		report(name, EIO, 0, 0, NULL);
		goto out_free;
	}
	close(sfd);
	unlink(path2);
	sync();

	fd = build("WWWWWWWW", size, &m);
	if (fd < 0) {
		report(name, EIO, 0, 0, NULL);
		goto out_free;
	}
	e = xfallocate(fd, FALLOC_FL_KEEP_SIZE, size, pre);
	if (e && e != EOPNOTSUPP)
		fail("setup: KEEP_SIZE preallocation: %s", ename(e));
	fsync(fd);

	answer = xfallocate(fd, mode, off, len);
	model_shift(&m, answer, mode, off, len);
	verify(fd, &m, 0, 0, "after the call");

	/* Grow by truncate: zeros. */
	eof = m.size;
	model_resize(&m, eof + 3 * unit);
	if (ftruncate(fd, m.size))
		fail("truncate up: %s", strerror(errno));
	verify(fd, &m, 0, 0, "after truncate up");

	/* Grow by a write past EOF: the gap reads zero. */
	eof = m.size;
	fill(buf, TAG_DATA, 0x100000, unit);
	model_resize(&m, eof + 3 * unit);
	memcpy(m.data + eof + 2 * unit, buf, unit);
	e = pwrite_all(fd, buf, unit, eof + 2 * unit);
	if (e)
		fail("pwrite past EOF: %s", ename(e));
	verify(fd, &m, 0, 0, "after pwrite past EOF");

	/* Grow by an insert in the last unit. */
	eof = m.size;
	e = xfallocate(fd, INSERT, eof - unit, 2 * unit);
	if (!e)
		model_insert(&m, eof - unit, 2 * unit);
	else if (supported)
		fail("insert near the end: %s", ename(e));
	fsync(fd);
	verify(fd, &m, 0, 0, "after insert near the end");
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, 0, 0, NULL);
out_free:
	free(secret);
	free(buf);
}
