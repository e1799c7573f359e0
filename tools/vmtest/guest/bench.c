// SPDX-License-Identifier: GPL-2.0
/*
 * bench: time fallocate(FALLOC_FL_COLLAPSE_RANGE) and
 * fallocate(FALLOC_FL_INSERT_RANGE) against the user-space alternative on
 * one mounted filesystem, for `make bench`.
 *
 * usage: bench -n NAME -d DIR [-r REPS] [-t SECONDS] -p PLAN [-p PLAN]...
 *
 * A PLAN is SIZES/LENS/WHERES/CACHES[/EXTENTS], each part a comma
 * separated list, and stands for every combination of its parts:
 *   SIZES    file sizes in MiB;
 *   LENS     range lengths with a k or m suffix (4k, 1m, 2m);
 *   WHERES   0 (the start of the file) or mid (its middle, rounded down
 *            to a multiple of the length);
 *   CACHES   warm (all of the file in the page cache before the call) or
 *            cold (caches dropped before the call); tmpfs has no cold
 *            case: its page cache is the file;
 *   EXTENTS  build the file from this many extents (see make_file());
 *            without it the file is written sequentially.
 * Plans run in the order given, each from its smallest file up; a
 * combination that an earlier plan had is not measured again, nor one
 * whose range is more than half the file.
 *
 * Every case is measured REPS times (default 5), and in each repetition
 * the two methods run side by side on the same file, the kernel's first
 * in odd repetitions and user space's first in even ones:
 *   kernel  fallocate(COLLAPSE_RANGE), then fallocate(INSERT_RANGE) of
 *           the same range, which gives the file its size back;
 *   user    what a program does without the flags: shift the tail down
 *           with pread/pwrite and ftruncate (collapse), or up from the end
 *           and zero the gap (insert).
 * Each call is followed by fsync (not on tmpfs, where it does nothing),
 * and the fsync is timed with the call.  In a warm case the whole file
 * is then read back (pread through a CHUNK buffer, at its new size) and
 * timed on its own: the reread, what the program that made the call pays
 * to see its file again.  After an insert the gap is
 * written again, untimed, so every repetition starts from a fully
 * written file.  A kernel that answers EOPNOTSUPP is recorded as
 * "unsupported"; the user-space method is measured all the same.
 *
 * -t SECONDS is this filesystem's time budget: a method whose
 * repetitions would end past it, as predicted from the cases measured
 * before (see predict()), rereads included, is not run and is recorded
 * as "skipped"; the user-space method runs only beside the kernel's.
 *
 * Output on stdout, one line each:
 *   sample,NAME,SIZE_MIB,EXTENTS_ASKED,EXTENTS,OP,LEN,WHERE,CACHE,METHOD,REP,SECONDS,CACHED_PCT,REREAD_SECONDS,STATUS
 *     one timed call: EXTENTS is FIEMAP's count when the file was built
 *     (-1: no FIEMAP), CACHED_PCT the share of the file's pages in the
 *     page cache right after the call (mincore on a fresh mapping; in the
 *     first repetition only), REREAD_SECONDS the reread after it (warm
 *     cases only), STATUS ok, unsupported, skipped (REP 0) or an errno
 *     name;
 *   progress TEXT
 *     what is being done, for the person watching.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define MIB		(1024LL * 1024)
#define CHUNK		MIB		/* the user-space method's buffer */
#define MAX_LIST	16
#define MAX_CASES	512
#define MAX_REPS	50

enum { COLLAPSE, INSERT };
enum { KERNEL, USER };
enum { WARM, COLD };

static const char *const op_names[] = { "collapse", "insert" };
static const char *const method_names[] = { "kernel", "user" };
static const char *const cache_names[] = { "warm", "cold" };

struct bench_case {
	long long size;		/* bytes */
	long long len;		/* bytes */
	int mid;		/* 0: at offset 0; 1: in the middle */
	int cache;		/* WARM or COLD */
	int extents;		/* asked for; 0: written sequentially */
	int order;		/* place in the plans: the priority */
	double cost[2];		/* seconds per repetition of each method,
				   once measured: all it did, from
				   preparing the file to the rereads */
};

/* A file built, for predicting what the next one costs. */
struct built {
	long long size;
	int extents;
	double seconds;
};

