// SPDX-License-Identifier: GPL-2.0
/*
 * fsmodel: the crash workload (--crash-workload), which logs every step
 * until the machine is rebooted under it, and its checker
 * (--crash-check), which judges what the disk kept.
 */

#include "fsmodel.h"

#include <linux/dm-ioctl.h>
#include <sys/ioctl.h>

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
 * With -L, every line is also a mark in the dm-log-writes log of the
 * filesystem's device (`make crashreplay`), without "crash NAME" and the
 * time, commas for spaces: "start,7,collapse".  The workload then ends
 * after its last operation instead of waiting for a crash.
 */

#define TAG_OTHER	'O'	/* the second file's data */
#define TAG_SECRET	'S'	/* the deleted file's, left in freed blocks */
#define OTHER_BYTES	(64 * 1024)
#define SECRET_BYTES	(2 * 1024 * 1024)

static int log_fd = -1, sysrq_fd = -1;
const char *crash_at;		/* -X before, during or after; NULL: none */
long long crash_shift;		/* -T: at the valid shift numbered this */
char *crash_others;		/* -F: the workloads the crash must find busy */
const char *mark_dev;		/* -L: the dm-log-writes device to mark */
static int progress_fd = -1;

/*
 * Log @text as a mark in the dm-log-writes log: after the writes that
 * completed before it, before those of anything this process does next.
 * The target takes one word, hence no spaces.
 */
static int dm_mark(const char *text)
{
	char buf[sizeof(struct dm_ioctl) + sizeof(struct dm_target_msg) + 512];
	struct dm_ioctl *io = (struct dm_ioctl *)buf;
	struct dm_target_msg *msg = (struct dm_target_msg *)(io + 1);
	static int control = -1;	/* /dev/mapper/control, for every mark */
	char *p;
	int e = 0;

	memset(buf, 0, sizeof(buf));
	io->version[0] = DM_VERSION_MAJOR;
	io->data_size = sizeof(buf);
	io->data_start = sizeof(*io);
	snprintf(io->name, sizeof(io->name), "%s", mark_dev);
	snprintf(msg->message, sizeof(buf) - sizeof(*io) - sizeof(*msg),
		 "mark %s", text);
	for (p = msg->message + 5; *p; p++)
		if (*p == ' ')
			*p = ',';
	if (control < 0)
		control = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
	if (control < 0 || ioctl(control, DM_TARGET_MSG, io))
		e = errno;
	if (e)
		fprintf(stderr, "fsmodel: mark %s on %s: %s\n", text, mark_dev,
			strerror(e));
	return e ? -1 : 0;
}

/* One line of the crash log, on its way out before the caller goes on. */
static void crash_log(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "crash %s ", fs_name), text = n;
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 32, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 32)
		n = sizeof(line) - 32;
	if (mark_dev && dm_mark(line + text))
		exit(1);
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
	if (mark_dev)
		return 0;
	for (;;)
		pause();
}

int crash_workload(const char *log)
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
	 * included), which fails the run.  With -L it ends, and only its
	 * exit status 0 passes.
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
	return mark_dev && pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}

/*
 * The checker's rules (docs/design.rst, "crash"), for the operations
 * D+1..J after the last durable one, each applied or not:
 *
 * Blocks.  The model follows which block holds what: a write to a block
 * that is a hole (or past EOF) gives it a new token, the block the
 * filesystem allocates for it, and a store through the mapping gives one
 * to every hole of each folio it touches, up to EOF: the folio is written
 * back whole, so the blocks of its zeros are allocated too, where the
 * model reads a hole.  That is a page with ext4 (blocks of 1 KiB), and
 * with xfs any hole below EOF, since its large folios (iomap) may span
 * the whole file;
 * an overwrite keeps the token, written in place; punch and truncate drop the tokens of the whole blocks they free;
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

/* Whether the page cache of the file may hold folios larger than a page. */
static int large_folios;

/* What @op, in a file of @size bytes, does to the tokens @tk of the blocks. */
static void tok_apply(int *tk, long long nblk, const struct op *op,
		      long long size, int *next)
{
	long long b, end, sh;

	if (op->expect)
		return;
	switch (op->kind) {
	case K_PWRITE:
	case K_MWRITE:
		b = op->off / blksz;
		end = (op->off + op->len + blksz - 1) / blksz;
		if (op->kind == K_MWRITE && large_folios) {
			b = 0;
			end = (size + blksz - 1) / blksz;
		} else if (op->kind == K_MWRITE) {
			b = op->off / pagesz * pagesz / blksz;
			end = (op->off + op->len + pagesz - 1) / pagesz * pagesz;
			end = (clamp(end, 0, size) + blksz - 1) / blksz;
		}
		for (; b < end && b < nblk; b++)
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
void crash_check(long long durable, long long last)
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
	large_folios = cs.xfs;
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
			tok_apply(tok, cs.nblk, &op, m.size, &next);
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
