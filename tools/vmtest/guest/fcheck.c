// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: conformance cases for fallocate(FALLOC_FL_COLLAPSE_RANGE) and
 * fallocate(FALLOC_FL_INSERT_RANGE) on one mounted filesystem.
 *
 * usage: fcheck -f NAME -d DIR -u UNIT -b BLOCK -s full|none [-x TOOLDIR] [-B]
 *
 * UNIT is the allocation unit (block, or cluster with ext4 bigalloc),
 * BLOCK the block size; "-s none" means the filesystem does not offer the
 * two flags, so every call the VFS passes on must fail with EOPNOTSUPP.
 * -B leaves st_blocks out of the comparison with the model: on tmpfs with
 * huge pages it counts whole huge folios, and the zeroed pages a hole
 * punched inside one keeps when the folio cannot be split.
 *
 * Every case builds a fresh file whose contents are known: written bytes
 * encode their original offset, holes and preallocated ranges read zero.
 * The same operation is applied to an in-memory model of the file (bytes,
 * size, allocated units); the file must match the model byte by byte, in
 * size and in st_blocks.  A failed call must change nothing.  The expected
 * answers come from fallocate(2) and the VFS rules (docs/design.rst), never
 * from the code under test.
 *
 * Output is TAP on stdout, one line per case:
 *   ok N - NAME CASE answer=A expect=E model=M
 * A is what the filesystem answered (OK, an errno name, or SKIP), E what
 * this filesystem must answer, M what a filesystem supporting the flags
 * answers (the side-by-side table compares A with M).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/vfs.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COLLAPSE	FALLOC_FL_COLLAPSE_RANGE
#define INSERT		FALLOC_FL_INSERT_RANGE
#define TAG_DATA	0x4441ULL	/* "DA": file data */
#define TAG_SECRET	0x5345ULL	/* "SE": the secret of another file */
#define TAG_MMAP	0x4d4dULL	/* "MM": written through a mapping */
#define TAG_UFFD	0x5546ULL	/* "UF": placed by UFFDIO_COPY */
#define ANSWER_SKIP	(-1)

static const char *fs_name, *dir, *tooldir = "/usr/sbin";
static long long unit, blksz;
static int supported;
static int blocks_exact = 1;	/* -B clears it */
static int ntest, nfail;
static char why[4096];		/* failure details of the current case */

/* ------------------------------------------------------------------ */

static void fail(const char *fmt, ...)
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

static const char *ename(int e)
{
	static char buf[16];
	size_t i;

	for (i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].e == e)
			return errnames[i].name;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

/* Byte at offset @o of a file written with @tag: 64-bit words that hold
 * the tag and the word's original offset.  Never zero.
 */
static unsigned char pat(uint64_t tag, long long o)
{
	uint64_t w = (tag << 48) | ((uint64_t)o & ~7ULL);

	return (unsigned char)(w >> (8 * (o & 7)));
}

static void fill(unsigned char *buf, uint64_t tag, long long off, size_t len)
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

struct model {
	unsigned char *data;
	long long size;
	char *alloc;		/* one char per unit: 1 allocated, 0 hole */
	long long nunits;
};

static void model_resize(struct model *m, long long size)
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

static void model_collapse(struct model *m, long long off, long long len)
{
	long long u0 = off / unit, nu = len / unit;

	memmove(m->data + off, m->data + off + len, m->size - off - len);
	memmove(m->alloc + u0, m->alloc + u0 + nu, m->nunits - u0 - nu);
	m->nunits -= nu;
	m->size -= len;
}

static void model_insert(struct model *m, long long off, long long len)
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
static void model_shift(struct model *m, int answer, int mode, long long off,
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
static void model_copy(struct model *dst, const struct model *src)
{
	model_resize(dst, src->size);
	memcpy(dst->data, src->data, src->size);
	memcpy(dst->alloc, src->alloc, src->nunits);
}

static long long model_blocks(const struct model *m)
{
	long long i, n = 0;

	for (i = 0; i < m->nunits; i++)
		n += m->alloc[i];
	return n * unit / 512;
}

static void model_free(struct model *m)
{
	free(m->data);
	free(m->alloc);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* Files. */

static char path[PATH_MAX], path2[PATH_MAX];

static void set_paths(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(path2, sizeof(path2), "%s/%s.other", dir, name);
}

static int xfallocate(int fd, int mode, long long off, long long len)
{
	return fallocate(fd, mode, off, len) ? errno : 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, long long off)
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
static int build(const char *layout, long long size, struct model *m)
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

static int fiemap_extents(int fd)
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
static void verify(int fd, const struct model *m, long long overhead,
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

static long long blocks_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? -1 : (long long)st.st_blocks;
}

/* chattr +FLAG (@on) or -FLAG: the other inode flags stay as they are. */
static int change_flag(int fd, int flag, int on)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		return errno;
	flags = on ? flags | flag : flags & ~flag;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags) ? errno : 0;
}

/* ------------------------------------------------------------------ */
/* Reporting. */

/* What a filesystem supporting the flags answers, and what this one must. */
static int expect_of(int vfs, int fsans)
{
	if (vfs)
		return vfs;
	return supported ? fsans : EOPNOTSUPP;
}