static const char *fs_name, *dir;
static int reps = 5;
static double budget, started;
static int is_tmpfs;
static struct bench_case cases[MAX_CASES];
static int ncases;
static struct built built[MAX_CASES];
static int nbuilt;
static char *buf;		/* CHUNK bytes, aligned for O_DIRECT */
static char *pattern;		/* CHUNK bytes of file data */
static char data_path[4096], other_path[4096];

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("progress %s: ERROR: ", fs_name);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	exit(1);
}

static void progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("progress %s: ", fs_name);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *len_name(long long len)
{
	static char s[32];

	if (len % MIB == 0)
		snprintf(s, sizeof(s), "%lldm", len / MIB);
	else
		snprintf(s, sizeof(s), "%lldk", len / 1024);
	return s;
}

/* "16 MiB, 4k at 0, warm" and the like. */
static const char *case_name(const struct bench_case *c)
{
	static char s[128];
	char frag[32] = "";

	if (c->extents)
		snprintf(frag, sizeof(frag), " of %d extents", c->extents);
	snprintf(s, sizeof(s), "%lld MiB%s, %s at %s, %s", c->size / MIB, frag,
		 len_name(c->len), c->mid ? "mid" : "0", cache_names[c->cache]);
	return s;
}

/* ------------------------------------------------------------------ */
/* Plans. */

/* Split @s at commas into at most MAX_LIST words; returns how many. */
static int split(char *s, char **words)
{
	int n = 0;
	char *save = NULL, *w;

	for (w = strtok_r(s, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (n == MAX_LIST)
			die("more than %d values in a list", MAX_LIST);
		words[n++] = w;
	}
	return n;
}

static long long parse_len(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (!strcmp(end, "k"))
		return v * 1024;
	if (!strcmp(end, "m"))
		return v * MIB;
	die("bad length '%s' (want 4k, 1m, ...)", s);
	return 0;
}

static int same_file(const struct bench_case *x, const struct bench_case *y)
{
	return x->size == y->size && x->extents == y->extents;
}

/* Cases on the same file together, smaller files first. */
static int by_file(const void *a, const void *b)
{
	const struct bench_case *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	if (x->extents != y->extents)
		return x->extents - y->extents;
	return x->order - y->order;
}

static void add_case(const struct bench_case *c)
{
	int i;

	for (i = 0; i < ncases; i++)
		if (same_file(&cases[i], c) && cases[i].len == c->len &&
		    cases[i].mid == c->mid && cases[i].cache == c->cache)
			return;
	if (ncases == MAX_CASES)
		die("more than %d cases", MAX_CASES);
	cases[ncases] = *c;
	cases[ncases].order = ncases;
	ncases++;
}

static void add_plan(const char *text)
{
	char *copy = strdup(text), *part[6], *save = NULL;
	char *sizes[MAX_LIST], *lens[MAX_LIST], *wheres[MAX_LIST];
	char *caches[MAX_LIST], *extents[MAX_LIST] = { "0" };
	int nparts = 0, ns, nl, nw, nc, ne = 1, first = ncases;
	int s, l, w, c, e;
	struct bench_case bc;

	while (nparts < 6 &&
	       (part[nparts] = strtok_r(nparts ? NULL : copy, "/", &save)))
		nparts++;
	if (nparts < 4 || nparts > 5)
		die("bad plan '%s' (want SIZES/LENS/WHERES/CACHES[/EXTENTS])", text);
	ns = split(part[0], sizes);
	nl = split(part[1], lens);
	nw = split(part[2], wheres);
	nc = split(part[3], caches);
	if (nparts == 5)
		ne = split(part[4], extents);
	for (s = 0; s < ns; s++)
	for (l = 0; l < nl; l++)
	for (w = 0; w < nw; w++)
	for (c = 0; c < nc; c++)
	for (e = 0; e < ne; e++) {
		memset(&bc, 0, sizeof(bc));
		bc.size = atoll(sizes[s]) * MIB;
		bc.len = parse_len(lens[l]);
		if (bc.size <= 0 || bc.len <= 0 || bc.len % 4096)
			die("bad size or length in plan '%s'", text);
		/* A range of more than half the file is not a shift. */
		if (bc.len * 2 > bc.size)
			continue;
		if (strcmp(wheres[w], "0") && strcmp(wheres[w], "mid"))
			die("bad place '%s' (want 0 or mid)", wheres[w]);
		bc.mid = !strcmp(wheres[w], "mid");
		if (strcmp(caches[c], "warm") && strcmp(caches[c], "cold"))
			die("bad cache '%s' (want warm or cold)", caches[c]);
		bc.cache = !strcmp(caches[c], "cold") ? COLD : WARM;
		bc.extents = atoi(extents[e]);
		if (bc.extents < 0 ||
		    (bc.extents && (bc.size / bc.extents) % 4096))
			die("cannot build %lld MiB of %d extents of whole pages",
			    bc.size / MIB, bc.extents);
		if (!(is_tmpfs && bc.cache == COLD))
			add_case(&bc);
	}
	qsort(cases + first, ncases - first, sizeof(cases[0]), by_file);
	free(copy);
}

/* ------------------------------------------------------------------ */
/* Files. */

/* pwrite (@write) or pread all @len bytes at @off, or die. */
static void io_all(int write, int fd, char *p, long long len, long long off)
{
	while (len > 0) {
		ssize_t n = write ? pwrite(fd, p, len, off) : pread(fd, p, len, off);

		if (n <= 0)
			die("%s at %lld: %s", write ? "pwrite" : "pread", off,
			    strerror(n ? errno : EIO));
		p += n;
		off += n;
		len -= n;
	}
}

static long long file_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		die("fstat: %s", strerror(errno));
	return st.st_size;
}

