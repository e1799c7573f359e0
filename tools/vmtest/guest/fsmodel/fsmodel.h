/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fsmodel: a seeded model checker for fallocate(FALLOC_FL_COLLAPSE_RANGE)
 * and fallocate(FALLOC_FL_INSERT_RANGE) on one mounted filesystem.
 *
 * A random stream of operations, drawn from a seed, is applied to a file
 * and to an in-memory model of its bytes; every read is compared with the
 * model.  A concurrent run races reads and writes against the shifts, and
 * a crash workload and its checker judge what is on disk after the
 * machine dies.  `fsmodel --help` describes the modes; docs/design.rst
 * the model and the rules.
 *
 * One program, built from every .c file of this directory; this header
 * holds what more than one of them shares.  The files:
 *   main.c        the settings and failure notes, the reports, the model
 *                 run, the options and main()
 *   model.c       the random stream, the data written and its names, the
 *                 model of a file (struct state), the seal rules, apply()
 *   gen.c         the operations, their weights and the generator
 *   target.c      the file under test: open, map, remount, step(),
 *                 check_file(), probe(), the memory pressure of -P
 *   concurrent.c  the concurrent run: the accessor and shifter threads,
 *                 the plans of each round, the run
 *   conc_judge.c  its accesses, the reader threads, the outcome classes
 *                 and the judging of what the accesses saw
 *   conc_readers.c the reader classes besides pread and the mapping:
 *                 splice, sendfile, copy_file_range, RWF_NOWAIT, io_uring
 *   conc_swap.c   the swap racer and split probe (-R), the 64 KiB folios
 *                 of shared anonymous memory (-A), the memory cgroup (-H)
 *   crash.c       the crash workload and its checker
 */
#ifndef FSMODEL_H
#define FSMODEL_H

/* Before any libc header, in every file: each includes this one first. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../uring.h"

#define TAG_PWRITE	'P'	/* written with pwrite by the model run */
#define TAG_MWRITE	'M'	/* written through the mapping */
#define TAG_CWRITE	'C'	/* pwrite of the concurrent run */
#define TAG_CSTORE	'c'	/* store through the mapping, concurrent run */
#define TAG_FILL	'F'	/* the concurrent run's initial contents */
#define HISTORY		16	/* operations printed on a failure */
#define SECTOR		512

/* ------------------------------------------------------------------ */
/* Settings and failure notes (main.c). */

extern const char *fs_name, *dir;
extern int memfd_mode;			/* --memfd */
extern long long pressure_mib;		/* -P */
extern long long unit, blksz, pagesz, maxlen, cap;
extern long long nops, nrounds;
extern unsigned long long seed;
extern char diag[32768];		/* "# " lines explaining a failure */

void note(const char *fmt, ...);
void *xmalloc(size_t n);
double now(void);
const char *ename(int e);
/* One TAP line; @answer is OK, the errno a call answered, or a finding. */
void report(const char *tcase, int ok, const char *answer,
	    const char *fmt, ...);
void progress(const char *what, long long done, long long total,
	      double start);

/* ------------------------------------------------------------------ */
/* Random numbers: one stream per run, from the seed alone (model.c). */

struct rng {
	uint64_t s;
};

long long below(struct rng *r, long long n);
int chance(struct rng *r, int percent);
long long clamp(long long x, long long lo, long long hi);

/* The data written, and what a word of it is (model.c). */
uint64_t word_of(int tag, uint64_t opn, long long off);
void fill(unsigned char *buf, int tag, uint64_t opn, long long off,
	  long long len);
const char *describe(uint64_t w);
int same_bytes(const char *what, const unsigned char *got,
	       const unsigned char *want, long long off, long long n);

/*
 * The model of one file: its bytes and its size.  Bytes at and past the
 * size are kept zero, which is what a file reads there once it grows.
 */
struct state {
	unsigned char *data;	/* cap bytes */
	long long size;
	int seals;		/* --memfd: F_GET_SEALS */
};

