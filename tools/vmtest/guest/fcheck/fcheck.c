// SPDX-License-Identifier: GPL-2.0
/*
 * fcheck: conformance cases for fallocate(FALLOC_FL_COLLAPSE_RANGE) and
 * fallocate(FALLOC_FL_INSERT_RANGE) on one mounted filesystem.
 *
 * usage: fcheck -f NAME -d DIR -u UNIT -b BLOCK -s full|none [-x TOOLDIR] [-B]
 *
 * UNIT is the allocation unit (block, or cluster with ext4 bigalloc),
 * BLOCK the block size; "-s none" means the filesystem does not offer the
 * two flags, so every call the VFS passes on must fail with EOPNOTSUPP.
 * -B leaves st_blocks out of the comparison with the model: on tmpfs with
 * huge pages it counts whole huge folios, and the zeroed pages a hole
 * punched inside one keeps when the folio cannot be split.
 *
 * Every case builds a fresh file whose contents are known: written bytes
 * encode their original offset, holes and preallocated ranges read zero.
 * The same operation is applied to an in-memory model of the file (bytes,
 * size, allocated units); the file must match the model byte by byte, in
 * size and in st_blocks.  A failed call must change nothing.  The expected
 * answers come from fallocate(2) and the VFS rules (docs/design.rst), never
 * from the code under test.
 *
 * Output is TAP on stdout, one line per case:
 *   ok N - NAME CASE answer=A expect=E model=M
 * A is what the filesystem answered (OK, an errno name, or SKIP), E what
 * this filesystem must answer, M what a filesystem supporting the flags
 * answers (the side-by-side table compares A with M).
 *
 * This file holds the options and the order in which the cases run;
 * fcheck.h says which file holds what.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcheck.h"

/* The options: what is under test, and how. */
const char *fs_name, *dir, *tooldir = "/usr/sbin";
long long unit, blksz;
int supported;
int blocks_exact = 1;	/* -B clears it */

/* ------------------------------------------------------------------ */

static void usage(void)
{
	fprintf(stderr, "usage: fcheck -f NAME -d DIR -u UNIT -b BLOCK -s full|none [-x TOOLDIR] [-B]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *support = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "f:d:u:b:s:x:B")) != -1) {
		switch (opt) {
		case 'f':
			fs_name = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'u':
			unit = atoll(optarg);
			break;
		case 'b':
			blksz = atoll(optarg);
			break;
		case 's':
			support = optarg;
			break;
		case 'x':
			tooldir = optarg;
			break;
		case 'B':
			blocks_exact = 0;
			break;
		default:
			usage();
		}
	}
	if (!fs_name || !dir || unit < 1024 || blksz < 512 || !support)
		usage();
	supported = !strcmp(support, "full");
	if (!supported && strcmp(support, "none"))
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# fcheck: %s in %s, unit %lld, block %lld, flags %s\n",
	       fs_name, dir, unit, blksz, supported ? "supported" :
	       "not supported (EOPNOTSUPP expected)");

	run_shift_cases();
	case_block_not_unit(COLLAPSE, "collapse_block_not_unit");
	case_block_not_unit(INSERT, "insert_block_not_unit");
	case_maxbytes(INSERT, 0, "insert_past_maxbytes");
	case_maxbytes(INSERT, 1, "insert_range_past_maxbytes");
	case_maxbytes(COLLAPSE, 1, "collapse_range_past_maxbytes");
	case_far_sparse(INSERT, "insert_far_sparse");
	case_stale(COLLAPSE, "stale_collapse");
	case_stale(INSERT, "stale_insert");
	case_mmap(COLLAPSE, "mmap_collapse");
	case_mmap(INSERT, "mmap_insert");
	case_cache_kept(COLLAPSE, "cache_kept_collapse");
	case_cache_kept(INSERT, "cache_kept_insert");
	case_store_during_shift(COLLAPSE, "store_during_collapse");
	case_store_during_shift(INSERT, "store_during_insert");
	case_read_during_shift(COLLAPSE, "read_during_collapse");
	case_read_during_shift(INSERT, "read_during_insert");
	case_pageout(COLLAPSE, "pageout_collapse");
	case_pageout(INSERT, "pageout_insert");
	case_pageout_huge(COLLAPSE, 1, "pageout_huge_collapse");
	case_pageout_huge(INSERT, 1, "pageout_huge_insert");
	case_pageout_huge(COLLAPSE, 511, "pageout_huge_collapse_tail");
	case_pageout_mthp(COLLAPSE, "pageout_mthp_collapse");
	case_pageout_mthp(INSERT, "pageout_mthp_insert");
	case_userfaultfd(COLLAPSE, "userfaultfd_collapse");
	case_userfaultfd(INSERT, "userfaultfd_insert");
	case_sysv_shm(COLLAPSE, "sysv_shm_collapse");
	case_sysv_shm(INSERT, "sysv_shm_insert");
	case_memcg(COLLAPSE, "memcg_collapse");
	case_memcg(INSERT, "memcg_insert");
	case_reflink(COLLAPSE, 1, "reflink_collapse_clone");
	case_reflink(INSERT, 1, "reflink_insert_clone");
	case_reflink(COLLAPSE, 0, "reflink_collapse_source");
	case_reflink(INSERT, 0, "reflink_insert_source");
	case_tool("xfs_io", COLLAPSE, 3 * unit, 2 * unit, 0, "tool_xfs_io_fcollapse");
	case_tool("xfs_io", INSERT, 3 * unit, 2 * unit, 0, "tool_xfs_io_finsert");
	case_tool("fallocate", COLLAPSE, 3 * unit, 2 * unit, 0,
		  "tool_fallocate_collapse");
	case_tool("fallocate", INSERT, 3 * unit, 2 * unit, 0,
		  "tool_fallocate_insert");
	case_tool("xfs_io", COLLAPSE, 10 * unit, 2 * unit, EINVAL,
		  "tool_xfs_io_fcollapse_eof");
	case_tool("fallocate", INSERT, 3 * unit + unit / 2, unit, EINVAL,
		  "tool_fallocate_insert_unaligned");

	printf("1..%d\n", ntest);
	printf("# fcheck: %s: %d cases, %d failed\n", fs_name, ntest, nfail);
	return nfail ? 1 : 0;
}