/* Write @len bytes of file data at @off, in CHUNK pieces. */
static void write_data(int fd, long long off, long long len)
{
	while (len > 0) {
		long long n = len < CHUNK ? len : CHUNK;

		io_all(1, fd, pattern, n, off);
		off += n;
		len -= n;
	}
}

/* Read all of the file through buf, which leaves it all in the page cache. */
static void read_file(int fd)
{
	long long size = file_size(fd), off, n;

	for (off = 0; off < size; off += n) {
		n = size - off < CHUNK ? size - off : CHUNK;
		io_all(0, fd, buf, n, off);
	}
}

static int fiemap_extents(int fd)
{
	struct fiemap fm;

	memset(&fm, 0, sizeof(fm));
	fm.fm_length = FIEMAP_MAX_OFFSET;
	fm.fm_flags = FIEMAP_FLAG_SYNC;
	if (ioctl(fd, FS_IOC_FIEMAP, &fm))
		return -1;
	return (int)fm.fm_mapped_extents;
}

/*
 * ext4's mb_stream_req in sysfs: files smaller than this many blocks share
 * one preallocation per CPU; larger ones get one of their own.  NULL
 * when @fd is not on ext4.
 */
static const char *ext4_stream_req(int fd)
{
	static char knob[4096];
	char link[4096], dev[64];
	struct statfs sfs;
	struct stat st;
	ssize_t n;

	if (fstatfs(fd, &sfs) || sfs.f_type != EXT4_SUPER_MAGIC || fstat(fd, &st))
		return NULL;
	snprintf(dev, sizeof(dev), "/sys/dev/block/%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	n = readlink(dev, link, sizeof(link) - 1);
	if (n < 0)
		die("readlink %s: %s", dev, strerror(errno));
	link[n] = 0;
	snprintf(knob, sizeof(knob), "/sys/fs/ext4/%s/mb_stream_req",
		 strrchr(link, '/') + 1);
	return knob;
}

static long long read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	long long v;

	if (!f || fscanf(f, "%lld", &v) != 1)
		die("read %s: %s", path, strerror(errno));
	fclose(f);
	return v;
}

static void write_number(const char *path, long long v)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%lld\n", v) < 0 || fclose(f))
		die("write %s: %s", path, strerror(errno));
}

/*
 * The test file: @size bytes, written sequentially, or as @extents
 * extents by appending to it and to a second file in turns with O_DIRECT,
 * which allocates at each write (buffered writes would be allocated at
 * writeback, each file in one run).  ext4 would still give each file a
 * preallocation of its own, so for the while the two files share ext4's
 * per-CPU one and are allocated in write order.  The second file stays
 * until the cases of this file are done, so the gaps stay taken.
 */