static void report(const char *name, int answer, int vfs, int fsans,
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
/* Cases driven by fallocate(2) on a file built from a layout. */

enum pre { NONE, APPEND, IMMUTABLE, RDONLY, RLIMIT, KEEPSIZE };

struct shift_case {
	const char *name;
	const char *layout;
	long long size_adj;	/* bytes added to the layout's size (<= 0) */
	int mode;
	long long ou, oh, lu, lh;	/* offset, length: units + half units */
	enum pre pre;
	int vfs, fsans;		/* expected: from the VFS (0: passed on), the fs */
};

#define DENSE	"WWWW|WWWW|WWWW"
#define SPARSE	"WWWHHUUUWWWW"

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
	/* R5: permissions, decided by the VFS. */
	{ "collapse_append_only", DENSE, 0, COLLAPSE, 2, 0, 2, 0, APPEND, EPERM, EPERM },
	{ "insert_append_only", DENSE, 0, INSERT, 2, 0, 2, 0, APPEND, EPERM, EPERM },
	{ "collapse_immutable", DENSE, 0, COLLAPSE, 2, 0, 2, 0, IMMUTABLE, EPERM, EPERM },
	{ "insert_immutable", DENSE, 0, INSERT, 2, 0, 2, 0, IMMUTABLE, EPERM, EPERM },
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
	int fd, wfd = -1, e, answer, mode = c->mode, flagged = 0;
	const char *skip = NULL;
	char skipbuf[64];
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
	case APPEND:
	case IMMUTABLE:
		e = change_flag(fd, c->pre == APPEND ? FS_APPEND_FL :
					       FS_IMMUTABLE_FL, 1);
		/*
		 * ENOTTY: the filesystem has no inode flags (vfat);
		 * EOPNOTSUPP: it has them, but not this one.  Any other
		 * errno is a failure to set up the case.
		 */
		if (e == ENOTTY || e == EOPNOTSUPP) {
			snprintf(skipbuf, sizeof(skipbuf),
				 "FS_IOC_SETFLAGS: %s", ename(e));
			skip = skipbuf;
			answer = ANSWER_SKIP;
			goto out;
		}
		if (e) {
			fail("setup: FS_IOC_GETFLAGS/SETFLAGS: %s (%s)",
			     ename(e), strerror(e));
			answer = EIO;
			goto out;
		}
		flagged = 1;
		break;
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
out:
	if (flagged && change_flag(fd, c->pre == APPEND ? FS_APPEND_FL :
						    FS_IMMUTABLE_FL, 0))
		fail("cannot clear the flag again: %s", strerror(errno));
	if (wfd >= 0)
		close(wfd);
	close(fd);
	unlink(path);
	model_free(&m);
	report(c->name, answer, c->vfs, c->fsans, skip);
}

/* ------------------------------------------------------------------ */
/* The unit is a cluster made of several blocks (ext4 bigalloc): a
 * block-aligned range that is not cluster-aligned is EINVAL.
 */
static void case_block_not_unit(int mode, const char *name)
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
static void case_maxbytes(int mode, int vfs_level, const char *name)
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

/* ------------------------------------------------------------------ */
/* Is the directory under test on a filesystem of this magic number? */
static int on_fs(long magic)
{
	struct statfs sfs;

	return !statfs(dir, &sfs) && sfs.f_type == magic;
}

/*
 * A one-unit insert at 0 into a sparse file whose last byte is far away
 * (2^52 where s_maxbytes allows, half of s_maxbytes elsewhere) costs what
 * the file holds, not its size: it must return within FAR_SECONDS, with
 * the data in place.  A shift walking every index would run for years
 * holding the inode's locks; SIGALRM then ends fcheck and fails the row.
 */
#define FAR_SECONDS 5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void case_far_sparse(int mode, const char *name)
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
static void case_stale(int mode, const char *name)
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

/* ------------------------------------------------------------------ */
/*
 * Build the file of @layout and @size, map it shared with @prot and read the
 * mapping through, so that every page is cached and mapped.  @overhead gets
 * the blocks the filesystem spends beyond the model's.  NULL (the case
 * reported) when the file cannot be built or mapped.
 */
