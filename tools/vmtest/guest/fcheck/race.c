// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: a thread storing through a mapping, or reading, while shifts
 * run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fcheck.h"

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
void case_store_during_shift(int mode, const char *name)
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

/*
 * A read that overlaps a shift returns what the file holds either before
 * or after it, never a mix, whichever kernel reader does it (readers.c):
 * ext4 and f2fs, whose buffered reads take no lock, read again when they
 * overlapped (i_shift_seq) and splice under i_rwsem; their page cache,
 * kept across the shift on ext4, holds the old layout while the size has
 * changed; f2fs direct reads wait for the block exchange; an io_uring
 * read queued on a locked folio (-EIOCBQUEUED) is neither lost nor
 * completed twice.  One thread of each reader class reads a window across
 * every EOF in a loop while shifts run, one way and back (race_more()):
 * the file goes through three states (the range collapsed, or a hole
 * inserted), and each read must be one of them.  tmpfs skips: its reads
 * reread i_size for every page, and may stop at either EOF (RACE_EOF in
 * fsmodel, docs/design.rst).
 */
void case_read_during_shift(int mode, const char *name)
{
	long long size = RACE_SIZE, len = race_len(), off = len, overhead;
	int other = mode == COLLAPSE ? INSERT : COLLAPSE;
	struct model m, once = { 0 }, back = { 0 };
	struct reader r[NR_READERS] = { 0 };
	pthread_t th[NR_READERS];
	int fd, answer = 0, round, how;
	volatile long shifts = 0;
	volatile int stop = 0;
	unsigned char *map;
	double start;

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

	/* Four shift lengths across the three EOFs: one pipe's worth. */
	for (how = 0; how < NR_READERS; how++) {
		r[how] = (struct reader){ .how = how, .off = size - 2 * len,
					  .len = 4 * len, .stop = &stop,
					  .shifts = &shifts,
					  .states = { &m, &once, &back } };
		pthread_create(&th[how], NULL, read_loop, &r[how]);
	}
	/*
	 * Shift only once every reader is reading: on a filesystem that
	 * refuses the shifts the rounds take no time at all.
	 */
	start = now();
	for (how = 0; how < NR_READERS; how++)
		while (!r[how].reads && !r[how].setup_errno && !r[how].wrong &&
		       now() - start < RACE_SECONDS)
			usleep(1000);
	start = now();
	for (round = 0; race_more(round, start) && !answer; round++) {
		usleep(2000);
		shifts++;
		answer = xfallocate(fd, round % 2 ? other : mode, off, len);
		shifts++;
	}
	usleep(2000);
	stop = 1;
	printf("# %s: reads (overlapping a shift):", name);
	for (how = 0; how < NR_READERS; how++) {
		pthread_join(th[how], NULL);
		printf(" %s %lld (%lld)%s", reader_name[how], r[how].reads,
		       r[how].overlapped, how + 1 < NR_READERS ? "," : "\n");
		if (r[how].setup_errno)
			fail("%s reader: %s", reader_name[how],
			     ename(r[how].setup_errno));
		else if (!r[how].reads)
			fail("%s reader: no read completed", reader_name[how]);
		if (r[how].wrong)
			fail("%lld of %lld %s reads racing the shifts were no state of the file; the first %s",
			     r[how].wrong, r[how].reads, reader_name[how],
			     r[how].first);
	}
	close(fd);
	unlink(path);
	unlink(path2);
	model_free(&m);
	model_free(&once);
	model_free(&back);
	report(name, answer, 0, 0, NULL);
}
