// SPDX-License-Identifier: GPL-2.0
/*
 * fsmodel: the file under test: open, map, remount, run an operation on
 * it and compare what it answers with the model, the probe of what the
 * filesystem offers, and the memory pressure of -P.
 */

#include "fsmodel.h"

/* ------------------------------------------------------------------ */
/* The file under test. */

/*
 * Copy to or from the mapping.  A page past EOF raises SIGBUS, which a
 * kernel that loses track of the size would cause: it becomes a failure
 * with a note, not a dead checker.
 */
__thread sigjmp_buf bus_jump;
__thread volatile sig_atomic_t bus_armed;

void on_sigbus(int sig)
{
	if (!bus_armed) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	siglongjmp(bus_jump, 1);
}

int map_copy(void *dst, const void *src, long long n, long long off)
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

int xfallocate(int fd, int mode, long long off, long long len)
{
	return fallocate(fd, mode, off, len) ? errno : 0;
}

int pwrite_all(int fd, const unsigned char *buf, long long len,
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
long long pread_all(int fd, unsigned char *buf, long long len,
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
int open_target(struct target *t, int create)
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

void close_target(struct target *t)
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
int mode_of(const struct op *op)
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
int step(struct target *t, struct state *m, struct op *op)
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
int check_file(struct target *t, const struct state *m, const char *when)
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
/* Setup shared by the modes. */

/* DIR/FILE, or with --memfd the memfd's name, which shows in /proc/PID/fd. */
void name_target(struct target *t, const char *file)
{
	snprintf(t->path, sizeof(t->path), "%s%s%s", memfd_mode ? "" : dir,
		 memfd_mode ? "" : "/", file);
}

int setup_target(struct target *t, const char *file)
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
void probe(struct target *t)
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
long long *pressure_loops;	/* shared with the touching child */

/* A field of /proc/meminfo (kB) or /proc/vmstat; -1 if absent. */
long long proc_field(const char *file, const char *key)
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

int start_pressure(void)
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
int stop_pressure(void)
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
long long pages_swapped(struct target *t, const struct state *m)
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