static unsigned char *build_mapped(const char *name, const char *layout,
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
static void case_mmap(int mode, const char *name)
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

/* Sectors read so far from the disk @fd is on, or -1 if none (tmpfs). */
static long long sectors_read(int fd)
{
	long long ios, merges, sectors = -1;
	char stat_path[64];
	struct stat st;
	FILE *f;

	if (fstat(fd, &st))
		return -1;
	snprintf(stat_path, sizeof(stat_path), "/sys/dev/block/%u:%u/stat",
		 major(st.st_dev), minor(st.st_dev));
	f = fopen(stat_path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld %lld %lld", &ios, &merges, &sectors) != 3)
		sectors = -1;
	fclose(f);
	return sectors;
}

/*
 * A file of @size bytes written in one run, cached and read through a
 * shared mapping with @prot: few extents, so that the extent tree of ext4
 * fits in its inode before and after a shift and st_blocks counts the
 * data alone.  NULL if it cannot be built (the case reported).
 */
static unsigned char *build_written(const char *name, long long size,
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
static void case_cache_kept(int mode, const char *name)
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

/* Is the filesystem under test tmpfs (what shmem cases need)? */
static int on_tmpfs(void)
{
	return on_fs(TMPFS_MAGIC);
}

/* ------------------------------------------------------------------ */
/*
 * The file of the cases that race a thread against a shift: 8 MiB, so that
 * the shift takes long enough under emulation for the thread to meet it.
 */
#define RACE_SIZE	(8LL << 20)

/* The shift of the racing cases: one page (or unit, if larger) at the second. */
static long long race_len(void)
{
	long long pg = sysconf(_SC_PAGESIZE);

	return unit > pg ? unit : pg;
}

struct storer {
	volatile unsigned char *map;
	long long first, size, pg;
	volatile long long done;	/* pages stored to so far */
	volatile int stop;
};

/*
 * Store to every page from @first on through a mapping whose page tables
 * hold none of them: each store faults with no page table entry, so the
 * one under way when the shift starts waits for it in ->page_mkwrite()
 * with a folio found at its old index.  One pass: the page tables it
 * leaves are what the case checks.
 */
static void *store_loop(void *arg)
{
	struct storer *s = arg;
	long long p;

	for (p = s->first; p < s->size && !s->stop; p += s->pg) {
		s->map[p] = 1;
		s->done++;
	}
	return NULL;
}

/*
 * Rounds of a racing case: RACE_ROUNDS, or fewer once RACE_SECONDS have
 * gone (an f2fs shift of 8 MiB takes seconds), but at least two, one
 * each way.
 */
#define RACE_ROUNDS	8
#define RACE_SECONDS	4.0

static int race_more(int round, double start)
{
	return round < 2 || (round < RACE_ROUNDS && now() - start < RACE_SECONDS);
}

/*
 * One round of case_store_during_shift(): a fresh mapping, a thread storing
 * through it, the shift @mode started while it does, and the check.
 * Returns the answer of the shift.
 */
static int store_round(int fd, long long size, int mode, long long off,
		       long long len)
{
	long long pg = sysconf(_SC_PAGESIZE), p, wrong = 0;
	unsigned char marker[8], got[8];
	struct storer s;
	unsigned char *map;
	pthread_t th;
	int answer;

	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return EIO;
	}
	/* Past the range, and inside the file before and after the shift. */
	s = (struct storer){ .map = map, .first = off + 2 * len,
			     .size = size - len, .pg = pg };
	pthread_create(&th, NULL, store_loop, &s);
	/*
	 * Start the shift with the thread into its pass.  Whether a fault is
	 * under way when the shift starts is up to the scheduler (one vCPU):
	 * the case aims at the race, it cannot force it.
	 */
	while (s.done < 16)
		usleep(100);
	answer = xfallocate(fd, mode, off, len);
	s.stop = 1;
	pthread_join(th, NULL);

	for (p = s.first; p < s.size; p += pg) {
		fill(marker, TAG_MMAP, p, sizeof(marker));
		memcpy(map + p, marker, sizeof(marker));
		if (pread(fd, got, sizeof(got), p) != sizeof(got) ||
		    memcmp(got, marker, sizeof(got)))
			wrong++;
	}
	if (wrong)
		fail("stores through the mapping after the shift missed their offset of the file at %lld pages",
		     wrong);
	munmap(map, size);
	return answer;
}

/*
 * A store through a shared mapping that faults with no page table entry
 * while a shift runs finds the folio at its old index and waits for the
 * shift in ->page_mkwrite(); the folio may have moved meanwhile (ext4 and
 * xfs move their page cache), and must not then be mapped at the address
 * of its old index.  A thread stores to every page past the range in
 * turn, and the shift starts while it does; afterwards a marker stored
 * through the same mapping at each of those pages must read back at its
 * offset.  Before the fix, the page being stored to when the shift began
 * kept mapping the moved folio, and its marker landed one shift away.
 * Rounds shift one way and back (race_more()).
 */
static void case_store_during_shift(int mode, const char *name)
{
	long long size = RACE_SIZE, len = race_len(), off = len, overhead;
	int fd, answer = 0, round, way;
	unsigned char *map;
	struct model m;
	double start;

	map = build_written(name, size, PROT_READ | PROT_WRITE, &m, &fd,
			    &overhead);
	if (!map)
		return;
	munmap(map, size);
	start = now();
	for (round = 0; race_more(round, start) && !answer; round++) {
		way = round % 2 ? (mode == COLLAPSE ? INSERT : COLLAPSE) : mode;
		answer = store_round(fd, size, way, off, len);
		size += way == INSERT ? len : -len;
	}
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, 0, 0, NULL);
}

struct reader {
	int fd;
	long long off, len;	/* the window read, across every EOF */
	volatile int stop;
	const struct model *states[3];
	long long reads, wrong;
	char first[160];
};

/* Are the @n bytes read at @off what the file @m holds there? */
static int is_state(const unsigned char *buf, long long off, long long len,
		    long long n, const struct model *m)
{
	long long want = m->size - off < len ? m->size - off : len;

	return n == want && !memcmp(buf, m->data + off, n);
}

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	unsigned char *buf = malloc(r->len);
	ssize_t n;
	int i;

	while (buf && !r->stop) {
		n = pread(r->fd, buf, r->len, r->off);
		r->reads++;
		for (i = 0; i < 3; i++)
			if (is_state(buf, r->off, r->len, n, r->states[i]))
				break;
		if (i < 3 || r->wrong++)
			continue;
		snprintf(r->first, sizeof(r->first),
			 "pread(%lld, %lld) gave %zd bytes, what no state of the file holds there",
			 r->off, r->len, n);
	}
	free(buf);
	return NULL;
}

