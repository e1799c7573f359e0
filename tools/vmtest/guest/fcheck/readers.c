// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: the reader classes of race.c's read_during_* cases.  Each reads
 * one window of the file the way one kind of kernel reader does, and
 * every read is judged whole: it must be what one state of the file holds
 * at that window, EOF included.
 *
 *   pread            ->read_iter, buffered
 *   splice           ->splice_read into a pipe
 *   sendfile         ->splice_read through the internal pipe of
 *                    do_splice_direct(), into a memfd
 *   copy_file_range  the same, or ->remap_file_range (xfs), into a file
 *                    of the same filesystem
 *   O_DIRECT         ->read_iter, direct
 *   io_uring         IORING_OP_READ, four in flight, each of a quarter of
 *                    the window dropped from the page cache just before,
 *                    so that the first attempt finds folios locked for
 *                    I/O and queues on them (IOCB_WAITQ)
 *
 * A read done by one call into the filesystem must be one state whole.
 * Three classes are not one call, and are judged by what each call can
 * be: do_splice_direct() (sendfile, copy_file_range) reads again after a
 * read that stopped at EOF, so its result may be pieces, each one state's
 * up to that state's EOF; copy_file_range also cuts its length at the EOF
 * it found before the copy (generic_copy_file_checks()), so its last piece
 * may stop at another state's EOF; io_uring finishes a short read with
 * another, so each page of its result may be a different state's, and its
 * length one state's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../uring.h"
#include "fcheck.h"

const char *const reader_name[NR_READERS] = {
	[BY_PREAD] = "pread",
	[BY_SPLICE] = "splice",
	[BY_SENDFILE] = "sendfile",
	[BY_COPY_RANGE] = "copy_file_range",
	[BY_DIRECT] = "O_DIRECT pread",
	[BY_IO_URING] = "io_uring read",
};

/* The requests an io_uring reader keeps in flight. */
#define URING_READS	4
/* How long a request may take before the reader calls it lost (s). */
#define URING_TIMEOUT	20

/* The end of a read of [@off, @off + @len) of the file @m. */
static long long read_end(const struct model *m, long long off, long long len)
{
	return m->size < off + len ? m->size : off + len;
}

/* Are the @n bytes read at @off what the file @m holds there? */
static int is_state(const unsigned char *buf, long long off, long long len,
		    long long n, const struct model *m)
{
	long long want = read_end(m, off, len) - off;

	return n == (want < 0 ? 0 : want) && !memcmp(buf, m->data + off, n);
}

/* Does a read of [@off, @off + @len) of some state end at @end? */
static int is_read_end(const struct reader *r, long long off, long long len,
		       long long end)
{
	int i;

	for (i = 0; i < READ_STATES; i++)
		if (end == read_end(r->states[i], off, len))
			return 1;
	return 0;
}

/*
 * Is [@pos, @end) of @buf (which holds the read from @off on) pieces, each
 * what one state holds up to where a read of that state ends, or, if
 * @cut, the last up to @end?
 */
static int is_pieces(const struct reader *r, const unsigned char *buf,
		     long long off, long long len, long long pos,
		     long long end, int cut)
{
	long long stop;
	int i;

	if (pos == end)
		return 1;
	for (i = 0; i < READ_STATES; i++) {
		stop = read_end(r->states[i], off, len);
		if (cut && stop > end)
			stop = end;
		if (stop > pos && stop <= end &&
		    !memcmp(buf + (pos - off), r->states[i]->data + pos,
			    stop - pos) &&
		    is_pieces(r, buf, off, len, stop, end, cut))
			return 1;
	}
	return 0;
}

/* Is each page of the read some state's, and its length one state's? */
static int is_pages(const struct reader *r, const unsigned char *buf,
		    long long off, long long len, long long n)
{
	long long pg = sysconf(_SC_PAGESIZE), p, q;
	int i, ends = is_read_end(r, off, len, off + n);

	for (p = off; ends && p < off + n; p = q) {
		q = (p / pg + 1) * pg < off + n ? (p / pg + 1) * pg : off + n;
		for (i = 0; i < READ_STATES; i++)
			if (r->states[i]->size >= q &&
			    !memcmp(buf + (p - off), r->states[i]->data + p,
				    q - p))
				break;
		if (i == READ_STATES)
			return 0;
	}
	return ends;
}

/* Judge one read of @len bytes at @off that gave @n (or -errno). */
static void judge(struct reader *r, const unsigned char *buf, long long off,
		  long long len, long long n)
{
	int i;

	r->reads++;
	for (i = 0; i < READ_STATES; i++)
		if (n >= 0 && is_state(buf, off, len, n, r->states[i]))
			return;
	if (n >= 0 && r->how == BY_SENDFILE &&
	    is_pieces(r, buf, off, len, off, off + n, 0))
		return;
	if (n >= 0 && r->how == BY_COPY_RANGE &&
	    is_pieces(r, buf, off, len, off, off + n,
		      is_read_end(r, off, len, off + n)))
		return;
	if (n >= 0 && r->how == BY_IO_URING && is_pages(r, buf, off, len, n))
		return;
	if (r->wrong++)
		return;
	if (n < 0)
		snprintf(r->first, sizeof(r->first), "%s(%lld, %lld) failed: %s",
			 reader_name[r->how], off, len, ename(-n));
	else
		snprintf(r->first, sizeof(r->first),
			 "%s(%lld, %lld) gave %lld bytes, what no state of the file holds there",
			 reader_name[r->how], off, len, n);
}

