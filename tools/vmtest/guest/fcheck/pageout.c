// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: files paged out before the shift: small pages, huge folios and
 * mTHP folios swapped out whole.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fcheck.h"

/* Paged out before the shift: on tmpfs with a swap device the file's pages
 * become swap entries, which the shift must move with their index and
 * swap-in must bring back at the new one; elsewhere the clean page cache
 * is dropped and read back from the disk.
 */
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

/*
 * The number after KEY at the start of a line of FILE (0 if none): KEY
 * holds its separator, "Shmem:" for /proc/meminfo (kB), "pswpout " for
 * /proc/vmstat.  "Shmem:" counts the shmem pages in the page cache: a page
 * swapped out leaves it at once, while SwapFree may not move (swap slots
 * are handed out from per-CPU caches allocated ahead).
 */
static long long proc_number(const char *file, const char *key)
{
	long long value = 0;
	char line[128];
	size_t n = strlen(key);
	FILE *f = fopen(file, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n))
			value = atoll(line + n);
	if (f)
		fclose(f);
	return value;
}

static long long meminfo_kb(const char *field)
{
	return proc_number("/proc/meminfo", field);
}

void case_pageout(int mode, const char *name)
{
	long long size = 12 * unit, off = 3 * unit, len = 2 * unit;
	long long overhead, swapped, swap;
	unsigned char *map;
	struct model m;
	int fd, answer;

	map = build_mapped(name, DENSE, size, PROT_READ, &m, &fd,
			   &overhead);
	if (!map)
		return;
	/*
	 * pswpout is an event count, summed over the CPUs when read; the
	 * Shmem line of /proc/meminfo lags by up to a per-CPU threshold of
	 * pages, more than the file's twelve 64 KiB pages.
	 */
	swapped = proc_number("/proc/vmstat", "pswpout ");
	if (madvise(map, size, MADV_PAGEOUT))
		fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
	munmap(map, size);
	swapped = proc_number("/proc/vmstat", "pswpout ") - swapped;
	swap = meminfo_kb("SwapTotal:");
	printf("# %s: MADV_PAGEOUT wrote %lld pages to swap; %lld kB of swap\n",
	       name, swapped, swap);
	/*
	 * make vmtest gives the guest a swap disk: small pages of plain tmpfs
	 * must go there (a huge folio may stay, if it cannot be split).
	 */
	if (!strcmp(fs_name, "tmpfs") && !swap)
		fail("no swap configured");
	else if (!strcmp(fs_name, "tmpfs") && swapped < 1)
		fail("MADV_PAGEOUT put no tmpfs page in swap");

	answer = xfallocate(fd, mode, off, len);
	model_shift(&m, answer, mode, off, len);
	verify(fd, &m, overhead, 1, "after the call");
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, 0, 0, NULL);
}

/* Is the directory under test a tmpfs mount with huge pages (huge=)? */
static int on_huge_tmpfs(void)
{
	char line[1024], mnt[512], opts[512];
	FILE *f = fopen("/proc/mounts", "r");
	int huge = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %511s tmpfs %511s", mnt, opts) == 2 &&
		    !strcmp(mnt, dir) && strstr(opts, "huge=") &&
		    !strstr(opts, "huge=never"))
			huge = 1;
	if (f)
		fclose(f);
	return huge;
}

/*
 * A huge folio swapped out whole stays in the swap cache as one large
 * folio until reclaim frees it, while a shift by a single page at @page
 * splits the file's large swap entry and moves the small entries off the
 * folio's alignment; a collapse of its last page (@page 511) leaves its
 * first 511 entries in place, behind a removed tail.  A read of the whole
 * file must still return with the model's data, however the swap cache
 * holds it: swap-in takes such a folio back whole, and looped forever in
 * the kernel (no signal ends it) on entries moved or cut off it.  The read
 * therefore runs in a child, given PAGEOUT_HUGE_SECONDS.
 */
#define PAGEOUT_HUGE_SECONDS 20

/*
 * Run the pread() of the whole of @fd into @got (@size bytes) in a child,
 * given PAGEOUT_HUGE_SECONDS: a kernel looping in swap-in must fail the
 * case, not hang fcheck.  Returns 0 if the read came back whole.
 */
