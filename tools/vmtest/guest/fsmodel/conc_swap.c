// SPDX-License-Identifier: GPL-2.0
/*
 * fsmodel: what the concurrent run races against the shifts besides the
 * readers: the swap racer and the folio split probe of -R, the 64 KiB
 * folios of shared anonymous memory of -A, the memory cgroup of -H.
 */

#include "fsmodel.h"

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
int mount_has_huge(void)
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
int write_file(const char *file, const char *what)
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

int split_probe_start(long shifter)
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

void split_probe_stop(void)
{
	write_file(TRACEFS "/events/kprobes/" SPLIT_EVENT "/enable", "0");
	write_file(TRACEFS "/kprobe_events", "-:" SPLIT_EVENT);
}

/*
 * Count the splits traced since the last call into @t, those from @t0 to
 * @t1 apart, and empty the buffer.  A line ends in "T: fsmodel_split:
 * (CALLER <- FUNCTION) ret=0x0", T in seconds.
 */
int split_probe_count(struct swap_tally *t, double t0, double t1)
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

char mthp_was[32];	/* shmem_enabled before the run */

long long mthp_swpout(void)
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
int anon_store(struct target *t, const struct state *s)
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
int anon_file(struct target *t, struct state *s, long long size,
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

void *racer(void *arg)
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

/*
 * -H: move this process into a new memory cgroup, /sys/fs/cgroup/fsmodel,
 * whose memory.high is KIB: tmpfs pages are charged to the cgroup of the
 * process that wrote them, so reclaim swaps the files out all along.
 */
#define MEMCG_DIR	"/sys/fs/cgroup"

int enter_memcg(long long kib)
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
