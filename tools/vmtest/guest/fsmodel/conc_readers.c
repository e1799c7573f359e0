// SPDX-License-Identifier: GPL-2.0
/*
 * fsmodel: the reader classes of the concurrent run's second part besides
 * pread and loads through the mapping.  Each reads [off, off + len) of
 * fsmodel.reads the way one kind of kernel reader does, into the reader's
 * buffer, and conc_judge.c judges it as a pread, a page a granule:
 *
 *   splice           ->splice_read into a pipe of READ_PAGES pages, read
 *                    back
 *   sendfile         ->splice_read through do_splice_direct(), into a
 *                    memfd, read back
 *   copy_file_range  the same, or ->remap_file_range (xfs), into a file of
 *                    the same filesystem, read back
 *   RWF_NOWAIT       preadv2(RWF_NOWAIT): EAGAIN is counted and the read
 *                    made again without it; a short read is finished by
 *                    pread from where it stopped, as its caller would
 *                    (a pread where the file refuses the flag)
 *   io_uring         one IORING_OP_READ, one time in eight of a range
 *                    just dropped from the page cache, so that its first
 *                    attempt finds folios locked for I/O (IOCB_WAITQ)
 *
 * sendfile, io_uring and RWF_NOWAIT's finishing pread are more than one
 * call into the filesystem: a read that stopped at the old EOF of an
 * insert goes on over the grown file, and one that stopped at a page
 * boundary past the new EOF of a collapse ends there; and sendfile and
 * copy_file_range may copy less than asked (xfs remaps whole blocks only).
 * See two_calls() and cut_short() in conc_judge.c.
 */

#include "fsmodel.h"

/* How long an io_uring read may take before it is called lost (s). */
#define URING_TIMEOUT	20

/*
 * Open what @rd's classes read through and into: the copy target is a
 * file beside fsmodel.reads, or a memfd where that is one (--memfd) or
 * shared anonymous memory (-A): both live on the kernel's internal tmpfs,
 * and copy_file_range() copies within one filesystem.
 */
int readers_open(struct reader *rd, const struct target *t)
{
	char name[PATH_MAX], probe;

	rd->send_fd = rd->copy_fd = rd->ring.fd = -1;
	if (pipe(rd->pipefd) ||
	    fcntl(rd->pipefd[1], F_SETPIPE_SZ, READ_PAGES * pagesz) < 0) {
		note("a pipe of %d pages: %s", READ_PAGES, strerror(errno));
		return -1;
	}
	rd->send_fd = memfd_create("fsmodel.sendfile", 0);
	snprintf(name, sizeof(name), "%s/fsmodel.copy%d", dir, rd->id);
	rd->copy_fd = memfd_mode || anon_reads ?
		      memfd_create("fsmodel.copy", 0) :
		      open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (rd->send_fd < 0 || rd->copy_fd < 0) {
		note("the sendfile and copy_file_range targets: %s",
		     strerror(errno));
		return -1;
	}
	if (uring_setup(&rd->ring, 1)) {
		note("io_uring_setup: %s", strerror(errno));
		return -1;
	}
	/*
	 * A file without FMODE_NOWAIT (tmpfs's, in this kernel) refuses
	 * RWF_NOWAIT with EOPNOTSUPP: its reads of that class are preads,
	 * and the run reports the refusal instead of the class's count.
	 */
	rd->nowait_refused = preadv2(t->fd, &(struct iovec){ &probe, 1 }, 1, 0,
				     RWF_NOWAIT) < 0 && errno == EOPNOTSUPP;
	return 0;
}

void readers_close(struct reader *rd)
{
	char name[PATH_MAX];

	close(rd->pipefd[0]);
	close(rd->pipefd[1]);
	close(rd->send_fd);
	close(rd->copy_fd);
	close(rd->ring.fd);
	if (!memfd_mode && !anon_reads) {
		snprintf(name, sizeof(name), "%s/fsmodel.copy%d", dir, rd->id);
		unlink(name);
	}
}

