// SPDX-License-Identifier: GPL-2.0
/*
 * logreplay: the guest side of `make crashreplay`.  It sets up and removes
 * device-mapper devices (the dm-log-writes target that records a workload,
 * the snapshot each crash state is checked on), and replays a dm-log-writes
 * log onto a copy of the filesystem's first state, stopping at each crash
 * state to run a check.
 *
 * usage:
 *   logreplay create NAME SECTORS TARGET ARGS...
 *	one-target device NAME (TARGET over SECTORS 512-byte sectors, the
 *	target's ARGS joined by spaces); prints its node, /dev/dm-N
 *   logreplay remove NAME
 *   logreplay replay LOG DEV MARKS flush|write[:N|[+FIRST][/MAX]] CHECK...
 *	applies LOG's entries to DEV in order.  Each entry that ends a crash
 *	state (flush: a flush or FUA entry, the states fstests checks;
 *	write: every write, discard, flush or FUA entry) is followed by
 *	"CHECK... N ENTRY KIND", N counting the states from 1, with DEV's
 *	writes on the disk; the marks logged before ENTRY are then the
 *	lines of the file MARKS, one per mark, in order.  A check that exits
 *	non-zero stops the replay.  With ":N", state N alone is checked, and
 *	the replay stops there: a failure's state, repeated.  With "/MAX",
 *	the first MAX states alone are checked, and a log with fewer fails.
 *	With "+FIRST", the states before FIRST are replayed unchecked, so
 *	that guests can share the states of one long log.
 *
 * The log format is the one Documentation/admin-guide/device-mapper/
 * log-writes.rst describes and drivers/md/dm-log-writes.c writes: a super
 * block in the first sector, then per entry one sector of header (with a
 * mark's text after the header) and the entry's data sectors, in the
 * device's logical block size; entries are in the order the writes
 * completed, each flush after the writes it covered.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_FLUSH_FLAG		(1 << 0)
#define LOG_FUA_FLAG		(1 << 1)
#define LOG_DISCARD_FLAG	(1 << 2)
#define LOG_MARK_FLAG		(1 << 3)
#define LOG_MAGIC		0x6a736677736872ULL
#define LOG_VERSION		1

struct log_super {
	uint64_t magic;
	uint64_t version;
	uint64_t nr_entries;
	uint32_t sectorsize;
} __attribute__((packed));

struct log_entry {
	uint64_t sector;
	uint64_t nr_sectors;
	uint64_t flags;
	uint64_t data_len;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("logreplay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* A device-mapper ioctl on @name, with @len bytes of payload after it. */
static struct dm_ioctl *dm_request(const char *name, size_t len)
{
	size_t size = sizeof(struct dm_ioctl) + len + 4096;
	struct dm_ioctl *io = calloc(1, size);

	if (!io)
		die("out of memory");
	io->version[0] = DM_VERSION_MAJOR;
	io->data_size = size;
	io->data_start = sizeof(struct dm_ioctl);
	snprintf(io->name, sizeof(io->name), "%s", name);
	return io;
}

static void dm_call(unsigned long cmd, struct dm_ioctl *io, const char *what)
{
	int fd = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("/dev/mapper/control: %s", strerror(errno));
	if (ioctl(fd, cmd, io))
		die("%s %s: %s", what, io->name, strerror(errno));
	close(fd);
}

