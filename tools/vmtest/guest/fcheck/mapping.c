// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: what the page cache and the mappings of a file see of a shift:
 * a shared mapping, the cache kept across it, and userfaultfd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fcheck.h"
#include "../sectors_read.h"

/*
 * Build the file of @layout and @size, map it shared with @prot and read the
 * mapping through, so that every page is cached and mapped.  @overhead gets
 * the blocks the filesystem spends beyond the model's.  NULL (the case
 * reported) when the file cannot be built or mapped.
 */
unsigned char *build_mapped(const char *name, const char *layout,
			    long long size, int prot, struct model *m,
			    int *fd, long long *overhead)
{
	volatile unsigned char sink = 0;
	unsigned char *map;
	long long i;

	set_paths(name);
	*fd = build(layout, size, m);
	if (*fd < 0) {
		report(name, EIO, 0, 0, NULL);
		return NULL;
	}
	*overhead = blocks_of(*fd) - model_blocks(m);
	map = mmap(NULL, size, prot, MAP_SHARED, *fd, 0);
	if (map == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		close(*fd);
		report(name, EIO, 0, 0, NULL);
		return NULL;
	}
	for (i = 0; i < size; i += 512)
		sink += map[i];
	return map;
}

/* R7: a shared mapping taken (and dirtied) before the call sees the new
 * contents after it.
 */
void case_mmap(int mode, const char *name)
{
	long long size = 12 * unit, off = 2 * unit, len = 2 * unit, i, n;
	unsigned char *map;
	struct model m;
	long long overhead;
	int fd, answer;

	map = build_mapped(name, DENSE, size, PROT_READ | PROT_WRITE, &m, &fd,
			   &overhead);
	if (!map)
		return;
	/* Dirty a word in the first and the last unit through the mapping. */
	for (i = 0; i < 8; i++) {
		map[i + 8] = pat(TAG_MMAP, i + 8);
		m.data[i + 8] = map[i + 8];
		map[size - unit + 64 + i] = pat(TAG_MMAP, size - unit + 64 + i);
		m.data[size - unit + 64 + i] = map[size - unit + 64 + i];
	}
	answer = xfallocate(fd, mode, off, len);
	model_shift(&m, answer, mode, off, len);
	n = m.size < size ? m.size : size;
	for (i = 0; i < n; i++) {
		/*
		 * Not the inserted hole: a read fault there allocates a page
		 * on tmpfs, whose page cache is the file, and st_blocks would
		 * count it.  verify() reads the hole with pread().
		 */
		if (!answer && mode == INSERT && i >= off && i < off + len)
			continue;
		if (map[i] != m.data[i]) {
			fail("mapping: byte %lld is 0x%02x, expected 0x%02x",
			     i, map[i], m.data[i]);
			break;
		}
	}
	munmap(map, size);
	verify(fd, &m, overhead, 1, "after the call");
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, 0, 0, NULL);
}

/*
 * A file of @size bytes written in one run, cached and read through a
 * shared mapping with @prot: few extents, so that the extent tree of ext4
 * fits in its inode before and after a shift and st_blocks counts the
 * data alone.  NULL if it cannot be built (the case reported).
 */
unsigned char *build_written(const char *name, long long size,
			     int prot, struct model *m, int *fd,
			     long long *overhead)
{
	char *layout = malloc(size / unit + 1);
	unsigned char *map;

	if (!layout) {
		report(name, EIO, 0, 0, NULL);
		return NULL;
	}
	memset(layout, 'W', size / unit);
	layout[size / unit] = 0;
	map = build_mapped(name, layout, size, prot, m, fd, overhead);
	free(layout);
	return map;
}

/*
 * The page cache past the range survives the shift, moved with the data:
 * ext4 and xfs move it when the range is page-aligned, tmpfs always (its
 * cache is the file).  Afterwards mincore() finds every page of the file
 * cached but those of the hole an insert opens, and reading the file back
 * reads no sector from the disk.  A filesystem that drops its cache skips,
 * saying how much it dropped; skips.txt must declare it.
 */
