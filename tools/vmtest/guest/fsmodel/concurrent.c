// SPDX-License-Identifier: GPL-2.0
/*
 * fsmodel: the concurrent run: the accessor and shifter threads, the
 * plans of each round and the run itself.  The accesses, the reader
 * threads and the judging of what they saw are in conc_judge.c; the swap
 * racer and what -R, -A and -H set up in conc_swap.c.
 */

#include "fsmodel.h"

/* ------------------------------------------------------------------ */
/*
 * The concurrent run.  Each round has two parts.  In the first, the
 * shifter thread makes one valid collapse or insert on fsmodel.conc while
 * the accessor thread makes a few reads and writes.  In the second, the
 * shifter shifts fsmodel.reads, a larger file, while READERS threads read
 * it (pread, splice, sendfile, copy_file_range, RWF_NOWAIT, io_uring,
 * loads through the mapping, SEEK_DATA and SEEK_HOLE), aimed at the part
 * that moves, from before the call until after it returned.
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

/* -a CLASS=N: at most N outcomes every 100 rounds (0: none allowed) */
long long class_max[NCLASSES];
long long overlap_floor = -1;	/* -o; -1: ten reads a round */
long long class_floor = -1;	/* -O; -1: half a read a round */
int swap_racer;			/* -R */
int anon_reads;			/* -A */
long long swap_floor = -1;	/* -w; -1: half the rounds */
long long memcg_high_kib;	/* -H */

void pause_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	if (us > 0)
		nanosleep(&ts, NULL);
}

int is_set(int *flag)
{
	return __atomic_load_n(flag, __ATOMIC_SEQ_CST);
}

static void st_init_cap(struct state *s, long long bytes)
{
	s->data = xmalloc(bytes);
	s->size = 0;
	s->seals = 0;
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

void concurrent_run(void)
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
	int k, i, failed, few, huge, nowait_refused = 0, given = 0;

	if (floor < 0)
		floor = 10 * nrounds;
	if (class_floor < 0)
		class_floor = nrounds / 2;
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
		report("model_overlap_readers", 0, "EIO", "seed=%llu", seed);
		if (swap_racer)
			report("model_swap_overlap", 0, "EIO", "seed=%llu",
			       seed);
		return;
	}
	pthread_mutex_init(&c->lock, NULL);
	huge = mount_has_huge();
	c->huge = swap_racer && !anon_reads && huge;
	/*
	 * With the swap racer (-R), the file's folios are swapped out and
	 * split under a memory cgroup's limit, and on a tmpfs with huge
	 * pages a shift splits 2 MiB folios each of which many reads share:
	 * sixteen readers then keep a folio referenced past the shmem
	 * shift's bounded wait for its split (EBUSY), so four.
	 */
	c->nreaders = swap_racer || huge ? READERS_SWAP : READERS;
	pthread_barrier_init(&c->go, NULL, 3 + c->nreaders + swap_racer);
	pthread_barrier_init(&c->end, NULL, 3 + c->nreaders + swap_racer);
	pthread_create(&th[0], NULL, accessor, c);
	pthread_create(&th[1], NULL, shifter, c);
	if (swap_racer)
		pthread_create(&th[2], NULL, racer, c);
	for (i = 0; i < c->nreaders; i++) {
		c->readers[i].c = c;
		c->readers[i].id = i;
		c->readers[i].buf = xmalloc(READ_PAGES * pagesz + pagesz);
		if (readers_open(&c->readers[i], &c->rt))
			failed = 1;
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
	for (i = 0; i < c->nreaders; i++) {
		struct tally *t = &c->readers[i].tally;

		pthread_join(c->readers[i].th, NULL);
		sum.reads += t->reads;
		sum.loads += t->loads;
		sum.seeks += t->seeks;
		sum.accesses += t->accesses;
		sum.continued += t->continued;
		sum.again += t->again;
		sum.short_copies += t->short_copies;
		for (k = 0; k < NR_ACCESS_KINDS; k++)
			sum.by_kind[k] += t->by_kind[k];
		for (k = 0; k < NCLASSES; k++)
			sum.outcome[k] += t->outcome[k];
		nowait_refused = c->readers[i].nowait_refused;
		readers_close(&c->readers[i]);
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
	few = 0;
	for (k = 0; k < NR_ACCESS_KINDS; k++) {
		long long least = k == A_SPLICE || k == A_SENDFILE ||
				  k == A_COPY ? class_floor : nrounds / 2;

		if (!IS_READ(k) || (k == A_NOWAIT && nowait_refused) ||
		    sum.by_kind[k] >= least)
			continue;
		note("only %lld %s reads ran while a shift was in progress, fewer than the floor of %lld: the run did not test that reader class",
		     sum.by_kind[k], access_names[k], least);
		few = 1;
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
	snprintf(extra, sizeof(extra),
		 "overlap by class: splice %lld, sendfile %lld, copy_file_range %lld (floor %lld each); pread %lld, RWF_NOWAIT %lld%s, io_uring %lld (floor %lld each); ended by a second call at an EOF %lld; short copies %lld; RWF_NOWAIT EAGAIN %lld",
		 sum.by_kind[A_SPLICE], sum.by_kind[A_SENDFILE],
		 sum.by_kind[A_COPY], class_floor, sum.by_kind[A_PREAD],
		 sum.by_kind[A_NOWAIT],
		 nowait_refused ? " (EOPNOTSUPP: made as pread)" : "",
		 sum.by_kind[A_URING], nrounds / 2, sum.continued,
		 sum.short_copies, sum.again);
	conc_case(notes, &given, "model_overlap_readers", !few,
		  few ? "FEW" : "OK", extra);
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