static void lost(struct reader *r, const char *what)
{
	if (!r->wrong++)
		snprintf(r->first, sizeof(r->first), "%s: %s",
			 reader_name[r->how], what);
}

/* Read all @n bytes of @fd at 0, the copy a reader made. */
static long long read_back(int fd, unsigned char *buf, long long n)
{
	return n > 0 && pread(fd, buf, n, 0) != n ? -EIO : n;
}

/* One read of the window by @r->how; bytes or -errno. */
static long long read_once(struct reader *r, unsigned char *buf, int out,
			   int pipefd[2])
{
	loff_t in = r->off, at = 0;
	ssize_t n;

	switch (r->how) {
	case BY_PREAD:
	case BY_DIRECT:
		n = pread(r->fd, buf, r->len, r->off);
		return n < 0 ? -errno : n;
	case BY_SPLICE:
		n = splice(r->fd, &in, pipefd[1], NULL, r->len, 0);
		if (n < 0)
			return -errno;
		return n > 0 && read(pipefd[0], buf, n) != n ? -EIO : n;
	case BY_SENDFILE:
		if (ftruncate(out, 0) || lseek(out, 0, SEEK_SET))
			return -errno;
		n = sendfile(out, r->fd, &in, r->len);
		return n < 0 ? -errno : read_back(out, buf, n);
	case BY_COPY_RANGE:
		if (ftruncate(out, 0))
			return -errno;
		n = copy_file_range(r->fd, &in, out, &at, r->len, 0);
		return n < 0 ? -errno : read_back(out, buf, n);
	default:
		return -EINVAL;
	}
}

/* The file descriptors a reader of @r->how reads through and into. */
static int open_reader(struct reader *r, int *out, int pipefd[2])
{
	*out = -1;
	pipefd[0] = pipefd[1] = -1;
	r->fd = open(path, r->how == BY_DIRECT ? O_RDONLY | O_DIRECT : O_RDONLY);
	if (r->fd < 0)
		return -1;
	if (r->how == BY_SPLICE)
		return pipe(pipefd);
	if (r->how == BY_SENDFILE)
		*out = memfd_create("fcheck-sendfile", 0);
	if (r->how == BY_COPY_RANGE)
		*out = open(path2, O_RDWR | O_CREAT | O_TRUNC, 0600);
	return (r->how == BY_SENDFILE || r->how == BY_COPY_RANGE) && *out < 0 ?
	       -1 : 0;
}

/*
 * One round of an io_uring reader: drop the window from the page cache,
 * queue a read of each quarter, and judge every completion: exactly one
 * for each request, its bytes a state of the file.  Returns 0, or -1 once
 * a request is lost (the reader stops: its buffers may still be written).
 */
static int uring_round(struct reader *r, struct uring *u, unsigned char *buf)
{
	long long quarter = r->len / URING_READS;
	unsigned int tail = *u->sq_tail, head, i, done = 0;
	int seen[URING_READS] = { 0 };

	posix_fadvise(r->fd, r->off, r->len, POSIX_FADV_DONTNEED);
	for (i = 0; i < URING_READS; i++) {
		unsigned int idx = (tail + i) & *u->sq_mask;
		struct io_uring_sqe *sqe = &u->sqes[idx];

		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_READ;
		sqe->fd = r->fd;
		sqe->addr = (uintptr_t)(buf + i * quarter);
		sqe->len = quarter;
		sqe->off = r->off + i * quarter;
		sqe->user_data = i;
		u->sq_array[idx] = idx;
	}
	__atomic_store_n(u->sq_tail, tail + URING_READS, __ATOMIC_RELEASE);
	if (uring_enter(u, URING_READS, 0, URING_TIMEOUT) != URING_READS) {
		lost(r, "io_uring_enter did not submit the reads");
		return -1;
	}
	while (done < URING_READS) {
		head = *u->cq_head;
		if (head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE)) {
			if (uring_enter(u, 0, 1, URING_TIMEOUT) < 0 && errno == ETIME) {
				lost(r, "a read never completed");
				return -1;
			}
			continue;
		}
		i = u->cqes[head & *u->cq_mask].user_data;
		if (i >= URING_READS || seen[i]++) {
			lost(r, "a completion for no request in flight");
			return -1;
		}
		judge(r, buf + i * quarter, r->off + i * quarter, quarter,
		      u->cqes[head & *u->cq_mask].res);
		__atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
		done++;
	}
	return 0;
}

void *read_loop(void *arg)
{
	struct reader *r = arg;
	int out, pipefd[2];
	unsigned char *buf;
	struct uring u = { .fd = -1 };

	if (posix_memalign((void **)&buf, 65536, r->len) ||
	    open_reader(r, &out, pipefd) ||
	    (r->how == BY_IO_URING && uring_setup(&u, URING_READS))) {
		r->setup_errno = errno;
		return NULL;
	}
	while (!*r->stop) {
		long before = *r->shifts, reads = r->reads;

		if (r->how == BY_IO_URING) {
			if (uring_round(r, &u, buf))
				return NULL;
		} else {
			judge(r, buf, r->off, r->len,
			      read_once(r, buf, out, pipefd));
		}
		/* Reads that a shift call provably overlapped, for the report. */
		if (before & 1 || *r->shifts != before)
			r->overlapped += r->reads - reads;
	}
	if (u.fd >= 0)
		close(u.fd);
	close(r->fd);
	if (out >= 0)
		close(out);
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	free(buf);
	return NULL;
}