/*
 * A buffered read that overlaps a shift returns what the file holds
 * either before or after it, never a mix: ext4, whose reads take no lock,
 * reads again when it overlapped (i_shift_seq); its page cache, kept
 * across the shift, holds the old layout while the size has changed.  A
 * thread reads a window across every EOF in a loop while shifts run, one
 * way and back (race_more()): the file goes through three states (the
 * range collapsed, or a hole inserted), and each read must be one of
 * them.  tmpfs skips: its reads reread i_size for every page, and may stop
 * at either EOF (RACE_EOF in fsmodel, docs/design.rst).
 */
static void case_read_during_shift(int mode, const char *name)
{
	long long size = RACE_SIZE, len = race_len(), off = len, overhead;
	int other = mode == COLLAPSE ? INSERT : COLLAPSE;
	struct model m, once = { 0 }, back = { 0 };
	double start;
	struct reader r = { 0 };
	int fd, answer = 0, round;
	unsigned char *map;
	pthread_t th;

	if (on_tmpfs()) {
		report(name, ANSWER_SKIP, 0, 0,
		       "tmpfs reads reread i_size for every page and may stop at either EOF (RACE_EOF, docs/design.rst)");
		return;
	}
	map = build_written(name, size, PROT_READ | PROT_WRITE, &m, &fd,
			    &overhead);
	if (!map)
		return;
	munmap(map, size);
	/* The states: as built, shifted once, and shifted back. */
	model_copy(&once, &m);
	model_shift(&once, 0, mode, off, len);
	model_copy(&back, &once);
	model_shift(&back, 0, other, off, len);

	r = (struct reader){ .fd = fd, .off = size - 4 * len, .len = 8 * len,
			     .states = { &m, &once, &back } };
	pthread_create(&th, NULL, read_loop, &r);
	start = now();
	for (round = 0; race_more(round, start) && !answer; round++) {
		usleep(2000);
		answer = xfallocate(fd, round % 2 ? other : mode, off, len);
	}
	usleep(2000);
	r.stop = 1;
	pthread_join(th, NULL);
	if (r.wrong)
		fail("%lld of %lld reads racing the shifts were no state of the file; the first %s",
		     r.wrong, r.reads, r.first);
	close(fd);
	unlink(path);
	model_free(&m);
	model_free(&once);
	model_free(&back);
	report(name, answer, 0, 0, NULL);
}

/* ------------------------------------------------------------------ */
/* Paged out before the shift: on tmpfs with a swap device the file's pages
 * become swap entries, which the shift must move with their index and
 * swap-in must bring back at the new one; elsewhere the clean page cache
 * is dropped and read back from the disk.
 */
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

/*
 * The number after KEY at the start of a line of FILE (0 if none): KEY
 * holds its separator, "Shmem:" for /proc/meminfo (kB), "pswpout " for
 * /proc/vmstat.  "Shmem:" counts the shmem pages in the page cache: a page
 * swapped out leaves it at once, while SwapFree may not move (swap slots
 * are handed out from per-CPU caches allocated ahead).
 */
static long long proc_number(const char *file, const char *key)
{
	long long value = 0;
	char line[128];
	size_t n = strlen(key);
	FILE *f = fopen(file, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n))
			value = atoll(line + n);
	if (f)
		fclose(f);
	return value;
}

static long long meminfo_kb(const char *field)
{
	return proc_number("/proc/meminfo", field);
}

static void case_pageout(int mode, const char *name)
{
	long long size = 12 * unit, off = 3 * unit, len = 2 * unit;
	long long overhead, swapped, swap;
	unsigned char *map;
	struct model m;
	int fd, answer;

	map = build_mapped(name, DENSE, size, PROT_READ, &m, &fd,
			   &overhead);
	if (!map)
		return;
	/*
	 * pswpout is an event count, summed over the CPUs when read; the
	 * Shmem line of /proc/meminfo lags by up to a per-CPU threshold of
	 * pages, more than the file's twelve 64 KiB pages.
	 */
	swapped = proc_number("/proc/vmstat", "pswpout ");
	if (madvise(map, size, MADV_PAGEOUT))
		fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
	munmap(map, size);
	swapped = proc_number("/proc/vmstat", "pswpout ") - swapped;
	swap = meminfo_kb("SwapTotal:");
	printf("# %s: MADV_PAGEOUT wrote %lld pages to swap; %lld kB of swap\n",
	       name, swapped, swap);
	/*
	 * make vmtest gives the guest a swap disk: small pages of plain tmpfs
	 * must go there (a huge folio may stay, if it cannot be split).
	 */
	if (!strcmp(fs_name, "tmpfs") && !swap)
		fail("no swap configured");
	else if (!strcmp(fs_name, "tmpfs") && swapped < 1)
		fail("MADV_PAGEOUT put no tmpfs page in swap");

	answer = xfallocate(fd, mode, off, len);
	model_shift(&m, answer, mode, off, len);
	verify(fd, &m, overhead, 1, "after the call");
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, 0, 0, NULL);
}

/* Is the directory under test a tmpfs mount with huge pages (huge=)? */
static int on_huge_tmpfs(void)
{
	char line[1024], mnt[512], opts[512];
	FILE *f = fopen("/proc/mounts", "r");
	int huge = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %511s tmpfs %511s", mnt, opts) == 2 &&
		    !strcmp(mnt, dir) && strstr(opts, "huge=") &&
		    !strstr(opts, "huge=never"))
			huge = 1;
	if (f)
		fclose(f);
	return huge;
}

