// SPDX-License-Identifier: GPL-2.0
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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/falloc.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
"usage: fsmodel -d DIR -u UNIT -b BLOCK [OPTION]...\n"
"       fsmodel --memfd -u UNIT -b BLOCK [OPTION]...\n"
"       fsmodel --crash-workload -d DIR -u UNIT -b BLOCK -l LOG [OPTION]...\n"
"       fsmodel --crash-check -d DIR -u UNIT -b BLOCK -D N -J N [OPTION]...\n"
"\n"
"A seeded model checker for fallocate(2) COLLAPSE_RANGE and INSERT_RANGE.\n"
"Operations drawn from a seed are applied to a file in DIR and to a model\n"
"of its bytes; every read is compared with the model.  The same seed and\n"
"options give the same operations.  Output is TAP: one line per case,\n"
"\"ok N - NAME CASE answer=A expect=OK model=OK seed=S ...\" (A is OK,\n"
"the errno of a call that answered wrongly, or RACE, RACE_EOF: below), \"# \"\n"
"lines with the details of a failure (the seed, the last operations, the\n"
"first differing offset), and \"progress\" lines.  Exit status 1 on a\n"
"failure, 2 on a usage error.\n"
"\n"
"Modes:\n"
"  (default)         the model run on DIR/fsmodel.seq (case \"model\", or\n"
"                    \"model_pressure\" with -P), then,\n"
"                    unless -c 0, the concurrent run on DIR/fsmodel.conc\n"
"                    (case \"model_concurrent\")\n"
"  --memfd           the same on memfds (memfd_create(2), MFD_ALLOW_SEALING)\n"
"                    instead of files in DIR, with two more operations:\n"
"                    seal, after which every operation must answer as the\n"
"                    seals say (EPERM where they refuse it), and renew,\n"
"                    which goes on with a fresh memfd\n"
"  --crash-workload  operations on DIR/fsmodel.crash until the machine dies\n"
"                    (or -n are done), each logged to LOG before it starts,\n"
"                    and every fsync/fdatasync logged once it returned:\n"
"                      crash NAME begin seed=S\n"
"                      crash NAME start N\n"
"                      crash NAME durable N\n"
"                    (LOG, when a terminal, is drained after each line)\n"
"  --crash-check     after the crash, with the last durable operation D and\n"
"                    the last started one J from that log: DIR/fsmodel.crash\n"
"                    must be exactly the model after D when J = D, and\n"
"                    otherwise a state the operations D+1..J could have\n"
"                    left (case \"crash\"; rules in docs/design.rst)\n"
"\n"
"Options:\n"
"  -d DIR        directory on the filesystem under test (required, and\n"
"                ignored with --memfd)\n"
"  -u UNIT       allocation unit in bytes: collapse and insert ranges must\n"
"                be multiples of it (block; cluster with ext4 bigalloc)\n"
"  -b BLOCK      block size in bytes\n"
"  -f NAME       name of the filesystem in the output (default fs)\n"
"  -S SEED       seed (default: from the clock); always printed\n"
"  -n OPS        operations of the model run, or of the crash workload\n"
"                (default 100000)\n"
"  -c ROUNDS     rounds of the concurrent run (default 200; 0: none)\n"
"  -m BYTES      largest file size (default 64 KiB or 16 units, the larger)\n"
"  -k OPS        besides every read, compare the whole file (through read\n"
"                and through the mapping) every OPS operations (default\n"
"                1000), after drop and remount, and at the end\n"
"  -x LIST       leave out these operations (comma separated names)\n"
"  -l LOG        the crash log (--crash-workload)\n"
"  -D N, -J N    the last durable and the last started operation\n"
"                (--crash-check; -1: none)\n"
"  -P MIB        memory pressure while the model run goes: lock all the\n"
"                available memory but 32 MiB, and touch the free memory\n"
"                and MIB more, over and over, so that reclaim swaps out\n"
"                about MIB each time (no pageout then); the case fails\n"
"                unless pages of the file were found swapped out (mincore)\n"
"  -v            print every operation on stderr\n"
"  -h, --help    this text\n"
"\n"
"Operations, and their share of the model run and of the crash workload:\n"
"%s"
"Punch and zero are left out where the filesystem answers EOPNOTSUPP;\n"
"drop and remount need root, and remount a mount point of a filesystem\n"
"that keeps its files (never tmpfs or ramfs).\n"
"Offsets and lengths favour multiples of the unit, the block and the page,\n"
"one byte either side of them, and EOF.  About one collapse or insert in\n"
"eight is invalid on purpose (offset or length not a multiple of the unit,\n"
"a collapse reaching or crossing EOF, an insert at or past EOF, length 0):\n"
"it must fail with EINVAL and change nothing.\n"
"\n"
"The concurrent run: in each round one thread collapses or inserts (a valid\n"
"range) while another makes 1-12 reads and writes through pread/pwrite and\n"
"through the mapping (single aligned 8-byte loads and stores), inside the\n"
"part of the file that exists both before and after the shift.  A write\n"
"and the shift are ordered one way or the other; every read must return,\n"
"for each page of a pread (each word of a mapping read), the bytes of a\n"
"state the file had, before or after the shift; at the end of the round\n"
"the file must be one of the states the possible orders give.  A read or\n"
"a round no order explains does not end the run: the case answers RACE\n"
"instead of OK (the first of each described; the next round starts from\n"
"what the file holds), or RACE_EOF when every such read is wrong only in\n"
"size (below the smaller EOF each page is one state's, the length lies\n"
"between the two), which make vmtest fails unless\n"
"tools/guest/intended-divergence.txt explains it for the filesystem.\n"
"\n"
"Reproduce a failure: the same -S, -n, -m, -u, -b and -x on the same kind\n"
"of filesystem (make vmtest: FSMODEL_SEED=S FSMODEL_OPS=N make vmtest FS=NAME).\n";

#define TAG_PWRITE	'P'	/* written with pwrite by the model run */
#define TAG_MWRITE	'M'	/* written through the mapping */
#define TAG_CWRITE	'C'	/* pwrite of the concurrent run */
#define TAG_CSTORE	'c'	/* store through the mapping, concurrent run */
#define TAG_FILL	'F'	/* the concurrent run's initial contents */
#define HISTORY		16	/* operations printed on a failure */
#define SECTOR		512

/* ------------------------------------------------------------------ */
/* Settings and failure notes. */

static const char *fs_name = "fs", *dir;
static int memfd_mode;		/* --memfd */
static long long pressure_mib;	/* -P */
static long long unit, blksz, pagesz, maxlen, cap;
static long long nops = 100000, nrounds = 200, check_every = 1000;
static unsigned long long seed;
static int verbose;
static char diag[32768];	/* "# " lines explaining a failure */

