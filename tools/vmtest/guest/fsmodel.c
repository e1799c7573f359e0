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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
"usage: fsmodel -d DIR -u UNIT -b BLOCK [OPTION]...\n"
"       fsmodel --memfd -u UNIT -b BLOCK [OPTION]...\n"
"       fsmodel --crash-workload -d DIR -u UNIT -b BLOCK -l LOG [-X WHERE -T N]\n"
"               [OPTION]...\n"
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
"                    and DIR/fsmodel.reads (cases \"model_concurrent\",\n"
"                    \"model_race\", \"model_race_eof\", \"model_race_grow\",\n"
"                    \"model_race_seek\", \"model_race_file\",\n"
"                    \"model_overlap\")\n"
"  --memfd           the same on memfds (memfd_create(2), MFD_ALLOW_SEALING)\n"
"                    instead of files in DIR, with two more operations:\n"
"                    seal, after which every operation must answer as the\n"
"                    seals say (EPERM where they refuse it), and renew,\n"
"                    which goes on with a fresh memfd\n"
"  --crash-workload  first a file of a secret pattern, fsync'd and deleted\n"
"                    (its blocks freed), and DIR/fsmodel.other, 64 KiB of\n"
"                    known data; then operations on DIR/fsmodel.crash until\n"
"                    the machine dies, each logged to LOG (\" t=SECONDS\" of\n"
"                    CLOCK_MONOTONIC ends every line):\n"
"                      crash NAME begin seed=S\n"
"                      crash NAME start N KIND   (KIND/EINVAL: invalid shift)\n"
"                      crash NAME done N\n"
"                      crash NAME durable N      (fsync, fdatasync N returned)\n"
"                      crash NAME point WHERE N  (SysRq b follows)\n"
"                      crash NAME miss N         (a during crash came late)\n"
"                      crash NAME end N, error ..., exit ...\n"
"                    With -X, the workload reboots the machine by SysRq b\n"
"                    itself, at its -T-th valid collapse or insert or\n"
"                    later: before it starts, during it (a second thread,\n"
"                    within the quickest shift so far), or after it\n"
"                    returned, once every workload of -F has finished one\n"
"                    more operation (in 30 s, else an error): the crash\n"
"                    cuts no hung one off.  Without -X it waits for the\n"
"                    crash after -n operations.  It never exits before the\n"
"                    crash but on an error, logged.  (LOG, when a terminal,\n"
"                    is drained after each line)\n"
"  --crash-check     after the crash, with the last durable operation D and\n"
"                    the last started one J from that log: every block of\n"
"                    DIR/fsmodel.crash is one the operations D+1..J, each\n"
"                    applied or not, can leave there, its size one they\n"
"                    can leave; it holds no word of the secret or of\n"
"                    fsmodel.other, which is intact (case \"crash\"; its\n"
"                    found= says which states the file shows; rules in\n"
"                    docs/design.rst)\n"
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
"  -o READS      the concurrent run fails (case model_overlap) unless at\n"
"                least READS preads overlapped a shift (default 10 a round)\n"
"  -a CLASS=N    allow at most N outcomes of CLASS (RACE, RACE_EOF or\n"
"                RACE_SEEK: below) every 100 rounds of the concurrent run\n"
"                (default none)\n"
"  -m BYTES      largest file size (default 64 KiB or 16 units, the larger)\n"
"  -k OPS        besides every read, compare the whole file (through read\n"
"                and through the mapping) every OPS operations (default\n"
"                1000), after drop and remount, and at the end\n"
"  -x LIST       leave out these operations (comma separated names)\n"
"  -l LOG        the crash log (--crash-workload)\n"
"  -D N, -J N    the last durable and the last started operation\n"
"                (--crash-check; -1: none)\n"
"  -X WHERE      crash before, during or after a shift (--crash-workload)\n"
"  -T N          ... at the Nth valid shift or a later one (N >= 2)\n"
"  -F LIST       ... once each workload of LIST (NAMEs, comma separated)\n"
"                has finished an operation since the crash point came\n"
"  -R            the concurrent run's second part races the shift with a\n"
"                thread paging the read file out (MADV_PAGEOUT) and, on a\n"
"                mount with huge pages, collapsing it (MADV_COLLAPSE); case\n"
"                model_swap_overlap fails unless -w shifts ran while pages\n"
"                went out to swap; it also counts shifts while another task\n"
"                split a folio (a kretprobe: CONFIG_KPROBE_EVENTS)\n"
"  -w SHIFTS     with -R: the floor of that case (default half the\n"
"                rounds)\n"
"  -A            with -R: the read file is shared anonymous memory with\n"
"                64 KiB folios (mTHP), stored again through its mapping\n"
"                every round; the floor also counts shifts while 64 KiB\n"
"                folios went out to swap whole and shifts while another\n"
"                task split a folio\n"
"  -H KIB        run in a new memory cgroup whose memory.high is KIB, so\n"
"                that reclaim swaps the files out all along\n"
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
"The concurrent run: each round has two parts.  In the first, one thread\n"
"collapses or inserts (a valid range) while another makes 1-12 reads and\n"
"writes through pread/pwrite and through the mapping (single aligned\n"
"8-byte loads and stores), inside the part of the file that exists both\n"
"before and after the shift.  In the second, one thread shifts a file of\n"
"up to 1 MiB on tmpfs, 256 KiB elsewhere, while 4 threads read it (pread,\n"
"loads through the mapping, SEEK_DATA, SEEK_HOLE), aimed at the part that\n"
"moves, until the call has returned.  A write and the shift are ordered\n"
"one way or the other.  Each access is judged against the states live\n"
"during it: the state before the shift unless the call had returned when\n"
"it started, the state after it if the call had started when it ended;\n"
"with both the access overlapped the shift.  A read must be one live\n"
"state's length and bytes, or, having overlapped, each page of a pread\n"
"(each word of a mapping read) wholly either state's, inside its size,\n"
"with the length of one; a seek must answer as one live state; after each\n"
"part the file must be exactly one of the states the orders allow.  What\n"
"breaks a rule is counted in a class, whose case fails unless -a allows\n"
"that many:\n"
"  RACE_EOF   an overlapping read of such bytes whose length is strictly\n"
"             between the two states' (case model_race_eof)\n"
"  RACE_GROW  an overlapping read that crossed the smaller EOF: granules\n"
"             below it live states', bytes past it the larger state's\n"
"             (model_race_grow)\n"
"  RACE_SEEK  an overlapping seek no live state answers (model_race_seek)\n"
"  RACE_FILE  the file after a part is no state the orders allow: a lost\n"
"             store, a shift half done (model_race_file); the file is then\n"
"             written again from the model (never the model from the file)\n"
"  RACE       any other read or seek: a byte no state held, a granule that\n"
"             mixes them, the state before once the call returned\n"
"             (model_race)\n"
"The case model_overlap prints \"overlap: N reads, M mmap loads, K seeks\"\n"
"(accesses that overlapped a shift) and fails below the -o floor.\n"
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
	char extra[512];
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
#define PRESSURE_WAIT_S		300	/* -P: the longest wait for a swapped page */

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
	/*
	 * Under -P the run goes on past -n until a page of the file has been
	 * found in swap (at most PRESSURE_WAIT_S): on an idle host -n
	 * operations can end before reclaim reaches the file.
	 */
	for (i = 1; !failed && (i <= nops || (pressure_mib && !swapped &&
					      now() - start < PRESSURE_WAIT_S));
	     i++) {
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
	if (!failed && i - 1 > nops)
		failed = check_file(t, &m, "whole-file check");
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
 * The concurrent run.  Each round has two parts.  In the first, the
 * shifter thread makes one valid collapse or insert on fsmodel.conc while
 * the accessor thread makes a few reads and writes.  In the second, the
 * shifter shifts fsmodel.reads, a larger file, while READERS threads read
 * it (pread, loads through the mapping, SEEK_DATA and SEEK_HOLE), aimed
 * at the part that moves, from before the call until after it returned.
 * The main thread plans each part and judges the file after it.
 *
 * The shifter sets "started" just before its fallocate() and "done" just
 * after it; every access samples "done" before it starts and "started"
 * after it ends.  The state before the shift was live during the access
 * unless "done" was set before it; a state after the shift was live
 * unless "started" was still clear after it.  When both were, the access
 * overlapped the shift: those are the accesses counted for the floor.
 *
 * A read must be wholly one live state's bytes and length; or, when it
 * overlapped the shift, each granule (a page for pread, a word for a load
 * through the mapping) wholly the state before's or the state after's,
 * inside that state's size, with the length of one of them.  SEEK_DATA
 * and SEEK_HOLE must answer as one live state.  After each part the file
 * must be exactly one of the states the model allows.  What breaks these
 * rules falls in one of three classes, each counted, and each failing the
 * run (its own case) unless -a allows that many for the filesystem:
 *   RACE_EOF   a read that overlapped the shift, every granule a live
 *              state's, its length strictly between theirs: it met i_size
 *              in mid-change;
 *   RACE_SEEK  SEEK_DATA or SEEK_HOLE that overlapped the shift and found
 *              what neither state holds;
 *   RACE       anything else: a byte no state held, a mix within a
 *              granule, a read after the call returned that shows the
 *              state before, a file no order gives.
 * The model is never taken from the file: after a RACE file the file is
 * written again from the model, and the run goes on from there.
 *
 * In the first part the accessor keeps the states the file may be in.
 * cand[0] is the file if the shift has not happened yet (while alive[0]);
 * every other live candidate is the file if the shift happened at one of
 * the points between accesses still possible.  A write and the shift are
 * ordered (i_rwsem and the invalidate lock for pwrite; a single aligned
 * store for the mapping), so each write applies to every candidate, and
 * only cand[0] and the cut made from it as it is (current) can both be the
 * file during one read.  What a read shows prunes the candidates.
 */

#define MAX_ACCESSES	12
#define READERS		4	/* reader threads of the second part */
/*
 * fsmodel.reads: at most 1024 pages on tmpfs (4 MiB with 4 KiB pages),
 * whose shift never sleeps: it overlaps a read only when preempted, so it
 * must move many entries (256 pages gave too few overlapping reads on an
 * idle host, and so did 4 MiB of 64 KiB pages); 256 KiB elsewhere, where
 * shifts wait for the disk and f2fs moves block by block.
 */
#define READ_FILE_TMPFS_PAGES	1024
#define READ_FILE	(256 << 10)
#define READ_PAGES	64	/* a pread of the second part: at most */
#define READS_AFTER	2	/* reads a reader makes once the shift returned */
#define READS_MOST	4000	/* reads of a reader in one part, at most */

enum access_kind { A_PREAD, A_PWRITE, A_MREAD, A_MSTORE, A_SEEK };
static const char *const access_names[] = {
	"pread", "pwrite", "mread", "mstore", "lseek"
};

/* The classes of what the rules do not explain, which -a can allow. */
enum { C_RACE, C_RACE_EOF, C_RACE_GROW, C_RACE_SEEK, C_RACE_FILE,
       NCLASSES, C_OK = NCLASSES };
static const char *const class_names[NCLASSES] = {
	"RACE", "RACE_EOF", "RACE_GROW", "RACE_SEEK", "RACE_FILE"
};
static const char *const class_cases[NCLASSES] = {
	"model_race", "model_race_eof", "model_race_grow", "model_race_seek",
	"model_race_file"
};
/* -a CLASS=N: at most N outcomes every 100 rounds (0: none allowed) */
static long long class_max[NCLASSES];
static long long overlap_floor = -1;	/* -o; -1: ten reads a round */
static int swap_racer;			/* -R */
static int anon_reads;			/* -A */
static long long swap_floor = -1;	/* -w; -1: half the rounds */
static long long memcg_high_kib;	/* -H */

/* The cases the concurrent run reports. */
#define CONC_CASES	(2 + NCLASSES + !!swap_racer)

struct access {
	enum access_kind kind;
	long long off, len;
	int whence;		/* A_SEEK */
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

static void st_init_cap(struct state *s, long long bytes)
{
	s->data = xmalloc(bytes);
	s->size = 0;
	s->seals = 0;
}

static void shift_state(struct state *s, const struct op *shift)
{
	if (shift->kind == K_COLLAPSE)
		st_collapse(s, shift->off, shift->len);
	else
		st_insert(s, shift->off, shift->len);
}

/*
 * The shift may happen here: the candidate "cand[0], then the shift",
 * unless the one made since the last write still lives.
 */
static void add_cut(struct conc *c)
{
	int k;

	if (c->current >= 0 && c->alive[c->current])
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

static long long read_len(const struct state *s, long long off, long long len)
{
	return clamp(s->size - off, 0, len);
}

/* @got (@n bytes from @off) is all @s's, inside its size. */
static int bytes_of(const struct state *s, const unsigned char *got,
		    long long off, long long n)
{
	return !n || (off + n <= s->size && !memcmp(got, s->data + off, n));
}

/* Granule by granule, each wholly @a's or @b's, inside that one's size. */
static int granules_mixed(const struct state *a, const struct state *b,
			  const unsigned char *got, long long off, long long n,
			  long long g)
{
	long long from, to;

	for (from = off; from < off + n; from = to) {
		to = (from / g + 1) * g;
		if (to > off + n)
			to = off + n;
		if (!bytes_of(a, got + (from - off), from, to - from) &&
		    !bytes_of(b, got + (from - off), from, to - from))
			return 0;
	}
	return 1;
}

/*
 * A read that overlapped the shift and crossed the smaller EOF of @a and
 * @b while it moved, no longer than the longer state's read: each granule
 * below that EOF is either state's, and from there on the bytes are the
 * larger state's.  A read that reached the old EOF of an insert goes on
 * once the size has grown, as a read racing an append does; every byte is
 * a live state's at its offset, and none is a zero the file never held
 * there (RACE_GROW).
 */
static int crossed_eof(const struct state *a, const struct state *b,
		       const unsigned char *got, long long off, long long n,
		       long long g, long long hi)
{
	const struct state *big = a->size > b->size ? a : b;
	long long eof = a->size < b->size ? a->size : b->size;
	long long k = eof > off ? eof - off : 0;

	if (n > hi || off + n <= eof)
		return 0;
	if (off < eof && !granules_mixed(a, b, got, off, eof - off, g))
		return 0;
	return bytes_of(big, got + k, off + k, n - k);
}

/*
 * Judge a read of @n bytes (@len asked at @off) in granules of @g bytes
 * against the @ns states @s live during it; with @mix the read overlapped
 * the shift, and s[0] and s[1] are the states before and after it.  Bit k
 * of *@fits says that s[k] may still be the file.  C_OK: one state's
 * length and bytes, or with @mix each granule either's and the length of
 * one; C_RACE_EOF: such bytes, but a length strictly between the live
 * states' lengths (all of them differ); C_RACE: anything else.
 */
static int judge_bytes(const struct state *const *s, int ns, int mix,
		       long long off, long long len, const unsigned char *got,
		       long long n, long long g, unsigned int *fits)
{
	long long lo = LLONG_MAX, hi = -1, l;
	int k, bytes = 0;

	*fits = 0;
	for (k = 0; k < ns; k++) {
		l = read_len(s[k], off, len);
		lo = l < lo ? l : lo;
		hi = l > hi ? l : hi;
		if (bytes_of(s[k], got, off, n)) {
			bytes = 1;
			if (n == l)
				*fits |= 1u << k;
		}
	}
	if (mix && granules_mixed(s[0], s[1], got, off, n, g)) {
		bytes = 1;
		if (n == read_len(s[0], off, len) ||
		    n == read_len(s[1], off, len))
			*fits |= 3;
	}
	if (*fits)
		return C_OK;
	if (bytes && n > lo && n < hi)
		return C_RACE_EOF;
	return mix && crossed_eof(s[0], s[1], got, off, n, g, hi) ?
	       C_RACE_GROW : C_RACE;
}

/*
 * Judge SEEK_DATA or SEEK_HOLE from @off that found @got (or -ENXIO):
 * no data before what SEEK_DATA found, zeros where SEEK_HOLE found a hole
 * (one block of them, or up to EOF), all in one live state: ext4, f2fs
 * and tmpfs look up under i_rwsem, as the shifts run, so they see no
 * state in between (xfs takes only the ILOCK: RACE_SEEK).  A filesystem
 * may report a hole as data, never data as a hole.
 */
static int seek_fits(const struct state *s, long long off, int whence,
		     long long got)
{
	long long x, end;

	if (off >= s->size)
		return got == -ENXIO;
	if (whence == SEEK_DATA) {
		end = got == -ENXIO ? s->size : got;
		if (end < off || end > s->size ||
		    (got != -ENXIO && end == s->size))
			return 0;
	} else {
		if (got < off || got > s->size)
			return 0;
		end = (got / blksz + 1) * blksz;
		end = end < s->size ? end : s->size;
	}
	for (x = whence == SEEK_DATA ? off : got; x < end; x++)
		if (s->data[x])
			return 0;
	return 1;
}

/* C_OK, C_RACE_SEEK (with @mix: it overlapped the shift) or C_RACE. */
static int judge_seek(const struct state *const *s, int ns, int mix,
		      long long off, int whence, long long got,
		      unsigned int *fits)
{
	int k;

	*fits = 0;
	for (k = 0; k < ns; k++)
		if (seek_fits(s[k], off, whence, got))
			*fits |= 1u << k;
	return *fits ? C_OK : mix ? C_RACE_SEEK : C_RACE;
}

/* Count an access: did it overlap the shift?  @d0: done before it; @s1:
 * started after it.
 */
static void tally_access(struct tally *t, enum access_kind kind, int d0, int s1)
{
	t->accesses++;
	if (d0 || !s1)
		return;
	t->reads += kind == A_PREAD;
	t->loads += kind == A_MREAD;
	t->seeks += kind == A_SEEK;
}

/* How a read or seek compares with the live states (@pre: the one before). */
static void note_states(const struct state *const *s, int ns, int mix,
			const struct state *pre, const struct access *a,
			const unsigned char *got, long long g)
{
	long long n = a->got, from, to;
	int k;

	for (k = 0; k < ns; k++) {
		note(" against %s (size %lld):", s[k] == pre ?
		     "the state before the shift" : "a state after the shift",
		     s[k]->size);
		if (a->kind == A_SEEK)
			continue;
		if (n != read_len(s[k], a->off, a->len))
			note("  it would give %lld bytes",
			     read_len(s[k], a->off, a->len));
		same_bytes("  read", got, s[k]->data + a->off, a->off,
			   n < read_len(s[k], a->off, a->len) ? n :
			   read_len(s[k], a->off, a->len));
	}
	if (!mix || a->kind == A_SEEK)
		return;
	for (from = a->off; from < a->off + n; from = to) {
		to = (from / g + 1) * g;
		if (to > a->off + n)
			to = a->off + n;
		if (!bytes_of(s[0], got + (from - a->off), from, to - from) &&
		    !bytes_of(s[1], got + (from - a->off), from, to - from)) {
			note(" the granule %lld..%lld is neither side's (the first such)",
			     from, to);
			return;
		}
	}
}

/* The first outcome of each class is described; @what says which. */
static const char *const class_what[NCLASSES] = {
	"what no order of the accesses and the shift explains (the first such, RACE):",
	"every granule is a live state's, but the length is none of theirs (the first such, RACE_EOF)",
	"each granule below the smaller EOF is a live state's, and past it the larger state's bytes (the first such, RACE_GROW)",
	"what no state live during it answers (the first such, RACE_SEEK)",
	"the file after a part is none of the states the orders allow (the first such, RACE_FILE)",
};

static void note_access(const struct conc *c, const char *who,
			const struct op *shift, const struct access *a,
			const char *what)
{
	const char *when = a->d0 ? "after" : a->s1 ? "overlapping" : "before";
	char text[160];

	op_text(shift, text, sizeof(text));
	if (a->kind == A_SEEK)
		note("round %lld: %s: lseek(%lld, %s), %s the %s, gave %lld: %s",
		     c->round, who, a->off,
		     a->whence == SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE", when,
		     text + strcspn(text, " ") + 1, a->got, what);
	else
		note("round %lld: %s: %s off=%lld len=%lld, %s the %s, gave %lld bytes: %s",
		     c->round, who, access_names[a->kind], a->off, a->len,
		     when, text + strcspn(text, " ") + 1, a->got, what);
}

/* The round's first part: its plan, and what its first @done accesses gave. */
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
 * The first part: judge a read of the accessor (@a, the @index-th access)
 * in granules of @g bytes, and keep the candidates it allows.
 */
static void judge_read(struct conc *c, const struct access *a, int index,
		       long long g)
{
	const struct state *s[MAX_ACCESSES + 2];
	int idx[MAX_ACCESSES + 2];
	int k, ns = 0, mix, v, cur = c->current;
	unsigned int fits;

	/* The state before and the cut from it first: they may mix. */
	mix = c->alive[0] && cur > 0 && c->alive[cur];
	if (mix) {
		idx[ns++] = 0;
		idx[ns++] = cur;
	}
	for (k = 0; k < c->ncand; k++)
		if (c->alive[k] && !(mix && (k == 0 || k == cur)))
			idx[ns++] = k;
	for (k = 0; k < ns; k++)
		s[k] = &c->cand[idx[k]];
	v = judge_bytes(s, ns, mix, a->off, a->len, c->buf, a->got, g, &fits);
	if (v == C_OK)
		goto prune;
	if (!c->tally.outcome[v]++) {
		note_access(c, "the accessor", &c->shift, a, class_what[v]);
		note_states(s, ns, mix, &c->cand[0], a, c->buf, g);
		note_round(c, index + 1);
	}
	/* RACE teaches nothing; RACE_EOF: both sides were the file. */
	if (v == C_RACE)
		return;
	fits = 3;
prune:
	for (k = 0; k < ns; k++)
		if (!(fits & 1u << k))
			c->alive[idx[k]] = 0;
}

static int access_one(struct target *t, struct access *a, uint64_t opn,
		      unsigned char *buf)
{
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
		memcpy(buf, &w, 8);
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
	case A_SEEK:
		a->got = lseek(t->fd, a->off, a->whence);
		if (a->got < 0 && errno != ENXIO) {
			note("lseek(%lld, %d): %s", a->off, a->whence,
			     strerror(errno));
			return -1;
		}
		if (a->got < 0)
			a->got = -ENXIO;
		break;
	}
	return 0;
}

static void access_round(struct conc *c)
{
	int i, d0, s1;

	c->ncand = 1;
	c->alive[0] = 1;
	c->current = -1;
	st_copy(&c->cand[0], &c->start);
	for (i = 0; i < c->nacc; i++) {
		struct access *a = &c->acc[i];

		pause_us(a->delay_us);
		d0 = is_set(&c->done);
		if (c->alive[0]) {
			/* The shift may come just before this access... */
			add_cut(c);
			/* ...and if it is done, it came before. */
			if (d0)
				c->alive[0] = 0;
		}
		if (access_one(&c->t, a, c->round * MAX_ACCESSES + i, c->buf))
			goto failed;
		s1 = is_set(&c->started);
		/* The shift comes after this access: no cut so far holds. */
		if (c->alive[0] && !s1) {
			c->ncand = 1;
			c->current = -1;
		}
		a->d0 = d0;
		a->s1 = s1;
		tally_access(&c->tally, a->kind, d0, s1);
		if (a->kind == A_PWRITE)
			apply_write(c, a->off, c->buf, a->len);
		else if (a->kind == A_MSTORE)
			apply_write(c, a->off, c->buf, 8);
		else
			judge_read(c, a, i, a->kind == A_PREAD ? pagesz : 8);
	}
	return;
failed:
	note_round(c, i + 1);
	c->failed = 1;
}

/*
 * The second part: a reader's next access, aimed at the part of the file
 * that moves (from the shift's offset on) three times in four: a pread of
 * up to READ_PAGES pages, a run of loads through the mapping inside the
 * part that exists before and after the shift, or SEEK_DATA or SEEK_HOLE.
 */
static void plan_read(struct conc *c, struct rng *r, struct access *a)
{
	long long pre = c->rpre.size, post = c->rpost.size;
	long long lim = pre < post ? pre : post, span = pre > post ? pre : post;
	long long from = chance(r, 75) ? c->rshift.off : 0;

	switch (below(r, 8)) {
	case 0:
		a->kind = A_MREAD;
		a->off = (from + below(r, lim - 8 - from)) & ~7LL;
		a->len = 8 * (1 + below(r, (lim - a->off) / 8 < 1024 ?
					(lim - a->off) / 8 : 1024));
		break;
	case 1:
		a->kind = A_SEEK;
		a->whence = chance(r, 50) ? SEEK_DATA : SEEK_HOLE;
		a->off = from + below(r, span + pagesz - from);
		a->len = 0;
		break;
	default:
		a->kind = A_PREAD;
		a->off = chance(r, 20) ? pick_off(r, pre, span) :
			 from + below(r, span - from);
		a->len = 1 + below(r, (chance(r, 80) ? 4 : READ_PAGES) * pagesz);
	}
}

static void *reader(void *arg)
{
	struct reader *rd = arg;
	struct conc *c = rd->c;
	const struct state *s[2];
	struct access a;
	struct rng r;
	unsigned int fits;
	int n, after, d0, s1, v, ns;

	for (;;) {
		pthread_barrier_wait(&c->go);
		if (c->quit)
			return NULL;
		if (c->part != 2)
			goto next;
		/* Its own stream each round: the same seed, the same plans. */
		r.s = seed ^ 0x72656164ULL ^
		      (uint64_t)(c->round * READERS + rd->id) * 0x9e3779b97f4a7c15ULL;
		for (n = after = 0; n < READS_MOST && after < READS_AFTER; n++) {
			plan_read(c, &r, &a);
			d0 = is_set(&c->done);
			if (access_one(&c->rt, &a, 0, rd->buf)) {
				pthread_mutex_lock(&c->lock);
				c->failed = 1;
				pthread_mutex_unlock(&c->lock);
				break;
			}
			s1 = is_set(&c->started);
			after += d0;
			a.d0 = d0;
			a.s1 = s1;
			tally_access(&rd->tally, a.kind, d0, s1);
			/* The states live during it: s[0] before, s[1] after. */
			ns = 0;
			if (!d0)
				s[ns++] = &c->rpre;
			if (s1)
				s[ns++] = &c->rpost;
			if (a.kind == A_SEEK)
				v = judge_seek(s, ns, ns == 2, a.off, a.whence,
					       a.got, &fits);
			else
				v = judge_bytes(s, ns, ns == 2, a.off, a.len,
						rd->buf, a.got,
						a.kind == A_PREAD ? pagesz : 8,
						&fits);
			if (v == C_OK)
				continue;
			/* The first of each class, from any thread, noted. */
			pthread_mutex_lock(&c->lock);
			if (!c->noted[v]++) {
				note_access(c, "a reader", &c->rshift, &a,
					    class_what[v]);
				note_states(s, ns, ns == 2, &c->rpre, &a,
					    rd->buf,
					    a.kind == A_PREAD ? pagesz : 8);
			}
			pthread_mutex_unlock(&c->lock);
			rd->tally.outcome[v]++;
		}
next:
		pthread_barrier_wait(&c->end);
	}
}

/*
 * The swap racer (-R), in the second part of each round: MADV_PAGEOUT of
 * random ranges of fsmodel.reads' mapping, and on a mount with huge pages
 * a quarter of the time MADV_COLLAPSE of a 2 MiB range, from before the
 * shift until it returned.  So reclaim writes the file's folios to swap
 * (huge ones whole, with CONFIG_THP_SWAP, or split), the readers swap
 * them in, and khugepaged's collapse meets the move, all while entries
 * move.  Neither call changes a byte of the file: the readers judge
 * exactly as without it.  A collapse may fail (EAGAIN while a shift runs,
 * EINVAL past EOF, ENOMEM): only its successes are counted.
 */
#define HUGE_BYTES	(2LL << 20)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25	/* linux/mman.h since 6.1; older libc lacks it */
#endif

/* Is the directory under test a tmpfs mount with huge pages (huge=)? */
static int mount_has_huge(void)
{
	char line[1024], mnt[512], opts[512];
	FILE *f = fopen("/proc/mounts", "r");
	int huge = 0;

	while (dir && f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %511s tmpfs %511s", mnt, opts) == 2 &&
		    !strcmp(mnt, dir) && strstr(opts, "huge=") &&
		    !strstr(opts, "huge=never"))
			huge = 1;
	if (f)
		fclose(f);
	return huge;
}

/* Write @what into @file (no O_TRUNC: kprobe_events appends); 0 or -1. */
static int write_file(const char *file, const char *what)
{
	int fd = open(file, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, what, strlen(what)) == (ssize_t)strlen(what);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * -R: folio splits by any task but the shifter (reclaim splitting a large
 * folio that crosses EOF or found no swap of its size, the shmem
 * shrinker, the racer's MADV_PAGEOUT), through a kretprobe on
 * split_huge_page_to_list_to_order() that keeps the successful splits of
 * every task but the shifter, stamped with CLOCK_MONOTONIC (trace_clock
 * mono), so that each can be placed against the shift.  The shift's own
 * splits happen in the shifter's fallocate(): left out.
 */
#define TRACEFS		"/sys/kernel/tracing"
#define SPLIT_EVENT	"fsmodel_split"

static int trace_clear(void)
{
	int fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int split_probe_start(long shifter)
{
	char filter[64];

	snprintf(filter, sizeof(filter), "ret == 0 && common_pid != %ld",
		 shifter);
	if ((access(TRACEFS "/kprobe_events", F_OK) &&
	     mount("tracefs", TRACEFS, "tracefs", 0, NULL)) ||
	    write_file(TRACEFS "/trace_clock", "mono") ||
	    write_file(TRACEFS "/kprobe_events", "r:" SPLIT_EVENT
		       " split_huge_page_to_list_to_order ret=$retval") ||
	    write_file(TRACEFS "/events/kprobes/" SPLIT_EVENT "/filter",
		       filter) ||
	    write_file(TRACEFS "/events/kprobes/" SPLIT_EVENT "/enable", "1") ||
	    trace_clear()) {
		note("a kretprobe on split_huge_page_to_list_to_order() in %s (CONFIG_KPROBE_EVENTS): %s",
		     TRACEFS, strerror(errno));
		return -1;
	}
	return 0;
}

static void split_probe_stop(void)
{
	write_file(TRACEFS "/events/kprobes/" SPLIT_EVENT "/enable", "0");
	write_file(TRACEFS "/kprobe_events", "-:" SPLIT_EVENT);
}

/*
 * Count the splits traced since the last call into @t, those from @t0 to
 * @t1 apart, and empty the buffer.  A line ends in "T: fsmodel_split:
 * (CALLER <- FUNCTION) ret=0x0", T in seconds.
 */
static int split_probe_count(struct swap_tally *t, double t0, double t1)
{
	FILE *f = fopen(TRACEFS "/trace", "r");
	char line[1024], *ev, *ts;
	long long during = 0;
	double at;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		ev = strstr(line, ": " SPLIT_EVENT ": ");
		if (line[0] == '#' || !ev)
			continue;
		*ev = 0;
		ts = strrchr(line, ' ');
		at = ts ? strtod(ts + 1, NULL) : 0;
		t->splits++;
		during += at >= t0 && at <= t1;
	}
	fclose(f);
	t->splits_during += during;
	t->shifts_split += during > 0;
	return trace_clear();
}

/*
 * -A: the read file is shared anonymous memory.  In this kernel shmem
 * gives 64 KiB folios (mTHP) only to faults on it, with
 * hugepages-64kB/shmem_enabled "always", set for the run; the process
 * reaches it as a file through /proc/self/map_files.  The shifts move
 * most of it by a number of pages that is no multiple of 16 and so split
 * those folios: every round stores the file again through its mapping,
 * from a hole, so that faults bring fresh 64 KiB folios to each shift.
 */
#define MTHP_DIR	"/sys/kernel/mm/transparent_hugepage/hugepages-64kB"

static char mthp_was[32];	/* shmem_enabled before the run */

static long long mthp_swpout(void)
{
	FILE *f = fopen(MTHP_DIR "/stats/swpout", "r");
	long long n = -1;

	if (f && fscanf(f, "%lld", &n) != 1)
		n = -1;
	if (f)
		fclose(f);
	return n;
}

static int mthp_shmem(const char *set)
{
	char line[256], *open_br, *close_br;
	FILE *f = fopen(MTHP_DIR "/shmem_enabled", "r");
	int ok = f && fgets(line, sizeof(line), f) &&
		 (open_br = strchr(line, '[')) &&
		 (close_br = strchr(open_br, ']')) &&
		 close_br - open_br < (long)sizeof(mthp_was);

	if (f)
		fclose(f);
	if (!ok)
		return -1;
	if (!mthp_was[0]) {
		*close_br = 0;
		strcpy(mthp_was, open_br + 1);
	}
	return write_file(MTHP_DIR "/shmem_enabled", set);
}

/* Store @s into the anonymous file @t through its mapping, from a hole. */
static int anon_store(struct target *t, const struct state *s)
{
	if (fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
		      t->maplen) || ftruncate(t->fd, s->size)) {
		note("storing %s again: %s", t->path, strerror(errno));
		return -1;
	}
	memcpy(t->map, s->data, s->size);
	return 0;
}

/* A new anonymous read file of @size bytes of TAG_FILL data. */
static int anon_file(struct target *t, struct state *s, long long size,
		     long long most)
{
	t->maplen = (most + pagesz - 1) / pagesz * pagesz;
	t->buf = xmalloc(most + pagesz);
	t->readonly = 0;
	if (mthp_shmem("always")) {
		note("%s/shmem_enabled: %s", MTHP_DIR, strerror(errno));
		return -1;
	}
	t->map = mmap(NULL, t->maplen, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t->map == MAP_FAILED) {
		note("mmap of shared anonymous memory: %s", strerror(errno));
		return -1;
	}
	snprintf(t->path, sizeof(t->path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)t->map, (unsigned long)(t->map + t->maplen));
	t->fd = open(t->path, O_RDWR);
	if (t->fd < 0) {
		note("open %s: %s", t->path, strerror(errno));
		munmap(t->map, t->maplen);
		return -1;
	}
	s->size = size;
	fill(s->data, TAG_FILL, 0, 0, size);
	return anon_store(t, s);
}

static void *racer(void *arg)
{
	struct conc *c = arg;
	struct swap_tally *t = &c->swap;
	long long span, off, len, skew;
	int after, d0, s1, collapse, ok;
	struct rng r;

	for (;;) {
		pthread_barrier_wait(&c->go);
		if (c->quit)
			return NULL;
		if (c->part != 2)
			goto next;
		r.s = seed ^ 0x72616365ULL ^
		      (uint64_t)c->round * 0x9e3779b97f4a7c15ULL;
		span = c->rt.maplen / pagesz;
		/* MADV_COLLAPSE wants 2 MiB of the address space aligned. */
		skew = (HUGE_BYTES - (uintptr_t)c->rt.map % HUGE_BYTES) %
		       HUGE_BYTES;
		for (after = 0; after < READS_AFTER; after += d0) {
			collapse = c->huge && chance(&r, 25) &&
				   c->rt.maplen >= skew + HUGE_BYTES;
			if (collapse) {
				len = HUGE_BYTES;
				off = skew + below(&r, (c->rt.maplen - skew) /
						   HUGE_BYTES) * HUGE_BYTES;
			} else {
				len = (1 + below(&r, 64)) * pagesz;
				off = below(&r, span) * pagesz;
				if (off + len > c->rt.maplen)
					len = c->rt.maplen - off;
			}
			d0 = is_set(&c->done);
			ok = !madvise(c->rt.map + off, len, collapse ?
				      MADV_COLLAPSE : MADV_PAGEOUT);
			s1 = is_set(&c->started);
			if (collapse) {
				t->collapses++;
				t->collapses_during += !d0 && s1;
				t->collapsed += ok;
			} else {
				t->pageouts++;
				t->pageouts_during += !d0 && s1;
			}
		}
next:
		pthread_barrier_wait(&c->end);
	}
}

static void *accessor(void *arg)
{
	struct conc *c = arg;

	for (;;) {
		pthread_barrier_wait(&c->go);
		if (c->quit)
			return NULL;
		if (c->part == 1)
			access_round(c);
		pthread_barrier_wait(&c->end);
	}
}

static void *shifter(void *arg)
{
	struct conc *c = arg;
	long long out = 0, in = 0, mthp_out = 0;
	struct op *s;
	double t0, t1;
	int fd;

	/* Before the first barrier: no shift runs untraced. */
	if (swap_racer)
		c->probe_failed = split_probe_start(syscall(SYS_gettid));
	for (;;) {
		pthread_barrier_wait(&c->go);
		if (c->quit)
			return NULL;
		s = c->part == 1 ? &c->shift : &c->rshift;
		fd = c->part == 1 ? c->t.fd : c->rt.fd;
		pause_us(c->shift_delay_us);
		if (swap_racer && c->part == 2) {
			out = proc_field("/proc/vmstat", "pswpout");
			in = proc_field("/proc/vmstat", "pswpin");
			mthp_out = mthp_swpout();
		}
		t0 = now();
		__atomic_store_n(&c->started, 1, __ATOMIC_SEQ_CST);
		s->got = xfallocate(fd, mode_of(s), s->off, s->len);
		__atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
		t1 = now();
		c->shift_s[c->part - 1] += t1 - t0;
		if (swap_racer && c->part == 2) {
			c->rshift_t[0] = t0;
			c->rshift_t[1] = t1;
			c->swap.shifts_swapout +=
				proc_field("/proc/vmstat", "pswpout") > out;
			c->swap.shifts_swapin +=
				proc_field("/proc/vmstat", "pswpin") > in;
			c->swap.shifts_mthp_swapout += mthp_swpout() > mthp_out;
		}
		pthread_barrier_wait(&c->end);
	}
}

/* Run one part of the round: every thread meets at both barriers. */
static void run_part(struct conc *c, int part)
{
	c->part = part;
	c->started = c->done = 0;
	pthread_barrier_wait(&c->go);
	pthread_barrier_wait(&c->end);
}

/*
 * The first part: a valid shift keeping the size between a quarter of
 * maxlen and maxlen, and accesses inside the part of the file that exists
 * before and after it (the mapping past EOF is SIGBUS, and pwrite must not
 * move EOF), each after a random pause so that they land before, during or
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
		default:
			a->kind = A_MSTORE;
			a->off = pick_off(r, size, lim - 8) & ~7LL;
			a->len = 8;
			break;
		}
		a->got = 0;
	}
}

/*
 * The second part's shift: a valid collapse or insert of 1-4 units
 * (mostly one) keeping fsmodel.reads between half its largest size and
 * that size, anywhere, mostly in its first half, so that most of the file
 * moves.
 */
static void plan_rshift(struct conc *c, struct rng *r)
{
	long long size = c->rpre.size, units = size / unit;
	struct op *s = &c->rshift;

	s->kind = size + 4 * unit > c->rmax ? K_COLLAPSE :
		  size - 4 * unit < c->rmax / 2 ? K_INSERT :
		  chance(r, 50) ? K_COLLAPSE : K_INSERT;
	s->len = (chance(r, 75) ? 1 : 1 + below(r, 4)) * unit;
	s->off = below(r, chance(r, 75) ? units / 2 : units - 4) * unit;
	s->n = c->round;
	s->expect = 0;
	c->shift_delay_us = below(r, 500);
	st_copy(&c->rpost, &c->rpre);
	shift_state(&c->rpost, s);
}

/*
 * After a part: the file, read and through the mapping, must be exactly
 * one of the @nw states @w; returns which.  Otherwise count a RACE (the
 * first one described, and *@raced set), write w[0] into the file again,
 * since the model is the truth, and return 0.  -1 on an error.
 */
static int settle_file(struct conc *c, struct target *t,
		       const struct state *const *w, int nw, const char *part,
		       int *raced)
{
	long long n = pread_all(t->fd, t->buf, t->maplen + 1, 0);
	int k;

	*raced = 0;
	if (n < 0 || !nw) {
		note("round %lld: %s: reading the file after it: %s", c->round,
		     part, n < 0 ? strerror(-n) : "no state is left");
		return -1;
	}
	for (k = 0; k < nw; k++) {
		if (n != w[k]->size || memcmp(t->buf, w[k]->data, n))
			continue;
		if (map_copy(t->buf, t->map, n, 0))
			return -1;
		if (!memcmp(t->buf, w[k]->data, n))
			return k;
		break;
	}
	if (!c->tally.outcome[C_RACE_FILE]++) {
		*raced = 1;
		note("round %lld: %s: the file after it (%lld bytes) %s none of the states the orders allow (the first such, RACE_FILE):",
		     c->round, part, n, k < nw ?
		     "reads as one of them, but its mapping shows" : "is");
		for (k = 0; k < nw; k++) {
			if (n != w[k]->size)
				note(" a state of %lld bytes", w[k]->size);
			else
				same_bytes(" against a state", t->buf,
					   w[k]->data, 0, n);
		}
	}
	if (ftruncate(t->fd, w[0]->size) ||
	    pwrite_all(t->fd, w[0]->data, w[0]->size, 0) ||
	    pread_all(t->fd, t->buf, w[0]->size + 1, 0) != w[0]->size ||
	    memcmp(t->buf, w[0]->data, w[0]->size)) {
		note("round %lld: %s: writing the model's state into the file again failed",
		     c->round, part);
		return -1;
	}
	return 0;
}

/*
 * After the first part the file must be exactly one of the live
 * candidates, which the next round starts from.
 */
static int judge_round(struct conc *c)
{
	const struct state *w[MAX_ACCESSES + 2];
	int k, nw = 0, raced;

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
	for (k = 1; k < c->ncand; k++)
		if (c->alive[k])
			w[nw++] = &c->cand[k];
	k = settle_file(c, &c->t, w, nw, "the accessor's part", &raced);
	if (raced)
		note_round(c, c->nacc);
	if (k < 0)
		return -1;
	st_copy(&c->start, w[k]);
	return 0;
}

/*
 * After the second part the file must be exactly the state after the
 * shift.  An insert's hole is then filled with data, so that the file
 * stays data all through and a transient hole always shows.
 */
static int judge_rround(struct conc *c)
{
	const struct state *w[1] = { &c->rpost };
	struct op *s = &c->rshift;
	int raced;

	if (s->got) {
		note("round %lld: the readers' shift answered %s", c->round,
		     ename(s->got));
		return -1;
	}
	if (c->failed ||
	    settle_file(c, &c->rt, w, 1, "the readers' part", &raced) < 0)
		return -1;
	st_copy(&c->rpre, &c->rpost);
	if (s->kind == K_COLLAPSE)
		return 0;
	fill(c->rpre.data + s->off, TAG_FILL, c->round, s->off, s->len);
	if (pwrite_all(c->rt.fd, c->rpre.data + s->off, s->len, s->off)) {
		note("round %lld: filling the inserted range: %s", c->round,
		     strerror(errno));
		return -1;
	}
	return 0;
}

/* A new file of @size bytes of TAG_FILL data, written and synced. */
static int conc_file(struct target *t, const char *name, struct state *s,
		     long long size, long long most)
{
	name_target(t, name);
	t->maplen = (most + pagesz - 1) / pagesz * pagesz;
	t->buf = xmalloc(most + pagesz);
	if (open_target(t, 1))
		return -1;
	s->size = size;
	fill(s->data, TAG_FILL, 0, 0, size);
	if (pwrite_all(t->fd, s->data, size, 0) || fsync(t->fd)) {
		note("writing the first contents of %s: %s", t->path,
		     strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * One case of the concurrent run.  The run's notes go with the first case
 * that fails, where make vmtest shows them.
 */
static void conc_case(const char *notes, int *given, const char *tcase,
		      int ok, const char *answer, const char *extra)
{
	if (!ok && !*given) {
		strcpy(diag, notes);
		*given = 1;
	}
	report(tcase, ok, answer, "%s", extra);
}

/*
 * -H: move this process into a new memory cgroup, /sys/fs/cgroup/fsmodel,
 * whose memory.high is KIB: tmpfs pages are charged to the cgroup of the
 * process that wrote them, so reclaim swaps the files out all along.
 */
#define MEMCG_DIR	"/sys/fs/cgroup"

static int enter_memcg(long long kib)
{
	char what[32];

	mkdir(MEMCG_DIR, 0755);
	if (access(MEMCG_DIR "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", MEMCG_DIR, "cgroup2", 0, NULL)) {
		note("mount cgroup2: %s", strerror(errno));
		return -1;
	}
	if (write_file(MEMCG_DIR "/cgroup.subtree_control", "+memory") ||
	    (mkdir(MEMCG_DIR "/fsmodel", 0755) && errno != EEXIST)) {
		note("a memory cgroup: %s", strerror(errno));
		return -1;
	}
	snprintf(what, sizeof(what), "%lld", kib * 1024);
	if (write_file(MEMCG_DIR "/fsmodel/memory.high", what)) {
		note("memory.high %s: %s", what, strerror(errno));
		return -1;
	}
	snprintf(what, sizeof(what), "%d", (int)getpid());
	if (write_file(MEMCG_DIR "/fsmodel/cgroup.procs", what)) {
		note("joining the memory cgroup: %s", strerror(errno));
		return -1;
	}
	printf("# fsmodel: %s: in a memory cgroup with memory.high %lld KiB\n",
	       fs_name, kib);
	return 0;
}

static void concurrent_run(void)
{
	struct rng r = { seed ^ 0x636f6e63757272ULL };	/* its own stream */
	struct conc *c = xmalloc(sizeof(*c));
	pthread_t th[3];
	double start = now(), t0, readers_s = 0;
	long long floor = overlap_floor;
	struct tally sum = { 0 };
	char *notes = xmalloc(sizeof(diag)), extra[512];
	long long most[NCLASSES];
	struct statfs sfs;
	int k, i, failed, given = 0;

	if (floor < 0)
		floor = 10 * nrounds;
	st_init(&c->start);
	for (k = 0; k < MAX_ACCESSES + 2; k++)
		st_init(&c->cand[k]);
	c->buf = xmalloc(cap);
	/*
	 * Start from a file half the largest size, and the readers' three
	 * quarters of its largest, written all through.
	 */
	failed = conc_file(&c->t, "fsmodel.conc", &c->start,
			   maxlen / 2 / unit * unit + 123, maxlen);
	if (!failed) {
		c->rmax = fstatfs(c->t.fd, &sfs) || sfs.f_type != TMPFS_MAGIC ?
			  READ_FILE : READ_FILE_TMPFS_PAGES * pagesz;
		if (c->rmax < 4 * maxlen)
			c->rmax = 4 * maxlen;
		st_init_cap(&c->rpre, c->rmax + pagesz);
		st_init_cap(&c->rpost, c->rmax + pagesz);
		failed = anon_reads ?
			 anon_file(&c->rt, &c->rpre,
				   c->rmax * 3 / 4 / unit * unit + 123, c->rmax) :
			 conc_file(&c->rt, "fsmodel.reads", &c->rpre,
				   c->rmax * 3 / 4 / unit * unit + 123, c->rmax);
	}
	if (failed) {
		report("model_concurrent", 0, "EIO", "seed=%llu", seed);
		for (k = 0; k < NCLASSES; k++)
			report(class_cases[k], 0, "EIO", "seed=%llu", seed);
		report("model_overlap", 0, "EIO", "seed=%llu", seed);
		if (swap_racer)
			report("model_swap_overlap", 0, "EIO", "seed=%llu",
			       seed);
		return;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->huge = swap_racer && !anon_reads && mount_has_huge();
	pthread_barrier_init(&c->go, NULL, 3 + READERS + swap_racer);
	pthread_barrier_init(&c->end, NULL, 3 + READERS + swap_racer);
	pthread_create(&th[0], NULL, accessor, c);
	pthread_create(&th[1], NULL, shifter, c);
	if (swap_racer)
		pthread_create(&th[2], NULL, racer, c);
	for (i = 0; i < READERS; i++) {
		c->readers[i].c = c;
		c->readers[i].id = i;
		c->readers[i].buf = xmalloc(READ_PAGES * pagesz + pagesz);
		pthread_create(&c->readers[i].th, NULL, reader, &c->readers[i]);
	}
	for (c->round = 1; c->round <= nrounds && !failed; c->round++) {
		plan_round(c, &r);
		c->failed = 0;
		run_part(c, 1);
		failed = judge_round(c);
		if (failed)
			break;
		t0 = now();
		plan_rshift(c, &r);
		if (anon_reads && anon_store(&c->rt, &c->rpre)) {
			failed = 1;
			break;
		}
		run_part(c, 2);
		failed = judge_rround(c);
		if (swap_racer && (c->probe_failed ||
				   split_probe_count(&c->swap, c->rshift_t[0],
						     c->rshift_t[1]))) {
			note("round %lld: counting the splits: %s", c->round,
			     c->probe_failed ? "no probe" : strerror(errno));
			failed = 1;
		}
		readers_s += now() - t0;
		if (nrounds >= 10 && c->round % (nrounds / 10) == 0)
			progress("model_concurrent", c->round, nrounds, start);
	}
	c->quit = 1;
	pthread_barrier_wait(&c->go);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	if (swap_racer)
		pthread_join(th[2], NULL);
	sum = c->tally;
	for (i = 0; i < READERS; i++) {
		struct tally *t = &c->readers[i].tally;

		pthread_join(c->readers[i].th, NULL);
		sum.reads += t->reads;
		sum.loads += t->loads;
		sum.seeks += t->seeks;
		sum.accesses += t->accesses;
		for (k = 0; k < NCLASSES; k++)
			sum.outcome[k] += t->outcome[k];
		free(c->readers[i].buf);
	}
	if (failed)
		note("seed %llu, round %lld of %lld; timing decides the orders, so the same seed replays the same plans, not always the same race",
		     seed, c->round, nrounds);
	/* The bounds, for the rounds made, rounded up. */
	for (k = 0; k < NCLASSES; k++) {
		most[k] = (class_max[k] * (c->round - 1) + 99) / 100;
		if (sum.outcome[k] > most[k])
			note("%lld %s outcomes, more than the %lld allowed in %lld rounds (-a %s=%lld)",
			     sum.outcome[k], class_names[k], most[k],
			     c->round - 1, class_names[k], class_max[k]);
	}
	if (sum.reads < floor)
		note("only %lld reads ran while a shift was in progress, fewer than the floor of %lld (-o): the run did not test the race",
		     sum.reads, floor);
	if (swap_floor < 0)
		swap_floor = (c->round - 1) / 2;
	if (swap_racer && c->swap.shifts_swapout < swap_floor)
		note("only %lld shifts ran while pages went out to swap, fewer than the floor of %lld (-w): the run did not test the race with swap",
		     c->swap.shifts_swapout, swap_floor);
	if (anon_reads && c->swap.shifts_mthp_swapout < swap_floor)
		note("only %lld shifts ran while 64 KiB folios went out to swap whole, fewer than the floor of %lld (-w): the run did not test mTHP swap",
		     c->swap.shifts_mthp_swapout, swap_floor);
	if (anon_reads && c->swap.shifts_split < swap_floor)
		note("only %lld shifts ran while another task split a folio, fewer than the floor of %lld (-w): the run did not test the race with splits",
		     c->swap.shifts_split, swap_floor);
	if (swap_racer)
		split_probe_stop();
	if (mthp_was[0] && write_file(MTHP_DIR "/shmem_enabled", mthp_was))
		note("cannot set %s/shmem_enabled back to %s", MTHP_DIR,
		     mthp_was);
	strcpy(notes, diag);
	diag[0] = 0;
	snprintf(extra, sizeof(extra),
		 "seed=%llu rounds=%lld accesses=%lld seconds=%.0f readers_seconds=%.0f shift_ms=%.1f,%.1f",
		 seed, c->round - 1, sum.accesses, now() - start, readers_s,
		 c->shift_s[0] * 1000 / (c->round - 1 ? c->round - 1 : 1),
		 c->shift_s[1] * 1000 / (c->round - 1 ? c->round - 1 : 1));
	conc_case(notes, &given, "model_concurrent", !failed,
		  failed ? "ERROR" : "OK", extra);
	for (k = 0; k < NCLASSES; k++) {
		snprintf(extra, sizeof(extra), "count=%lld max=%lld",
			 sum.outcome[k], most[k]);
		conc_case(notes, &given, class_cases[k],
			  sum.outcome[k] <= most[k],
			  sum.outcome[k] ? class_names[k] : "OK", extra);
	}
	snprintf(extra, sizeof(extra),
		 "overlap: %lld reads, %lld mmap loads, %lld seeks (floor %lld reads)",
		 sum.reads, sum.loads, sum.seeks, floor);
	conc_case(notes, &given, "model_overlap", sum.reads >= floor,
		  sum.reads >= floor ? "OK" : "FEW", extra);
	if (swap_racer) {
		const struct swap_tally *w = &c->swap;
		int ok = w->shifts_swapout >= swap_floor &&
			 (!anon_reads || (w->shifts_mthp_swapout >= swap_floor &&
					  w->shifts_split >= swap_floor));

		snprintf(extra, sizeof(extra),
			 "swap: %lld shifts during a swap-out, %lld during a swap-in, %lld during a 64 KiB swap-out (floor %lld); split: %lld shifts during a split by another task, %lld such splits of %lld; racer: %lld pageouts, %lld during a shift; %lld collapses, %lld during a shift, %lld done",
			 w->shifts_swapout, w->shifts_swapin,
			 w->shifts_mthp_swapout, swap_floor, w->shifts_split,
			 w->splits_during, w->splits, w->pageouts,
			 w->pageouts_during, w->collapses, w->collapses_during,
			 w->collapsed);
		conc_case(notes, &given, "model_swap_overlap", ok,
			  ok ? "OK" : "FEW", extra);
	}
	if (!given)
		fputs(notes, stdout);
	free(notes);
	close_target(&c->t);
	close_target(&c->rt);
}

/* ------------------------------------------------------------------ */
/*
 * The crash workload and its checker.
 *
 * The workload logs every step, so that the checker knows exactly which
 * operations may be on disk and the harness where the crash landed:
 *   crash NAME begin seed=S t=T
 *   crash NAME start N KIND t=T	(KIND/EINVAL for an invalid shift)
 *   crash NAME done N t=T		(N returned as it must)
 *   crash NAME durable N t=T		(fsync or fdatasync N returned)
 *   crash NAME point before|during|after N ... t=T	(the SysRq follows)
 *   crash NAME miss N t=T		(shift N returned before the SysRq)
 *   crash NAME end N t=T		(all operations done; waits)
 *   crash NAME error ... / crash NAME exit ...
 * T is CLOCK_MONOTONIC, one clock for every workload of the guest.
 */

#define TAG_OTHER	'O'	/* the second file's data */
#define TAG_SECRET	'S'	/* the deleted file's, left in freed blocks */
#define OTHER_BYTES	(64 * 1024)
#define SECRET_BYTES	(2 * 1024 * 1024)

static int log_fd = -1, sysrq_fd = -1;
static const char *crash_at;	/* -X before, during or after; NULL: none */
static long long crash_shift;	/* -T: at the valid shift numbered this */
static char *crash_others;	/* -F: the workloads the crash must find busy */
static int progress_fd = -1;

/* One line of the crash log, on its way out before the caller goes on. */
static void crash_log(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "crash %s ", fs_name);
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 32, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 32)
		n = sizeof(line) - 32;
	n += snprintf(line + n, 32, " t=%.6f\n", now());
	if (write(log_fd, line, n) != n)
		perror("fsmodel: crash log");
	if (isatty(log_fd))
		tcdrain(log_fd);
}

/* Reboot now, by SysRq b: no sync, no unmount, as if the power failed. */
static void crash_now(void)
{
	if (write(sysrq_fd, "b", 1) != 1)
		crash_log("error writing /proc/sysrq-trigger: %s", strerror(errno));
	else
		crash_log("error: SysRq b did not stop the machine");
	exit(1);
}

/* DIR/NAME, @len bytes of data tagged @tag (by operation @opn), fsync'd. */
static int write_pattern(const char *name, int tag, uint64_t opn,
			 long long len)
{
	unsigned char *buf = xmalloc(len);
	char path[PATH_MAX];
	int fd, e;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fill(buf, tag, opn, 0, len);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	e = fd < 0 ? errno : pwrite_all(fd, buf, len, 0);
	if (!e && fsync(fd))
		e = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	if (e)
		note("%s: %s", path, strerror(e));
	return e ? -1 : 0;
}

/*
 * A "during" crash: the workload thread hands the helper the shift's
 * number and a delay, then calls fallocate(); the helper sleeps that long
 * and, if the shift still runs, reboots.  Otherwise it answers "missed"
 * and the workload tries again at the next valid shift.
 */
static long long in_shift;	/* the shift being run, 0: none */
static int arm_pipe[2], miss_pipe[2];

struct arming {
	long long n, us;
};

static void *crash_helper(void *unused)
{
	struct arming a;
	struct timespec ts;

	(void)unused;
	while (read(arm_pipe[0], &a, sizeof(a)) == sizeof(a)) {
		ts.tv_sec = a.us / 1000000;
		ts.tv_nsec = a.us % 1000000 * 1000;
		nanosleep(&ts, NULL);
		if (__atomic_load_n(&in_shift, __ATOMIC_SEQ_CST) == a.n &&
		    write(sysrq_fd, "b", 1) != 1)
			break;
		if (write(miss_pipe[1], "m", 1) != 1)
			break;
	}
	return NULL;
}

/*
 * /tmp/fsmodel-crash.NAME holds the last operation the workload of NAME
 * finished (0: none yet, -1: all of them), for the leader to see that the
 * others still make progress.
 */
static void progress_mark(long long n)
{
	if (pwrite(progress_fd, &n, sizeof(n), 0) != sizeof(n))
		crash_log("error writing the progress file: %s", strerror(errno));
}

static long long progress_of(const char *name)
{
	char path[PATH_MAX];
	long long n = 0;
	int fd;

	snprintf(path, sizeof(path), "/tmp/fsmodel-crash.%s", name);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		if (pread(fd, &n, sizeof(n), 0) != sizeof(n))
			n = 0;
		close(fd);
	}
	return n;
}

/*
 * A pause of up to 200 ms before a planned crash, for the flusher and the
 * journal to run or not; then wait until every other workload (-F) has
 * finished one more operation, or all of them (one not yet begun must
 * begin): a hung one is never cut off by the crash, it fails the run.
 */
static void crash_pause(struct rng *pr)
{
	struct timespec ts = { 0, below(pr, 200000) * 1000 }, ms = { 0, 1000000 };
	char list[256], *name, *save;
	long long was[8], k;
	double t0;
	int busy;

	nanosleep(&ts, NULL);
	if (!crash_others)
		return;
	snprintf(list, sizeof(list), "%s", crash_others);
	for (k = 0, name = strtok_r(list, ",", &save); name && k < 8;
	     name = strtok_r(NULL, ",", &save))
		was[k++] = progress_of(name);
	for (t0 = now(); ; nanosleep(&ms, NULL)) {
		snprintf(list, sizeof(list), "%s", crash_others);
		busy = 0;
		for (k = 0, name = strtok_r(list, ",", &save); name && k < 8;
		     name = strtok_r(NULL, ",", &save), k++) {
			long long n = progress_of(name);

			if (n == was[k] && n >= 0) {
				busy = 1;
				if (now() - t0 > 30) {
					crash_log("error: %s finished no operation in 30 s (the last: %lld)",
						  name, n);
					exit(1);
				}
			}
		}
		if (!busy)
			return;
	}
}

/* Delete the secret's file, and make that durable: its blocks are free. */
static int unlink_secret(int dfd)
{
	if (unlinkat(dfd, "fsmodel.secret", 0) || syncfs(dfd)) {
		note("deleting %s/fsmodel.secret: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* The setup and the operations, logged; never returns but by an error. */
static int crash_run(void)
{
	struct rng r = { seed }, pr = { seed ^ 0x63726173680aULL };
	long long i, nshift = 0, us;
	double t0, fastest = 0;
	struct arming a;
	struct target t;
	struct state m;
	struct mix mx;
	struct op op;
	pthread_t helper;
	int dfd, plan, shift, err;
	char c;

	snprintf(t.path, sizeof(t.path), "/tmp/fsmodel-crash.%s", fs_name);
	progress_fd = open(t.path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (progress_fd < 0) {
		crash_log("error: %s: %s", t.path, strerror(errno));
		return 1;
	}
	progress_mark(0);
	probe(&t);
	mix_init(&mx, 1);
	st_init(&m);
	/*
	 * Blocks that held a secret, freed for good before the workload: no
	 * read of the file may ever show them.  Then a second file, which
	 * must stay exactly as written.
	 */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 || write_pattern("fsmodel.secret", TAG_SECRET, 0xffffff, SECRET_BYTES) ||
	    write_pattern("fsmodel.other", TAG_OTHER, 0, OTHER_BYTES) ||
	    unlink_secret(dfd) || setup_target(&t, "fsmodel.crash") ||
	    fsync(t.fd) || fsync(dfd) || pipe(arm_pipe) || pipe(miss_pipe) ||
	    pthread_create(&helper, NULL, crash_helper, NULL)) {
		crash_log("error in the setup: %s", diag[0] ? diag + 2 : strerror(errno));
		return 1;
	}
	crash_log("begin seed=%llu", seed);
	crash_log("durable 0");
	for (i = 1; i <= nops; i++) {
		op.n = i;
		gen_op(&r, &mx, m.size, &op);
		shift = (op.kind == K_COLLAPSE || op.kind == K_INSERT) && !op.expect;
		nshift += shift;
		plan = shift && crash_at && nshift >= crash_shift ? crash_at[0] : 0;
		if (plan == 'b') {
			crash_pause(&pr);
			crash_log("point before %lld", i);
			crash_now();
		}
		if (plan == 'd')
			crash_pause(&pr);
		crash_log("start %lld %s%s", i, kinds[op.kind].name,
			  op.expect ? "/EINVAL" : "");
		if (plan == 'd') {
			/* Within the quickest shift so far: it still runs. */
			us = 1 + below(&pr, fastest > 0 ? fastest * 0.8e6 : 2000);
			crash_log("point during %lld delay=%lldus", i, us);
			a.n = i;
			a.us = us;
			__atomic_store_n(&in_shift, i, __ATOMIC_SEQ_CST);
			if (write(arm_pipe[1], &a, sizeof(a)) != sizeof(a)) {
				crash_log("error arming the crash: %s", strerror(errno));
				return 1;
			}
		}
		t0 = now();
		err = step(&t, &m, &op);
		__atomic_store_n(&in_shift, 0, __ATOMIC_SEQ_CST);
		if (shift && (!fastest || now() - t0 < fastest))
			fastest = now() - t0;
		if (err) {
			crash_log("error at operation %lld: %s", i,
				  strchr(diag, '\n') ? diag + 2 : diag);
			fputs(diag, stdout);
			return 1;
		}
		crash_log("done %lld", i);
		progress_mark(i);
		if (op.kind == K_FSYNC || op.kind == K_FDATASYNC)
			crash_log("durable %lld", i);
		if (plan == 'd') {
			if (read(miss_pipe[0], &c, 1) != 1) {
				crash_log("error: the crash helper is gone");
				return 1;
			}
			crash_log("miss %lld", i);
		}
		if (plan == 'a') {
			crash_pause(&pr);
			crash_log("point after %lld", i);
			crash_now();
		}
	}
	crash_log("end %lld", nops);
	progress_mark(-1);
	if (crash_at) {
		crash_log("error: %lld operations ended before the crash point", nops);
		return 1;
	}
	for (;;)
		pause();
}

static int crash_workload(const char *log)
{
	int status;
	pid_t pid;

	log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY, 0644);
	if (log_fd < 0) {
		fprintf(stderr, "fsmodel: %s: %s\n", log, strerror(errno));
		return 2;
	}
	if (crash_at)
		sysrq_fd = open("/proc/sysrq-trigger", O_WRONLY);
	if (crash_at && sysrq_fd < 0) {
		crash_log("error: /proc/sysrq-trigger: %s", strerror(errno));
		return 1;
	}
	/*
	 * The workload never ends before the crash: a child does the work
	 * and this process logs how it ended, whatever the cause (a signal
	 * included), which fails the run.
	 */
	pid = fork();
	if (pid == 0)
		exit(crash_run());
	while (pid > 0 && waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			pid = -1;
	if (pid < 0)
		crash_log("error: fork or wait: %s", strerror(errno));
	else if (WIFSIGNALED(status))
		crash_log("exit signal %d", WTERMSIG(status));
	else
		crash_log("exit status %d", WEXITSTATUS(status));
	return 1;
}

/*
 * The checker's rules (docs/design.rst, "crash"), for the operations
 * D+1..J after the last durable one, each applied or not:
 *
 * Blocks.  The model follows which block holds what: a write to a block
 * that is a hole (or past EOF) gives it a new token, the block the
 * filesystem allocates for it; an overwrite keeps the token, written in
 * place; punch and truncate drop the tokens of the whole blocks they free;
 * collapse and insert move tokens with the data; zero range keeps them
 * (ext4 turns written blocks unwritten in place).  Then every block of
 * the file after the crash must be, whole, either
 *  - a hole (zeros), where one of the states after D..J has no token, or
 *    on xfs at or past the offset of a shift in flight (xfs shifts one
 *    extent per transaction, fs/xfs/xfs_bmap_util.c); or
 *  - the contents some state after D..J gives one of the tokens the
 *    states have at that place: an overwrite in place is not ordered
 *    with the journal, so its data may show through an older extent map,
 *    whole units away from where the model has it; a store through the
 *    mapping may be torn (each byte the state's before or after it).
 * ext4 shifts are one journal handle each (fs/ext4/extents.c): never
 * half done, so no other hole.
 * Size.  A size one of those states has, or for a write or a zero range
 * in flight that grew the file a multiple of the block between the sizes
 * before it and the largest after it (ext4 and xfs move the on-disk size
 * as writeback completes; ext4 zero range as each allocation is made).
 * Never a word of the second file or of the secret.  The second file
 * whole, the secret's file gone.
 */

/* What @op does to the tokens @tk of the blocks. */
static void tok_apply(int *tk, long long nblk, const struct op *op, int *next)
{
	long long b, end, sh;

	if (op->expect)
		return;
	switch (op->kind) {
	case K_PWRITE:
	case K_MWRITE:
		for (b = op->off / blksz; b <= (op->off + op->len - 1) / blksz; b++)
			if (!tk[b])
				tk[b] = (*next)++;
		break;
	case K_TRUNCATE:
		for (b = (op->len + blksz - 1) / blksz; b < nblk; b++)
			tk[b] = 0;
		break;
	case K_PUNCH:
		end = (op->off + op->len) / blksz;
		for (b = (op->off + blksz - 1) / blksz; b < end && b < nblk; b++)
			tk[b] = 0;
		break;
	case K_COLLAPSE:
		b = op->off / blksz;
		sh = op->len / blksz;
		memmove(tk + b, tk + b + sh, (nblk - b - sh) * sizeof(*tk));
		memset(tk + nblk - sh, 0, sh * sizeof(*tk));
		break;
	case K_INSERT:
		b = op->off / blksz;
		sh = op->len / blksz;
		memmove(tk + b + sh, tk + b, (nblk - b - sh) * sizeof(*tk));
		memset(tk + b, 0, sh * sizeof(*tk));
		break;
	default:
		break;
	}
}

/* The states after D..J, their tokens, and the operations between. */
struct crash_states {
	struct state *s;
	int **tok;
	const struct op *ops;	/* ops[k] leads from s[k] to s[k + 1] */
	long long first;	/* s[0] is the state after operation first */
	long long n, nblk;
	int xfs;
};

static int crash_size_ok(const struct crash_states *cs, long long size)
{
	long long k, j, hi;

	for (k = 0; k < cs->n; k++)
		if (size == cs->s[k].size)
			return 1;
	for (k = 1; k < cs->n && size % blksz == 0; k++) {
		if ((cs->ops[k - 1].kind != K_PWRITE &&
		     cs->ops[k - 1].kind != K_ZERO) || cs->ops[k - 1].expect ||
		    cs->s[k].size <= cs->s[k - 1].size)
			continue;
		for (hi = 0, j = k; j < cs->n; j++)
			hi = cs->s[j].size > hi ? cs->s[j].size : hi;
		if (size > cs->s[k - 1].size && size < hi)
			return 1;
	}
	return 0;
}

/* Is byte @y of state @j a byte a store through the mapping, from state
 * @j - 1 or to state @j + 1, may have left torn as @b?
 */
static int torn_byte(const struct crash_states *cs, long long j, long long y,
		     unsigned char b)
{
	const struct op *op;

	if (j > 0) {
		op = &cs->ops[j - 1];
		if (op->kind == K_MWRITE && !op->expect && y >= op->off &&
		    y < op->off + op->len && cand_byte(&cs->s[j - 1], y) == b)
			return 1;
	}
	if (j + 1 < cs->n) {
		op = &cs->ops[j];
		if (op->kind == K_MWRITE && !op->expect && y >= op->off &&
		    y < op->off + op->len && cand_byte(&cs->s[j + 1], y) == b)
			return 1;
	}
	return 0;
}

/* Are the @len bytes @got what state @j has in its block @q? */
static int block_is(const struct crash_states *cs, long long j, long long q,
		    const unsigned char *got, long long len)
{
	long long i, y;

	for (i = 0; i < len; i++) {
		y = q * blksz + i;
		if (got[i] != cand_byte(&cs->s[j], y) &&
		    !torn_byte(cs, j, y, got[i]))
			return 0;
	}
	return 1;
}

/*
 * Block @g of the file, @len bytes at @got: the state whose version of a
 * token it is (0..n-1), n for a hole, or -1 if nothing explains it.
 */
static long long explain_block(const struct crash_states *cs, long long g,
			       const unsigned char *got, long long len)
{
	long long k, j, q, i;
	int t, zeros = 1, hole = 0;

	for (i = 0; i < len; i++)
		zeros &= !got[i];
	for (k = 0; k < cs->n; k++) {
		hole |= !cs->tok[k][g];
		if (cs->xfs && k + 1 < cs->n &&
		    (cs->ops[k].kind == K_COLLAPSE || cs->ops[k].kind == K_INSERT) &&
		    !cs->ops[k].expect && g * blksz >= cs->ops[k].off)
			hole = 1;
	}
	if (zeros && hole)
		return cs->n;
	for (k = 0; k < cs->n; k++) {
		t = cs->tok[k][g];
		for (j = cs->n - 1; t && j >= 0; j--)
			for (q = 0; q < cs->nblk; q++)
				if (cs->tok[j][q] == t && block_is(cs, j, q, got, len))
					return j;
	}
	return -1;
}

/* Note what block @g holds and what the states have there. */
static void note_block(const struct crash_states *cs, long long g,
		       const unsigned char *got, long long len)
{
	long long k, x = g * blksz, i;
	uint64_t w = 0;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, got + i, 8);
		if (w)
			break;
	}
	if (i + 8 > len)
		i = w = 0;
	note("block %lld (file offset %lld): no state explains it; its first word with data, at %lld, is %s",
	     g, x, x + i, describe(w));
	for (k = 0; k < cs->n && k < 12; k++) {
		w = 0;
		if (x + i + 8 <= cs->s[k].size)
			memcpy(&w, cs->s[k].data + x + i, 8);
		note("  after operation %lld: %s (token %d)",
		     cs->first + k, describe(w), cs->tok[k][g]);
	}
}

/*
 * The file after a crash: 0 if the rules allow it, else -1 after noting
 * why.  @found gets which states it shows.
 */
static int judge_crash(const struct crash_states *cs, const unsigned char *got,
		       long long size, char *found, size_t foundlen)
{
	long long g, x, len, v, lo = LLONG_MAX, hi = -1, holes = 0, k;
	long long first = cs->first;
	uint64_t w;

	for (x = 0; x + 8 <= size; x += 8) {
		memcpy(&w, got + x, 8);
		if (w >> 56 == TAG_SECRET || w >> 56 == TAG_OTHER) {
			note("the word at %lld is the %s: 0x%016llx", x,
			     w >> 56 == TAG_SECRET ? "secret of the deleted file" :
			     "second file's data", (unsigned long long)w);
			return -1;
		}
	}
	if (!crash_size_ok(cs, size)) {
		note("size %lld: no state after operations %lld..%lld has it, nor a write in flight",
		     size, first, first + cs->n - 1);
		return -1;
	}
	for (k = cs->n - 1; k >= 0; k--)
		if (size == cs->s[k].size && !memcmp(got, cs->s[k].data, size)) {
			snprintf(found, foundlen, "state:%lld", first + k);
			return 0;
		}
	for (g = 0; g * blksz < size; g++) {
		len = size - g * blksz < blksz ? size - g * blksz : blksz;
		v = explain_block(cs, g, got + g * blksz, len);
		if (v < 0) {
			note_block(cs, g, got + g * blksz, len);
			return -1;
		}
		if (v == cs->n) {
			holes++;
			continue;
		}
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	if (hi < 0)
		snprintf(found, foundlen, "holes:%lld", holes);
	else
		snprintf(found, foundlen, "blocks:%lld..%lld,holes:%lld",
			 first + lo, first + hi, holes);
	return 0;
}

/* The second file whole, the secret's gone: 0, or -1 after a note. */
static int crash_neighbours(void)
{
	unsigned char *want = xmalloc(OTHER_BYTES), *got = xmalloc(OTHER_BYTES + 1);
	char path[PATH_MAX];
	long long n = -ENOENT;
	int fd, bad;

	snprintf(path, sizeof(path), "%s/fsmodel.other", dir);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = pread_all(fd, got, OTHER_BYTES + 1, 0);
		close(fd);
	}
	fill(want, TAG_OTHER, 0, 0, OTHER_BYTES);
	bad = n != OTHER_BYTES;
	if (bad)
		note("%s: %lld bytes (or -errno), not %d", path, n, OTHER_BYTES);
	else
		bad = !same_bytes(path, got, want, 0, n);
	snprintf(path, sizeof(path), "%s/fsmodel.secret", dir);
	if (!access(path, F_OK) || errno != ENOENT) {
		note("%s is there, after its deletion was made durable", path);
		bad = 1;
	}
	free(want);
	free(got);
	return bad ? -1 : 0;
}

/* After the crash: @durable the last operation made durable, @last the
 * last one started (-1: none).
 */
static void crash_check(long long durable, long long last)
{
	struct rng r = { seed };
	struct crash_states cs;
	struct target t = { .fd = -1 };
	struct state m, *s;
	struct mix mx;
	struct op op;
	long long lo = durable < 0 ? 0 : durable, hi = last > lo ? last : lo;
	long long i, n = hi - lo + 1, size;
	unsigned char *got = xmalloc(cap + 1);
	struct op *ops = xmalloc(n * sizeof(*ops));
	char path[PATH_MAX], found[96] = "none";
	int fd, ok, next = 1, *tok;

	probe(&t);
	mix_init(&mx, 1);
	st_init(&m);
	cs.n = n;
	cs.first = lo;
	cs.nblk = (cap + blksz - 1) / blksz + 1;
	cs.ops = ops;
	cs.xfs = !strcmp(t.type, "xfs");
	cs.s = s = xmalloc(n * sizeof(*s));
	cs.tok = xmalloc(n * sizeof(*cs.tok));
	tok = xmalloc(cs.nblk * sizeof(*tok));
	for (i = 0; i < n; i++) {
		st_init(&s[i]);
		cs.tok[i] = xmalloc(cs.nblk * sizeof(*tok));
	}
	/* Replay the workload on the model alone, keeping states lo..hi, their
	 * tokens and the operations lo+1..hi.
	 */
	for (i = 0; i <= hi; i++) {
		if (i) {
			op.n = i;
			gen_op(&r, &mx, m.size, &op);
			apply(&m, &op, got, 0);
			tok_apply(tok, cs.nblk, &op, &next);
			if (i > lo)
				ops[i - lo - 1] = op;
		}
		if (i >= lo) {
			st_copy(&s[i - lo], &m);
			memcpy(cs.tok[i - lo], tok, cs.nblk * sizeof(*tok));
		}
	}
	ok = !crash_neighbours();
	snprintf(path, sizeof(path), "%s/fsmodel.crash", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		note("open %s: %s, after its creation was durable", path,
		     strerror(errno));
		ok = 0;
		size = -1;
	} else {
		size = pread_all(fd, got, cap + 1, 0);
		close(fd);
		if (size < 0 || size > maxlen) {
			note("reading %s: %lld", path, size);
			ok = 0;
		} else if (judge_crash(&cs, got, size, found, sizeof(found))) {
			ok = 0;
		}
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
	report("crash", ok, "OK", "seed=%llu durable=%lld last=%lld states=%lld size=%lld found=%s",
	       seed, durable, last, n, size, found);
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

/* -a CLASS=N: at most N outcomes of CLASS in the concurrent run. */
static void allow(char *arg)
{
	char *eq = strchr(arg, '=');
	int k;

	for (k = 0; eq && k < NCLASSES; k++) {
		if (!strncmp(arg, class_names[k], eq - arg) &&
		    !class_names[k][eq - arg]) {
			class_max[k] = number(eq + 1);
			return;
		}
	}
	fprintf(stderr, "fsmodel: -a wants CLASS=N, CLASS one of:");
	for (k = 0; k < NCLASSES; k++)
		fprintf(stderr, " %s", class_names[k]);
	fprintf(stderr, "\n");
	usage(2);
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

	while ((opt = getopt_long(argc, argv, "d:u:b:f:S:n:c:m:k:x:l:D:J:X:T:F:P:a:o:RAw:H:vh",
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
		case 'X': crash_at = optarg; break;
		case 'T': crash_shift = number(optarg); break;
		case 'F': crash_others = optarg; break;
		case 'P': pressure_mib = number(optarg); break;
		case 'a': allow(optarg); break;
		case 'o': overlap_floor = number(optarg); break;
		case 'R': swap_racer = 1; break;
		case 'A': anon_reads = 1; break;
		case 'w': swap_floor = number(optarg); break;
		case 'H': memcg_high_kib = number(optarg); break;
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
	    (mode == 'W' && !log) ||
	    (crash_at && (mode != 'W' || crash_shift < 2 ||
			  (strcmp(crash_at, "before") && strcmp(crash_at, "during") &&
			   strcmp(crash_at, "after")))) || (mode == 'C' && (durable < -1 || last < -1)))
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
	if (memcg_high_kib > 0 && enter_memcg(memcg_high_kib)) {
		fprintf(stderr, "fsmodel: -H %lld: %s", memcg_high_kib, diag);
		return 1;
	}
	printf("1..%d\n", mode == 'C' ? 1 : nrounds ? 1 + CONC_CASES : 1);
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
