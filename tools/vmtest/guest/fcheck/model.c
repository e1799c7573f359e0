// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: the data pattern, the model of a file (expected bytes, size and
 * allocated units), building a file from a layout and comparing it with
 * its model.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fcheck.h"

/* Byte at offset @o of a file written with @tag: 64-bit words that hold
 * the tag and the word's original offset.  Never zero.
 */
unsigned char pat(uint64_t tag, long long o)
{
	uint64_t w = (tag << 48) | ((uint64_t)o & ~7ULL);

	return (unsigned char)(w >> (8 * (o & 7)));
}

void fill(unsigned char *buf, uint64_t tag, long long off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pat(tag, off + (long long)i);
}

/*
 * Does @buf, read from offset 0, hold an aligned 8-byte word of the secret
 * pattern?  A freed block shows up whole and block-aligned, so its words
 * are aligned; an unaligned window of the data pattern can spell the tag
 * (from 0x534500 = 5.2 MiB on, some windows read "SE" in their top bytes).
 */
static long long find_secret(const unsigned char *buf, size_t len)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, buf + i, 8);
		if ((w >> 48) == TAG_SECRET && ((w & 7) == 0))
			return (long long)i;
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* The model: expected bytes, size and allocated units of one file. */

void model_resize(struct model *m, long long size)
{
	long long nunits = (size + unit - 1) / unit;

	m->data = realloc(m->data, size + 1);
	m->alloc = realloc(m->alloc, nunits + 1);
	if (!m->data || !m->alloc) {
		perror("fcheck: realloc");
		exit(2);
	}
	if (size > m->size)
		memset(m->data + m->size, 0, size - m->size);
	if (nunits > m->nunits)
		memset(m->alloc + m->nunits, 0, nunits - m->nunits);
	m->size = size;
	m->nunits = nunits;
}

void model_collapse(struct model *m, long long off, long long len)
{
	long long u0 = off / unit, nu = len / unit;

	memmove(m->data + off, m->data + off + len, m->size - off - len);
	memmove(m->alloc + u0, m->alloc + u0 + nu, m->nunits - u0 - nu);
	m->nunits -= nu;
	m->size -= len;
}

void model_insert(struct model *m, long long off, long long len)
{
	long long old = m->size, oldu = m->nunits, u0 = off / unit;
	long long nu = len / unit;

	model_resize(m, old + len);
	memmove(m->data + off + len, m->data + off, old - off);
	memset(m->data + off, 0, len);
	memmove(m->alloc + u0 + nu, m->alloc + u0, oldu - u0);
	memset(m->alloc + u0, 0, nu);
}

/* What a collapse or insert that answered @answer did to the file. */
void model_shift(struct model *m, int answer, int mode, long long off,
		 long long len)
{
	if (answer)
		return;
	if (mode == COLLAPSE)
		model_collapse(m, off, len);
	else
		model_insert(m, off, len);
}

/* Make @dst, an empty model, a copy of @src. */
void model_copy(struct model *dst, const struct model *src)
{
	model_resize(dst, src->size);
	memcpy(dst->data, src->data, src->size);
	memcpy(dst->alloc, src->alloc, src->nunits);
}

long long model_blocks(const struct model *m)
{
	long long i, n = 0;

	for (i = 0; i < m->nunits; i++)
		n += m->alloc[i];
	return n * unit / 512;
}