static void note(const char *fmt, ...)
{
	size_t n = strlen(diag);
	va_list ap;

	if (n + 64 >= sizeof(diag))
		return;
	memcpy(diag + n, "# ", 2);
	va_start(ap, fmt);
	vsnprintf(diag + n + 2, sizeof(diag) - n - 3, fmt, ap);
	va_end(ap);
	strcat(diag, "\n");
}

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		perror("fsmodel: calloc");
		exit(2);
	}
	return p;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *ename(int e)
{
	static char buf[32];

	switch (e) {
	case 0: return "OK";
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSPC: return "ENOSPC";
	case EIO: return "EIO";
	case EFBIG: return "EFBIG";
	case EPERM: return "EPERM";
	case EBUSY: return "EBUSY";
	case ENOMEM: return "ENOMEM";
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

/* ------------------------------------------------------------------ */
/* Random numbers: one stream per run, from the seed alone. */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 0 .. n-1 (0 when n <= 0) */
static long long below(struct rng *r, long long n)
{
	return n > 0 ? (long long)(rnd(r) % (uint64_t)n) : 0;
}

static int chance(struct rng *r, int percent)
{
	return below(r, 100) < percent;
}

static long long clamp(long long x, long long lo, long long hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* ------------------------------------------------------------------ */
/*
 * The data.  Every byte written belongs to a 64-bit word that says how it
 * was written (tag), by which operation (24 bits) and at which file offset
 * (the word's, in 8-byte steps): a byte found in the wrong place names
 * where it came from.  The top byte is the tag, never 0, so written data
 * never makes a whole sector of zeros.
 */
static uint64_t word_of(int tag, uint64_t opn, long long off)
{
	return (uint64_t)tag << 56 | (opn & 0xffffff) << 32 |
	       ((uint64_t)off >> 3 & 0xffffffff);
}

static void fill(unsigned char *buf, int tag, uint64_t opn, long long off,
		 long long len)
{
	long long i = 0;

	/* The bytes before the first word boundary, then whole words. */
	for (; i < len && ((off + i) & 7); i++)
		buf[i] = word_of(tag, opn, off + i) >> (8 * ((off + i) & 7));
	for (; i + 8 <= len; i += 8) {
		uint64_t w = word_of(tag, opn, off + i);

		memcpy(buf + i, &w, 8);
	}
	for (; i < len; i++)
		buf[i] = word_of(tag, opn, off + i) >> (8 * ((off + i) & 7));
}

/* What the aligned word @w is, for a person to read. */
static const char *describe(uint64_t w)
{
	static char buf[4][96];
	static int next;
	char *b = buf[next++ % 4];
	int tag = w >> 56;

	if (!w)
		return "zeros";
	if (tag && strchr("PMCcF", tag))
		snprintf(b, 96, "'%c' data of operation %llu, written at offset %lld",
			 tag, (unsigned long long)(w >> 32 & 0xffffff),
			 (long long)(w & 0xffffffff) << 3);
	else
		snprintf(b, 96, "unknown data 0x%016llx", (unsigned long long)w);
	return b;
}

static void note_bytes(const char *label, const unsigned char *p, long long off,
		       long long from, long long to)
{
	char hex[3 * 16 + 1] = "";
	long long i;

	for (i = from; i < to && i - from < 16; i++)
		sprintf(hex + 3 * (i - from), " %02x", p[i - off]);
	note("  %s at %lld:%s", label, from, hex);
}

/*
 * @got holds @n bytes from file offset @off, @want what they should be.
 * Note the first difference, the bytes around it and, where the whole
 * aligned word is at hand, what each side holds.  Returns 1 if they match.
 */
static int same_bytes(const char *what, const unsigned char *got,
		      const unsigned char *want, long long off, long long n)
{
	long long i, x, w0;
	uint64_t a, b;

	if (!memcmp(got, want, n))
		return 1;
	for (i = 0; got[i] == want[i]; i++)
		;
	x = off + i;
	note("%s: first difference at file offset %lld (0x%llx): read 0x%02x, model 0x%02x",
	     what, x, x, got[i], want[i]);
	w0 = x & ~7LL;
	note_bytes("read ", got, off, w0 < off ? off : w0,
		   off + n < w0 + 16 ? off + n : w0 + 16);
	note_bytes("model", want, off, w0 < off ? off : w0,
		   off + n < w0 + 16 ? off + n : w0 + 16);
	if (w0 >= off && w0 + 8 <= off + n) {
		memcpy(&a, got + (w0 - off), 8);
		memcpy(&b, want + (w0 - off), 8);
		note("  the read word at %lld is %s", w0, describe(a));
		note("  the model's is %s", describe(b));
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * The model of one file: its bytes and its size.  Bytes at and past the
 * size are kept zero, which is what a file reads there once it grows.
 */

struct state {
	unsigned char *data;	/* cap bytes */
	long long size;
	int seals;		/* --memfd: F_GET_SEALS */
};

static void st_init(struct state *s)
{
	s->data = xmalloc(cap);
	s->size = 0;
	s->seals = 0;
}

static void st_copy(struct state *d, const struct state *s)
{
	memcpy(d->data, s->data, d->size > s->size ? d->size : s->size);
	d->size = s->size;
}

/* A state's byte at @x: zero past its size. */
static unsigned char cand_byte(const struct state *s, long long x)
{
	return x < s->size ? s->data[x] : 0;
}

static void st_write(struct state *s, long long off, const unsigned char *buf,
		     long long len)
{
	memcpy(s->data + off, buf, len);
	if (off + len > s->size)
		s->size = off + len;
}

static void st_truncate(struct state *s, long long size)
{
	if (size < s->size)
		memset(s->data + size, 0, s->size - size);
	s->size = size;
}

static void st_zero(struct state *s, long long off, long long len, int keep)
{
	long long end = off + len;

	if (keep && end > s->size)
		end = s->size;
	if (end > off)
		memset(s->data + off, 0, end - off);
	if (!keep && off + len > s->size)
		s->size = off + len;
}

static void st_collapse(struct state *s, long long off, long long len)
{
	memmove(s->data + off, s->data + off + len, s->size - off - len);
	memset(s->data + s->size - len, 0, len);
	s->size -= len;
}

static void st_insert(struct state *s, long long off, long long len)
{
	memmove(s->data + off + len, s->data + off, s->size - off);
	memset(s->data + off, 0, len);
	s->size += len;
}

/* ------------------------------------------------------------------ */
/* Operations. */

enum kind {
	K_PWRITE, K_PREAD, K_MWRITE, K_MREAD, K_TRUNCATE, K_PUNCH, K_ZERO,
	K_COLLAPSE, K_INSERT, K_FSYNC, K_FDATASYNC, K_DROP, K_PAGEOUT, K_REMOUNT,
	K_SEAL, K_RENEW, NKINDS
};

/* Weights of the model run and of the crash workload, in 1/10000. */
static const struct {
	const char *name, *what;
	int model, crash;
} kinds[NKINDS] = {
	[K_PWRITE] = { "pwrite", "write data", 3000, 3000 },
	[K_PREAD] = { "pread", "read, compare with the model", 3200, 0 },
	[K_MWRITE] = { "mwrite", "memcpy into a shared mapping held across every\n"
		       "                           shift (after ftruncate up when past EOF)", 600, 1000 },
	[K_MREAD] = { "mread", "read through that mapping, compare", 2500, 0 },
	[K_TRUNCATE] = { "truncate", "ftruncate down or up", 100, 300 },
	[K_PUNCH] = { "punch", "PUNCH_HOLE | KEEP_SIZE", 100, 400 },
	[K_ZERO] = { "zero", "ZERO_RANGE, with or without KEEP_SIZE", 100, 400 },
	[K_COLLAPSE] = { "collapse", "COLLAPSE_RANGE", 150, 2200 },
	[K_INSERT] = { "insert", "INSERT_RANGE", 150, 2200 },
	[K_FSYNC] = { "fsync", "fsync", 10, 700 },
	[K_FDATASYNC] = { "fdatasync", "fdatasync", 10, 600 },
	[K_DROP] = { "drop", "echo 3 > /proc/sys/vm/drop_caches", 2, 0 },
	[K_PAGEOUT] = { "pageout", "MADV_PAGEOUT on the held mapping: with swap on,\n"
			"                           tmpfs pages become swap entries the next\n"
			"                           shift moves", 20, 0 },
	[K_REMOUNT] = { "remount", "unmount DIR, mount it again (same source and\n"
			"                           type, default options)", 2, 0 },
	[K_SEAL] = { "seal", "F_ADD_SEALS, one of SHRINK, GROW, WRITE,\n"
		     "                           FUTURE_WRITE and SEAL (--memfd); WRITE\n"
		     "                           must first answer EBUSY while the held\n"
		     "                           mapping is writable, which is then made\n"
		     "                           read-only", 15, 0 },
	[K_RENEW] = { "renew", "check the file, then go on with a new, unsealed\n"
		      "                           memfd holding a copy of it (--memfd)", 8, 0 },
};

static int left_out[NKINDS];	/* -x, or not supported here */

/* The seals a memfd may be given, and what each refuses. */
static const struct {
	int seal;
	const char *name;
} seals[] = {
	{ F_SEAL_SHRINK, "F_SEAL_SHRINK" },
	{ F_SEAL_GROW, "F_SEAL_GROW" },
	{ F_SEAL_WRITE, "F_SEAL_WRITE" },
	{ F_SEAL_FUTURE_WRITE, "F_SEAL_FUTURE_WRITE" },
	{ F_SEAL_SEAL, "F_SEAL_SEAL" },
};

#define NSEALS		(sizeof(seals) / sizeof(seals[0]))
#define WRITE_SEALS	(F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)

static const char *seal_name(long long seal)
{
	size_t i;

	for (i = 0; i < NSEALS; i++)
		if (seals[i].seal == seal)
			return seals[i].name;
	return "?";
}

struct op {
	long long n;		/* 1, 2, ... */
	enum kind kind;
	long long off, len;	/* truncate: the new size in len; seal: off */
	int keep;		/* zero: FALLOC_FL_KEEP_SIZE */
	int expect;		/* 0, or the errno the call must fail with */
	int got;		/* what it answered */
};

static void op_text(const struct op *op, char *buf, size_t n)
{
	const char *name = kinds[op->kind].name;

	switch (op->kind) {
	case K_TRUNCATE:
		snprintf(buf, n, "%lld %s to %lld", op->n, name, op->len);
		break;
	case K_FSYNC: case K_FDATASYNC: case K_DROP: case K_PAGEOUT:
	case K_REMOUNT: case K_RENEW:
		snprintf(buf, n, "%lld %s", op->n, name);
		break;
	case K_SEAL:
		snprintf(buf, n, "%lld %s %s", op->n, name, seal_name(op->off));
		break;
	default:
		snprintf(buf, n, "%lld %s%s off=%lld len=%lld (0x%llx+0x%llx)",
			 op->n, name, op->keep ? " keep_size" : "", op->off,
			 op->len, op->off, op->len);
	}
	if (op->expect) {
		size_t l = strlen(buf);

		snprintf(buf + l, n - l, " expect %s", ename(op->expect));
	}
}

/* A multiple of the unit, the block or the page. */
static long long some_alignment(struct rng *r)
{
	switch (below(r, 3)) {
	case 0: return unit;
	case 1: return blksz;
	}
	return pagesz;
}

/* An offset in [0, limit], favouring boundaries, one byte off them, EOF. */
static long long pick_off(struct rng *r, long long size, long long limit)
{
	long long o, a;

	switch (below(r, 10)) {
	case 0: case 1: case 2:
		o = below(r, limit + 1);
		break;
	case 3:
		o = size;
		break;
	case 4:
		o = size + below(r, 17) - 8;
		break;
	case 5:
		o = size - below(r, 4 * pagesz);
		break;
	case 6:
		a = some_alignment(r);
		o = below(r, limit / a + 1) * a + (chance(r, 50) ? 1 : -1);
		break;
	default:
		a = some_alignment(r);
		o = below(r, limit / a + 1) * a;
	}
	return clamp(o, 0, limit);
}

/* A length in [1, limit]: a few bytes, about a block, page or unit, a few
 * of them, up to two pages, and now and then up to 16 pages.  Mostly
 * short: under TCG and KASAN every page an operation touches costs.
 */
static long long pick_len(struct rng *r, long long limit)
{
	long long len;

	switch (below(r, 8)) {
	case 0:
		len = 1 + below(r, 16);
		break;
	case 1: case 2:
		len = some_alignment(r) + below(r, 3) - 1;
		break;
	case 3: case 4:
		len = some_alignment(r) * (1 + below(r, 4));
		break;
	case 5: case 6:
		len = 1 + below(r, 2 * pagesz);
		break;
	default:
		len = 1 + below(r, 16 * pagesz);
	}
	return clamp(len, 1, limit);
}

/* A collapse or insert that must fail with EINVAL. */
static void gen_invalid_shift(struct rng *r, long long size, struct op *op)
{
	long long units = (size + unit - 1) / unit, delta;
	int collapse = op->kind == K_COLLAPSE;

	/* A misalignment: one byte, a sector, a block (bigalloc), half a unit. */
	switch (below(r, 4)) {
	case 0: delta = 1; break;
	case 1: delta = SECTOR; break;
	case 2: delta = blksz; break;
	default: delta = unit / 2;
	}
	if (delta % unit == 0)
		delta = 1;
	op->expect = EINVAL;
	op->off = below(r, units + 1) * unit;
	op->len = (1 + below(r, 3)) * unit;
	switch (below(r, 4)) {
	case 0:
		op->off += delta;
		break;
	case 1:
		op->len += delta;
		break;
	case 2:
		/* A collapse reaching or crossing EOF; an insert at or past it. */
		if (collapse) {
			op->off = below(r, units + 1) * unit;
			op->len = units * unit - op->off + below(r, 2) * unit;
			if (op->len <= 0)
				op->len = unit;
		} else {
			op->off = units * unit + below(r, 2) * unit;
		}
		break;
	default:
		op->len = 0;
	}
}

/*
 * A collapse or insert: invalid on purpose @invalid percent of the time
 * (or when no valid one fits), else valid and at most @most units long.
 */
static void gen_shift(struct rng *r, long long size, struct op *op,
		      int invalid, long long most)
{
	long long before, nu, k;

	op->expect = 0;
	if (op->kind == K_COLLAPSE)
		/* Whole units that end before the last byte: off + len < size. */
		before = size > 0 ? (size - 1) / unit : 0;
	else
		/* Units that start before EOF; the file may grow to maxlen. */
		before = (size + unit - 1) / unit;
	if (op->kind == K_INSERT && most > (maxlen - size) / unit)
		most = (maxlen - size) / unit;
	if (op->kind == K_COLLAPSE && most > before)
		most = before;
	if (before < 1 || most < 1 || chance(r, invalid)) {
		gen_invalid_shift(r, size, op);
		return;
	}
	/* Mostly short shifts; sometimes as long as allowed. */
	nu = 1 + below(r, chance(r, 75) && most > 4 ? 4 : most);
	if (op->kind == K_COLLAPSE)
		before -= nu - 1;
	/* Anywhere, or at the first or the last place possible. */
	k = below(r, 4) ? below(r, before) : below(r, 2) ? 0 : before - 1;
	op->off = k * unit;
	op->len = nu * unit;
}

struct mix {
	int weight[NKINDS];
	int total;
};

static void mix_init(struct mix *mx, int crash)
{
	int k;

	mx->total = 0;
	for (k = 0; k < NKINDS; k++) {
		mx->weight[k] = left_out[k] ? 0 :
				crash ? kinds[k].crash : kinds[k].model;
		mx->total += mx->weight[k];
	}
}

/* The next operation, from the random stream and the model's size alone. */
static void gen_op(struct rng *r, const struct mix *mx, long long size,
		   struct op *op)
{
	long long x = below(r, mx->total);
	int k = 0;

	while (x >= mx->weight[k])
		x -= mx->weight[k++];
	op->kind = k;
	op->off = op->len = 0;
	op->keep = 0;
	op->expect = 0;
	switch (op->kind) {
	case K_PWRITE:
	case K_MWRITE:
	case K_PUNCH:
	case K_ZERO:
		op->off = pick_off(r, size, maxlen - 1);
		op->len = pick_len(r, maxlen - op->off);
		op->keep = op->kind == K_ZERO && chance(r, 50);
		break;
	case K_PREAD:
		op->off = pick_off(r, size, maxlen);
		op->len = pick_len(r, maxlen);
		break;
	case K_MREAD:
		/* Through the mapping only inside the file: past EOF is SIGBUS. */
		if (size == 0) {
			op->kind = K_PREAD;
			op->len = pick_len(r, maxlen);
			break;
		}
		op->off = pick_off(r, size, size - 1);
		op->len = pick_len(r, size - op->off);
		break;
	case K_TRUNCATE:
		op->len = chance(r, 50) || size == maxlen ?
			  pick_off(r, size, size) :
			  size + pick_len(r, maxlen - size);
		break;
	case K_COLLAPSE:
	case K_INSERT:
		gen_shift(r, size, op, 12, LLONG_MAX);
		break;
	case K_SEAL:
		op->off = seals[below(r, NSEALS)].seal;
		break;
	default:
		break;
	}
}

/*
 * The errno an operation must answer on a memfd with @sealed seals, as
 * memfd_create(2) and fcntl(2) document them and shmem_fallocate() applies
 * them to collapse and insert.  An invalid collapse or insert still
 * answers EINVAL: its arguments are checked first.  A pwrite that would
 * grow a file sealed against growth is cut at EOF when it starts inside
 * the file, so that what it writes does not depend on how the kernel
 * splits a write into pages.
 */
static void seal_rules(struct op *op, int sealed, long long size)
{
	long long end = op->off + op->len;

	if (!sealed || op->expect)
		return;
	switch (op->kind) {
	case K_PWRITE:
		if (sealed & WRITE_SEALS)
			op->expect = EPERM;
		else if (sealed & F_SEAL_GROW && end > size && op->off < size)
			op->len = size - op->off;
		else if (sealed & F_SEAL_GROW && end > size)
			op->expect = EPERM;
		break;
	case K_MWRITE:
		/* FUTURE_WRITE spares the mapping made before the seal. */
		if (sealed & F_SEAL_WRITE ||
		    (sealed & F_SEAL_GROW && end > size))
			op->expect = EPERM;
		break;
	case K_TRUNCATE:
		if ((sealed & F_SEAL_SHRINK && op->len < size) ||
		    (sealed & F_SEAL_GROW && op->len > size))
			op->expect = EPERM;
		break;
	case K_PUNCH:
		if (sealed & WRITE_SEALS)
			op->expect = EPERM;
		break;
	case K_COLLAPSE:
	case K_INSERT:
		if (sealed & WRITE_SEALS ||
		    sealed & (op->kind == K_COLLAPSE ? F_SEAL_SHRINK : F_SEAL_GROW))
			op->expect = EPERM;
		break;
	case K_SEAL:
		if (sealed & F_SEAL_SEAL)
			op->expect = EPERM;
		break;
	default:
		break;
	}
}

/* What a successful operation (or one failing as expected) does to the
 * model.  @buf holds the data written, or gets it when !@filled.
 */
static void apply(struct state *m, const struct op *op, unsigned char *buf,
		  int filled)
{
	if (op->expect)
		return;
	switch (op->kind) {
	case K_PWRITE:
		if (!filled)
			fill(buf, TAG_PWRITE, op->n, op->off, op->len);
		st_write(m, op->off, buf, op->len);
		break;
	case K_MWRITE:
		if (op->off + op->len > m->size)
			st_truncate(m, op->off + op->len);
		if (!filled)
			fill(buf, TAG_MWRITE, op->n, op->off, op->len);
		st_write(m, op->off, buf, op->len);
		break;
	case K_TRUNCATE:
		st_truncate(m, op->len);
		break;
	case K_PUNCH:
		st_zero(m, op->off, op->len, 1);
		break;
	case K_ZERO:
		st_zero(m, op->off, op->len, op->keep);
		break;
	case K_COLLAPSE:
		st_collapse(m, op->off, op->len);
		break;
	case K_INSERT:
		st_insert(m, op->off, op->len);
		break;
	case K_SEAL:
		m->seals |= op->off;
		break;
	case K_RENEW:
		m->seals = 0;
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------ */
/* The file under test. */

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

/*
 * Copy to or from the mapping.  A page past EOF raises SIGBUS, which a
 * kernel that loses track of the size would cause: it becomes a failure
 * with a note, not a dead checker.
 */
static __thread sigjmp_buf bus_jump;
static __thread volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig)
{
	if (!bus_armed) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	siglongjmp(bus_jump, 1);
}

static int map_copy(void *dst, const void *src, long long n, long long off)
{
	if (sigsetjmp(bus_jump, 1)) {
		bus_armed = 0;
		note("SIGBUS touching the mapping at %lld..%lld: the kernel says it is past EOF",
		     off, off + n);
		return -1;
	}
	bus_armed = 1;
	memcpy(dst, src, n);
	bus_armed = 0;
	return 0;
}

static int xfallocate(int fd, int mode, long long off, long long len)
{
	return fallocate(fd, mode, off, len) ? errno : 0;
}

static int pwrite_all(int fd, const unsigned char *buf, long long len,
		      long long off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n <= 0)
			return n < 0 ? errno : EIO;
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* Read up to @len bytes at @off; returns the count or -errno. */
static long long pread_all(int fd, unsigned char *buf, long long len,
			   long long off)
{
	long long done = 0;

	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, off + done);

		if (n < 0)
			return -errno;
		if (!n)
			break;
		done += n;
	}
	return done;
}

static int map_target(struct target *t)
{
	t->map = mmap(NULL, t->maplen,
		      PROT_READ | (t->readonly ? 0 : PROT_WRITE), MAP_SHARED,
		      t->fd, 0);
	if (t->map == MAP_FAILED) {
		note("mmap %s: %s", t->path, strerror(errno));
		return -1;
	}
	/*
	 * Not in -P's children: their copy of a writable shared mapping would
	 * make F_SEAL_WRITE answer EBUSY for good (the seal rules caught it).
	 */
	if (madvise(t->map, t->maplen, MADV_DONTFORK)) {
		note("madvise(MADV_DONTFORK): %s", strerror(errno));
		munmap(t->map, t->maplen);
		return -1;
	}
	return 0;
}

/* The file, or with --memfd a new memfd that may be sealed, and its map. */
static int open_target(struct target *t, int create)
{
	if (memfd_mode)
		t->fd = memfd_create(t->path, MFD_ALLOW_SEALING);
	else
		t->fd = open(t->path, O_RDWR | (create ? O_CREAT | O_TRUNC : 0),
			     0644);
	if (t->fd < 0) {
		note("open %s: %s", t->path, strerror(errno));
		return -1;
	}
	t->readonly = 0;
	if (map_target(t)) {
		close(t->fd);
		return -1;
	}
	return 0;
}

static void close_target(struct target *t)
{
	munmap(t->map, t->maplen);
	close(t->fd);
}

/* Find DIR in /proc/self/mounts: is it a mount point, and of what? */
static int mount_of(const char *d, struct target *t)
{
	char line[4096], src[PATH_MAX], mnt[PATH_MAX], type[64];
	FILE *f = fopen("/proc/self/mounts", "r");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%4095s %4095s %63s", src, mnt, type) == 3 &&
		    !strcmp(mnt, d)) {
			strcpy(t->source, src);
			strcpy(t->type, type);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static int drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY), e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, "3", 1) != 1)
		e = errno;
	close(fd);
	return e;
}

static int remount(struct target *t)
{
	close_target(t);
	if (umount(dir)) {
		note("umount %s: %s", dir, strerror(errno));
		return -1;
	}
	if (mount(t->source, dir, t->type, 0, NULL)) {
		note("mount -t %s %s %s: %s", t->type, t->source, dir,
		     strerror(errno));
		return -1;
	}
	return open_target(t, 0);
}

/* fallocate mode of a punch, zero, collapse or insert. */
static int mode_of(const struct op *op)
{
	switch (op->kind) {
	case K_PUNCH:
		return FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	case K_ZERO:
		return FALLOC_FL_ZERO_RANGE | (op->keep ? FALLOC_FL_KEEP_SIZE : 0);
	case K_COLLAPSE:
		return FALLOC_FL_COLLAPSE_RANGE;
	default:
		return FALLOC_FL_INSERT_RANGE;
	}
}

static int check_file(struct target *t, const struct state *m,
		      const char *when);

/* 0, or the errno with which a writable shared mapping is refused. */
static int writable_map_errno(struct target *t)
{
	void *p = mmap(NULL, pagesz, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, pagesz);
	return 0;
}

/*
 * F_ADD_SEALS.  F_SEAL_WRITE is refused with EBUSY while a shared mapping
 * that may become writable exists: check that, then unmap the file, seal
 * it, and map it again, read-only (which only a sealed file can be without
 * counting as writable).  Returns the errno of the call that seals, or -1
 * after noting why.
 */
static int add_seal(struct target *t, int seal)
{
	int e;

	if (seal == F_SEAL_WRITE && !t->readonly) {
		e = fcntl(t->fd, F_ADD_SEALS, seal) ? errno : 0;
		if (e == EPERM)		/* F_SEAL_SEAL */
			return e;
		if (e != EBUSY) {
			note("F_ADD_SEALS F_SEAL_WRITE with a writable shared mapping answered %s, not EBUSY",
			     ename(e));
			return -1;
		}
		munmap(t->map, t->maplen);
		e = fcntl(t->fd, F_ADD_SEALS, seal) ? errno : 0;
		t->readonly = !e;
		return map_target(t) ? -1 : e;
	}
	return fcntl(t->fd, F_ADD_SEALS, seal) ? errno : 0;
}

/* Go on with a new memfd (no seals, a writable mapping) holding @m. */
static int renew(struct target *t, const struct state *m)
{
	int e;

	close_target(t);
	if (open_target(t, 1))
		return -1;
	e = pwrite_all(t->fd, m->data, m->size, 0);
	if (e) {
		note("writing the new memfd: %s", strerror(e));
		return -1;
	}
	return 0;
}

/*
 * Run @op on the file and on the model @m; compare what it read, and the
 * size after it, with the model.  Returns 0, or -1 after noting why.
 */
static int step(struct target *t, struct state *m, struct op *op)
{
	unsigned char *buf = t->buf;
	long long n, want;
	struct stat st;
	char what[160];

	op->got = 0;
	switch (op->kind) {
	case K_PWRITE:
		fill(buf, TAG_PWRITE, op->n, op->off, op->len);
		op->got = pwrite_all(t->fd, buf, op->len, op->off);
		break;
	case K_PREAD:
		n = pread_all(t->fd, buf, op->len, op->off);
		if (n < 0) {
			op->got = -n;
			break;
		}
		want = clamp(m->size - op->off, 0, op->len);
		if (n != want) {
			note("pread returned %lld bytes, the model has %lld (size %lld)",
			     n, want, m->size);
			return -1;
		}
		return same_bytes("pread", buf, m->data + op->off, op->off, n) - 1;
	case K_MWRITE:
		if (t->readonly) {
			/* F_SEAL_WRITE: no writable shared mapping at all. */
			op->got = writable_map_errno(t);
			break;
		}
		if (op->off + op->len > m->size && ftruncate(t->fd, op->off + op->len)) {
			op->got = errno;
			break;
		}
		fill(buf, TAG_MWRITE, op->n, op->off, op->len);
		if (map_copy(t->map + op->off, buf, op->len, op->off))
			return -1;
		break;
	case K_MREAD:
		if (map_copy(buf, t->map + op->off, op->len, op->off))
			return -1;
		return same_bytes("read through the mapping", buf,
				  m->data + op->off, op->off, op->len) - 1;
	case K_TRUNCATE:
		op->got = ftruncate(t->fd, op->len) ? errno : 0;
		break;
	case K_PUNCH:
	case K_ZERO:
	case K_COLLAPSE:
	case K_INSERT:
		op->got = xfallocate(t->fd, mode_of(op), op->off, op->len);
		break;
	case K_FSYNC:
		op->got = fsync(t->fd) ? errno : 0;
		break;
	case K_FDATASYNC:
		op->got = fdatasync(t->fd) ? errno : 0;
		break;
	case K_DROP:
		op->got = drop_caches();
		break;
	case K_PAGEOUT:
		op->got = madvise(t->map, t->maplen, MADV_PAGEOUT) ? errno : 0;
		break;
	case K_REMOUNT:
		if (remount(t))
			return -1;
		break;
	case K_SEAL:
		op->got = add_seal(t, op->off);
		if (op->got < 0)
			return -1;
		break;
	case K_RENEW:
		if (check_file(t, m, "before renew") || renew(t, m))
			return -1;
		break;
	case NKINDS:
		break;
	}
	if (op->got != op->expect) {
		op_text(op, what, sizeof(what));
		note("%s answered %s", what, ename(op->got));
		return -1;
	}
	apply(m, op, buf, 1);
	if (op->kind == K_SEAL && fcntl(t->fd, F_GET_SEALS) != m->seals) {
		note("F_GET_SEALS answered 0x%x, the model has 0x%x",
		     fcntl(t->fd, F_GET_SEALS), m->seals);
		return -1;
	}
	if (fstat(t->fd, &st)) {
		note("fstat: %s", strerror(errno));
		return -1;
	}
	if (st.st_size != m->size) {
		note("size %lld after the operation, the model has %lld",
		     (long long)st.st_size, m->size);
		return -1;
	}
	return 0;
}

/* The whole file, through read(2) and through the mapping. */
static int check_file(struct target *t, const struct state *m, const char *when)
{
	long long n = pread_all(t->fd, t->buf, m->size + 1, 0);
	char what[96];

	if (n != m->size) {
		note("%s: reading the whole file gave %lld bytes, the model has %lld",
		     when, n, m->size);
		return -1;
	}
	snprintf(what, sizeof(what), "%s: the whole file", when);
	if (!same_bytes(what, t->buf, m->data, 0, n))
		return -1;
	snprintf(what, sizeof(what), "%s: the whole mapping", when);
	if (map_copy(t->buf, t->map, m->size, 0))
		return -1;
	return same_bytes(what, t->buf, m->data, 0, m->size) - 1;
}

/* ------------------------------------------------------------------ */
/* Reporting. */

static int ntests, nfailed;
static struct op history[HISTORY];
static long long nhistory;

static void remember(const struct op *op)
{
	history[nhistory++ % HISTORY] = *op;
}

static void note_history(void)
{
	long long i = nhistory > HISTORY ? nhistory - HISTORY : 0;
	char text[160];

	note("the last %lld operations (the failing one last):", nhistory - i);
	for (; i < nhistory; i++) {
		const struct op *op = &history[i % HISTORY];

		op_text(op, text, sizeof(text));
		note("  %s -> %s", text, ename(op->got));
	}
}

/* One TAP line; @answer is OK, the errno a call answered, or a finding. */
static void report(const char *tcase, int ok, const char *answer,
		   const char *fmt, ...)
{
	char extra[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(extra, sizeof(extra), fmt, ap);
	va_end(ap);
	ntests++;
	nfailed += !ok;
	printf("%sok %d - %s %s answer=%s expect=OK model=OK %s\n", ok ? "" : "not ",
	       ntests, fs_name, tcase, answer, extra);
	fputs(diag, stdout);
	diag[0] = 0;
	fflush(stdout);
}

static void progress(const char *what, long long done, long long total,
		     double start)
{
	printf("progress %s %s: %lld/%lld, %.0f s\n", fs_name, what, done, total,
	       now() - start);
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Setup shared by the modes. */

/* DIR/FILE, or with --memfd the memfd's name, which shows in /proc/PID/fd. */
static void name_target(struct target *t, const char *file)
{
	snprintf(t->path, sizeof(t->path), "%s%s%s", memfd_mode ? "" : dir,
		 memfd_mode ? "" : "/", file);
}

static int setup_target(struct target *t, const char *file)
{
	name_target(t, file);
	t->maplen = (maxlen + pagesz - 1) / pagesz * pagesz;
	t->buf = xmalloc(cap);
	return open_target(t, 1);
}

/*
 * Leave out the operations the filesystem does not offer (punch and zero
 * range: EOPNOTSUPP on a scratch file) or the machine cannot do (drop
 * caches, remount).  Collapse and insert are not probed: they are what is
 * tested.
 */
static void probe(struct target *t)
{
	struct target p = { .maplen = pagesz };
	struct op op = { .n = 0 };
	int k;

	if (access("/proc/sys/vm/drop_caches", W_OK))
		left_out[K_DROP] = 1;
	if (memfd_mode || !mount_of(dir, t) || !strcmp(t->type, "tmpfs") ||
	    !strcmp(t->type, "ramfs"))
		left_out[K_REMOUNT] = 1;
	if (!memfd_mode)
		left_out[K_SEAL] = left_out[K_RENEW] = 1;
	/* Under -P, reclaim alone must swap the file's pages out. */
	if (pressure_mib)
		left_out[K_PAGEOUT] = 1;
	name_target(&p, "fsmodel.probe");
	p.buf = xmalloc(2 * unit);
	if (open_target(&p, 1) == 0) {
		pwrite_all(p.fd, p.buf, 2 * unit, 0);
		for (k = K_PUNCH; k <= K_ZERO; k++) {
			op.kind = k;
			if (!left_out[k] &&
			    xfallocate(p.fd, mode_of(&op), 0, blksz) == EOPNOTSUPP)
				left_out[k] = 1;
		}
		close_target(&p);
	}
	if (!memfd_mode)
		unlink(p.path);
	free(p.buf);
	diag[0] = 0;
	for (k = 0; k < NKINDS; k++)
		if (left_out[k])
			printf("# fsmodel: %s: %s left out\n", fs_name, kinds[k].name);
}

/* ------------------------------------------------------------------ */
/*
 * Memory pressure (-P MIB).  One child locks all the memory available but
 * PRESSURE_LEFT_MIB; another touches the memory left free and MIB more, over
 * and over, so that every loop makes reclaim swap out about MIB of
 * whatever is cold, the file's pages among them.  The model run counts the pages of the file that hold data
 * and are found neither mapped nor in the page cache (mincore): on tmpfs
 * such a page can only be in swap.
 */
#define PRESSURE_LEFT_MIB	32

static pid_t pressure_pid[2];
static long long *pressure_loops;	/* shared with the touching child */

/* A field of /proc/meminfo (kB) or /proc/vmstat; -1 if absent. */
static long long proc_field(const char *file, const char *key)
{
	char line[256];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && (line[n] == ' ' || line[n] == ':'))
			v = atoll(line + n + 1 + strspn(line + n + 1, ": "));
	fclose(f);
	return v;
}

/*
 * A MiB every PRESSURE_STEP_US at most: reclaim then runs a little at a
 * time beside the model run instead of stalling it in long bursts.
 */
#define PRESSURE_STEP_US	50000

static void touch_forever(long long bytes)
{
	struct timespec ts = { 0, PRESSURE_STEP_US * 1000L };
	long long i;

	for (;;) {
		unsigned char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			continue;
		for (i = 0; i < bytes; i += pagesz) {
			p[i] = i / pagesz;
			if (i % (1 << 20) == 0)
				nanosleep(&ts, NULL);
		}
		munmap(p, bytes);
		__atomic_add_fetch(pressure_loops, 1, __ATOMIC_RELAXED);
	}
}

static int start_pressure(void)
{
	long long lock = proc_field("/proc/meminfo", "MemAvailable") / 1024 -
			 PRESSURE_LEFT_MIB;
	long long touch;
	int pipefd[2];
	char c = 0;

	pressure_loops = mmap(NULL, sizeof(*pressure_loops),
			      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			      -1, 0);
	if (pressure_loops == MAP_FAILED || pipe(pipefd))
		return -1;
	pressure_pid[0] = fork();
	if (pressure_pid[0] == 0) {
		void *p = MAP_FAILED;

		if (lock > 0)
			p = mmap(NULL, lock << 20, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		c = lock <= 0 || (p != MAP_FAILED && !mlock(p, lock << 20));
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (pressure_pid[0] < 0 || read(pipefd[0], &c, 1) != 1 || !c) {
		note("locking %lld MiB for -P %lld failed", lock, pressure_mib);
		return -1;
	}
	close(pipefd[0]);
	close(pipefd[1]);
	touch = proc_field("/proc/meminfo", "MemFree") / 1024 + pressure_mib;
	pressure_pid[1] = fork();
	if (pressure_pid[1] == 0)
		touch_forever(touch << 20);
	printf("# fsmodel: %s: memory pressure: %lld MiB locked, %lld MiB touched in a loop\n",
	       fs_name, lock, touch);
	return pressure_pid[1] < 0 ? -1 : 0;
}

/* Returns -1 if the locked memory went away early (the OOM killer). */
static int stop_pressure(void)
{
	int status, early = waitpid(pressure_pid[0], &status, WNOHANG) != 0;
	int k;

	for (k = 0; k < 2; k++) {
		kill(pressure_pid[k], SIGKILL);
		waitpid(pressure_pid[k], &status, 0);
	}
	if (early)
		note("the process holding the locked memory died before the end of the run");
	return early ? -1 : 0;
}

/* Pages of the file with data in the model that are in swap. */
static long long pages_swapped(struct target *t, const struct state *m)
{
	long long n = (m->size + pagesz - 1) / pagesz, i, x, out = 0;
	unsigned char vec[n > 0 ? n : 1];

	if (!n || mincore(t->map, n * pagesz, vec))
		return 0;
	for (i = 0; i < n; i++) {
		if (vec[i] & 1)
			continue;
		for (x = i * pagesz; x < m->size && x < (i + 1) * pagesz; x++)
			if (m->data[x]) {
				out++;
				break;
			}
	}
	return out;
}

/* ------------------------------------------------------------------ */
/* The model run. */

static const char *model_case(void)
{
	return pressure_mib ? "model_pressure" : "model";
}

static void model_run(struct target *t)
{
	struct rng r = { seed };
	struct state m;
	struct mix mx;
	struct op op;
	double start = now();
	long long i;
	char text[160];
	int failed = 0, k;
	long long count[NKINDS] = { 0 };
	double spent[NKINDS] = { 0 };
	long long refused = 0, swapped = 0, pswpout = proc_field("/proc/vmstat", "pswpout");
	long long pswpin = proc_field("/proc/vmstat", "pswpin");
	char extra[128] = "";

	if (pressure_mib && start_pressure()) {
		report(model_case(), 0, "EIO", "seed=%llu", seed);
		return;
	}
	st_init(&m);
	mix_init(&mx, 0);
	nhistory = 0;
	for (i = 1; i <= nops && !failed; i++) {
		double t0 = now();

		op.n = i;
		gen_op(&r, &mx, m.size, &op);
		seal_rules(&op, m.seals, m.size);
		if (verbose) {
			op_text(&op, text, sizeof(text));
			fprintf(stderr, "%s\n", text);
		}
		if (pressure_mib && i % 20 == 0)
			swapped += pages_swapped(t, &m);
		failed = step(t, &m, &op);
		refused += op.expect == EPERM && op.got == EPERM;
		remember(&op);
		count[op.kind]++;
		spent[op.kind] += now() - t0;
		if (!failed && (i % check_every == 0 || i == nops ||
				op.kind == K_DROP || op.kind == K_PAGEOUT ||
				op.kind == K_REMOUNT))
			failed = check_file(t, &m, op.kind == K_DROP ?
					    "after drop_caches" :
					    op.kind == K_PAGEOUT ?
					    "after MADV_PAGEOUT" :
					    op.kind == K_REMOUNT ?
					    "after remount" : "whole-file check");
		if (nops >= 10 && i % (nops / 10) == 0)
			progress(model_case(), i, nops, start);
	}
	/* Where the time went: the operation mix is a budget. */
	printf("# fsmodel: %s: operations, count and mean time:", fs_name);
	for (k = 0; k < NKINDS; k++)
		if (count[k])
			printf(" %s %lld %.2f ms,", kinds[k].name, count[k],
			       spent[k] * 1000 / count[k]);
	printf("\n");
	if (memfd_mode)
		snprintf(extra, sizeof(extra), " refused_by_seals=%lld", refused);
	if (pressure_mib) {
		if (stop_pressure())
			failed = 1;
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 " swapped_pages=%lld pressure_loops=%lld pswpout=%lld pswpin=%lld",
			 swapped, *pressure_loops, proc_field("/proc/vmstat", "pswpout") - pswpout,
			 proc_field("/proc/vmstat", "pswpin") - pswpin);
		if (!failed && !swapped) {
			note("under -P %lld no page of the file was ever found swapped out: the run did not test the shift of swap entries",
			     pressure_mib);
			failed = 1;
		}
	}
	if (failed) {
		note("seed %llu, operation %lld of %lld, unit %lld, block %lld, largest size %lld",
		     seed, i - 1, nops, unit, blksz, maxlen);
		note_history();
		note("reproduce: FSMODEL_SEED=%llu FSMODEL_OPS=%lld make vmtest FS=%s, or in the guest: fsmodel -S %llu -n %lld -u %lld -b %lld -m %lld%s%s -d DIR -v",
		     seed, i - 1, fs_name, seed, i - 1, unit, blksz, maxlen,
		     memfd_mode ? " --memfd" : "", pressure_mib ? " -P N" : "");
	}
	report(model_case(), !failed,
	       ename(failed && op.got != op.expect ? op.got : 0),
	       "seed=%llu ops=%lld seconds=%.0f%s", seed, i - 1, now() - start,
	       extra);
	free(m.data);
}

/* ------------------------------------------------------------------ */
/*
 * The concurrent run.  Each round, the shifter thread makes one valid
 * collapse or insert while the accessor thread makes a few reads and
 * writes; the main thread plans the round and judges the file after it.
 *
 * The accessor keeps the states the file may be in.  cand[0] is the file
 * if the shift has not happened yet (while alive[0]); every other live
 * candidate is the file if the shift happened at one of the points
 * between accesses still possible.  A write and the shift are ordered
 * (i_rwsem and the invalidate lock for pwrite; a single aligned store for
 * the mapping), so each write applies to every candidate.  What the
 * accessor sees of the shifter's progress prunes them: "started" still
 * clear after an access means the shift comes after it; "done" set before
 * an access means it came before.  A read must be explained by one
 * candidate, or, while the shift may be running, by the state before and
 * the state after it, granule by granule (a page for pread, a word for a
 * load through the mapping): never a mix within a granule, never bytes
 * of no candidate.
 */

#define MAX_ACCESSES	12

enum access_kind { A_PREAD, A_PWRITE, A_MREAD, A_MSTORE };
static const char *const access_names[] = { "pread", "pwrite", "mread", "mstore" };

struct access {
	enum access_kind kind;
	long long off, len;
	long delay_us;		/* before the access */
	long long got;		/* bytes read, or the errno of a write */
};

struct conc {
	struct target t;
	pthread_barrier_t go, end;
	int quit;
	/* The round, planned by the main thread. */
	long long round;
	struct state start;
	struct op shift;
	long shift_delay_us;
	struct access acc[MAX_ACCESSES];
	int nacc;
	/* Set by the shifter around its call: atomics. */
	int started, done;
	/* The accessor's candidates and findings. */
	struct state cand[MAX_ACCESSES + 2];
	int alive[MAX_ACCESSES + 2];
	int ncand, current;	/* current: the cut made from cand[0] as it is */
	int failed, overlapped;
	long long racy_reads, racy_rounds;	/* that no order explains */
	long long eof_reads;	/* wrong only in size: explain_eof() */
	unsigned char *buf;
};

static void pause_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	if (us > 0)
		nanosleep(&ts, NULL);
}

static int is_set(int *flag)
{
	return __atomic_load_n(flag, __ATOMIC_SEQ_CST);
}

static void shift_state(struct state *s, const struct op *shift)
{
	if (shift->kind == K_COLLAPSE)
		st_collapse(s, shift->off, shift->len);
	else
		st_insert(s, shift->off, shift->len);
}

/* The shift may happen here: the candidate "cand[0], then the shift". */
static void add_cut(struct conc *c)
{
	int k;

	if (c->current >= 0)
		return;
	k = c->ncand++;
	st_copy(&c->cand[k], &c->cand[0]);
	shift_state(&c->cand[k], &c->shift);
	c->alive[k] = 1;
	c->current = k;
}

static void apply_write(struct conc *c, long long off,
			const unsigned char *buf, long long len)
{
	int k;

	for (k = 0; k < c->ncand; k++)
		if (c->alive[k])
			memcpy(c->cand[k].data + off, buf, len);
	c->current = -1;
}

static int granules_match(const struct state *s, const unsigned char *got,
			  long long off, long long n, long long g)
{
	long long from, to;

	for (from = off; from < off + n; from = to) {
		to = (from / g + 1) * g;
		if (to > off + n)
			to = off + n;
		if (memcmp(got + (from - off), s->data + from, to - from))
			return 0;
	}
	return 1;
}

/* Granule by granule, each from @a or from @b. */
static int granules_mixed(const struct state *a, const struct state *b,
			  const unsigned char *got, long long off, long long n,
			  long long g)
{
	long long from, to;

	for (from = off; from < off + n; from = to) {
		to = (from / g + 1) * g;
		if (to > off + n)
			to = off + n;
		if (memcmp(got + (from - off), a->data + from, to - from) &&
		    memcmp(got + (from - off), b->data + from, to - from))
			return 0;
	}
	return 1;
}

static long long read_len(const struct state *s, long long off, long long len)
{
	return clamp(s->size - off, 0, len);
}

/*
 * Which candidates explain a read of @n bytes (@a->len asked) in granules
 * of @g bytes: ok[k] for candidate k alone, *mixed for the state before
 * the shift and the cut made from it, granule by granule.
 */
static int explain(const struct conc *c, const struct access *a,
		   const unsigned char *got, long long n, long long g, int *ok,
		   int *mixed)
{
	int k, explained = 0, cur = c->current;

	for (k = 0; k < c->ncand; k++) {
		ok[k] = c->alive[k] &&
			n == read_len(&c->cand[k], a->off, a->len) &&
			granules_match(&c->cand[k], got, a->off, n, g);
		explained |= ok[k];
	}
	*mixed = c->alive[0] && cur >= 0 && c->alive[cur] &&
		 (n == read_len(&c->cand[0], a->off, a->len) ||
		  n == read_len(&c->cand[cur], a->off, a->len)) &&
		 granules_mixed(&c->cand[0], &c->cand[cur], got, a->off, n, g);
	return explained || *mixed;
}

/*
 * Explained but for the size: below the smaller EOF of the state before
 * the shift and one after it, each granule is one of the two, and the
 * length lies between the two states' lengths; the bytes past that EOF
 * are not judged.  Such a read met i_size in mid-change: ext4 raises it
 * before it shifts and filemap_read() may then copy the old EOF folio's
 * tail; tmpfs rereads it for every page and may stop at any page between.
 * The answer is RACE_EOF, which a filesystem may list as intended without
 * hiding a page that mixes the two states or holds neither.
 */
static int explain_eof(const struct conc *c, const struct access *a,
		       const unsigned char *got, long long n, long long g)
{
	const struct state *pre = &c->cand[0];
	long long lo, hi, below;
	int k;

	for (k = 1; k < c->ncand; k++) {
		const struct state *post = &c->cand[k];

		if (!c->alive[k])
			continue;
		lo = read_len(pre, a->off, a->len);
		hi = read_len(post, a->off, a->len);
		if (n < (lo < hi ? lo : hi) || n > (lo < hi ? hi : lo))
			continue;
		below = clamp((pre->size < post->size ? pre->size : post->size) -
			      a->off, 0, n);
		if (granules_mixed(pre, post, got, a->off, below, g))
			return 1;
	}
	return 0;
}

/* The first granule of a read that is neither before nor after the shift. */
static void note_neither(const struct conc *c, const struct access *a,
			 const unsigned char *got, long long n, long long g)
{
	const struct state *pre = &c->cand[0], *post = &c->cand[c->current];
	long long from, to;

	for (from = a->off; from < a->off + n; from = to) {
		to = (from / g + 1) * g;
		if (to > a->off + n)
			to = a->off + n;
		if (memcmp(got + (from - a->off), pre->data + from, to - from) &&
		    memcmp(got + (from - a->off), post->data + from, to - from)) {
			note(" while the shift may be under way, the granule %lld..%lld is neither side:",
			     from, to);
			same_bytes("  against before", got + (from - a->off),
				   pre->data + from, from, to - from);
			same_bytes("  against after", got + (from - a->off),
				   post->data + from, from, to - from);
			return;
		}
	}
}

/* The round's plan, and what its first @done accesses gave. */
static void note_round(const struct conc *c, int done)
{
	char text[160];
	int i;

	op_text(&c->shift, text, sizeof(text));
	note("round %lld: the shifter's %s (after %ld us) answered %s", c->round,
	     text + strcspn(text, " ") + 1, c->shift_delay_us, ename(c->shift.got));
	note("the accessor's accesses (the file was %lld bytes before):",
	     c->start.size);
	for (i = 0; i < done; i++)
		note("  %s off=%lld len=%lld after %ld us -> %lld",
		     access_names[c->acc[i].kind], c->acc[i].off, c->acc[i].len,
		     c->acc[i].delay_us, c->acc[i].got);
}

/*
 * Judge a read of @n bytes (@a->len asked) in granules of @g bytes, and
 * keep the states it allows.  A read nothing explains is counted (the
 * answer RACE, the first one described) and teaches nothing.
 */
static void judge_read(struct conc *c, const struct access *a, int index,
		       const unsigned char *got, long long n, long long g)
{
	int ok[MAX_ACCESSES + 2] = { 0 };
	int k, mixed = 0, cur = c->current;

	if (!explain(c, a, got, n, g, ok, &mixed)) {
		char text[160];

		op_text(&c->shift, text, sizeof(text));
		if (explain_eof(c, a, got, n, g)) {
			if (!c->eof_reads++)
				note("round %lld: %s off=%lld len=%lld, racing the %s, gave %lld bytes: every page below the smaller EOF is the file's before or after the shift, but the length or the bytes past that EOF are neither's (the first such read; answer RACE_EOF)",
				     c->round, access_names[a->kind], a->off,
				     a->len, text + strcspn(text, " ") + 1, n);
			return;
		}
		if (c->racy_reads++)
			return;
		note("round %lld: %s off=%lld len=%lld, racing the %s, gave %lld bytes that no order of the accesses and the shift explains (the first such read):",
		     c->round, access_names[a->kind], a->off, a->len,
		     text + strcspn(text, " ") + 1, n);
		for (k = 0; k < c->ncand; k++) {
			if (!c->alive[k])
				continue;
			note(" against %s (size %lld):",
			     k ? "a state after the shift" : "the state before the shift",
			     c->cand[k].size);
			if (n != read_len(&c->cand[k], a->off, a->len))
				note("  it would give %lld bytes",
				     read_len(&c->cand[k], a->off, a->len));
			else
				same_bytes("  read", got, c->cand[k].data + a->off,
					   a->off, n);
		}
		if (c->alive[0] && cur >= 0 && c->alive[cur])
			note_neither(c, a, got, n, g);
		note_round(c, index + 1);
		return;
	}
	/* A read showing the shift's result means it is done, or holds the
	 * locks a write needs.
	 */
	for (k = 1; k < c->ncand; k++)
		if (c->alive[k] && !ok[k] && !(k == cur && mixed))
			c->alive[k] = 0;
	if (c->alive[0] && !ok[0])
		c->alive[0] = 0;
}

static int access_one(struct conc *c, struct access *a, uint64_t opn)
{
	struct target *t = &c->t;
	unsigned char *buf = c->buf;
	long long i;
	uint64_t w;

	switch (a->kind) {
	case A_PWRITE:
		fill(buf, TAG_CWRITE, opn, a->off, a->len);
		a->got = pwrite_all(t->fd, buf, a->len, a->off);
		if (a->got) {
			note("pwrite off=%lld len=%lld: %s", a->off, a->len,
			     ename(a->got));
			return -1;
		}
		apply_write(c, a->off, buf, a->len);
		break;
	case A_MSTORE:
		w = word_of(TAG_CSTORE, opn, a->off);
		if (sigsetjmp(bus_jump, 1)) {
			note("SIGBUS storing through the mapping at %lld", a->off);
			return -1;
		}
		bus_armed = 1;
		__atomic_store_n((uint64_t *)(t->map + a->off), w, __ATOMIC_RELAXED);
		bus_armed = 0;
		apply_write(c, a->off, (unsigned char *)&w, 8);
		break;
	case A_PREAD:
		/*
		 * One call: a second one, after a short read at EOF, would
		 * read on past the EOF an insert has moved meanwhile, and
		 * join two states in one access.
		 */
		a->got = pread(t->fd, buf, a->len, a->off);
		if (a->got < 0) {
			note("pread off=%lld len=%lld: %s", a->off, a->len,
			     strerror(errno));
			return -1;
		}
		break;
	case A_MREAD:
		if (sigsetjmp(bus_jump, 1)) {
			note("SIGBUS loading through the mapping at %lld..%lld",
			     a->off, a->off + a->len);
			return -1;
		}
		bus_armed = 1;
		for (i = 0; i < a->len; i += 8) {
			w = __atomic_load_n((uint64_t *)(t->map + a->off + i),
					    __ATOMIC_RELAXED);
			memcpy(buf + i, &w, 8);
		}
		bus_armed = 0;
		a->got = a->len;
		break;
	}
	return 0;
}

static void access_round(struct conc *c)
{
	int i, overlapped = 0;

	c->ncand = 1;
	c->alive[0] = 1;
	c->current = -1;
	st_copy(&c->cand[0], &c->start);
	for (i = 0; i < c->nacc; i++) {
		struct access *a = &c->acc[i];

		pause_us(a->delay_us);
		if (c->alive[0]) {
			/* The shift may come just before this access... */
			add_cut(c);
			/* ...and if it is done, it came before. */
			if (is_set(&c->done))
				c->alive[0] = 0;
		}
		if (access_one(c, a, c->round * MAX_ACCESSES + i))
			goto failed;
		if (c->alive[0]) {
			if (!is_set(&c->started)) {
				/* The shift comes after this access. */
				c->ncand = 1;
				c->current = -1;
			} else if (!is_set(&c->done)) {
				overlapped = 1;
			}
		}
		if (a->kind == A_PREAD || a->kind == A_MREAD)
			judge_read(c, a, i, c->buf, a->got,
				   a->kind == A_PREAD ? pagesz : 8);
	}
	c->overlapped += overlapped;
	return;
failed:
	c->failed = 1;
}

static void *accessor(void *arg)
{
	struct conc *c = arg;

	for (;;) {
		pthread_barrier_wait(&c->go);
		if (c->quit)
			return NULL;
		access_round(c);
		pthread_barrier_wait(&c->end);
	}
}

static void *shifter(void *arg)
{
	struct conc *c = arg;

	for (;;) {
		pthread_barrier_wait(&c->go);
		if (c->quit)
			return NULL;
		pause_us(c->shift_delay_us);
		__atomic_store_n(&c->started, 1, __ATOMIC_SEQ_CST);
		c->shift.got = xfallocate(c->t.fd, mode_of(&c->shift),
					  c->shift.off, c->shift.len);
		__atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
		pthread_barrier_wait(&c->end);
	}
}

/*
 * One round: a valid shift keeping the size between a quarter of maxlen
 * and maxlen, and accesses inside the part of the file that exists before
 * and after it (the mapping past EOF is SIGBUS, and pwrite must not move
 * EOF), each after a random pause so that they land before, during or
 * after the shift.
 */
static void plan_round(struct conc *c, struct rng *r)
{
	long long size = c->start.size, post, lim, span;
	struct op *s = &c->shift;
	int i;

	if (size + 4 * unit > maxlen)
		s->kind = K_COLLAPSE;
	else if (size - 4 * unit < maxlen / 4)
		s->kind = K_INSERT;
	else
		s->kind = chance(r, 50) ? K_COLLAPSE : K_INSERT;
	gen_shift(r, size, s, 0, 4);
	s->n = c->round;
	post = s->kind == K_COLLAPSE ? size - s->len : size + s->len;
	lim = size < post ? size : post;
	span = size > post ? size : post;
	c->shift_delay_us = below(r, 2000);
	c->nacc = 1 + below(r, MAX_ACCESSES);
	for (i = 0; i < c->nacc; i++) {
		struct access *a = &c->acc[i];

		a->kind = below(r, 4);
		a->delay_us = chance(r, 30) ? 0 : below(r, 1000);
		switch (a->kind) {
		case A_PREAD:
			a->off = pick_off(r, size, span);
			a->len = pick_len(r, maxlen - a->off);
			break;
		case A_PWRITE:
			a->off = pick_off(r, size, lim - 1);
			a->len = pick_len(r, lim - a->off);
			break;
		case A_MREAD:
			a->off = pick_off(r, size, lim - 8) & ~7LL;
			a->len = 8 * (1 + below(r, (lim - a->off) / 8 < 1024 ?
						(lim - a->off) / 8 : 1024));
			break;
		case A_MSTORE:
			a->off = pick_off(r, size, lim - 8) & ~7LL;
			a->len = 8;
			break;
		}
		a->got = 0;
	}
}


/*
 * After the round: the file must be one of the live candidates, and the
 * mapping must show it.  A file no order gives is counted like a read no
 * order explains (the answer RACE, the first one described), and the next
 * round starts from what the file holds.
 */
static int judge_round(struct conc *c)
{
	struct target *t = &c->t;
	long long n;
	int k, match = 0;

	if (c->shift.got) {
		note("the shift answered %s", ename(c->shift.got));
		return -1;
	}
	if (c->failed)
		return -1;
	if (c->alive[0]) {
		/* Done, so it came after the last access. */
		add_cut(c);
		c->alive[0] = 0;
	}
	n = pread_all(t->fd, t->buf, maxlen + 1, 0);
	if (n < 0 || n > maxlen) {
		note("reading the file after round %lld: %lld", c->round, n);
		return -1;
	}
	for (k = 1; k < c->ncand && !match; k++)
		match = c->alive[k] && n == c->cand[k].size &&
			!memcmp(t->buf, c->cand[k].data, n);
	if (!match && !c->racy_rounds++) {
		note("round %lld: the file after it (%lld bytes) is none of the states the orders allow:",
		     c->round, n);
		for (k = 1; k < c->ncand; k++) {
			if (!c->alive[k])
				continue;
			if (n != c->cand[k].size)
				note(" a state of %lld bytes", c->cand[k].size);
			else
				same_bytes(" against a state", t->buf,
					   c->cand[k].data, 0, n);
		}
		note_round(c, c->nacc);
	}
	st_truncate(&c->start, 0);
	st_write(&c->start, 0, t->buf, n);
	if (map_copy(c->buf, t->map, n, 0))
		return -1;
	return same_bytes("the mapping after the round", c->buf, t->buf, 0, n) - 1;
}

static void concurrent_run(void)
{
	struct rng r = { seed ^ 0x636f6e63757272ULL };	/* its own stream */
	struct conc *c = xmalloc(sizeof(*c));
	pthread_t th[2];
	double start = now();
	long long accesses = 0;
	int k, failed = 0;

	st_init(&c->start);
	for (k = 0; k < MAX_ACCESSES + 2; k++)
		st_init(&c->cand[k]);
	c->buf = xmalloc(cap);
	if (setup_target(&c->t, "fsmodel.conc")) {
		report("model_concurrent", 0, "EIO", "seed=%llu", seed);
		return;
	}
	/* Start from a file half the largest size, written all through. */
	c->start.size = maxlen / 2 / unit * unit + 123;
	fill(c->start.data, TAG_FILL, 0, 0, c->start.size);
	if (pwrite_all(c->t.fd, c->start.data, c->start.size, 0) ||
	    fsync(c->t.fd)) {
		note("writing the first contents: %s", strerror(errno));
		report("model_concurrent", 0, "EIO", "seed=%llu", seed);
		return;
	}
	pthread_barrier_init(&c->go, NULL, 3);
	pthread_barrier_init(&c->end, NULL, 3);
	pthread_create(&th[0], NULL, accessor, c);
	pthread_create(&th[1], NULL, shifter, c);
	for (c->round = 1; c->round <= nrounds && !failed; c->round++) {
		plan_round(c, &r);
		c->started = c->done = 0;
		c->failed = 0;
		pthread_barrier_wait(&c->go);
		pthread_barrier_wait(&c->end);
		accesses += c->nacc;
		failed = judge_round(c);
		if (failed)
			note_round(c, c->nacc);
		if (nrounds >= 10 && c->round % (nrounds / 10) == 0)
			progress("model_concurrent", c->round, nrounds, start);
	}
	c->quit = 1;
	pthread_barrier_wait(&c->go);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	if (failed)
		note("seed %llu, round %lld of %lld; timing decides the orders, so the same seed replays the same operations, not always the same race",
		     seed, c->round - 1, nrounds);
	if (c->racy_reads || c->racy_rounds || c->eof_reads)
		note("in all, %lld reads and %lld rounds that no order explains, %lld reads wrong only in size",
		     c->racy_reads, c->racy_rounds, c->eof_reads);
	report("model_concurrent", !failed,
	       c->racy_reads || c->racy_rounds ? "RACE" :
	       c->eof_reads ? "RACE_EOF" : "OK",
	       "seed=%llu rounds=%lld accesses=%lld overlapped=%d racy_reads=%lld racy_rounds=%lld eof_reads=%lld seconds=%.0f",
	       seed, c->round - 1, accesses, c->overlapped, c->racy_reads,
	       c->racy_rounds, c->eof_reads, now() - start);
	close_target(&c->t);
}

/* ------------------------------------------------------------------ */
/* The crash workload and its checker. */

static int log_fd = -1;

/* One line of the crash log, on its way out before the caller goes on. */
static void crash_log(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "crash %s ", fs_name);
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(log_fd, line, n) != n)
		perror("fsmodel: crash log");
	if (isatty(log_fd))
		tcdrain(log_fd);
}