/* Read back the @n bytes a sendfile or copy_file_range wrote to @fd. */
static long long read_back(int fd, unsigned char *buf, long long n)
{
	return n > 0 && pread_all(fd, buf, n, 0) != n ? -EIO : n;
}

/* One IORING_OP_READ of @a into @buf: its result, or -ETIME if lost. */
static long long uring_read(struct reader *rd, const struct target *t,
			    const struct access *a, unsigned char *buf)
{
	struct uring *u = &rd->ring;
	unsigned int tail = *u->sq_tail, idx = tail & *u->sq_mask, head;
	struct io_uring_sqe *sqe = &u->sqes[idx];
	long long res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = t->fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = a->len;
	sqe->off = a->off;
	u->sq_array[idx] = idx;
	__atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (uring_enter(u, 1, 1, URING_TIMEOUT) < 0 && errno != ETIME &&
	    errno != EINTR)
		return -errno;
	for (;;) {
		head = *u->cq_head;
		if (head != __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE))
			break;
		if (uring_enter(u, 0, 1, URING_TIMEOUT) < 0 && errno == ETIME)
			return -ETIME;
	}
	res = u->cqes[head & *u->cq_mask].res;
	__atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

/* preadv2(RWF_NOWAIT), finished or made again by pread as its caller would. */
static long long nowait_read(struct reader *rd, const struct target *t,
			     const struct access *a, unsigned char *buf)
{
	struct iovec iov = { buf, a->len };
	ssize_t n = preadv2(t->fd, &iov, 1, a->off, RWF_NOWAIT), m;

	if (n < 0 && errno != EAGAIN)
		return -errno;
	if (n < 0) {
		rd->tally.again++;
		n = 0;
	}
	if (n == a->len)
		return n;
	m = pread(t->fd, buf + n, a->len - n, a->off + n);
	return m < 0 ? -errno : n + m;
}

/*
 * Read @a (a kind from A_SPLICE on) of @t by its class into @buf; a->got
 * is the bytes read.  -1, noted, if a call fails: none may.
 */
int read_by(struct reader *rd, const struct target *t, struct access *a,
	    unsigned char *buf)
{
	loff_t in = a->off, at = 0;
	long long n;

	switch (a->kind) {
	case A_SPLICE:
		/* No more than the pipe holds, so that it is never short. */
		if (a->len > READ_PAGES * pagesz - a->off % pagesz)
			a->len = READ_PAGES * pagesz - a->off % pagesz;
		n = splice(t->fd, &in, rd->pipefd[1], NULL, a->len, 0);
		if (n < 0)
			n = -errno;
		else if (n > 0 && read(rd->pipefd[0], buf, n) != n)
			n = -EIO;
		break;
	/*
	 * Into the start of the target, over what the last read left there:
	 * only the bytes a call reports are read back, and an overwrite
	 * spares the disk rows a truncate and a new allocation per read.
	 */
	case A_SENDFILE:
		if (lseek(rd->send_fd, 0, SEEK_SET)) {
			n = -errno;
			break;
		}
		n = sendfile(rd->send_fd, t->fd, &in, a->len);
		n = n < 0 ? -errno : read_back(rd->send_fd, buf, n);
		break;
	case A_COPY:
		n = copy_file_range(t->fd, &in, rd->copy_fd, &at, a->len, 0);
		n = n < 0 ? -errno : read_back(rd->copy_fd, buf, n);
		break;
	case A_NOWAIT:
		n = rd->nowait_refused ? pread(t->fd, buf, a->len, a->off) :
		    nowait_read(rd, t, a, buf);
		if (rd->nowait_refused)
			n = n < 0 ? -errno : n;
		break;
	case A_URING:
		if (a->whence)
			posix_fadvise(t->fd, a->off, a->len, POSIX_FADV_DONTNEED);
		n = uring_read(rd, t, a, buf);
		break;
	default:
		n = -EINVAL;
	}
	a->got = n;
	if (n >= 0)
		return 0;
	note("%s off=%lld len=%lld: %s", access_names[a->kind], a->off, a->len,
	     n == -ETIME && a->kind == A_URING ?
	     "never completed" : strerror(-n));
	return -1;
}