static int dm_create(const char *name, const char *sectors, char **args,
		     int nargs)
{
	struct dm_target_spec *spec;
	struct dm_ioctl *io;
	size_t len = 0;
	char *params;
	dev_t dev;
	int i;

	io = dm_request(name, 0);
	dm_call(DM_DEV_CREATE, io, "create");
	free(io);

	for (i = 1; i < nargs; i++)
		len += strlen(args[i]) + 1;
	io = dm_request(name, sizeof(*spec) + len + 8);
	io->target_count = 1;
	spec = (struct dm_target_spec *)((char *)io + io->data_start);
	spec->sector_start = 0;
	spec->length = strtoull(sectors, NULL, 10);
	snprintf(spec->target_type, sizeof(spec->target_type), "%s", args[0]);
	params = (char *)(spec + 1);
	for (i = 1; i < nargs; i++) {
		strcat(params, args[i]);
		if (i + 1 < nargs)
			strcat(params, " ");
	}
	dm_call(DM_TABLE_LOAD, io, "load the table of");
	free(io);

	/* DM_DEV_SUSPEND without DM_SUSPEND_FLAG resumes: the table is live. */
	io = dm_request(name, 0);
	dm_call(DM_DEV_SUSPEND, io, "resume");
	dev = io->dev;
	free(io);
	printf("/dev/dm-%u\n", minor(dev));
	return 0;
}

static int dm_remove(const char *name)
{
	struct dm_ioctl *io = dm_request(name, 0);

	dm_call(DM_DEV_REMOVE, io, "remove");
	free(io);
	return 0;
}

static void read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n != (ssize_t)len)
		die("reading the log at %llu: %s", (unsigned long long)off,
		    n < 0 ? strerror(errno) : "short read");
}

static void write_at(int fd, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(fd, buf, len, off);

	if (n != (ssize_t)len)
		die("writing the replay device at %llu: %s",
		    (unsigned long long)off, n < 0 ? strerror(errno) : "short write");
}