static int crash_workload(const char *log)
{
	struct rng r = { seed };
	struct target t;
	struct state m;
	struct mix mx;
	struct op op;
	long long i;
	int dfd;

	log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY, 0644);
	if (log_fd < 0) {
		fprintf(stderr, "fsmodel: %s: %s\n", log, strerror(errno));
		return 2;
	}
	probe(&t);
	mix_init(&mx, 1);
	st_init(&m);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (setup_target(&t, "fsmodel.crash") || fsync(t.fd) || dfd < 0 ||
	    fsync(dfd)) {
		crash_log("error creating the file: %s", diag[0] ? diag : strerror(errno));
		return 1;
	}
	crash_log("begin seed=%llu", seed);
	crash_log("durable 0");
	for (i = 1; i <= nops; i++) {
		op.n = i;
		gen_op(&r, &mx, m.size, &op);
		crash_log("start %lld", i);
		if (step(&t, &m, &op)) {
			crash_log("error at operation %lld: %s", i,
				  strchr(diag, '\n') ? diag + 2 : diag);
			fputs(diag, stdout);
			return 1;
		}
		if (op.kind == K_FSYNC || op.kind == K_FDATASYNC)
			crash_log("durable %lld", i);
	}
	crash_log("end %lld", nops);
	return 0;
}

