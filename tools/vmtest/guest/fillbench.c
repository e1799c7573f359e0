// SPDX-License-Identifier: GPL-2.0
/*
 * fillbench: time the fill path of tmpfs, for `make bench`: how long the
 * first touch of a page of a file takes, where shmem allocates the page
 * and adds it to the page cache.  The collapse/insert series takes the
 * invalidate_lock shared there (shmem_add_to_page_cache() when no entry
 * is expected, shmem_get_folio_read() on a hole), so its cost shows here
 * if anywhere: tools/bench/bench-fill.sh runs this program on the series kernel
 * and on the same kernel without the series, side by side.
 *
 * usage: fillbench -d DIR [-m MIB] [-r REPS]
 *
 * Each repetition makes a sparse file of MIB MiB (default 64) in DIR and
 * fills it, every page once, by one of three paths:
 *   fault  a store into each page of a shared mapping (a page fault);
 *   write  a pwrite() of each page;
 *   hole   a pread() of each page of the sparse file, which finds holes
 *          and allocates nothing;
 * with 1 and with 2 threads, each thread its own half of the pages, so
 * that two CPUs take the inode's locks at the same time.  Every timing
 * starts when all threads are ready and ends when the last is done.
 *
 * Output on stdout, one line each:
 *   fill,PATH,THREADS,REP,NS_PER_PAGE
 *   progress TEXT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum fill_path { FAULT, WRITE, HOLE, NPATHS };

static const char *const path_names[NPATHS] = { "fault", "write", "hole" };

struct filler {
	pthread_t thread;
	enum fill_path path;
	int fd;
	unsigned char *map;
	long long first, pages;	/* the pages this thread fills */
	pthread_barrier_t *ready;
};

static long page_size;

static void die(const char *what)
{
	fprintf(stderr, "fillbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *fill(void *arg)
{
	struct filler *f = arg;
	unsigned char *buf = calloc(1, page_size);
	long long i, off;

	if (!buf)
		die("calloc");
	memset(buf, 0x5a, page_size);
	pthread_barrier_wait(f->ready);
	for (i = f->first; i < f->first + f->pages; i++) {
		off = i * page_size;
		switch (f->path) {
		case FAULT:
			f->map[off] = 0x5a;
			break;
		case WRITE:
			if (pwrite(f->fd, buf, page_size, off) != page_size)
				die("pwrite");
			break;
		case HOLE:
			if (pread(f->fd, buf, page_size, off) != page_size)
				die("pread");
			break;
		default:
			break;
		}
	}
	pthread_barrier_wait(f->ready);
	free(buf);
	return NULL;
}

/* One timed fill of a new file by @threads threads: nanoseconds a page. */
static double run(const char *file, long long size, enum fill_path path,
		  int threads)
{
	struct filler f[2];
	pthread_barrier_t ready;
	long long pages = size / page_size;
	unsigned char *map = NULL;
	double start, took;
	int fd, t;

	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, size))
		die(file);
	if (path == FAULT) {
		map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fd, 0);
		if (map == MAP_FAILED)
			die("mmap");
	}
	pthread_barrier_init(&ready, NULL, threads + 1);
	for (t = 0; t < threads; t++) {
		f[t] = (struct filler) {
			.path = path, .fd = fd, .map = map, .ready = &ready,
			.first = pages / threads * t, .pages = pages / threads,
		};
		errno = pthread_create(&f[t].thread, NULL, fill, &f[t]);
		if (errno)
			die("pthread_create");
	}
	pthread_barrier_wait(&ready);
	start = now();
	pthread_barrier_wait(&ready);
	took = now() - start;
	for (t = 0; t < threads; t++)
		pthread_join(f[t].thread, NULL);
	pthread_barrier_destroy(&ready);
	if (map)
		munmap(map, size);
	close(fd);
	unlink(file);
	return took * 1e9 / pages;
}

int main(int argc, char **argv)
{
	const char *dir = NULL;
	long long mib = 64;
	int reps = 7, opt, rep, threads;
	enum fill_path path;
	char file[4096];

	while ((opt = getopt(argc, argv, "d:m:r:")) != -1) {
		switch (opt) {
		case 'd':
			dir = optarg;
			break;
		case 'm':
			mib = atoll(optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		default:
			dir = NULL;
			optind = argc;
			break;
		}
	}
	if (!dir || mib < 1 || reps < 1) {
		fprintf(stderr, "usage: fillbench -d DIR [-m MIB] [-r REPS]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	page_size = sysconf(_SC_PAGESIZE);
	snprintf(file, sizeof(file), "%s/fillbench", dir);
	printf("progress fillbench: %lld MiB, %d repetitions, %ld CPUs\n",
	       mib, reps, sysconf(_SC_NPROCESSORS_ONLN));
	/* Repetitions outermost, so that a slow phase of the host spreads
	 * over every path instead of spoiling one. */
	for (rep = 1; rep <= reps; rep++)
		for (path = FAULT; path < NPATHS; path++)
			for (threads = 1; threads <= 2; threads++)
				printf("fill,%s,%d,%d,%.1f\n", path_names[path],
				       threads, rep,
				       run(file, mib << 20, path, threads));
	return 0;
}
