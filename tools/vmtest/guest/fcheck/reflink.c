// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: a shift of a file that shares its extents with a clone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fcheck.h"

/* Reflink (where FICLONE works): a shared extent keeps its data in the
 * other file when one of them collapses or inserts.
 */
void case_reflink(int mode, int whole, const char *name)
{
	long long size = 12 * unit, off = 5 * unit, len = 2 * unit;
	long long overhead, ooverhead;
	struct model m, other;
	int fd, ofd, answer, e;

	set_paths(name);
	fd = build(DENSE, size, &m);
	if (fd < 0) {
		report(name, EIO, 0, 0, NULL);
		return;
	}
	ofd = open(path2, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (whole) {
		e = ioctl(ofd, FICLONE, fd) ? errno : 0;
	} else {
		struct file_clone_range r = {
			.src_fd = fd, .src_offset = 4 * unit,
			.src_length = 4 * unit, .dest_offset = 0,
		};

		e = ioctl(ofd, FICLONERANGE, &r) ? errno : 0;
	}
	/*
	 * EOPNOTSUPP: the filesystem has no ->remap_file_range().  Both
	 * files are regular, on one mount, and the range is aligned, so
	 * any other errno is a failure.
	 */
	if (e) {
		if (e != EOPNOTSUPP)
			fail("%s: %s", whole ? "FICLONE" : "FICLONERANGE",
			     strerror(e));
		close(ofd);
		close(fd);
		unlink(path);
		unlink(path2);
		model_free(&m);
		report(name, e == EOPNOTSUPP ? ANSWER_SKIP : EIO, 0, 0,
		       "no reflink on this filesystem: EOPNOTSUPP");
		return;
	}
	memset(&other, 0, sizeof(other));
	model_resize(&other, whole ? size : 4 * unit);
	memcpy(other.data, m.data + (whole ? 0 : 4 * unit), other.size);
	memset(other.alloc, 1, other.nunits);
	fsync(ofd);
	overhead = blocks_of(fd) - model_blocks(&m);
	ooverhead = blocks_of(ofd) - model_blocks(&other);

	/* The whole clone is changed; the partial clone's source is. */
	if (whole) {
		answer = xfallocate(ofd, mode, off, len);
		if (!answer && mode == COLLAPSE)
			model_collapse(&other, off, len);
		else if (!answer)
			model_insert(&other, off, len);
		verify(ofd, &other, ooverhead, 1, "the clone after the call");
		verify(fd, &m, overhead, 1, "the source after the call");
	} else {
		answer = xfallocate(fd, mode, off, len);
		model_shift(&m, answer, mode, off, len);
		verify(fd, &m, overhead, 1, "the source after the call");
		verify(ofd, &other, ooverhead, 1, "the clone after the call");
	}
	/* Writing to one must not show in the other. */
	if (!answer) {
		unsigned char w[8];

		fill(w, TAG_MMAP, 0, 8);
		pwrite_all(fd, w, 8, unit);
		memcpy(m.data + unit, w, 8);
		fsync(fd);
		verify(fd, &m, 0, 0, "the source after a write");
		verify(ofd, &other, 0, 0, "the clone after a write to the source");
	}
	close(ofd);
	close(fd);
	unlink(path);
	unlink(path2);
	model_free(&m);
	model_free(&other);
	report(name, answer, 0, 0, NULL);
}
