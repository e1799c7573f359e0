/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fcheck: conformance cases for fallocate(FALLOC_FL_COLLAPSE_RANGE) and
 * fallocate(FALLOC_FL_INSERT_RANGE) on one mounted filesystem.
 * tools/vmtest/vmtest.sh builds it from this directory's *.c and the
 * guest's init runs it on each filesystem row; what it checks, and its
 * TAP output, are told at the top of fcheck.c.
 *
 * What each file holds:
 *   fcheck.c   options, usage, main(): the order in which the cases run
 *   util.c     the TAP report of a case, failure details, errno names,
 *              the filesystem type and the clock
 *   model.c    the data pattern, the model of a file, building a file
 *              from a layout and verifying it against its model
 *   cases.c    the table of shift cases and the runner of one case
 *   edges.c    a unit of several blocks, s_maxbytes, a far sparse file,
 *              stale blocks
 *   mapping.c  a shared mapping, the page cache kept, userfaultfd
 *   race.c     stores and reads racing a shift
 *   readers.c  the reader classes of the racing reads: pread, splice,
 *              sendfile, copy_file_range, O_DIRECT and io_uring
 *   pageout.c  small pages, huge and mTHP folios paged out
 *   shmem.c    a SysV segment, the memory cgroup's charge
 *   reflink.c  a file sharing its extents with a clone
 *   tools.c    xfs_io and util-linux fallocate
 *
 * Each file includes the system headers it uses; this one only what its
 * own declarations need.
 */
#ifndef FCHECK_H
#define FCHECK_H

#include <limits.h>
#include <linux/falloc.h>
#include <stddef.h>
#include <stdint.h>

#define COLLAPSE	FALLOC_FL_COLLAPSE_RANGE
#define INSERT		FALLOC_FL_INSERT_RANGE
#define TAG_DATA	0x4441ULL	/* "DA": file data */
#define TAG_SECRET	0x5345ULL	/* "SE": the secret of another file */
#define TAG_MMAP	0x4d4dULL	/* "MM": written through a mapping */
#define TAG_UFFD	0x5546ULL	/* "UF": placed by UFFDIO_COPY */
#define ANSWER_SKIP	(-1)

/* Layouts of build() (model.c), one character per unit. */
#define DENSE	"WWWW|WWWW|WWWW"
#define SPARSE	"WWWHHUUUWWWW"

/* The model: expected bytes, size and allocated units of one file. */
struct model {
	unsigned char *data;
	long long size;
	char *alloc;		/* one char per unit: 1 allocated, 0 hole */
	long long nunits;
};

/* The options (fcheck.c). */
extern const char *fs_name, *dir, *tooldir;
extern long long unit, blksz;
extern int supported;
extern int blocks_exact;

/* util.c: the TAP report, the filesystem under test, the clock. */
extern int ntest, nfail;
void fail(const char *fmt, ...);
const char *ename(int e);
int expect_of(int vfs, int fsans);
void report(const char *name, int answer, int vfs, int fsans,
	    const char *skip);
int on_fs(long magic);
double now(void);
int on_tmpfs(void);

/* model.c: the pattern, the model, the files of a case. */
extern char path[PATH_MAX], path2[PATH_MAX];
unsigned char pat(uint64_t tag, long long o);
void fill(unsigned char *buf, uint64_t tag, long long off, size_t len);
void model_resize(struct model *m, long long size);
void model_collapse(struct model *m, long long off, long long len);
void model_insert(struct model *m, long long off, long long len);
void model_shift(struct model *m, int answer, int mode, long long off,
		 long long len);
void model_copy(struct model *dst, const struct model *src);
long long model_blocks(const struct model *m);
void model_free(struct model *m);
void set_paths(const char *name);
int xfallocate(int fd, int mode, long long off, long long len);
int pwrite_all(int fd, const void *buf, size_t len, long long off);
int build(const char *layout, long long size, struct model *m);
int fiemap_extents(int fd);
void verify(int fd, const struct model *m, long long overhead,
	    int check_blocks, const char *what);
long long blocks_of(int fd);

/* mapping.c: files built and mapped, shared with race.c and pageout.c. */
unsigned char *build_mapped(const char *name, const char *layout,
			    long long size, int prot, struct model *m,
			    int *fd, long long *overhead);
unsigned char *build_written(const char *name, long long size,
			     int prot, struct model *m, int *fd,
			     long long *overhead);

/* readers.c: a thread reading one window in a loop, one reader class. */
enum reader_how {
	BY_PREAD, BY_SPLICE, BY_SENDFILE, BY_COPY_RANGE, BY_DIRECT,
	BY_IO_URING, NR_READERS
};
#define READ_STATES	3
struct reader {
	enum reader_how how;
	int fd;
	long long off, len;	/* the window read, across every EOF */
	volatile int *stop;
	volatile long *shifts;	/* odd while a shift call runs */
	const struct model *states[READ_STATES];
	long long reads, wrong, overlapped;
	int setup_errno;
	char first[200];
};
extern const char *const reader_name[NR_READERS];
void *read_loop(void *arg);

/* The cases, in the order main() runs them. */
void run_shift_cases(void);
void case_block_not_unit(int mode, const char *name);
void case_maxbytes(int mode, int vfs_level, const char *name);
void case_far_sparse(int mode, const char *name);
void case_stale(int mode, const char *name);
void case_mmap(int mode, const char *name);
void case_cache_kept(int mode, const char *name);
void case_store_during_shift(int mode, const char *name);
void case_read_during_shift(int mode, const char *name);
void case_pageout(int mode, const char *name);
void case_pageout_huge(int mode, long long page, const char *name);
void case_pageout_mthp(int mode, const char *name);
void case_userfaultfd(int mode, const char *name);
void case_sysv_shm(int mode, const char *name);
void case_memcg(int mode, const char *name);
void case_reflink(int mode, int whole, const char *name);
void case_tool(const char *tool, int mode, long long off,
	       long long len, int fsans, const char *name);

#endif /* FCHECK_H */