void model_free(struct model *m)
{
	free(m->data);
	free(m->alloc);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* Files. */

char path[PATH_MAX], path2[PATH_MAX];

void set_paths(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(path2, sizeof(path2), "%s/%s.other", dir, name);
}

int xfallocate(int fd, int mode, long long off, long long len)
{
	return fallocate(fd, mode, off, len) ? errno : 0;
}

int pwrite_all(int fd, const void *buf, size_t len, long long off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0)
			return errno;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* Read the whole file; returns its size or -1. */
static long long read_file(int fd, unsigned char **out)
{
	struct stat st;
	long long got = 0;
	unsigned char *buf;

	if (fstat(fd, &st))
		return -1;
	buf = malloc(st.st_size + 1);
	if (!buf)
		return -1;
	while (got < st.st_size) {
		ssize_t n = pread(fd, buf + got, st.st_size - got, got);

		if (n <= 0)
			break;
		got += n;
	}
	*out = buf;
	return got;
}

/*
 * Build @path from a layout, one character per unit:
 *   W  written with the data pattern (preallocated first, then written)
 *   U  preallocated, never written (an unwritten extent: reads zero)
 *   H  a hole
 *   |  between two units: allocate a unit of another file here, so the
 *      next extent does not continue the previous one on disk
 * The file is then truncated to @size (at most the layout's length).
 * Filesystems without plain preallocation (vfat) get written zeros for U.
 */
int build(const char *layout, long long size, struct model *m)
{
	long long u = 0, o, len, run;
	int fd, ofd, e;
	unsigned char *buf = malloc(unit);

	memset(m, 0, sizeof(*m));
	unlink(path);
	unlink(path2);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ofd = open(path2, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ofd < 0 || !buf) {
		fail("setup: open %s: %s", path, strerror(errno));
		free(buf);
		return -1;
	}
	for (; *layout; layout += run) {
		char kind = *layout;

		run = 1;
		if (kind == '|') {
			e = xfallocate(ofd, 0, u * unit, unit);
			if (e && e != EOPNOTSUPP)
				fail("setup: spacer fallocate: %s", ename(e));
			fsync(ofd);
			fsync(fd);
			continue;
		}
		/* A run of units of one kind is allocated and written at once. */
		while (layout[run] == kind)
			run++;
		o = u * unit;
		len = run * unit;
		model_resize(m, o + len);
		buf = realloc(buf, len);
		if (!buf) {
			fail("setup: out of memory");
			goto err;
		}
		if (kind == 'W' || kind == 'U') {
			e = xfallocate(fd, 0, o, len);
			if (e == EOPNOTSUPP) {
				memset(buf, 0, len);
				e = pwrite_all(fd, buf, len, o);
			}
			if (e) {
				fail("setup: allocate units %lld-%lld: %s", u,
				     u + run - 1, ename(e));
				goto err;
			}
			memset(m->alloc + u, 1, run);
		}
		if (kind == 'W') {
			fill(buf, TAG_DATA, o, len);
			memcpy(m->data + o, buf, len);
			e = pwrite_all(fd, buf, len, o);
			if (e) {
				fail("setup: write units %lld-%lld: %s", u,
				     u + run - 1, ename(e));
				goto err;
			}
		}
		u += run;
	}
	if (ftruncate(fd, size)) {
		fail("setup: ftruncate %lld: %s", size, strerror(errno));
		goto err;
	}
	if (size < m->size)
		m->size = size;		/* the last unit stays allocated */
	else
		model_resize(m, size);
	if (fsync(fd))
		fail("setup: fsync: %s", strerror(errno));
	close(ofd);
	unlink(path2);
	free(buf);
	return fd;
err:
	close(fd);
	close(ofd);
	free(buf);
	return -1;
}

int fiemap_extents(int fd)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe[64];
	} x;
	unsigned long long start = 0;
	const struct fiemap_extent *last;
	int total = 0;

	for (;;) {
		memset(&x, 0, sizeof(x));
		x.fm.fm_start = start;
		x.fm.fm_length = FIEMAP_MAX_OFFSET - start;
		x.fm.fm_flags = total ? 0 : FIEMAP_FLAG_SYNC;
		x.fm.fm_extent_count = 64;
		if (ioctl(fd, FS_IOC_FIEMAP, &x.fm))
			return -1;
		if (!x.fm.fm_mapped_extents)
			return total;
		total += x.fm.fm_mapped_extents;
		last = &x.fe[x.fm.fm_mapped_extents - 1];
		if (last->fe_flags & FIEMAP_EXTENT_LAST)
			return total;
		start = last->fe_logical + last->fe_length;
	}
}

/*
 * Compare the file with the model: size, every byte, and st_blocks (the
 * model's allocated units plus the metadata overhead @overhead measured
 * before the call, which neither operation may change).  @what names the
 * moment in the failure message.
 */
void verify(int fd, const struct model *m, long long overhead,
	    int check_blocks, const char *what)
{
	unsigned char *buf = NULL;
	struct stat st;
	long long n, i;

	if (fstat(fd, &st)) {
		fail("%s: fstat: %s", what, strerror(errno));
		return;
	}
	if (st.st_size != m->size)
		fail("%s: size %lld, expected %lld", what,
		     (long long)st.st_size, m->size);
	if (check_blocks && blocks_exact &&
	    st.st_blocks != model_blocks(m) + overhead)
		fail("%s: st_blocks %lld, expected %lld (%lld allocated units of %lld bytes + %lld); %d extents",
		     what, (long long)st.st_blocks, model_blocks(m) + overhead,
		     model_blocks(m) * 512 / unit, unit, overhead,
		     fiemap_extents(fd));
	n = read_file(fd, &buf);
	if (n != st.st_size)
		fail("%s: read %lld of %lld bytes", what, n,
		     (long long)st.st_size);
	for (i = 0; i < n && i < m->size; i++) {
		if (buf[i] != m->data[i]) {
			fail("%s: byte %lld is 0x%02x, expected 0x%02x (and maybe more)",
			     what, i, buf[i], m->data[i]);
			break;
		}
	}
	if (buf && find_secret(buf, n) >= 0)
		fail("%s: the secret of a freed file is readable at %lld",
		     what, find_secret(buf, n));
	free(buf);
}

long long blocks_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? -1 : (long long)st.st_blocks;
}
