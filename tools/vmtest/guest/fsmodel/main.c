// SPDX-License-Identifier: GPL-2.0
/*
 * fsmodel: the options, the model run and its reports, and main().
 * fsmodel.h says what the program is and which file holds what.
 */

#include "fsmodel.h"
#include "../sectors_read.h"

static const char usage_text[] =
"usage: fsmodel -d DIR -u UNIT -b BLOCK [OPTION]...\n"
"       fsmodel --memfd -u UNIT -b BLOCK [OPTION]...\n"
"       fsmodel --crash-workload -d DIR -u UNIT -b BLOCK -l LOG [-X WHERE -T N | -L DM]\n"
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
"                    \"model_overlap\", \"model_overlap_readers\")\n"
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
"                least READS reads overlapped a shift (default 10 a round)\n"
"  -O READS      ... and (case model_overlap_readers) unless at least READS\n"
"                reads of each of splice, sendfile and copy_file_range did\n"
"                (default half a round), and half a round of each of pread,\n"
"                RWF_NOWAIT (unless the file refuses it) and io_uring\n"
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
"  -L DM         log every line of LOG as a mark on the dm-log-writes device\n"
"                DM too, and end after the last operation (--crash-workload)\n"
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
"  -K            the filesystem keeps its page cache across a shift of\n"
"                whole pages: after each such collapse or insert of the\n"
"                model run, every page mincore found cached before must be\n"
"                cached at its new offset (but see -Y) and read back as the\n"
"                model says;\n"
"                before every other one those pages are read first (made\n"
"                uptodate), and reading them back must then read no sector\n"
"                from the disk\n"
"  -Y N          with -K, at most N shifts in 1000 may drop cached pages\n"
"                (default 0)\n"
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
"(accesses that overlapped a shift) and fails below the -o floor;\n"
"model_overlap_readers prints the reads of each class and fails below -O.\n"
"\n"
"Reproduce a failure: the same -S, -n, -m, -u, -b and -x on the same kind\n"
"of filesystem (make vmtest: FSMODEL_SEED=S FSMODEL_OPS=N make vmtest FS=NAME).\n";

/* ------------------------------------------------------------------ */
/* Settings and failure notes. */

const char *fs_name = "fs", *dir;
int memfd_mode;			/* --memfd */
long long pressure_mib;		/* -P */
long long unit, blksz, pagesz, maxlen, cap;
long long nops = 100000, nrounds = 200;
static long long check_every = 1000;
unsigned long long seed;
static int verbose;
static int keeps_cache;		/* -K */
static long long cache_kept;	/* pages -K found cached where they belong */
/*
 * -K: the shifts checked, those that dropped a cached page, the pages they
 * dropped, and the first such, described.  -Y: how many shifts in 1000
 * may drop pages (default none): on two CPUs xfs's shift now and then
 * meets a reference that outlasts its two drains and drops the folio,
 * which costs a read, never data.
 */
static long long cache_drop_max;	/* -Y */
static long long cache_shifts, cache_drop_shifts, cache_dropped;
static char cache_first_drop[160];
char diag[32768];		/* "# " lines explaining a failure */

void note(const char *fmt, ...)
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