/*
 * Could @b at @x be a byte an operation in flight wrote, @x being where an
 * older extent map put the block it wrote to?  An overwrite in place is
 * not ordered with the journal: its data can reach the disk while a shift
 * before it does not, and then lands whole units away from where the
 * model has it.  Writes leave their pattern; punch, zero range and a
 * truncate (in the block past the new size) leave zeros.
 */
static int inflight_byte(const struct op *ops, long long nin, long long x,
			 unsigned char b)
{
	long long i, lo, hi, p;
	int tag;

	for (i = 0; i < nin; i++) {
		const struct op *op = &ops[i];

		if (op->expect)
			continue;
		tag = op->kind == K_PWRITE ? TAG_PWRITE :
		      op->kind == K_MWRITE ? TAG_MWRITE : 0;
		switch (op->kind) {
		case K_PWRITE:
		case K_MWRITE:
		case K_PUNCH:
		case K_ZERO:
			lo = op->off;
			hi = op->off + op->len;
			break;
		case K_TRUNCATE:
			lo = op->len;
			hi = op->len + blksz;
			break;
		default:
			continue;
		}
		if (!tag && b)
			continue;
		for (p = lo + ((x - lo) % unit + unit) % unit; p < hi; p += unit)
			if (!tag || (unsigned char)(word_of(tag, op->n, p) >>
						    (8 * (p & 7))) == b)
				return 1;
	}
	return 0;
}