void st_init(struct state *s);
void st_copy(struct state *d, const struct state *s);
unsigned char cand_byte(const struct state *s, long long x);
void st_truncate(struct state *s, long long size);
void st_collapse(struct state *s, long long off, long long len);
void st_insert(struct state *s, long long off, long long len);

/* ------------------------------------------------------------------ */
/* Operations (gen.c), and what they do to the model (model.c). */

enum kind {
	K_PWRITE, K_PREAD, K_MWRITE, K_MREAD, K_TRUNCATE, K_PUNCH, K_ZERO,
	K_COLLAPSE, K_INSERT, K_FSYNC, K_FDATASYNC, K_DROP, K_PAGEOUT, K_REMOUNT,
	K_SEAL, K_RENEW, NKINDS
};

/* An operation's name, what it does, and its weights (gen.c: kinds[]). */
struct kind_info {
	const char *name, *what;
	int model, crash;
};

extern const struct kind_info kinds[NKINDS];
extern int left_out[NKINDS];	/* -x, or not supported here */

struct op {
	long long n;		/* 1, 2, ... */
	enum kind kind;
	long long off, len;	/* truncate: the new size in len; seal: off */
	int keep;		/* zero: FALLOC_FL_KEEP_SIZE */
	int expect;		/* 0, or the errno the call must fail with */
	int got;		/* what it answered */
};

struct mix {
	int weight[NKINDS];
	int total;
};

void op_text(const struct op *op, char *buf, size_t n);
long long pick_off(struct rng *r, long long size, long long limit);
long long pick_len(struct rng *r, long long limit);
void gen_shift(struct rng *r, long long size, struct op *op,
	       int invalid, long long most);
void mix_init(struct mix *mx, int crash);
void gen_op(struct rng *r, const struct mix *mx, long long size,
	    struct op *op);
void seal_rules(struct op *op, int sealed, long long size);
void apply(struct state *m, const struct op *op, unsigned char *buf,
	   int filled);

/* ------------------------------------------------------------------ */
/* The file under test (target.c). */

struct target {
	char path[PATH_MAX];
	int fd;
	unsigned char *map;	/* shared mapping of maplen bytes */
	long long maplen;
	int readonly;		/* the mapping, once the file is F_SEAL_WRITE */
	unsigned char *buf;	/* cap bytes */
	/* Where the filesystem is mounted from, for remount. */
	char source[PATH_MAX], type[64];
};

/* The SIGBUS a touch of the mapping past EOF raises lands here. */
extern __thread sigjmp_buf bus_jump;
extern __thread volatile sig_atomic_t bus_armed;

void on_sigbus(int sig);
int map_copy(void *dst, const void *src, long long n, long long off);
int xfallocate(int fd, int mode, long long off, long long len);
int pwrite_all(int fd, const unsigned char *buf, long long len,
	       long long off);
long long pread_all(int fd, unsigned char *buf, long long len,
		    long long off);
int open_target(struct target *t, int create);
void close_target(struct target *t);
int mode_of(const struct op *op);
int step(struct target *t, struct state *m, struct op *op);
int check_file(struct target *t, const struct state *m, const char *when);
void name_target(struct target *t, const char *file);
int setup_target(struct target *t, const char *file);
void probe(struct target *t);

/* Memory pressure, -P (target.c). */
#define PRESSURE_WAIT_S		300	/* -P: the longest wait for a swapped page */

extern long long *pressure_loops;	/* shared with the touching child */

long long proc_field(const char *file, const char *key);
int start_pressure(void);
int stop_pressure(void);
long long pages_swapped(struct target *t, const struct state *m);

/* ------------------------------------------------------------------ */
/*
 * The concurrent run (concurrent.c, which describes it), its judging
 * (conc_judge.c) and what races the shifts besides the readers
 * (conc_swap.c).
 */