/*
 * A huge folio swapped out whole stays in the swap cache as one large
 * folio until reclaim frees it, while a shift by a single page at @page
 * splits the file's large swap entry and moves the small entries off the
 * folio's alignment; a collapse of its last page (@page 511) leaves its
 * first 511 entries in place, behind a removed tail.  A read of the whole
 * file must still return with the model's data, however the swap cache
 * holds it: swap-in takes such a folio back whole, and looped forever in
 * the kernel (no signal ends it) on entries moved or cut off it.  The read
 * therefore runs in a child, given PAGEOUT_HUGE_SECONDS.
 */
#define PAGEOUT_HUGE_SECONDS 20

/*
 * Run the pread() of the whole of @fd into @got (@size bytes) in a child,
 * given PAGEOUT_HUGE_SECONDS: a kernel looping in swap-in must fail the
 * case, not hang fcheck.  Returns 0 if the read came back whole.
 */
static int read_in_child(int fd, unsigned char *got, long long size)
{
	double start = now();
	int status;
	pid_t child = fork();

	if (child == 0)
		_exit(pread(fd, got, size, 0) != size);
	if (child < 0) {
		fail("fork: %s", strerror(errno));
		return -1;
	}
	while (waitpid(child, &status, WNOHANG) == 0) {
		if (now() - start > PAGEOUT_HUGE_SECONDS) {
			fail("a read after the shift has not returned in %d s (swap-in loops on the moved entries)",
			     PAGEOUT_HUGE_SECONDS);
			return -1;
		}
		usleep(10000);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the read after the shift failed or came short");
		return -1;
	}
	return 0;
}

static void case_pageout_huge(int mode, long long page, const char *name)
{
	long long pg = sysconf(_SC_PAGESIZE), size = 4 << 20, off = page * pg;
	long long overhead, thp_out, i;
	unsigned char *map, *got;
	struct model m;
	int fd, answer;

	if (!on_huge_tmpfs()) {
		report(name, ANSWER_SKIP, 0, 0,
		       "no huge folios to swap out whole: not a tmpfs mount with huge=");
		return;
	}
	map = build_mapped(name, DENSE, size, PROT_READ, &m, &fd, &overhead);
	if (!map)
		return;
	printf("# %s: %lld kB of shmem in huge folios\n", name,
	       meminfo_kb("ShmemHugePages:"));
	thp_out = proc_number("/proc/vmstat", "thp_swpout ");
	if (madvise(map, size, MADV_PAGEOUT))
		fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
	munmap(map, size);
	thp_out = proc_number("/proc/vmstat", "thp_swpout ") - thp_out;
	printf("# %s: %lld huge folios swapped out whole\n", name, thp_out);
	if (thp_out < 1)
		fail("setup: MADV_PAGEOUT swapped out no huge folio whole (swap on? CONFIG_THP_SWAP?)");

	answer = xfallocate(fd, mode, off, pg);
	model_shift(&m, answer, mode, off, pg);

	got = mmap(NULL, size + pg, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (got == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		goto out;
	}
	if (read_in_child(fd, got, m.size))
		goto unmap;
	for (i = 0; i < m.size; i++)
		if (got[i] != m.data[i]) {
			fail("read after the shift: byte %lld is %#x, expected %#x",
			     i, got[i], m.data[i]);
			break;
		}
	verify(fd, &m, overhead, 1, "after the call");
unmap:
	munmap(got, size + pg);
out:
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, 0, 0, NULL);
}

/*
 * The mTHP size of the pageout_mthp cases: 16 pages (64 KiB with 4 KiB
 * pages, 1 MiB with 64 KiB pages, whose 128 KiB folios anonymous and
 * shared memory may not use), and the sysfs directory of that size.
 */
#define MTHP_PAGES 16

static const char *mthp_file(const char *file)
{
	static char path_buf[256];

	snprintf(path_buf, sizeof(path_buf),
		 "/sys/kernel/mm/transparent_hugepage/hugepages-%ldkB/%s",
		 MTHP_PAGES * sysconf(_SC_PAGESIZE) / 1024, file);
	return path_buf;
}

/* A number from a file of the mTHP size's directory (-1: unreadable). */
static long long mthp_read(const char *file)
{
	long long value = -1;
	FILE *f;

	f = fopen(mthp_file(file), "r");
	if (f && fscanf(f, "%lld", &value) != 1)
		value = -1;
	if (f)
		fclose(f);
	return value;
}