void case_cache_kept(int mode, const char *name)
{
	/* Whole pages and units: a shift of part of a page drops the cache. */
	long long pg = sysconf(_SC_PAGESIZE), step = unit > pg ? unit : pg;
	long long size = 64 * step, off = 8 * step, len = 4 * step;
	long long pages, cached = 0, want = 0;
	long long before, after, overhead, i;
	unsigned char *map, *resident = NULL;
	const char *skip = NULL;
	char why_skip[128];
	struct model m;
	int fd, answer;

	map = build_written(name, size, PROT_READ, &m, &fd, &overhead);
	if (!map)
		return;
	munmap(map, size);
	answer = xfallocate(fd, mode, off, len);
	model_shift(&m, answer, mode, off, len);
	if (answer)
		goto out;

	pages = (m.size + pg - 1) / pg;
	resident = calloc(pages, 1);
	map = mmap(NULL, m.size, PROT_READ, MAP_SHARED, fd, 0);
	if (!resident || map == MAP_FAILED || mincore(map, m.size, resident)) {
		fail("mincore: %s", strerror(errno));
		answer = EIO;
		goto out;
	}
	munmap(map, m.size);
	for (i = 0; i < pages; i++) {
		if (mode == INSERT && i >= off / pg && i < (off + len) / pg)
			continue;
		want++;
		cached += resident[i] & 1;
	}
	if (cached < want) {
		snprintf(why_skip, sizeof(why_skip),
			 "the shift dropped %lld of the %lld cached pages",
			 want - cached, want);
		skip = why_skip;
		answer = ANSWER_SKIP;
		goto out;
	}
	before = sectors_read(fd);
	verify(fd, &m, overhead, 1, "after the call");
	after = sectors_read(fd);
	if (after != before)
		fail("reading the shifted file back read %lld sectors from the disk",
		     after - before);
out:
	free(resident);
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, 0, 0, skip);
}

/* ------------------------------------------------------------------ */
/*
 * userfaultfd (missing mode, which file mappings offer on shmem only): a
 * mapping registered before the shift must report a fault for exactly the
 * pages that have no page cache afterwards (the holes the shift moved and
 * the hole an insert opens), each at its new address, and a page placed
 * there with UFFDIO_COPY becomes file data.  Which pages are in the cache
 * before the shift is asked of mincore(): with huge=always a huge folio
 * covers a hole of the layout.
 */
struct uffd_reader {
	unsigned char *map;
	long long size;
	unsigned char *got;	/* the first byte of each page, as read */
};

static void *read_pages(void *arg)
{
	struct uffd_reader *r = arg;
	long long pg = sysconf(_SC_PAGESIZE), i;

	for (i = 0; i < r->size; i += pg)
		r->got[i / pg] = r->map[i];
	return NULL;
}