void *xmalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		perror("fsmodel: calloc");
		exit(2);
	}
	return p;
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *ename(int e)
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
void report(const char *tcase, int ok, const char *answer,
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

void progress(const char *what, long long done, long long total,
	      double start)
{
	printf("progress %s %s: %lld/%lld, %.0f s\n", fs_name, what, done, total,
	       now() - start);
	fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* The model run. */

static const char *model_case(void)
{
	return pressure_mib ? "model_pressure" : "model";
}

/* ------------------------------------------------------------------ */
/*
 * -K: the page cache follows a shift of whole pages.  Before the call,
 * which pages of the file mincore() finds cached; after it, each of those
 * must be cached at its new index (none of a collapsed range), and reading
 * them back must match the model.  A cached folio need not be uptodate
 * (a write of part of a page with blocks smaller than a page reads only
 * its own blocks), and a moved folio loses the per-block state of its
 * buffer heads, so reading it back after the shift may rightly read the
 * disk.  Before every other such shift (even operation numbers: the seeded
 * stream is not touched) the cached pages are therefore made uptodate
 * first, and reading them back afterwards must then read no sector from
 * the disk; the odd ones move folios as the run left them.  A load through
 * the mapping does that: a fault reads the whole of a folio that is not
 * uptodate.  read(2) does not: it copies from a folio whose blocks in the
 * range read are uptodate (->is_partially_uptodate()) and leaves it so,
 * as for the page at EOF, of which it reads only the part before EOF.
 */
struct cache_snap {
	unsigned char *before;
	long long pages;
	int shift;		/* a collapse or insert of whole pages */
	int read_first;		/* cached pages read before it: no I/O after */
};

/* Read the pages @vec marks cached and compare them with the model. */
static int read_cached(struct target *t, const struct state *m,
		       const unsigned char *vec, long long pages,
		       const char *what)
{
	long long j, n;

	for (j = 0; j < pages; j++) {
		if (!(vec[j] & 1))
			continue;
		n = clamp(m->size - j * pagesz, 0, pagesz);
		if (pread_all(t->fd, t->buf, n, j * pagesz) != n ||
		    !same_bytes(what, t->buf, m->data + j * pagesz,
				j * pagesz, n))
			return -1;
	}
	return 0;
}

/* mincore() of the first @pages pages of the mapping into @vec. */
static int cached_pages(struct target *t, long long pages, unsigned char *vec)
{
	if (!pages)
		return 0;
	if (mincore(t->map, pages * pagesz, vec)) {
		note("mincore: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int cache_before(struct target *t, const struct state *m,
			const struct op *op, struct cache_snap *c)
{
	long long i;

	c->shift = keeps_cache && op->expect == 0 &&
		   (op->kind == K_COLLAPSE || op->kind == K_INSERT) &&
		   op->off % pagesz == 0 && op->len % pagesz == 0;
	if (!c->shift)
		return 0;
	c->pages = (m->size + pagesz - 1) / pagesz;
	c->before = xmalloc(c->pages ? c->pages : 1);
	c->read_first = op->n % 2 == 0;
	if (cached_pages(t, c->pages, c->before))
		return -1;
	if (!c->read_first)
		return 0;
	for (i = 0; i < c->pages; i++)
		if (c->before[i] & 1)
			(void)*(volatile unsigned char *)(t->map + i * pagesz);
	return read_cached(t, m, c->before, c->pages,
			   "a cached page before the shift");
}

/* A cached page's index after the shift @op, or -1 if it was collapsed. */
static long long index_after(const struct op *op, long long i)
{
	long long off = op->off / pagesz, len = op->len / pagesz;

	if (i < off)
		return i;
	if (op->kind == K_INSERT)
		return i + len;
	return i < off + len ? -1 : i - len;
}

static int cache_after(struct target *t, const struct state *m,
		       const struct op *op, struct cache_snap *c)
{
	long long pages = (m->size + pagesz - 1) / pagesz, i, j;
	long long kept = 0, dropped = 0, sectors;
	unsigned char *after;
	int failed = 0;

	if (!c->shift)
		return 0;
	after = xmalloc(pages ? pages : 1);
	if (cached_pages(t, pages, after)) {
		failed = 1;
		goto out;
	}
	for (i = 0; i < c->pages; i++) {
		j = index_after(op, i);
		if (!(c->before[i] & 1) || j < 0 || j >= pages)
			continue;
		if (after[j] & 1)
			kept++;
		else if (!dropped++ && !cache_drop_shifts)
			snprintf(cache_first_drop, sizeof(cache_first_drop),
				 "operation %lld: page %lld, cached before the shift, is not cached at page %lld after it",
				 op->n, i, j);
	}
	cache_shifts++;
	cache_drop_shifts += !!dropped;
	cache_dropped += dropped;
	/* Read back what is cached: from the cache alone, if uptodate. */
	sectors = sectors_read(t->fd);
	if (read_cached(t, m, after, pages, "a cached page after the shift")) {
		failed = 1;
		goto out;
	}
	if (c->read_first && sectors >= 0 && sectors_read(t->fd) != sectors) {
		note("reading back the %lld pages cached after the shift read %lld sectors from the disk",
		     kept, sectors_read(t->fd) - sectors);
		failed = 1;
	}
	cache_kept += kept;
out:
	free(after);
	free(c->before);
	c->before = NULL;
	return failed;
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
	struct cache_snap snap = { NULL };
	char extra[192] = "";

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
		failed = cache_before(t, &m, &op, &snap) ||
			 step(t, &m, &op) || cache_after(t, &m, &op, &snap);
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
	if (cache_drop_shifts * 1000 > cache_drop_max * cache_shifts) {
		note("%lld of the %lld shifts checked dropped cached pages (%lld in all), more than the %lld in 1000 allowed (-Y); the first: %s",
		     cache_drop_shifts, cache_shifts, cache_dropped,
		     cache_drop_max, cache_first_drop);
		failed = 1;
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
	if (keeps_cache)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			 " cached_pages_kept=%lld cache_drops=%lld/%lld",
			 cache_kept, cache_drop_shifts, cache_shifts);
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

	while ((opt = getopt_long(argc, argv, "d:u:b:f:S:n:c:m:k:x:l:D:J:L:X:T:F:P:a:o:O:RAw:H:KY:vh",
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
		case 'L': mark_dev = optarg; break;
		case 'X': crash_at = optarg; break;
		case 'T': crash_shift = number(optarg); break;
		case 'F': crash_others = optarg; break;
		case 'P': pressure_mib = number(optarg); break;
		case 'a': allow(optarg); break;
		case 'o': overlap_floor = number(optarg); break;
		case 'O': class_floor = number(optarg); break;
		case 'Y': cache_drop_max = number(optarg); break;
		case 'R': swap_racer = 1; break;
		case 'A': anon_reads = 1; break;
		case 'w': swap_floor = number(optarg); break;
		case 'H': memcg_high_kib = number(optarg); break;
		case 'M': memfd_mode = 1; break;
		case 'K': keeps_cache = 1; break;
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
	    (mode == 'W' && !log) || (mark_dev && (mode != 'W' || crash_at)) ||
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