/* The setting its shmem_enabled shows in brackets, into @buf. */
static int mthp_get_shmem(char *buf, size_t len)
{
	char line[256], *open_br, *close_br;
	FILE *f = fopen(mthp_file("shmem_enabled"), "r");
	int ok = f && fgets(line, sizeof(line), f) &&
		 (open_br = strchr(line, '[')) &&
		 (close_br = strchr(open_br, ']')) &&
		 (size_t)(close_br - open_br) <= len;

	if (ok) {
		*close_br = 0;
		strcpy(buf, open_br + 1);
	}
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* Write @value to its shmem_enabled; 0 on success. */
static int mthp_set_shmem(const char *value)
{
	int fd = open(mthp_file("shmem_enabled"), O_WRONLY);
	int ok = fd >= 0 && write(fd, value, strlen(value)) ==
			    (ssize_t)strlen(value);

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/*
 * The same with mTHP folios of MTHP_PAGES pages (64 KiB with 4 KiB pages).
 * In this kernel shmem gives them only to shared anonymous memory, whose
 * file a process reaches through /proc/self/map_files: a mapping of 16 of
 * them is filled with those folios (its shmem_enabled set to
 * always for the case), paged out whole (the size's swpout counter must grow),
 * and collapsed or inserted at page 1 through that file, whose pages
 * then move off their folios' alignment.  A read of the whole file, in a
 * child given PAGEOUT_HUGE_SECONDS, must give each page's tag where the
 * shift put it.  The segment is a tmpfs file whatever the filesystem
 * under test: the case runs on the plain tmpfs row.
 */
static void case_pageout_mthp(int mode, const char *name)
{
	long long pg = sysconf(_SC_PAGESIZE), size = 16 * MTHP_PAGES * pg;
	long long allocs, swapped, pages_out, i, got_size;
	unsigned char *map, *got = NULL;
	char file[128], was[32];
	const char *skip = NULL;
	int fd = -1, answer = EIO;

	if (!on_tmpfs() || on_huge_tmpfs()) {
		report(name, ANSWER_SKIP, 0, 0,
		       "shared anonymous memory is a tmpfs file whatever the filesystem under test: the case runs on the plain tmpfs row");
		return;
	}
	if (mthp_get_shmem(was, sizeof(was)) || mthp_set_shmem("always")) {
		fail("setup: cannot write %s: %s", mthp_file("shmem_enabled"),
		     strerror(errno));
		report(name, answer, 0, 0, NULL);
		return;
	}
	allocs = mthp_read("stats/shmem_alloc");
	map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < size; i += pg)
		fill(map + i, TAG_DATA, i, pg);
	allocs = mthp_read("stats/shmem_alloc") - allocs;
	swapped = mthp_read("stats/swpout");
	pages_out = proc_number("/proc/vmstat", "pswpout ");
	if (madvise(map, size, MADV_PAGEOUT))
		fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
	swapped = mthp_read("stats/swpout") - swapped;
	pages_out = proc_number("/proc/vmstat", "pswpout ") - pages_out;
	printf("# %s: %lld %lld KiB folios allocated, %lld swapped out whole, %lld pages out\n",
	       name, allocs, MTHP_PAGES * pg / 1024, swapped, pages_out);
	/*
	 * Without CONFIG_THP_SWAP (arm64 offers it with 4 KiB pages only)
	 * reclaim splits a large folio before it swaps it out: the pages go
	 * out, no folio goes whole, and the case has nothing to test.
	 */
	if (allocs >= 1 && swapped == 0 && pages_out > 0) {
		skip = "large folios are split before they go to swap (no CONFIG_THP_SWAP)";
		answer = ANSWER_SKIP;
		goto unmap;
	}
	if (allocs < 1 || swapped < 1)
		fail("setup: no %lld KiB folio went to swap whole",
		     MTHP_PAGES * pg / 1024);

	snprintf(file, sizeof(file), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)map, (unsigned long)(map + size));
	fd = open(file, O_RDWR);
	if (fd < 0) {
		fail("open %s: %s", file, strerror(errno));
		goto unmap;
	}
	answer = xfallocate(fd, mode, pg, pg);
	if (answer)
		goto unmap;
	got_size = mode == COLLAPSE ? size - pg : size + pg;
	got = mmap(NULL, got_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (got == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		goto unmap;
	}
	if (!read_in_child(fd, got, got_size)) {
		unsigned char *want = malloc(pg);

		for (i = 0; want && i < got_size; i += pg) {
			long long from = i < pg ? i :
					 mode == COLLAPSE ? i + pg : i - pg;

			if (mode == INSERT && i == pg)
				memset(want, 0, pg);
			else
				fill(want, TAG_DATA, from, pg);
			if (memcmp(got + i, want, pg)) {
				fail("page %lld after the shift is not what the model says",
				     i / pg);
				break;
			}
		}
		free(want);
	}
	munmap(got, got_size);
unmap:
	if (fd >= 0)
		close(fd);
	munmap(map, size);
out:
	if (mthp_set_shmem(was))
		fail("cannot set %s back to %s", mthp_file("shmem_enabled"),
		     was);
	report(name, answer, 0, 0, skip);
}

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

static void case_userfaultfd(int mode, const char *name)
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

/* ------------------------------------------------------------------ */
/*
 * A SysV shared memory segment is a shmem file no directory names; as
 * root, /proc/self/map_files opens it through its attachment.  The shift
 * must work there as on tmpfs, and the attachment see it.  The segment
 * does not depend on the filesystem under test: the case runs on the tmpfs
 * rows.
 */
static void case_sysv_shm(int mode, const char *name)
{
	long long pg = sysconf(_SC_PAGESIZE), size = 12 * pg, off = 3 * pg;
	long long len = 2 * pg, i, n;
	char mapfile[64];
	struct model m;
	unsigned char *seg;
	int id, fd, answer;

	if (!on_tmpfs() || unit != pg) {
		report(name, ANSWER_SKIP, 0, 0,
		       "a SysV segment is a tmpfs file: run on the tmpfs rows");
		return;
	}
	memset(&m, 0, sizeof(m));
	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	seg = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);	/* gone at the detach */
	if (seg == (void *)-1) {
		fail("shmget/shmat: %s", strerror(errno));
		report(name, EIO, 0, 0, NULL);
		return;
	}
	model_resize(&m, size);
	fill(m.data, TAG_DATA, 0, size);
	memcpy(seg, m.data, size);
	memset(m.alloc, 1, m.nunits);
	snprintf(mapfile, sizeof(mapfile), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)seg, (unsigned long)(seg + size));
	fd = open(mapfile, O_RDWR);
	if (fd < 0) {
		fail("open %s: %s", mapfile, strerror(errno));
		shmdt(seg);
		model_free(&m);
		report(name, EIO, 0, 0, NULL);
		return;
	}
	answer = xfallocate(fd, mode, off, len);
	model_shift(&m, answer, mode, off, len);
	/* The attachment keeps its length: past the new EOF is SIGBUS. */
	n = m.size < size ? m.size : size;
	for (i = 0; i < n; i++) {
		if (!answer && mode == INSERT && i >= off && i < off + len)
			continue;	/* a read fault would fill the hole */
		if (seg[i] != m.data[i]) {
			fail("attachment: byte %lld is 0x%02x, expected 0x%02x",
			     i, seg[i], m.data[i]);
			break;
		}
	}
	verify(fd, &m, 0, 1, "after the call");
	close(fd);
	shmdt(seg);
	model_free(&m);
	report(name, answer, 0, 0, NULL);
}

