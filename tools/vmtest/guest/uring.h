/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A raw io_uring, with no library: io_uring_setup() and the three rings
 * mapped, and io_uring_enter() with a timeout.  fcheck's and fsmodel's
 * io_uring readers submit IORING_OP_READs through it.
 */
#ifndef URING_H
#define URING_H

#include <linux/io_uring.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* An io_uring: its fd and its rings, mapped. */
struct uring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

/* Set up @u with room for @entries requests: 0, or -1 with errno set. */
static inline int uring_setup(struct uring *u, unsigned int entries)
{
	struct io_uring_params p = { 0 };
	char *sq, *cq;

	u->fd = syscall(__NR_io_uring_setup, entries, &p);
	if (u->fd < 0)
		return -1;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(*u->cqes),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		  IORING_OFF_CQ_RING);
	u->sqes = mmap(NULL, p.sq_entries * sizeof(*u->sqes),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
		       IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || u->sqes == MAP_FAILED)
		return -1;
	u->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	u->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	u->sq_array = (unsigned int *)(sq + p.sq_off.array);
	u->cq_head = (unsigned int *)(cq + p.cq_off.head);
	u->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	u->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	u->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/*
 * Submit @submit requests and wait for @wait completions, at most
 * @timeout_s seconds: io_uring_enter()'s answer (-1 and ETIME: timed out).
 */
static inline int uring_enter(struct uring *u, unsigned int submit,
			      unsigned int wait, long timeout_s)
{
	struct __kernel_timespec ts = { .tv_sec = timeout_s };
	struct io_uring_getevents_arg arg = { .ts = (uintptr_t)&ts };

	return syscall(__NR_io_uring_enter, u->fd, submit, wait,
		       IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &arg,
		       sizeof(arg));
}

#endif
