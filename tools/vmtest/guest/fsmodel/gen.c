// SPDX-License-Identifier: GPL-2.0
/*
 * fsmodel: the operation generator: the operations and their weights,
 * and the next operation drawn from the random stream and the size of
 * the model alone, so that a seed always gives the same operations.
 */

#include "fsmodel.h"

/* ------------------------------------------------------------------ */
/* Operations. */

/* Weights of the model run and of the crash workload, in 1/10000. */
const struct kind_info kinds[NKINDS] = {
	[K_PWRITE] = { "pwrite", "write data", 3000, 3000 },
	[K_PREAD] = { "pread", "read, compare with the model", 3200, 0 },
	[K_MWRITE] = { "mwrite", "memcpy into a shared mapping held across every\n"
		       "                           shift (after ftruncate up when past EOF)", 600, 1000 },
	[K_MREAD] = { "mread", "read through that mapping, compare", 2500, 0 },
	[K_TRUNCATE] = { "truncate", "ftruncate down or up", 100, 300 },
	[K_PUNCH] = { "punch", "PUNCH_HOLE | KEEP_SIZE", 100, 400 },
	[K_ZERO] = { "zero", "ZERO_RANGE, with or without KEEP_SIZE", 100, 400 },
	[K_COLLAPSE] = { "collapse", "COLLAPSE_RANGE", 150, 2200 },
	[K_INSERT] = { "insert", "INSERT_RANGE", 150, 2200 },
	[K_FSYNC] = { "fsync", "fsync", 10, 700 },
	[K_FDATASYNC] = { "fdatasync", "fdatasync", 10, 600 },
	[K_DROP] = { "drop", "echo 3 > /proc/sys/vm/drop_caches", 2, 0 },
	[K_PAGEOUT] = { "pageout", "MADV_PAGEOUT on the held mapping: with swap on,\n"
			"                           tmpfs pages become swap entries the next\n"
			"                           shift moves", 20, 0 },
	[K_REMOUNT] = { "remount", "unmount DIR, mount it again (same source and\n"
			"                           type, default options)", 2, 0 },
	[K_SEAL] = { "seal", "F_ADD_SEALS, one of SHRINK, GROW, WRITE,\n"
		     "                           FUTURE_WRITE and SEAL (--memfd); WRITE\n"
		     "                           must first answer EBUSY while the held\n"
		     "                           mapping is writable, which is then made\n"
		     "                           read-only", 15, 0 },
	[K_RENEW] = { "renew", "check the file, then go on with a new, unsealed\n"
		      "                           memfd holding a copy of it (--memfd)", 8, 0 },
};

int left_out[NKINDS];		/* -x, or not supported here */

/* The seals a memfd may be given, and what each refuses. */
static const struct {
	int seal;
	const char *name;
} seals[] = {
	{ F_SEAL_SHRINK, "F_SEAL_SHRINK" },
	{ F_SEAL_GROW, "F_SEAL_GROW" },
	{ F_SEAL_WRITE, "F_SEAL_WRITE" },
	{ F_SEAL_FUTURE_WRITE, "F_SEAL_FUTURE_WRITE" },
	{ F_SEAL_SEAL, "F_SEAL_SEAL" },
};

#define NSEALS		(sizeof(seals) / sizeof(seals[0]))

static const char *seal_name(long long seal)
{
	size_t i;

	for (i = 0; i < NSEALS; i++)
		if (seals[i].seal == seal)
			return seals[i].name;
	return "?";
}

void op_text(const struct op *op, char *buf, size_t n)
{
	const char *name = kinds[op->kind].name;

	switch (op->kind) {
	case K_TRUNCATE:
		snprintf(buf, n, "%lld %s to %lld", op->n, name, op->len);
		break;
	case K_FSYNC: case K_FDATASYNC: case K_DROP: case K_PAGEOUT:
	case K_REMOUNT: case K_RENEW:
		snprintf(buf, n, "%lld %s", op->n, name);
		break;
	case K_SEAL:
		snprintf(buf, n, "%lld %s %s", op->n, name, seal_name(op->off));
		break;
	default:
		snprintf(buf, n, "%lld %s%s off=%lld len=%lld (0x%llx+0x%llx)",
			 op->n, name, op->keep ? " keep_size" : "", op->off,
			 op->len, op->off, op->len);
	}
	if (op->expect) {
		size_t l = strlen(buf);

		snprintf(buf + l, n - l, " expect %s", ename(op->expect));
	}
}

/* A multiple of the unit, the block or the page. */
static long long some_alignment(struct rng *r)
{
	switch (below(r, 3)) {
	case 0: return unit;
	case 1: return blksz;
	}
	return pagesz;
}

/* An offset in [0, limit], favouring boundaries, one byte off them, EOF. */
long long pick_off(struct rng *r, long long size, long long limit)
{
	long long o, a;

	switch (below(r, 10)) {
	case 0: case 1: case 2:
		o = below(r, limit + 1);
		break;
	case 3:
		o = size;
		break;
	case 4:
		o = size + below(r, 17) - 8;
		break;
	case 5:
		o = size - below(r, 4 * pagesz);
		break;
	case 6:
		a = some_alignment(r);
		o = below(r, limit / a + 1) * a + (chance(r, 50) ? 1 : -1);
		break;
	default:
		a = some_alignment(r);
		o = below(r, limit / a + 1) * a;
	}
	return clamp(o, 0, limit);
}