/* ------------------------------------------------------------------ */
/*
 * Memory cgroup charge (tmpfs rows): the file's pages are charged to the
 * cgroup of the process that wrote them.  A collapse frees the pages of
 * the range, so the cgroup's memory.current must drop by them; an insert
 * moves pages and allocates none, so it must stay.  memory.current is the
 * exact page counter, but the cgroup also pays for its process's other
 * memory (page tables, slab objects such as xarray nodes, charged in
 * batches), hence a margin of MEMCG_MARGIN pages, far below the 512 pages
 * at stake.
 */
#define MEMCG_DIR	"/sys/fs/cgroup"
#define MEMCG_MARGIN	32

static long long cgroup_read(const char *file)
{
	char p[128], line[64] = "";
	FILE *f;

	snprintf(p, sizeof(p), MEMCG_DIR "/fcheck/%s", file);
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return line[0] ? atoll(line) : -1;
}

static int cgroup_write(const char *file, const char *what)
{
	int fd = open(file, O_WRONLY), e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, what, strlen(what)) < 0)
		e = errno;
	close(fd);
	return e;
}

/* Move this process into cgroup MEMCG_DIR/fcheck, with the memory
 * controller on: 0, or -1 and the case fails (kconfig/guest.config turns
 * on CONFIG_MEMCG, so the tmpfs rows never lack it).
 */
static int enter_memcg(void)
{
	char pid[32];
	int e;

	mkdir(MEMCG_DIR, 0755);
	if (access(MEMCG_DIR "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", MEMCG_DIR, "cgroup2", 0, NULL)) {
		fail("mount cgroup2: %s", strerror(errno));
		return -1;
	}
	e = cgroup_write(MEMCG_DIR "/cgroup.subtree_control", "+memory");
	if (e) {
		fail("+memory in cgroup.subtree_control: %s", strerror(e));
		return -1;
	}
	if (mkdir(MEMCG_DIR "/fcheck", 0755) && errno != EEXIST) {
		fail("mkdir " MEMCG_DIR "/fcheck: %s", strerror(errno));
		return -1;
	}
	snprintf(pid, sizeof(pid), "%d", getpid());
	e = cgroup_write(MEMCG_DIR "/fcheck/cgroup.procs", pid);
	if (e) {
		fail("join " MEMCG_DIR "/fcheck: %s", strerror(e));
		return -1;
	}
	return 0;
}

static void leave_memcg(void)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	cgroup_write(MEMCG_DIR "/cgroup.procs", pid);
	rmdir(MEMCG_DIR "/fcheck");
}

static void case_memcg(int mode, const char *name)
{
	long long pg = sysconf(_SC_PAGESIZE), size = 1024 * pg;
	long long off = (mode == COLLAPSE ? 0 : 512) * pg, len = 512 * pg;
	long long before, after, want;
	unsigned char *buf;
	int fd = -1, answer = EIO;

	if (!on_tmpfs()) {
		report(name, ANSWER_SKIP, 0, 0,
		       "the page cache is the file only on tmpfs");
		return;
	}
	set_paths(name);
	buf = malloc(size);
	if (!buf || enter_memcg())
		goto out;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	fill(buf, TAG_DATA, 0, size);
	if (fd < 0 || pwrite_all(fd, buf, size, 0)) {
		fail("setup: write %s", path);
		goto out;
	}
	before = cgroup_read("memory.current");
	answer = xfallocate(fd, mode, off, len);
	after = cgroup_read("memory.current");
	want = before - (!answer && mode == COLLAPSE ? len : 0);
	printf("# %s: memory.current %lld kB before, %lld kB after, %lld kB expected (margin %lld kB)\n",
	       name, before / 1024, after / 1024, want / 1024,
	       MEMCG_MARGIN * pg / 1024);
	if (before < size)
		fail("memory.current %lld: the file's %lld bytes are not charged here",
		     before, size);
	else if (llabs(after - want) > MEMCG_MARGIN * pg)
		fail("memory.current %lld after the call, expected %lld +- %lld",
		     after, want, MEMCG_MARGIN * pg);
out:
	if (fd >= 0)
		close(fd);
	unlink(path);
	leave_memcg();
	free(buf);
	report(name, answer, 0, 0, NULL);
}