/* Run "CHECK... N ENTRY KIND"; its exit status. */
static int run_check(char **check, int ncheck, long long n, long long entry,
		     const char *kind)
{
	char sn[32], se[32];
	char **argv = calloc(ncheck + 4, sizeof(*argv));
	int status;
	pid_t pid;

	if (!argv)
		die("out of memory");
	memcpy(argv, check, ncheck * sizeof(*argv));
	snprintf(sn, sizeof(sn), "%lld", n);
	snprintf(se, sizeof(se), "%lld", entry);
	argv[ncheck] = sn;
	argv[ncheck + 1] = se;
	argv[ncheck + 2] = (char *)kind;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		die("running %s: %s", argv[0], strerror(errno));
	free(argv);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int replay(const char *log, const char *dev, const char *marks_path,
		  const char *mode, char **check, int ncheck)
{
	int every_write = !strncmp(mode, "write", 5);
	long long only = strchr(mode, ':') ? atoll(strchr(mode, ':') + 1) : 0;
	long long max = strchr(mode, '/') ? atoll(strchr(mode, '/') + 1) : 0;
	long long first = strchr(mode, '+') ? atoll(strchr(mode, '+') + 1) : 1;
	char *buf = NULL;
	uint64_t pos, i, states = 0;
	struct log_super super;
	struct log_entry e;
	size_t cap = 0, len;
	int lfd, dfd, rc;
	uint32_t ss;
	FILE *marks;

	if ((strncmp(mode, every_write ? "write" : "flush", 5) ||
	     (mode[5] && mode[5] != ':' && mode[5] != '/' && mode[5] != '+')) ||
	    only < 0 || max < 0 || first < 1 || (only && first > 1) ||
	    (max && first > max))
		die("replay mode %s: flush or write, then :N or +FIRST/MAX", mode);
	lfd = open(log, O_RDONLY);
	dfd = open(dev, O_WRONLY);
	if (lfd < 0 || dfd < 0)
		die("%s: %s", lfd < 0 ? log : dev, strerror(errno));
	marks = fopen(marks_path, "w");
	if (!marks)
		die("%s: %s", marks_path, strerror(errno));

	read_at(lfd, &super, sizeof(super), 0);
	ss = le32toh(super.sectorsize);
	if (le64toh(super.magic) != LOG_MAGIC ||
	    le64toh(super.version) != LOG_VERSION || ss < 512 || ss > 65536 ||
	    (ss & (ss - 1)))
		die("%s: not a dm-log-writes log (magic %llx, version %llu, sector size %u)",
		    log, (unsigned long long)le64toh(super.magic),
		    (unsigned long long)le64toh(super.version), ss);
	printf("# logreplay: %s: %llu entries, sector size %u, states at every %s entry\n",
	       log, (unsigned long long)le64toh(super.nr_entries), ss,
	       every_write ? "write or flush" : "flush or FUA");

	pos = ss;
	for (i = 0; i < le64toh(super.nr_entries); i++) {
		char hdr[65536];
		uint64_t flags, sector, nr;
		const char *kind = NULL;

		read_at(lfd, hdr, ss, pos);
		memcpy(&e, hdr, sizeof(e));
		flags = le64toh(e.flags);
		sector = le64toh(e.sector);
		nr = le64toh(e.nr_sectors);
		pos += ss;
		if (flags & LOG_MARK_FLAG) {
			len = le64toh(e.data_len);
			if (len > ss - sizeof(e))
				die("entry %llu: a mark of %zu bytes", (unsigned long long)i, len);
			fprintf(marks, "%.*s\n", (int)len, hdr + sizeof(e));
			fflush(marks);
			continue;
		}
		if (le64toh(e.data_len))
			die("entry %llu: private data in a write entry", (unsigned long long)i);
		len = nr * ss;
		if (len > cap) {
			free(buf);
			cap = len;
			buf = malloc(cap);
			if (!buf)
				die("out of memory");
		}
		if (flags & LOG_DISCARD_FLAG) {
			/* A discarded range may read back as zeros. */
			memset(buf, 0, len);
		} else if (len) {
			read_at(lfd, buf, len, pos);
			pos += len;
		}
		if (len)
			write_at(dfd, buf, len, sector * ss);
		if (flags & LOG_FUA_FLAG)
			kind = "fua";
		else if (flags & LOG_FLUSH_FLAG)
			kind = "flush";
		else if (every_write)
			kind = flags & LOG_DISCARD_FLAG ? "discard" : "write";
		if (!kind)
			continue;
		states++;
		if ((only && states != (uint64_t)only) || states < (uint64_t)first)
			continue;
		if (fdatasync(dfd))
			die("%s: fdatasync: %s", dev, strerror(errno));
		rc = run_check(check, ncheck, states, i, kind);
		if (rc)
			die("the check of state %llu (entry %llu) exited %d",
			    (unsigned long long)states, (unsigned long long)i, rc);
		if (only || (max && states == (uint64_t)max))
			break;
		if (states % 100 == 0)
			printf("progress logreplay: %llu states checked, entry %llu of %llu\n",
			       (unsigned long long)states, (unsigned long long)i,
			       (unsigned long long)le64toh(super.nr_entries));
	}
	if (max && states != (uint64_t)max)
		die("the log has %llu states, fewer than %lld", (unsigned long long)states, max);
	if (only && states != (uint64_t)only)
		die("the log has %llu states, not %lld", (unsigned long long)states, only);
	if (states < (uint64_t)first)
		die("the log has %llu states, fewer than %lld", (unsigned long long)states, first);
	printf("# logreplay: %llu states\n",
	       only ? 1ULL : (unsigned long long)(states - first + 1));
	fclose(marks);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "create"))
		return dm_create(argv[2], argv[3], argv + 4, argc - 4);
	if (argc == 3 && !strcmp(argv[1], "remove"))
		return dm_remove(argv[2]);
	if (argc >= 7 && !strcmp(argv[1], "replay"))
		return replay(argv[2], argv[3], argv[4], argv[5], argv + 6, argc - 6);
	fprintf(stderr, "usage: logreplay create NAME SECTORS TARGET ARGS...\n"
		"       logreplay remove NAME\n"
		"       logreplay replay LOG DEV MARKS flush|write[:N|/MAX] CHECK...\n");
	return 2;
}