/* A length in [1, limit]: a few bytes, about a block, page or unit, a few
 * of them, up to two pages, and now and then up to 16 pages.  Mostly
 * short: under TCG and KASAN every page an operation touches costs.
 */
long long pick_len(struct rng *r, long long limit)
{
	long long len;

	switch (below(r, 8)) {
	case 0:
		len = 1 + below(r, 16);
		break;
	case 1: case 2:
		len = some_alignment(r) + below(r, 3) - 1;
		break;
	case 3: case 4:
		len = some_alignment(r) * (1 + below(r, 4));
		break;
	case 5: case 6:
		len = 1 + below(r, 2 * pagesz);
		break;
	default:
		len = 1 + below(r, 16 * pagesz);
	}
	return clamp(len, 1, limit);
}

/* A collapse or insert that must fail with EINVAL. */
static void gen_invalid_shift(struct rng *r, long long size, struct op *op)
{
	long long units = (size + unit - 1) / unit, delta;
	int collapse = op->kind == K_COLLAPSE;

	/* A misalignment: one byte, a sector, a block (bigalloc), half a unit. */
	switch (below(r, 4)) {
	case 0: delta = 1; break;
	case 1: delta = SECTOR; break;
	case 2: delta = blksz; break;
	default: delta = unit / 2;
	}
	if (delta % unit == 0)
		delta = 1;
	op->expect = EINVAL;
	op->off = below(r, units + 1) * unit;
	op->len = (1 + below(r, 3)) * unit;
	switch (below(r, 4)) {
	case 0:
		op->off += delta;
		break;
	case 1:
		op->len += delta;
		break;
	case 2:
		/* A collapse reaching or crossing EOF; an insert at or past it. */
		if (collapse) {
			op->off = below(r, units + 1) * unit;
			op->len = units * unit - op->off + below(r, 2) * unit;
			if (op->len <= 0)
				op->len = unit;
		} else {
			op->off = units * unit + below(r, 2) * unit;
		}
		break;
	default:
		op->len = 0;
	}
}

/*
 * A collapse or insert: invalid on purpose @invalid percent of the time
 * (or when no valid one fits), else valid and at most @most units long.
 */
void gen_shift(struct rng *r, long long size, struct op *op,
	       int invalid, long long most)
{
	long long before, nu, k;

	op->expect = 0;
	if (op->kind == K_COLLAPSE)
		/* Whole units that end before the last byte: off + len < size. */
		before = size > 0 ? (size - 1) / unit : 0;
	else
		/* Units that start before EOF; the file may grow to maxlen. */
		before = (size + unit - 1) / unit;
	if (op->kind == K_INSERT && most > (maxlen - size) / unit)
		most = (maxlen - size) / unit;
	if (op->kind == K_COLLAPSE && most > before)
		most = before;
	if (before < 1 || most < 1 || chance(r, invalid)) {
		gen_invalid_shift(r, size, op);
		return;
	}
	/* Mostly short shifts; sometimes as long as allowed. */
	nu = 1 + below(r, chance(r, 75) && most > 4 ? 4 : most);
	if (op->kind == K_COLLAPSE)
		before -= nu - 1;
	/* Anywhere, or at the first or the last place possible. */
	k = below(r, 4) ? below(r, before) : below(r, 2) ? 0 : before - 1;
	op->off = k * unit;
	op->len = nu * unit;
}

void mix_init(struct mix *mx, int crash)
{
	int k;

	mx->total = 0;
	for (k = 0; k < NKINDS; k++) {
		mx->weight[k] = left_out[k] ? 0 :
				crash ? kinds[k].crash : kinds[k].model;
		mx->total += mx->weight[k];
	}
}

/* The next operation, from the random stream and the model's size alone. */
void gen_op(struct rng *r, const struct mix *mx, long long size,
	    struct op *op)
{
	long long x = below(r, mx->total);
	int k = 0;

	while (x >= mx->weight[k])
		x -= mx->weight[k++];
	op->kind = k;
	op->off = op->len = 0;
	op->keep = 0;
	op->expect = 0;
	switch (op->kind) {
	case K_PWRITE:
	case K_MWRITE:
	case K_PUNCH:
	case K_ZERO:
		op->off = pick_off(r, size, maxlen - 1);
		op->len = pick_len(r, maxlen - op->off);
		op->keep = op->kind == K_ZERO && chance(r, 50);
		break;
	case K_PREAD:
		op->off = pick_off(r, size, maxlen);
		op->len = pick_len(r, maxlen);
		break;
	case K_MREAD:
		/* Through the mapping only inside the file: past EOF is SIGBUS. */
		if (size == 0) {
			op->kind = K_PREAD;
			op->len = pick_len(r, maxlen);
			break;
		}
		op->off = pick_off(r, size, size - 1);
		op->len = pick_len(r, size - op->off);
		break;
	case K_TRUNCATE:
		op->len = chance(r, 50) || size == maxlen ?
			  pick_off(r, size, size) :
			  size + pick_len(r, maxlen - size);
		break;
	case K_COLLAPSE:
	case K_INSERT:
		gen_shift(r, size, op, 12, LLONG_MAX);
		break;
	case K_SEAL:
		op->off = seals[below(r, NSEALS)].seal;
		break;
	default:
		break;
	}
}
