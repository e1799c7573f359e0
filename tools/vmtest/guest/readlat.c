// SPDX-License-Identifier: GPL-2.0
/*
 * readlat: what a reader of a file pays while the file is collapsed, for
 * `make bench`.  tools/bench/bench-readlat.sh runs this program on the
 * series kernel and on the same kernel without the series, side by side.
 *
 * usage: readlat -d DIR -n NAME [-m MIB] [-r REPS]
 *
 * Each repetition writes a file of MIB MiB (default 64) in DIR and leaves
 * it dirty, so that the collapse first writes the tail back; a reader
 * thread then reads the file's first page with pread() in a loop, timing
 * every call, while the main thread collapses 4 KiB of the file once:
 *   below  at the middle of the file: the read ends below the range the
 *          shift changes;
 *   over   at offset 0: the read covers the page the shift removes.
 * Every read is checked: 4096 bytes, and the first page's tag from before
 * or after the collapse (each page of the file starts with its index).
 *
 * Output on stdout, one line each (times in nanoseconds):
 *   readlat,NAME,CASE,REP,COLLAPSE,IDLE_P50,READS,P50,P99,MAX
 * COLLAPSE is the fallocate() call's time; IDLE_P50 the median read before
 * it; READS how many reads overlapped the call, and P50, P99 and MAX their
 * latencies.
 *   progress TEXT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
/* About a second of reads under TCG; more are counted but not kept. */
#define MAX_SAMPLES (1 << 20)

struct sample {
	int64_t start, ns;
};

struct reader {
	int fd;
	uint64_t tag_after;	/* the first page's tag after the collapse */
	volatile int stop;
	long kept, dropped;
	struct sample *samples;
};

static void die(const char *what)
{
	fprintf(stderr, "readlat: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *read_first_page(void *arg)
{
	struct reader *r = arg;
	uint64_t buf[PAGE / sizeof(uint64_t)];

	while (!r->stop) {
		int64_t start = now_ns();
		ssize_t got = pread(r->fd, buf, PAGE, 0);
		int64_t ns = now_ns() - start;

		if (got != PAGE || (buf[0] != 0 && buf[0] != r->tag_after)) {
			fprintf(stderr, "readlat: pread at 0 gave %zd bytes, tag %llu\n",
				got, (unsigned long long)buf[0]);
			exit(1);
		}
		if (r->kept < MAX_SAMPLES)
			r->samples[r->kept++] = (struct sample){ start, ns };
		else
			r->dropped++;
	}
	return NULL;
}

static int by_ns(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The q-th quantile of n sorted values, by the nearest rank. */
static int64_t quantile(const int64_t *v, long n, double q)
{
	long i = (long)(q * n + 0.999999);

	if (n == 0)
		return 0;
	return v[i < 1 ? 0 : i > n ? n - 1 : i - 1];
}

static void write_tagged(int fd, long long pages)
{
	static uint64_t chunk[256][PAGE / sizeof(uint64_t)];	/* 1 MiB */

	for (long long p = 0; p < pages; p += 256) {
		long n = pages - p < 256 ? pages - p : 256;

		for (long i = 0; i < n; i++)
			chunk[i][0] = p + i;
		if (pwrite(fd, chunk, n * PAGE, p * PAGE) != n * PAGE)
			die("pwrite");
	}
}

static void one_collapse(const char *file, const char *name, const char *what,
			 int rep, long long pages, struct sample *samples,
			 int64_t *lat)
{
	long long at = strcmp(what, "over") ? pages / 2 : 0;
	struct reader r = { .samples = samples };
	struct timespec settle = { 0, 20 * 1000 * 1000 };
	long idle = 0, reads = 0;
	int64_t t0, t1;
	pthread_t thread;

	unlink(file);
	r.fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (r.fd < 0)
		die(file);
	write_tagged(r.fd, pages);
	r.tag_after = at ? 0 : 1;
	if (pthread_create(&thread, NULL, read_first_page, &r))
		die("pthread_create");
	nanosleep(&settle, NULL);
	t0 = now_ns();
	if (fallocate(r.fd, FALLOC_FL_COLLAPSE_RANGE, at * PAGE, PAGE))
		die("fallocate(FALLOC_FL_COLLAPSE_RANGE)");
	t1 = now_ns();
	nanosleep(&settle, NULL);
	r.stop = 1;
	pthread_join(thread, NULL);
	if (r.dropped)
		printf("progress readlat: %s %s: %ld reads past the %d kept\n",
		       name, what, r.dropped, MAX_SAMPLES);

	for (long i = 0; i < r.kept; i++)
		if (samples[i].start + samples[i].ns < t0)
			lat[idle++] = samples[i].ns;
	qsort(lat, idle, sizeof(*lat), by_ns);
	int64_t idle_p50 = quantile(lat, idle, 0.5);

	for (long i = 0; i < r.kept; i++)
		if (samples[i].start < t1 && samples[i].start + samples[i].ns > t0)
			lat[reads++] = samples[i].ns;
	qsort(lat, reads, sizeof(*lat), by_ns);
	printf("readlat,%s,%s,%d,%lld,%lld,%ld,%lld,%lld,%lld\n", name, what,
	       rep, (long long)(t1 - t0), (long long)idle_p50, reads,
	       (long long)quantile(lat, reads, 0.5),
	       (long long)quantile(lat, reads, 0.99),
	       (long long)quantile(lat, reads, 1.0));
	fflush(stdout);
	close(r.fd);
	unlink(file);
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *name = NULL;
	static const char *const cases[] = { "below", "over" };
	long long mib = 64;
	int reps = 5, opt;
	char file[4096];

	while ((opt = getopt(argc, argv, "d:n:m:r:")) != -1) {
		switch (opt) {
		case 'd': dir = optarg; break;
		case 'n': name = optarg; break;
		case 'm': mib = atoll(optarg); break;
		case 'r': reps = atoi(optarg); break;
		default: dir = NULL; break;
		}
	}
	if (!dir || !name || mib < 1 || reps < 1) {
		fprintf(stderr, "usage: readlat -d DIR -n NAME [-m MIB] [-r REPS]\n");
		return 2;
	}
	snprintf(file, sizeof(file), "%s/readlat", dir);

	struct sample *samples = malloc(MAX_SAMPLES * sizeof(*samples));
	int64_t *lat = malloc(MAX_SAMPLES * sizeof(*lat));

	if (!samples || !lat)
		die("malloc");
	printf("progress readlat: %s, %lld MiB dirty, %d repetitions\n", name,
	       mib, reps);
	for (int rep = 1; rep <= reps; rep++)
		for (int c = 0; c < 2; c++)
			one_collapse(file, name, cases[c], rep, mib * 256, samples,
				     lat);
	return 0;
}