/*
 * The file after a crash, with operations D+1..J (@ops, @nin of them)
 * possibly in flight and s[0..n) the states after D..J:
 *  - its size between the smallest and the largest of theirs;
 *  - every byte one of theirs at that offset (a state's bytes past its
 *    size are zeros), or a byte an operation in flight wrote, displaced by
 *    whole units (inflight_byte());
 *  - a sector of zeros only where the states differ in that sector, or all
 *    hold zeros there: the place of an operation that may be half done, a
 *    shift that moved part of the extents, data written back without its
 *    size.  Where all states agree, the file must agree: that is what the
 *    last fsync made durable.
 */
static int judge_crash(const struct state *s, long long n,
		       const struct op *ops, long long nin,
		       const unsigned char *got, long long size)
{
	long long lo = LLONG_MAX, hi = 0, k, x, sec, end;

	for (k = 0; k < n; k++) {
		lo = s[k].size < lo ? s[k].size : lo;
		hi = s[k].size > hi ? s[k].size : hi;
	}
	if (size < lo || size > hi) {
		note("size %lld, the states allow %lld..%lld", size, lo, hi);
		return -1;
	}
	for (sec = 0; sec < size; sec = end) {
		int zeros = 1, differ = 0, allzero = 1;

		end = sec + SECTOR < size ? sec + SECTOR : size;
		for (x = sec; x < end; x++) {
			int seen = 0;

			zeros &= !got[x];
			for (k = 0; k < n; k++) {
				seen |= cand_byte(&s[k], x) == got[x];
				differ |= cand_byte(&s[k], x) != cand_byte(&s[0], x);
				allzero &= !cand_byte(&s[k], x);
			}
			if (!seen && !inflight_byte(ops, nin, x, got[x]))
				goto bad_byte;
		}
		if (zeros && !differ && !allzero) {
			note("the sector at %lld reads zeros; every possible state has data there (durable since the last fsync)",
			     sec);
			goto show;
		}
		continue;
bad_byte:
		note("byte %lld is 0x%02x: no possible state has it there, and no operation in flight wrote it",
		     x, got[x]);
		sec = x;
show:
		if ((sec & ~7LL) + 8 <= size) {
			uint64_t w;

			memcpy(&w, got + (sec & ~7LL), 8);
			note("  the file's word at %lld is %s", sec & ~7LL,
			     describe(w));
		}
		for (k = 0; k < n; k++) {
			uint64_t w = 0;

			if ((sec & ~7LL) + 8 <= s[k].size)
				memcpy(&w, s[k].data + (sec & ~7LL), 8);
			note("  after operation %lld: %s", ops[0].n - 1 + k,
			     describe(w));
		}
		return -1;
	}
	return 0;
}