static int make_file(long long size, int extents)
{
	const char *knob = NULL;
	long long piece, off, stream_req = 0;
	int fd, other;

	unlink(data_path);
	unlink(other_path);
	fd = open(data_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("create %s: %s", data_path, strerror(errno));
	if (extents <= 1) {
		write_data(fd, 0, size);
	} else {
		piece = size / extents;
		other = open(other_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (other < 0)
			die("create %s: %s", other_path, strerror(errno));
		knob = ext4_stream_req(fd);
		if (knob) {
			stream_req = read_number(knob);
			write_number(knob, 4 * size / 4096);
		}
		if (fcntl(fd, F_SETFL, O_DIRECT) || fcntl(other, F_SETFL, O_DIRECT))
			die("O_DIRECT: %s", strerror(errno));
		for (off = 0; off < size; off += piece) {
			write_data(fd, off, piece);
			write_data(other, off, piece);
		}
		if (knob)
			write_number(knob, stream_req);
		if (fcntl(fd, F_SETFL, 0) || fsync(other))
			die("fsync: %s", strerror(errno));
		close(other);
	}
	if (fsync(fd))
		die("fsync: %s", strerror(errno));
	return fd;
}

/* ------------------------------------------------------------------ */
/* The two methods. */

static void user_collapse(int fd, long long off, long long len)
{
	long long size = file_size(fd), pos, n;

	for (pos = off + len; pos < size; pos += n) {
		n = size - pos < CHUNK ? size - pos : CHUNK;
		io_all(0, fd, buf, n, pos);
		io_all(1, fd, buf, n, pos - len);
	}
	if (ftruncate(fd, size - len))
		die("ftruncate: %s", strerror(errno));
}

static void user_insert(int fd, long long off, long long len)
{
	long long end = file_size(fd), n, zero;

	/* From the end backwards: no byte is overwritten before it moved. */
	for (; end > off; end -= n) {
		n = end - off < CHUNK ? end - off : CHUNK;
		io_all(0, fd, buf, n, end - n);
		io_all(1, fd, buf, n, end - n + len);
	}
	/* The gap reads zero, as the kernel's hole does. */
	memset(buf, 0, CHUNK);
	for (zero = 0; zero < len; zero += n) {
		n = len - zero < CHUNK ? len - zero : CHUNK;
		io_all(1, fd, buf, n, off + zero);
	}
}

/* One timed call and its fsync; returns 0 or the kernel's errno. */
static int timed_call(int fd, int op, int method, long long off,
		      long long len, double *seconds)
{
	double start = now();

	if (method == KERNEL) {
		int mode = op == COLLAPSE ? FALLOC_FL_COLLAPSE_RANGE :
					    FALLOC_FL_INSERT_RANGE;

		if (fallocate(fd, mode, off, len))
			return errno;
	} else if (op == COLLAPSE) {
		user_collapse(fd, off, len);
	} else {
		user_insert(fd, off, len);
	}
	if (!is_tmpfs && fsync(fd))
		die("fsync: %s", strerror(errno));
	*seconds = now() - start;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Cache state. */

static void drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	sync();
	if (fd < 0 || write(fd, "3", 1) != 1)
		die("drop caches: %s", strerror(errno));
	close(fd);
}

/* The share of the file's pages in the page cache, in percent. */
static double cached_pct(int fd)
{
	long long size = file_size(fd), pages, i, in = 0;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *vec;
	void *map;

	pages = (size + page - 1) / page;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	vec = malloc(pages);
	if (map == MAP_FAILED || !vec || mincore(map, size, vec))
		die("mincore: %s", strerror(errno));
	for (i = 0; i < pages; i++)
		in += vec[i] & 1;
	munmap(map, size);
	free(vec);
	return 100.0 * in / pages;
}

/*
 * Before every timed call everything is on disk (syncfs: f2fs also
 * writes a checkpoint, so the file is in the state of a file written
 * some time ago), and the page cache holds all of the file (warm) or
 * none of it (cold).  @cached: all of it is known to be cached already.
 */
static void prepare(int fd, int cache, int cached)
{
	if (is_tmpfs)
		return;
	if (syncfs(fd))
		die("syncfs: %s", strerror(errno));
	if (cache == COLD) {
		drop_caches();
		return;
	}
	if (!cached)
		read_file(fd);
}

/* ------------------------------------------------------------------ */
/* The time budget. */

static double left(void)
{
	return budget - (now() - started);
}

/*
 * Seconds all repetitions of @method will take in case @c, rereads
 * included, from the cases of its series measured before (their cost is
 * all their repetitions did): same method, cache state and range, and
 * along the file size (files written sequentially) or along the extent
 * count (fragmented files of one size).  Through the last two points a
 * straight line; from one point, proportional to the file size (and no
 * growth along extents).  Without any, proportional to the file size
 * from the most alike case of all; 0 when nothing was measured yet.
 */
static double predict(const struct bench_case *c, int method)
{
	const struct bench_case *p1 = NULL, *p2 = NULL, *alike = NULL, *k;
	int along_extents = c->extents > 0, i, score, best_score = -1;
	double x, x1, x2, slope;

	for (i = 0; i < ncases; i++) {
		k = &cases[i];
		if (k->cost[method] <= 0)
			continue;
		score = 2 * (k->cache == c->cache) +
			(k->len == c->len && k->mid == c->mid);
		if (score > best_score) {
			alike = k;
			best_score = score;
		}
		if (score < 3 || (along_extents ?
		    k->size != c->size || !k->extents || k->extents >= c->extents :
		    k->extents || k->size >= c->size))
			continue;
		x = along_extents ? k->extents : k->size;
		if (!p2 || x > (along_extents ? p2->extents : p2->size)) {
			p1 = p2;
			p2 = k;
		} else if (!p1 || x > (along_extents ? p1->extents : p1->size)) {
			p1 = k;
		}
	}
	x = along_extents ? c->extents : c->size;
	if (p1) {
		x1 = along_extents ? p1->extents : p1->size;
		x2 = along_extents ? p2->extents : p2->size;
		slope = (p2->cost[method] - p1->cost[method]) / (x2 - x1);
		return reps * (p2->cost[method] + (slope > 0 ? slope : 0) * (x - x2));
	}
	if (p2)
		return reps * p2->cost[method] *
		       (along_extents ? 1 : (double)c->size / p2->size);
	if (alike)
		return reps * alike->cost[method] * c->size / alike->size;
	return 0;
}

/*
 * Seconds building the file of case @c will take.  Writing it costs time
 * in proportion to its size, as the last file written sequentially did;
 * a fragmented one costs more in proportion to its extent count, as the
 * last fragmented one did beyond its writing.  0 when nothing was built.
 */
static double predict_build(const struct bench_case *c)
{
	const struct built *plain = NULL, *frag = NULL;
	double write_rate, more = 0;
	int i;

	for (i = 0; i < nbuilt; i++) {
		if (built[i].extents > 1)
			frag = &built[i];
		else
			plain = &built[i];
	}
	if (!plain)
		return 0;
	write_rate = plain->seconds / plain->size;
	if (c->extents > 1 && frag)
		more = (frag->seconds - write_rate * frag->size) *
		       c->extents / frag->extents;
	return write_rate * c->size + (more > 0 ? more : 0);
}

/* ------------------------------------------------------------------ */
/* Cases. */

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *errno_name(int e)
{
	static char s[32];

	switch (e) {
	case EOPNOTSUPP:
		return "unsupported";
	case EINVAL:
		return "EINVAL";
	case ENOSPC:
		return "ENOSPC";
	case EIO:
		return "EIO";
	}
	snprintf(s, sizeof(s), "E%d", e);
	return s;
}

/*
 * One sample line; @status NULL means the call succeeded, @pct < 0 that
 * the cached share was not taken, @reread < 0 that the file was not read
 * back.
 */
static void emit(const struct bench_case *c, int extents, int op, int method,
		 int rep, double seconds, double pct, double reread,
		 const char *status)
{
	printf("sample,%s,%lld,%d,%d,%s,%lld,%s,%s,%s,%d,", fs_name,
	       c->size / MIB, c->extents, extents, op_names[op], c->len,
	       c->mid ? "mid" : "0", cache_names[c->cache],
	       method_names[method], rep);
	if (status) {
		printf(",,,%s\n", status);
		return;
	}
	printf("%.6f,", seconds);
	if (pct >= 0)
		printf("%.1f", pct);
	printf(",");
	if (reread >= 0)
		printf("%.6f", reread);
	printf(",ok\n");
}

/*
 * Progress: what each operation took by each method (and the reread
 * after it, in a warm case), and the ratio of the calls.
 */
static void summarise(const struct bench_case *c, const int run[2],
		      double t[2][2][MAX_REPS], double again[2][2][MAX_REPS],
		      const int done[2][2], const double pct[2][2],
		      const int failed[2])
{
	char kernel[128], user[64], reread[2][48];
	int op, method;

	for (op = COLLAPSE; op <= INSERT; op++) {
		double k = 0, u = 0;

		for (method = KERNEL; method <= USER; method++) {
			reread[method][0] = 0;
			if (c->cache == WARM && done[method][op])
				snprintf(reread[method], sizeof(reread[method]),
					 " then reread %.4f s",
					 median(again[method][op], done[method][op]));
		}
		snprintf(user, sizeof(user), "skipped");
		if (done[USER][op]) {
			u = median(t[USER][op], done[USER][op]);
			snprintf(user, sizeof(user), "%.4f s%s", u, reread[USER]);
		}
		snprintf(kernel, sizeof(kernel), "%s", !run[KERNEL] ? "skipped" :
			 errno_name(failed[op]));
		if (done[KERNEL][op]) {
			k = median(t[KERNEL][op], done[KERNEL][op]);
			snprintf(kernel, sizeof(kernel), "%.4f s (%.0f%% cached after)%s",
				 k, pct[KERNEL][op], reread[KERNEL]);
		}
		if (k > 0 && u > 0)
			progress("%s %s: user %s, kernel %s: user/kernel %.1fx",
				 op_names[op], case_name(c), user, kernel, u / k);
		else
			progress("%s %s: user %s, kernel %s", op_names[op],
				 case_name(c), user, kernel);
	}
}

/*
 * Measure case @c on the open file @fd with the methods @run names: REPS
 * repetitions of collapse then insert, by the kernel and in user space,
 * which goes first alternating.  A call the kernel refuses is not tried
 * again in this case.  What stays cached after each call is the same in
 * every repetition, and mincore on a large file is slow under emulation:
 * it is taken in the first.  In a warm case the file is then read back,
 * timed, which leaves all of it cached for the next call.
 */
static void run_case(int fd, struct bench_case *c, int extents,
		     const int run[2])
{
	long long off = c->mid ? c->size / 2 / c->len * c->len : 0;
	double t[2][2][MAX_REPS], again[2][2][MAX_REPS], pct[2][2] = { { 0 } };
	double seconds = 0, reread, start;
	int done[2][2] = { { 0 } }, failed[2] = { 0, 0 }, cached = 0;
	int rep, turn, method, op, err;

	for (rep = 1; rep <= reps; rep++) {
		for (turn = 0; turn < 2; turn++) {
			/* The kernel first in odd repetitions, user space in even. */
			method = rep % 2 ? turn : !turn;
			if (!run[method])
				continue;
			start = now();
			for (op = COLLAPSE; op <= INSERT; op++) {
				if (method == KERNEL && failed[op])
					continue;
				prepare(fd, c->cache, cached);
				cached = c->cache == WARM;
				err = timed_call(fd, op, method, off, c->len, &seconds);
				if (err) {
					emit(c, extents, op, method, rep, 0, 0, 0,
					     errno_name(err));
					failed[op] = err;
					continue;
				}
				if (rep == 1)
					pct[method][op] = cached_pct(fd);
				reread = -1;
				if (c->cache == WARM) {
					reread = now();
					read_file(fd);
					reread = now() - reread;
					again[method][op][done[method][op]] = reread;
				}
				emit(c, extents, op, method, rep, seconds,
				     rep == 1 ? pct[method][op] : -1, reread, NULL);
				t[method][op][done[method][op]++] = seconds;
			}
			/* Back to the file's size, and the gap written. */
			if (file_size(fd) > c->size) {
				user_collapse(fd, off, c->len);
				cached = 0;
			} else if (file_size(fd) < c->size) {
				user_insert(fd, off, c->len);
				cached = 0;
			}
			write_data(fd, off, c->len);
			c->cost[method] += (now() - start) / reps;
		}
	}
	summarise(c, run, t, again, done, pct, failed);
}

/* ShmemHugePages from /proc/meminfo, in kB. */
static long long shmem_huge_kb(void)
{
	char line[256];
	long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "ShmemHugePages: %lld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Build the file of case @c; returns it open, FIEMAP's count in @extents. */
static int build(const struct bench_case *c, int *extents)
{
	long long huge_before = shmem_huge_kb();
	double start = now();
	int fd = make_file(c->size, c->extents);

	*extents = fiemap_extents(fd);
	built[nbuilt].size = c->size;
	built[nbuilt].extents = c->extents;
	built[nbuilt].seconds = now() - start;
	progress("%lld MiB file built in %.1f s: %d extents%s", c->size / MIB,
		 built[nbuilt].seconds, *extents, *extents < 0 ? " (no FIEMAP)" : "");
	nbuilt++;
	if (is_tmpfs)
		progress("%lld MiB of it in huge pages",
			 (shmem_huge_kb() - huge_before) / 1024);
	return fd;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench -n NAME -d DIR [-r REPS] [-t SECONDS] -p SIZES/LENS/WHERES/CACHES[/EXTENTS]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *plans[MAX_LIST];
	const struct bench_case *open_case = NULL;
	int nplans = 0, i, method, op, fd = -1, extents = 0, skipped = 0;
	struct statfs sfs;
	int opt;

	while ((opt = getopt(argc, argv, "n:d:r:t:p:")) != -1) {
		switch (opt) {
		case 'n':
			fs_name = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 't':
			budget = atof(optarg);
			break;
		case 'p':
			if (nplans == MAX_LIST)
				usage();
			plans[nplans++] = optarg;
			break;
		default:
			usage();
		}
	}
	if (!fs_name || !dir || !nplans || reps < 1 || reps > MAX_REPS ||
	    budget < 0)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	started = now();
	if (statfs(dir, &sfs))
		die("statfs %s: %s", dir, strerror(errno));
	is_tmpfs = sfs.f_type == TMPFS_MAGIC;
	for (i = 0; i < nplans; i++)
		add_plan(plans[i]);
	if (posix_memalign((void **)&buf, 4096, CHUNK) ||
	    posix_memalign((void **)&pattern, 4096, CHUNK))
		die("out of memory");
	/* File data no filesystem could mistake for zeros or compress. */
	for (i = 0; i < CHUNK / 8; i++)
		((unsigned long long *)pattern)[i] = 0x9e3779b97f4a7c15ULL * (i + 1);
	snprintf(data_path, sizeof(data_path), "%s/bench.data", dir);
	snprintf(other_path, sizeof(other_path), "%s/bench.other", dir);
	progress("%d cases, %d repetitions each, budget %.0f s", ncases, reps,
		 budget);

	for (i = 0; i < ncases; i++) {
		struct bench_case *c = &cases[i];
		int run[2] = { 1, 1 };
		char why[2][64] = { "", "" };
		double need = 0, p;

		if (budget && left() < 1) {
			if (!skipped)
				progress("budget used up: the %d cases left are skipped",
					 ncases - i);
			skipped = 1;
			run[KERNEL] = run[USER] = 0;
		}
		if (!open_case || !same_file(open_case, c))
			need = predict_build(c);
		for (method = KERNEL; budget && !skipped && method <= USER; method++) {
			p = predict(c, method);
			/* A user-space figure alone has nothing to compare. */
			run[method] = need + p <= left() && run[KERNEL];
			if (run[method])
				need += p;
			else
				snprintf(why[method], sizeof(why[method]),
					 " %s (%.0f s predicted)",
					 method_names[method], p);
		}
		if (!skipped && (!run[KERNEL] || !run[USER]))
			progress("%s: skipped%s%s, %.0f s of the budget left",
				 case_name(c), why[KERNEL], why[USER], left());
		for (method = KERNEL; method <= USER; method++)
			for (op = COLLAPSE; !run[method] && op <= INSERT; op++)
				emit(c, -1, op, method, 0, 0, 0, 0, "skipped");
		if (!run[KERNEL] && !run[USER])
			continue;
		if (!open_case || !same_file(open_case, c)) {
			if (fd >= 0)
				close(fd);
			fd = build(c, &extents);
			open_case = c;
		}
		run_case(fd, c, extents, run);
	}
	if (fd >= 0)
		close(fd);
	unlink(data_path);
	unlink(other_path);
	progress("done in %.0f s", now() - started);
	return 0;
}