void case_userfaultfd(int mode, const char *name)
{
	long long size = 12 * unit, off = 2 * unit, len = 2 * unit;
	long long pg = sysconf(_SC_PAGESIZE), np = size / pg + len / pg;
	unsigned char *map, *resident, *faulted, *got, *page;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffd_reader r;
	struct model m;
	long long overhead, i, p;
	pthread_t th;
	int fd, uffd = -1, answer, running, shifted = 0, e;
	const char *skip = NULL;

	/* The case counts in pages: its layout needs a unit of one page. */
	if (unit != pg) {
		report(name, ANSWER_SKIP, 0, 0,
		       "the case needs a unit of one page");
		return;
	}
	resident = calloc(np, 1);
	faulted = calloc(np, 1);
	got = calloc(np, 1);
	page = malloc(pg);
	set_paths(name);
	fd = build("WWWWWWWWHWWW", size, &m);
	map = MAP_FAILED;
	if (fd < 0 || !resident || !faulted || !got || !page) {
		answer = EIO;
		goto out;
	}
	overhead = blocks_of(fd) - model_blocks(&m);
	map = mmap(NULL, size + len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		answer = EIO;
		goto out;
	}
	/* kconfig/guest.config turns on CONFIG_USERFAULTFD: on every row. */
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		fail("userfaultfd: %s", strerror(errno));
		answer = EIO;
		goto out;
	}
	reg.range.start = (unsigned long)map;
	reg.range.len = size + len;
	/*
	 * Missing mode on a file mapping is shmem's alone: anywhere else
	 * vma_can_userfault() refuses it with EINVAL.
	 */
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		e = errno;
		if (e == EINVAL && !on_tmpfs()) {
			skip = "userfaultfd missing mode on a file mapping needs shmem: EINVAL";
			answer = ANSWER_SKIP;
		} else {
			fail("UFFDIO_REGISTER missing mode: %s", strerror(e));
			answer = EIO;
		}
		goto out;
	}
	if (mincore(map, size, resident))
		fail("mincore: %s", strerror(errno));
	for (i = 0; i < size / pg; i++)
		resident[i] &= 1;

	answer = xfallocate(fd, mode, off, len);
	shifted = 1;
	model_shift(&m, answer, mode, off, len);
	if (!answer && mode == COLLAPSE) {
		memmove(resident + off / pg, resident + (off + len) / pg,
			(size - off - len) / pg);
	} else if (!answer) {
		memmove(resident + (off + len) / pg, resident + off / pg,
			(size - off) / pg);
		memset(resident + off / pg, 0, len / pg);
	}

	/* Read every page of the file; place a page wherever it faults. */
	r = (struct uffd_reader){ .map = map, .size = m.size, .got = got };
	pthread_create(&th, NULL, read_pages, &r);
	for (running = 1; running;) {
		struct pollfd pfd = { .fd = uffd, .events = POLLIN };
		struct uffd_msg msg;

		if (poll(&pfd, 1, 200) <= 0) {
			running = pthread_tryjoin_np(th, NULL) != 0;
			continue;
		}
		if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		p = (msg.arg.pagefault.address - (unsigned long)map) / pg;
		if (p >= 0 && p < np)
			faulted[p]++;
		fill(page, TAG_UFFD, p * pg, pg);
		{
			struct uffdio_copy copy = {
				.dst = (unsigned long)map + p * pg,
				.src = (unsigned long)page, .len = pg,
			};

			if (ioctl(uffd, UFFDIO_COPY, &copy))
				fail("UFFDIO_COPY at page %lld: %s", p,
				     strerror(errno));
		}
		if (p >= 0 && p * pg < m.size) {
			memcpy(m.data + p * pg, page, pg);
			m.alloc[p] = 1;
		}
	}
	printf("# %s: pages faulted:", name);
	for (i = 0; i * pg < m.size; i++)
		if (faulted[i])
			printf(" %lld", i);
	printf("\n");
	for (i = 0; i * pg < m.size; i++) {
		if (faulted[i] != !resident[i])
			fail("page %lld: %d faults reported, expected %d (%s in the page cache)",
			     i, faulted[i], !resident[i],
			     resident[i] ? "it is" : "it is not");
		if (got[i] != m.data[i * pg])
			fail("page %lld: read 0x%02x through the mapping, expected 0x%02x",
			     i, got[i], m.data[i * pg]);
	}
out:
	if (map != MAP_FAILED)
		munmap(map, size + len);
	if (uffd >= 0)
		close(uffd);
	if (shifted)
		verify(fd, &m, overhead, 1, "after the call and the copies");
	if (fd >= 0)
		close(fd);
	unlink(path);
	model_free(&m);
	free(resident);
	free(faulted);
	free(got);
	free(page);
	report(name, answer, 0, 0, skip);
}
