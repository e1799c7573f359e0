/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sectors read so far from the disk a file is on, from its block device's
 * /sys/dev/block/MAJOR:MINOR/stat: fcheck and fsmodel use it to prove that
 * reading a file back came from the page cache alone.
 */
#ifndef SECTORS_READ_H
#define SECTORS_READ_H

#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* Sectors read so far from the disk @fd is on, or -1 if none (tmpfs). */
static inline long long sectors_read(int fd)
{
	long long ios, merges, sectors = -1;
	char stat_path[64];
	struct stat st;
	FILE *f;

	if (fstat(fd, &st))
		return -1;
	snprintf(stat_path, sizeof(stat_path), "/sys/dev/block/%u:%u/stat",
		 major(st.st_dev), minor(st.st_dev));
	f = fopen(stat_path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld %lld %lld", &ios, &merges, &sectors) != 3)
		sectors = -1;
	fclose(f);
	return sectors;
}

#endif