static int read_in_child(int fd, unsigned char *got, long long size)
{
	double start = now();
	int status;
	pid_t child = fork();

	if (child == 0)
		_exit(pread(fd, got, size, 0) != size);
	if (child < 0) {
		fail("fork: %s", strerror(errno));
		return -1;
	}
	while (waitpid(child, &status, WNOHANG) == 0) {
		if (now() - start > PAGEOUT_HUGE_SECONDS) {
			fail("a read after the shift has not returned in %d s (swap-in loops on the moved entries)",
			     PAGEOUT_HUGE_SECONDS);
			return -1;
		}
		usleep(10000);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fail("the read after the shift failed or came short");
		return -1;
	}
	return 0;
}

void case_pageout_huge(int mode, long long page, const char *name)
{
	long long pg = sysconf(_SC_PAGESIZE), size = 4 << 20, off = page * pg;
	long long overhead, thp_out, i;
	unsigned char *map, *got;
	struct model m;
	int fd, answer;

	if (!on_huge_tmpfs()) {
		report(name, ANSWER_SKIP, 0, 0,
		       "no huge folios to swap out whole: not a tmpfs mount with huge=");
		return;
	}
	map = build_mapped(name, DENSE, size, PROT_READ, &m, &fd, &overhead);
	if (!map)
		return;
	printf("# %s: %lld kB of shmem in huge folios\n", name,
	       meminfo_kb("ShmemHugePages:"));
	thp_out = proc_number("/proc/vmstat", "thp_swpout ");
	if (madvise(map, size, MADV_PAGEOUT))
		fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
	munmap(map, size);
	thp_out = proc_number("/proc/vmstat", "thp_swpout ") - thp_out;
	printf("# %s: %lld huge folios swapped out whole\n", name, thp_out);
	if (thp_out < 1)
		fail("setup: MADV_PAGEOUT swapped out no huge folio whole (swap on? CONFIG_THP_SWAP?)");

	answer = xfallocate(fd, mode, off, pg);
	model_shift(&m, answer, mode, off, pg);

	got = mmap(NULL, size + pg, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (got == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		goto out;
	}
	if (read_in_child(fd, got, m.size))
		goto unmap;
	for (i = 0; i < m.size; i++)
		if (got[i] != m.data[i]) {
			fail("read after the shift: byte %lld is %#x, expected %#x",
			     i, got[i], m.data[i]);
			break;
		}
	verify(fd, &m, overhead, 1, "after the call");
unmap:
	munmap(got, size + pg);
out:
	close(fd);
	unlink(path);
	model_free(&m);
	report(name, answer, 0, 0, NULL);
}

/*
 * The mTHP size of the pageout_mthp cases: 16 pages (64 KiB with 4 KiB
 * pages, 1 MiB with 64 KiB pages, whose 128 KiB folios anonymous and
 * shared memory may not use), and the sysfs directory of that size.
 */
#define MTHP_PAGES 16

static const char *mthp_file(const char *file)
{
	static char path_buf[256];

	snprintf(path_buf, sizeof(path_buf),
		 "/sys/kernel/mm/transparent_hugepage/hugepages-%ldkB/%s",
		 MTHP_PAGES * sysconf(_SC_PAGESIZE) / 1024, file);
	return path_buf;
}

/* A number from a file of the mTHP size's directory (-1: unreadable). */
static long long mthp_read(const char *file)
{
	long long value = -1;
	FILE *f;

	f = fopen(mthp_file(file), "r");
	if (f && fscanf(f, "%lld", &value) != 1)
		value = -1;
	if (f)
		fclose(f);
	return value;
}

/* The setting its shmem_enabled shows in brackets, into @buf. */
static int mthp_get_shmem(char *buf, size_t len)
{
	char line[256], *open_br, *close_br;
	FILE *f = fopen(mthp_file("shmem_enabled"), "r");
	int ok = f && fgets(line, sizeof(line), f) &&
		 (open_br = strchr(line, '[')) &&
		 (close_br = strchr(open_br, ']')) &&
		 (size_t)(close_br - open_br) <= len;

	if (ok) {
		*close_br = 0;
		strcpy(buf, open_br + 1);
	}
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* Write @value to its shmem_enabled; 0 on success. */
static int mthp_set_shmem(const char *value)
{
	int fd = open(mthp_file("shmem_enabled"), O_WRONLY);
	int ok = fd >= 0 && write(fd, value, strlen(value)) ==
			    (ssize_t)strlen(value);

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/*
 * The same with mTHP folios of MTHP_PAGES pages (64 KiB with 4 KiB pages).
 * In this kernel shmem gives them only to shared anonymous memory, whose
 * file a process reaches through /proc/self/map_files: a mapping of 16 of
 * them is filled with those folios (its shmem_enabled set to
 * always for the case), paged out whole (the size's swpout counter must grow),
 * and collapsed or inserted at page 1 through that file, whose pages
 * then move off their folios' alignment.  A read of the whole file, in a
 * child given PAGEOUT_HUGE_SECONDS, must give each page's tag where the
 * shift put it.  The segment is a tmpfs file whatever the filesystem
 * under test: the case runs on the plain tmpfs row.
 */
void case_pageout_mthp(int mode, const char *name)
{
	long long pg = sysconf(_SC_PAGESIZE), size = 16 * MTHP_PAGES * pg;
	long long allocs, swapped, pages_out, i, got_size;
	unsigned char *map, *got = NULL;
	char file[128], was[32];
	const char *skip = NULL;
	int fd = -1, answer = EIO;

	if (!on_tmpfs() || on_huge_tmpfs()) {
		report(name, ANSWER_SKIP, 0, 0,
		       "shared anonymous memory is a tmpfs file whatever the filesystem under test: the case runs on the plain tmpfs row");
		return;
	}
	if (mthp_get_shmem(was, sizeof(was)) || mthp_set_shmem("always")) {
		fail("setup: cannot write %s: %s", mthp_file("shmem_enabled"),
		     strerror(errno));
		report(name, answer, 0, 0, NULL);
		return;
	}
	allocs = mthp_read("stats/shmem_alloc");
	map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < size; i += pg)
		fill(map + i, TAG_DATA, i, pg);
	allocs = mthp_read("stats/shmem_alloc") - allocs;
	swapped = mthp_read("stats/swpout");
	pages_out = proc_number("/proc/vmstat", "pswpout ");
	if (madvise(map, size, MADV_PAGEOUT))
		fail("madvise(MADV_PAGEOUT): %s", strerror(errno));
	swapped = mthp_read("stats/swpout") - swapped;
	pages_out = proc_number("/proc/vmstat", "pswpout ") - pages_out;
	printf("# %s: %lld %lld KiB folios allocated, %lld swapped out whole, %lld pages out\n",
	       name, allocs, MTHP_PAGES * pg / 1024, swapped, pages_out);
	/*
	 * Without CONFIG_THP_SWAP (arm64 offers it with 4 KiB pages only)
	 * reclaim splits a large folio before it swaps it out: the pages go
	 * out, no folio goes whole, and the case has nothing to test.
	 */
	if (allocs >= 1 && swapped == 0 && pages_out > 0) {
		skip = "large folios are split before they go to swap (no CONFIG_THP_SWAP)";
		answer = ANSWER_SKIP;
		goto unmap;
	}
	if (allocs < 1 || swapped < 1)
		fail("setup: no %lld KiB folio went to swap whole",
		     MTHP_PAGES * pg / 1024);

	snprintf(file, sizeof(file), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)map, (unsigned long)(map + size));
	fd = open(file, O_RDWR);
	if (fd < 0) {
		fail("open %s: %s", file, strerror(errno));
		goto unmap;
	}
	answer = xfallocate(fd, mode, pg, pg);
	if (answer)
		goto unmap;
	got_size = mode == COLLAPSE ? size - pg : size + pg;
	got = mmap(NULL, got_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (got == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		goto unmap;
	}
	if (!read_in_child(fd, got, got_size)) {
		unsigned char *want = malloc(pg);

		for (i = 0; want && i < got_size; i += pg) {
			long long from = i < pg ? i :
					 mode == COLLAPSE ? i + pg : i - pg;

			if (mode == INSERT && i == pg)
				memset(want, 0, pg);
			else
				fill(want, TAG_DATA, from, pg);
			if (memcmp(got + i, want, pg)) {
				fail("page %lld after the shift is not what the model says",
				     i / pg);
				break;
			}
		}
		free(want);
	}
	munmap(got, got_size);
unmap:
	if (fd >= 0)
		close(fd);
	munmap(map, size);
out:
	if (mthp_set_shmem(was))
		fail("cannot set %s back to %s", mthp_file("shmem_enabled"),
		     was);
	report(name, answer, 0, 0, skip);
}