/* After the crash: @durable the last operation made durable, @last the
 * last one started (-1: none).
 */
static void crash_check(long long durable, long long last)
{
	struct rng r = { seed };
	struct target t;
	struct state m, *s;
	struct mix mx;
	struct op op;
	long long lo = durable < 0 ? 0 : durable, hi = last > lo ? last : lo;
	long long i, n = hi - lo + 1, size;
	unsigned char *got = xmalloc(cap + 1);
	struct op *ops = xmalloc(n * sizeof(*ops));
	char path[PATH_MAX];
	int fd, ok;

	probe(&t);
	mix_init(&mx, 1);
	st_init(&m);
	s = xmalloc(n * sizeof(*s));
	for (i = 0; i < n; i++)
		st_init(&s[i]);
	/* Replay the workload on the model alone, keeping states lo..hi and
	 * the operations lo+1..hi.
	 */
	for (i = 0; i <= hi; i++) {
		if (i) {
			op.n = i;
			gen_op(&r, &mx, m.size, &op);
			apply(&m, &op, got, 0);
			if (i > lo)
				ops[i - lo - 1] = op;
		}
		if (i >= lo)
			st_copy(&s[i - lo], &m);
	}
	snprintf(path, sizeof(path), "%s/fsmodel.crash", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		ok = errno == ENOENT && durable < 0;
		if (!ok)
			note("open %s: %s, after its creation was durable", path,
			     strerror(errno));
		report("crash", ok, "OK", "seed=%llu durable=%lld last=%lld file=none",
		       seed, durable, last);
		return;
	}
	size = pread_all(fd, got, cap + 1, 0);
	close(fd);
	if (size < 0 || size > maxlen) {
		note("reading %s: %lld", path, size);
		ok = 0;
	} else if (last <= durable) {
		/* Nothing started after the last fsync: exactly its state. */
		ok = size == s[0].size;
		if (!ok)
			note("size %lld, the durable state has %lld", size, s[0].size);
		else
			ok = same_bytes("the file", got, s[0].data, 0, size);
	} else {
		ok = !judge_crash(s, n, ops, n - 1, got, size);
	}
	if (!ok) {
		note("seed %llu: durable %lld, operations %lld..%lld possibly in flight:",
		     seed, durable, lo + 1, hi);
		r.s = seed;
		st_truncate(&m, 0);
		for (i = 1; i <= hi; i++) {
			char text[160];

			op.n = i;
			gen_op(&r, &mx, m.size, &op);
			apply(&m, &op, got, 0);
			if (i > lo - 4) {
				op_text(&op, text, sizeof(text));
				note("  %s%s", text, i > lo ? "" : " (durable)");
			}
		}
	}
	report("crash", ok, "OK", "seed=%llu durable=%lld last=%lld states=%lld size=%lld",
	       seed, durable, last, n, size);
}