#define MAX_ACCESSES	12
/*
 * Reader threads of the second part.  Where the filesystem excludes a
 * reader class from a shift (splice reads under ext4's i_rwsem or xfs's
 * IOLOCK), each reader overlaps a shift at most once a round, blocked
 * until it ends: the splice family's floor (-O) needs many of them.
 */
#define READERS		16
#define READERS_SWAP	4	/* with -R or huge pages: see concurrent.c */
/*
 * fsmodel.reads: at most 1024 pages on tmpfs (4 MiB with 4 KiB pages),
 * whose shift never sleeps: it overlaps a read only when preempted, so it
 * must move many entries (256 pages gave too few overlapping reads on an
 * idle host, and so did 4 MiB of 64 KiB pages); 1 MiB elsewhere, where
 * shifts wait for the disk and f2fs moves block by block: more than one
 * xarray node (64 entries), so that reads and moves cross nodes.
 */
#define READ_FILE_TMPFS_PAGES	1024
#define READ_FILE	(1 << 20)
#define READ_PAGES	64	/* a read of the second part: at most */
#define READS_AFTER	2	/* reads a reader makes once the shift returned */
#define READS_MOST	4000	/* reads of a reader in one part, at most */

/*
 * The accesses.  The first part uses the first four; the readers of the
 * second part every kind but the writes.  From A_SPLICE on, each is a
 * reader class of conc_readers.c, judged as a pread is.
 */
enum access_kind { A_PREAD, A_PWRITE, A_MREAD, A_MSTORE, A_SEEK,
		   A_SPLICE, A_SENDFILE, A_COPY, A_NOWAIT, A_URING,
		   NR_ACCESS_KINDS };
/* Does the access read the file through a system call, a page a granule? */
#define IS_READ(kind)	((kind) == A_PREAD || (kind) >= A_SPLICE)

/* The classes of what the rules do not explain, which -a can allow. */
enum { C_RACE, C_RACE_EOF, C_RACE_GROW, C_RACE_SEEK, C_RACE_FILE,
       NCLASSES, C_OK = NCLASSES };
extern const char *const class_names[NCLASSES];
extern const char *const class_cases[NCLASSES];
/* -a CLASS=N: at most N outcomes every 100 rounds (0: none allowed) */
extern long long class_max[NCLASSES];
extern long long overlap_floor;		/* -o; -1: ten reads a round */
extern long long class_floor;		/* -O; -1: half a read a round */
extern int swap_racer;			/* -R */
extern int anon_reads;			/* -A */
extern long long swap_floor;		/* -w; -1: half the rounds */
extern long long memcg_high_kib;	/* -H */

/* The cases the concurrent run reports. */
#define CONC_CASES	(3 + NCLASSES + !!swap_racer)

struct access {
	enum access_kind kind;
	long long off, len;
	int whence;		/* A_SEEK */
	int drop;		/* A_URING: its range dropped from the cache first */
	long delay_us;		/* before the access (first part) */
	long long got;		/* bytes read, the offset found, or an errno */
	int d0, s1;		/* "done" before it, "started" after it */
};

/*
 * The swap racer's calls, and the second parts' shifts that ran while
 * pages went out to swap or came back (/proc/vmstat's pswpout and pswpin
 * grew between just before and just after the call).
 */
struct swap_tally {
	long long pageouts, pageouts_during;
	long long collapses, collapses_during, collapsed;
	long long shifts_swapout, shifts_swapin;
	long long shifts_mthp_swapout;		/* -A: 64 KiB folios whole */
	/* Splits by any task but the shifter, seen by split_probe_start(). */
	long long splits, splits_during, shifts_split;
};

/* What ran while a shift was in progress, and the waived outcomes. */
struct tally {
	long long reads, loads, seeks;		/* overlapping */
	long long by_kind[NR_ACCESS_KINDS];	/* overlapping, each kind */
	long long continued;	/* reads a second call ended (two_calls()) */
	long long again;	/* RWF_NOWAIT reads that met EAGAIN */
	long long short_copies;	/* sendfile, copy_file_range: less than asked */
	long long accesses;
	long long outcome[NCLASSES];
};

