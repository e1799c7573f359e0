// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: shmem beyond a tmpfs file: a SysV segment, and the memory
 * cgroup charged for the file's pages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fcheck.h"

/*
 * A SysV shared memory segment is a shmem file no directory names; as
 * root, /proc/self/map_files opens it through its attachment.  The shift
 * must work there as on tmpfs, and the attachment see it.  The segment
 * does not depend on the filesystem under test: the case runs on the tmpfs
 * rows.
 */
void case_sysv_shm(int mode, const char *name)
{
	long long pg = sysconf(_SC_PAGESIZE), size = 12 * pg, off = 3 * pg;
	long long len = 2 * pg, i, n;
	char mapfile[64];
	struct model m;
	unsigned char *seg;
	int id, fd, answer;

	if (!on_tmpfs() || unit != pg) {
		report(name, ANSWER_SKIP, 0, 0,
		       "a SysV segment is a tmpfs file: run on the tmpfs rows");
		return;
	}
	memset(&m, 0, sizeof(m));
	id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	seg = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);	/* gone at the detach */
	if (seg == (void *)-1) {
		fail("shmget/shmat: %s", strerror(errno));
		report(name, EIO, 0, 0, NULL);
		return;
	}
	model_resize(&m, size);
	fill(m.data, TAG_DATA, 0, size);
	memcpy(seg, m.data, size);
	memset(m.alloc, 1, m.nunits);
	snprintf(mapfile, sizeof(mapfile), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)seg, (unsigned long)(seg + size));
	fd = open(mapfile, O_RDWR);
	if (fd < 0) {
		fail("open %s: %s", mapfile, strerror(errno));
		shmdt(seg);
		model_free(&m);
		report(name, EIO, 0, 0, NULL);
		return;
	}
	answer = xfallocate(fd, mode, off, len);
	model_shift(&m, answer, mode, off, len);
	/* The attachment keeps its length: past the new EOF is SIGBUS. */
	n = m.size < size ? m.size : size;
	for (i = 0; i < n; i++) {
		if (!answer && mode == INSERT && i >= off && i < off + len)
			continue;	/* a read fault would fill the hole */
		if (seg[i] != m.data[i]) {
			fail("attachment: byte %lld is 0x%02x, expected 0x%02x",
			     i, seg[i], m.data[i]);
			break;
		}
	}
	verify(fd, &m, 0, 1, "after the call");
	close(fd);
	shmdt(seg);
	model_free(&m);
	report(name, answer, 0, 0, NULL);
}

/* ------------------------------------------------------------------ */
/*
 * Memory cgroup charge (tmpfs rows): the file's pages are charged to the
 * cgroup of the process that wrote them.  A collapse frees the pages of
 * the range, so the cgroup's memory.current must drop by them; an insert
 * moves pages and allocates none, so it must stay.  memory.current is the
 * exact page counter, but the cgroup also pays for its process's other
 * memory (page tables, slab objects such as xarray nodes, charged in
 * batches), hence a margin of MEMCG_MARGIN pages, far below the 512 pages
 * at stake.  The case runs pinned to one CPU: a charge takes a batch of
 * 64 pages (MEMCG_CHARGE_BATCH) into the per-CPU stock of the CPU it runs
 * on, so a call on a second CPU would add a whole batch to memory.current.
 */
#define MEMCG_DIR	"/sys/fs/cgroup"
#define MEMCG_MARGIN	32

static long long cgroup_read(const char *file)
{
	char p[128], line[64] = "";
	FILE *f;

	snprintf(p, sizeof(p), MEMCG_DIR "/fcheck/%s", file);
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return line[0] ? atoll(line) : -1;
}

static int cgroup_write(const char *file, const char *what)
{
	int fd = open(file, O_WRONLY), e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, what, strlen(what)) < 0)
		e = errno;
	close(fd);
	return e;
}

/* Move this process into cgroup MEMCG_DIR/fcheck, with the memory
 * controller on: 0, or -1 and the case fails (kconfig/guest.config turns
 * on CONFIG_MEMCG, so the tmpfs rows never lack it).
 */
static int enter_memcg(void)
{
	char pid[32];
	int e;

	mkdir(MEMCG_DIR, 0755);
	if (access(MEMCG_DIR "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", MEMCG_DIR, "cgroup2", 0, NULL)) {
		fail("mount cgroup2: %s", strerror(errno));
		return -1;
	}
	e = cgroup_write(MEMCG_DIR "/cgroup.subtree_control", "+memory");
	if (e) {
		fail("+memory in cgroup.subtree_control: %s", strerror(e));
		return -1;
	}
	if (mkdir(MEMCG_DIR "/fcheck", 0755) && errno != EEXIST) {
		fail("mkdir " MEMCG_DIR "/fcheck: %s", strerror(errno));
		return -1;
	}
	snprintf(pid, sizeof(pid), "%d", getpid());
	e = cgroup_write(MEMCG_DIR "/fcheck/cgroup.procs", pid);
	if (e) {
		fail("join " MEMCG_DIR "/fcheck: %s", strerror(e));
		return -1;
	}
	return 0;
}

static void leave_memcg(void)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	cgroup_write(MEMCG_DIR "/cgroup.procs", pid);
	rmdir(MEMCG_DIR "/fcheck");
}

void case_memcg(int mode, const char *name)
{
	long long pg = sysconf(_SC_PAGESIZE), size = 1024 * pg;
	long long off = (mode == COLLAPSE ? 0 : 512) * pg, len = 512 * pg;
	long long before, after, want;
	cpu_set_t one_cpu, all_cpus;
	unsigned char *buf;
	int fd = -1, answer = EIO;

	if (!on_tmpfs()) {
		report(name, ANSWER_SKIP, 0, 0,
		       "the page cache is the file only on tmpfs");
		return;
	}
	if (sched_getaffinity(0, sizeof(all_cpus), &all_cpus)) {
		fail("sched_getaffinity: %s", strerror(errno));
		report(name, answer, 0, 0, NULL);
		return;
	}
	set_paths(name);
	buf = malloc(size);
	CPU_ZERO(&one_cpu);
	CPU_SET(sched_getcpu(), &one_cpu);
	if (sched_setaffinity(0, sizeof(one_cpu), &one_cpu)) {
		fail("pin to one CPU: %s", strerror(errno));
		goto out;
	}
	if (!buf || enter_memcg())
		goto out;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	fill(buf, TAG_DATA, 0, size);
	if (fd < 0 || pwrite_all(fd, buf, size, 0)) {
		fail("setup: write %s", path);
		goto out;
	}
	before = cgroup_read("memory.current");
	answer = xfallocate(fd, mode, off, len);
	after = cgroup_read("memory.current");
	want = before - (!answer && mode == COLLAPSE ? len : 0);
	printf("# %s: memory.current %lld kB before, %lld kB after, %lld kB expected (margin %lld kB)\n",
	       name, before / 1024, after / 1024, want / 1024,
	       MEMCG_MARGIN * pg / 1024);
	if (before < size)
		fail("memory.current %lld: the file's %lld bytes are not charged here",
		     before, size);
	else if (llabs(after - want) > MEMCG_MARGIN * pg)
		fail("memory.current %lld after the call, expected %lld +- %lld",
		     after, want, MEMCG_MARGIN * pg);
out:
	if (fd >= 0)
		close(fd);
	unlink(path);
	leave_memcg();
	sched_setaffinity(0, sizeof(all_cpus), &all_cpus);
	free(buf);
	report(name, answer, 0, 0, NULL);
}