/* ------------------------------------------------------------------ */

static void usage(int status)
{
	char ops[4096] = "";
	int k, total[2] = { 0, 0 };

	for (k = 0; k < NKINDS; k++) {
		total[0] += kinds[k].model;
		total[1] += kinds[k].crash;
	}
	for (k = 0; k < NKINDS; k++)
		snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops),
			 "  %-9s %5.2f%% %5.2f%%  %s\n", kinds[k].name,
			 100.0 * kinds[k].model / total[0],
			 100.0 * kinds[k].crash / total[1], kinds[k].what);
	fprintf(status ? stderr : stdout, usage_text, ops);
	exit(status);
}

static long long number(const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || *end || end == s)
		usage(2);
	return v;
}

static void leave_out(char *list)
{
	char *name;
	int k;

	for (name = strtok(list, ","); name; name = strtok(NULL, ",")) {
		for (k = 0; k < NKINDS && strcmp(kinds[k].name, name); k++)
			;
		if (k == NKINDS) {
			fprintf(stderr, "fsmodel: no operation '%s'\n", name);
			usage(2);
		}
		left_out[k] = 1;
	}
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "crash-workload", no_argument, NULL, 'W' },
		{ "crash-check", no_argument, NULL, 'C' },
		{ "memfd", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *log = NULL;
	long long durable = -2, last = -2;
	int opt, mode = 0, seeded = 0;
	struct target t;
	struct timespec ts;

	while ((opt = getopt_long(argc, argv, "d:u:b:f:S:n:c:m:k:x:l:D:J:P:vh",
				  longs, NULL)) != -1) {
		switch (opt) {
		case 'd': dir = optarg; break;
		case 'u': unit = number(optarg); break;
		case 'b': blksz = number(optarg); break;
		case 'f': fs_name = optarg; break;
		case 'S': seed = number(optarg); seeded = 1; break;
		case 'n': nops = number(optarg); break;
		case 'c': nrounds = number(optarg); break;
		case 'm': maxlen = number(optarg); break;
		case 'k': check_every = number(optarg); break;
		case 'x': leave_out(optarg); break;
		case 'l': log = optarg; break;
		case 'D': durable = number(optarg); break;
		case 'J': last = number(optarg); break;
		case 'P': pressure_mib = number(optarg); break;
		case 'M': memfd_mode = 1; break;
		case 'v': verbose = 1; break;
		case 'W': case 'C': mode = opt; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	pagesz = sysconf(_SC_PAGESIZE);
	if ((!dir && !memfd_mode) || optind != argc || unit < SECTOR ||
	    blksz < SECTOR || unit % blksz || nops < 0 || nrounds < 0 ||
	    check_every < 1 || pressure_mib < 0 || (memfd_mode && mode) ||
	    (mode == 'W' && !log) || (mode == 'C' && (durable < -1 || last < -1)))
		usage(2);
	if (!maxlen)
		maxlen = 16 * unit > 64 * 1024 ? 16 * unit : 64 * 1024;
	if (maxlen < 16 * unit)
		usage(2);
	cap = maxlen + pagesz;
	if (!seeded) {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (unsigned long long)ts.tv_sec * 1000003 + ts.tv_nsec / 1000;
	}
	signal(SIGBUS, on_sigbus);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mode == 'W')
		return crash_workload(log);
	printf("1..%d\n", mode == 'C' ? 1 : nrounds ? 2 : 1);
	if (mode == 'C') {
		crash_check(durable, last);
		return nfailed ? 1 : 0;
	}
	printf("# fsmodel: %s in %s: seed %llu, %lld operations, %lld concurrent rounds, unit %lld, block %lld, largest size %lld\n",
	       fs_name, memfd_mode ? "memfds" : dir, seed, nops, nrounds, unit, blksz, maxlen);
	probe(&t);
	if (setup_target(&t, "fsmodel.seq"))
		report(model_case(), 0, "EIO", "seed=%llu", seed);
	else
		model_run(&t);
	if (nrounds)
		concurrent_run();
	return nfailed ? 1 : 0;
}