/* ------------------------------------------------------------------ */
/* Reflink (where FICLONE works): a shared extent keeps its data in the
 * other file when one of them collapses or inserts.
 */
static void case_reflink(int mode, int whole, const char *name)
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

/* ------------------------------------------------------------------ */
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

static void case_tool(const char *tool, int mode, long long off,
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

/* ------------------------------------------------------------------ */

static void usage(void)
{
	fprintf(stderr, "usage: fcheck -f NAME -d DIR -u UNIT -b BLOCK -s full|none [-x TOOLDIR] [-B]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *support = NULL;
	size_t i;
	int opt;

	while ((opt = getopt(argc, argv, "f:d:u:b:s:x:B")) != -1) {
		switch (opt) {
		case 'f':
			fs_name = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'u':
			unit = atoll(optarg);
			break;
		case 'b':
			blksz = atoll(optarg);
			break;
		case 's':
			support = optarg;
			break;
		case 'x':
			tooldir = optarg;
			break;
		case 'B':
			blocks_exact = 0;
			break;
		default:
			usage();
		}
	}
	if (!fs_name || !dir || unit < 1024 || blksz < 512 || !support)
		usage();
	supported = !strcmp(support, "full");
	if (!supported && strcmp(support, "none"))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# fcheck: %s in %s, unit %lld, block %lld, flags %s\n",
	       fs_name, dir, unit, blksz, supported ? "supported" :
	       "not supported (EOPNOTSUPP expected)");

	make_many_extents(many_few, MANY_FEW);
	make_many_extents(many_more, MANY_MORE);
	for (i = 0; i < sizeof(shift_cases) / sizeof(shift_cases[0]); i++)
		run_shift_case(&shift_cases[i]);
	case_block_not_unit(COLLAPSE, "collapse_block_not_unit");
	case_block_not_unit(INSERT, "insert_block_not_unit");
	case_maxbytes(INSERT, 0, "insert_past_maxbytes");
	case_maxbytes(INSERT, 1, "insert_range_past_maxbytes");
	case_maxbytes(COLLAPSE, 1, "collapse_range_past_maxbytes");
	case_far_sparse(INSERT, "insert_far_sparse");
	case_stale(COLLAPSE, "stale_collapse");
	case_stale(INSERT, "stale_insert");
	case_mmap(COLLAPSE, "mmap_collapse");
	case_mmap(INSERT, "mmap_insert");
	case_cache_kept(COLLAPSE, "cache_kept_collapse");
	case_cache_kept(INSERT, "cache_kept_insert");
	case_store_during_shift(COLLAPSE, "store_during_collapse");
	case_store_during_shift(INSERT, "store_during_insert");
	case_read_during_shift(COLLAPSE, "read_during_collapse");
	case_read_during_shift(INSERT, "read_during_insert");
	case_pageout(COLLAPSE, "pageout_collapse");
	case_pageout(INSERT, "pageout_insert");
	case_pageout_huge(COLLAPSE, 1, "pageout_huge_collapse");
	case_pageout_huge(INSERT, 1, "pageout_huge_insert");
	case_pageout_huge(COLLAPSE, 511, "pageout_huge_collapse_tail");
	case_pageout_mthp(COLLAPSE, "pageout_mthp_collapse");
	case_pageout_mthp(INSERT, "pageout_mthp_insert");
	case_userfaultfd(COLLAPSE, "userfaultfd_collapse");
	case_userfaultfd(INSERT, "userfaultfd_insert");
	case_sysv_shm(COLLAPSE, "sysv_shm_collapse");
	case_sysv_shm(INSERT, "sysv_shm_insert");
	case_memcg(COLLAPSE, "memcg_collapse");
	case_memcg(INSERT, "memcg_insert");
	case_reflink(COLLAPSE, 1, "reflink_collapse_clone");
	case_reflink(INSERT, 1, "reflink_insert_clone");
	case_reflink(COLLAPSE, 0, "reflink_collapse_source");
	case_reflink(INSERT, 0, "reflink_insert_source");
	case_tool("xfs_io", COLLAPSE, 3 * unit, 2 * unit, 0, "tool_xfs_io_fcollapse");
	case_tool("xfs_io", INSERT, 3 * unit, 2 * unit, 0, "tool_xfs_io_finsert");
	case_tool("fallocate", COLLAPSE, 3 * unit, 2 * unit, 0,
		  "tool_fallocate_collapse");
	case_tool("fallocate", INSERT, 3 * unit, 2 * unit, 0,
		  "tool_fallocate_insert");
	case_tool("xfs_io", COLLAPSE, 10 * unit, 2 * unit, EINVAL,
		  "tool_xfs_io_fcollapse_eof");
	case_tool("fallocate", INSERT, 3 * unit + unit / 2, unit, EINVAL,
		  "tool_fallocate_insert_unaligned");

	printf("1..%d\n", ntest);
	printf("# fcheck: %s: %d cases, %d failed\n", fs_name, ntest, nfail);
	return nfail ? 1 : 0;
}