struct conc;

struct reader {
	struct conc *c;
	pthread_t th;
	int id;
	unsigned char *buf;
	struct tally tally;
	/* conc_readers.c: what the reader classes read through and into. */
	int pipefd[2];		/* splice: a pipe of READ_PAGES pages */
	int send_fd;		/* sendfile: into this memfd */
	int copy_fd;		/* copy_file_range: a file of the same fs */
	struct uring ring;
	int nowait_refused;	/* RWF_NOWAIT: EOPNOTSUPP on this file */
};

struct conc {
	struct target t, rt;	/* fsmodel.conc, fsmodel.reads */
	pthread_barrier_t go, end;
	int quit, part;		/* part: 1 or 2 */
	/* The round, planned by the main thread. */
	long long round;
	struct state start;
	struct op shift;
	long shift_delay_us;
	struct access acc[MAX_ACCESSES];
	int nacc;
	/* The second part: its file before and after the shift. */
	struct state rpre, rpost;
	long long rmax;		/* its largest size */
	struct op rshift;
	struct reader readers[READERS];
	int nreaders;		/* READERS, or READERS_SWAP with -R or huge pages */
	pthread_mutex_t lock;	/* notes and failed, from the readers */
	long long noted[NCLASSES];	/* the readers' outcomes noted */
	/* Set by the shifter around its call: atomics. */
	int started, done;
	int huge;		/* fsmodel.reads' mount has huge pages (-R) */
	struct swap_tally swap;	/* -R: the racer's, and the shifter's */
	double rshift_t[2];	/* -R: when the second part's shift ran */
	int probe_failed;	/* -R: split_probe_start() failed */
	double shift_s[2];	/* the time in its calls, in each part */
	/* The accessor's candidates and findings. */
	struct state cand[MAX_ACCESSES + 2];
	int alive[MAX_ACCESSES + 2];
	int ncand, current;	/* current: the cut made from cand[0] as it is */
	int failed;		/* an error: the run stops */
	struct tally tally;	/* the accessor's, then the main thread's */
	unsigned char *buf;
};

/* concurrent.c */
void pause_us(long us);
int is_set(int *flag);
void concurrent_run(void);

/* conc_judge.c */
extern const char *const access_names[NR_ACCESS_KINDS];
void shift_state(struct state *s, const struct op *shift);
void access_round(struct conc *c);
void *reader(void *arg);
int judge_round(struct conc *c);
int judge_rround(struct conc *c);

/* conc_readers.c */
int readers_open(struct reader *rd, const struct target *t);
void readers_close(struct reader *rd);
int read_by(struct reader *rd, const struct target *t, struct access *a,
	    unsigned char *buf);

/* conc_swap.c; -A sets 64 KiB folios for shmem here, and sets it back. */
#define MTHP_DIR	"/sys/kernel/mm/transparent_hugepage/hugepages-64kB"

extern char mthp_was[32];	/* shmem_enabled before the run */

int mount_has_huge(void);
int write_file(const char *file, const char *what);
int split_probe_start(long shifter);
void split_probe_stop(void);
int split_probe_count(struct swap_tally *t, double t0, double t1);
long long mthp_swpout(void);
int anon_store(struct target *t, const struct state *s);
int anon_file(struct target *t, struct state *s, long long size,
	      long long most);
void *racer(void *arg);
int enter_memcg(long long kib);

/* ------------------------------------------------------------------ */
/* The crash workload and its checker (crash.c). */

extern const char *mark_dev;	/* -L: the dm-log-writes device to mark */
extern const char *crash_at;	/* -X before, during or after; NULL: none */
extern long long crash_shift;	/* -T: at the valid shift numbered this */
extern char *crash_others;	/* -F: the workloads the crash must find busy */

int crash_workload(const char *log);
void crash_check(long long durable, long long last);

#endif /* FSMODEL_H */
