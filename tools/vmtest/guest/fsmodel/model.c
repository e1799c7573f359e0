// SPDX-License-Identifier: GPL-2.0
/*
 * fsmodel: the model of a file, that every read is compared with: the
 * random stream, the data written and how to name it, the bytes and
 * size of a file, and what each operation does to them (or, on a sealed
 * memfd, must answer instead).
 */

#include "fsmodel.h"

/* ------------------------------------------------------------------ */
/* Random numbers: one stream per run, from the seed alone. */

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 0 .. n-1 (0 when n <= 0) */
long long below(struct rng *r, long long n)
{
	return n > 0 ? (long long)(rnd(r) % (uint64_t)n) : 0;
}

int chance(struct rng *r, int percent)
{
	return below(r, 100) < percent;
}

long long clamp(long long x, long long lo, long long hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* ------------------------------------------------------------------ */
/*
 * The data.  Every byte written belongs to a 64-bit word that says how it
 * was written (tag), by which operation (24 bits) and at which file offset
 * (the word's, in 8-byte steps): a byte found in the wrong place names
 * where it came from.  The top byte is the tag, never 0, so written data
 * never makes a whole sector of zeros.
 */
uint64_t word_of(int tag, uint64_t opn, long long off)
{
	return (uint64_t)tag << 56 | (opn & 0xffffff) << 32 |
	       ((uint64_t)off >> 3 & 0xffffffff);
}

void fill(unsigned char *buf, int tag, uint64_t opn, long long off,
	  long long len)
{
	long long i = 0;

	/* The bytes before the first word boundary, then whole words. */
	for (; i < len && ((off + i) & 7); i++)
		buf[i] = word_of(tag, opn, off + i) >> (8 * ((off + i) & 7));
	for (; i + 8 <= len; i += 8) {
		uint64_t w = word_of(tag, opn, off + i);

		memcpy(buf + i, &w, 8);
	}
	for (; i < len; i++)
		buf[i] = word_of(tag, opn, off + i) >> (8 * ((off + i) & 7));
}

/* What the aligned word @w is, for a person to read. */
const char *describe(uint64_t w)
{
	static char buf[4][96];
	static int next;
	char *b = buf[next++ % 4];
	int tag = w >> 56;

	if (!w)
		return "zeros";
	if (tag && strchr("PMCcF", tag))
		snprintf(b, 96, "'%c' data of operation %llu, written at offset %lld",
			 tag, (unsigned long long)(w >> 32 & 0xffffff),
			 (long long)(w & 0xffffffff) << 3);
	else
		snprintf(b, 96, "unknown data 0x%016llx", (unsigned long long)w);
	return b;
}

static void note_bytes(const char *label, const unsigned char *p, long long off,
		       long long from, long long to)
{
	char hex[3 * 16 + 1] = "";
	long long i;

	for (i = from; i < to && i - from < 16; i++)
		sprintf(hex + 3 * (i - from), " %02x", p[i - off]);
	note("  %s at %lld:%s", label, from, hex);
}

/*
 * @got holds @n bytes from file offset @off, @want what they should be.
 * Note the first difference, the bytes around it and, where the whole
 * aligned word is at hand, what each side holds.  Returns 1 if they match.
 */
int same_bytes(const char *what, const unsigned char *got,
	       const unsigned char *want, long long off, long long n)
{
	long long i, x, w0;
	uint64_t a, b;

	if (!memcmp(got, want, n))
		return 1;
	for (i = 0; got[i] == want[i]; i++)
		;
	x = off + i;
	note("%s: first difference at file offset %lld (0x%llx): read 0x%02x, model 0x%02x",
	     what, x, x, got[i], want[i]);
	w0 = x & ~7LL;
	note_bytes("read ", got, off, w0 < off ? off : w0,
		   off + n < w0 + 16 ? off + n : w0 + 16);
	note_bytes("model", want, off, w0 < off ? off : w0,
		   off + n < w0 + 16 ? off + n : w0 + 16);
	if (w0 >= off && w0 + 8 <= off + n) {
		memcpy(&a, got + (w0 - off), 8);
		memcpy(&b, want + (w0 - off), 8);
		note("  the read word at %lld is %s", w0, describe(a));
		note("  the model's is %s", describe(b));
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/*
 * The model of one file: its bytes and its size.  Bytes at and past the
 * size are kept zero, which is what a file reads there once it grows.
 */

void st_init(struct state *s)
{
	s->data = xmalloc(cap);
	s->size = 0;
	s->seals = 0;
}

void st_copy(struct state *d, const struct state *s)
{
	memcpy(d->data, s->data, d->size > s->size ? d->size : s->size);
	d->size = s->size;
}

/* A state's byte at @x: zero past its size. */
unsigned char cand_byte(const struct state *s, long long x)
{
	return x < s->size ? s->data[x] : 0;
}

static void st_write(struct state *s, long long off, const unsigned char *buf,
		     long long len)
{
	memcpy(s->data + off, buf, len);
	if (off + len > s->size)
		s->size = off + len;
}

void st_truncate(struct state *s, long long size)
{
	if (size < s->size)
		memset(s->data + size, 0, s->size - size);
	s->size = size;
}

static void st_zero(struct state *s, long long off, long long len, int keep)
{
	long long end = off + len;

	if (keep && end > s->size)
		end = s->size;
	if (end > off)
		memset(s->data + off, 0, end - off);
	if (!keep && off + len > s->size)
		s->size = off + len;
}

void st_collapse(struct state *s, long long off, long long len)
{
	memmove(s->data + off, s->data + off + len, s->size - off - len);
	memset(s->data + s->size - len, 0, len);
	s->size -= len;
}

void st_insert(struct state *s, long long off, long long len)
{
	memmove(s->data + off + len, s->data + off, s->size - off);
	memset(s->data + off, 0, len);
	s->size += len;
}

#define WRITE_SEALS	(F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)

/*
 * The errno an operation must answer on a memfd with @sealed seals, as
 * memfd_create(2) and fcntl(2) document them and shmem_fallocate() applies
 * them to collapse and insert.  An invalid collapse or insert still
 * answers EINVAL: its arguments are checked first.  A pwrite that would
 * grow a file sealed against growth is cut at EOF when it starts inside
 * the file, so that what it writes does not depend on how the kernel
 * splits a write into pages.
 */
void seal_rules(struct op *op, int sealed, long long size)
{
	long long end = op->off + op->len;

	if (!sealed || op->expect)
		return;
	switch (op->kind) {
	case K_PWRITE:
		if (sealed & WRITE_SEALS)
			op->expect = EPERM;
		else if (sealed & F_SEAL_GROW && end > size && op->off < size)
			op->len = size - op->off;
		else if (sealed & F_SEAL_GROW && end > size)
			op->expect = EPERM;
		break;
	case K_MWRITE:
		/* FUTURE_WRITE spares the mapping made before the seal. */
		if (sealed & F_SEAL_WRITE ||
		    (sealed & F_SEAL_GROW && end > size))
			op->expect = EPERM;
		break;
	case K_TRUNCATE:
		if ((sealed & F_SEAL_SHRINK && op->len < size) ||
		    (sealed & F_SEAL_GROW && op->len > size))
			op->expect = EPERM;
		break;
	case K_PUNCH:
		if (sealed & WRITE_SEALS)
			op->expect = EPERM;
		break;
	case K_COLLAPSE:
	case K_INSERT:
		if (sealed & WRITE_SEALS ||
		    sealed & (op->kind == K_COLLAPSE ? F_SEAL_SHRINK : F_SEAL_GROW))
			op->expect = EPERM;
		break;
	case K_SEAL:
		if (sealed & F_SEAL_SEAL)
			op->expect = EPERM;
		break;
	default:
		break;
	}
}

/* What a successful operation (or one failing as expected) does to the
 * model.  @buf holds the data written, or gets it when !@filled.
 */
void apply(struct state *m, const struct op *op, unsigned char *buf,
	   int filled)
{
	if (op->expect)
		return;
	switch (op->kind) {
	case K_PWRITE:
		if (!filled)
			fill(buf, TAG_PWRITE, op->n, op->off, op->len);
		st_write(m, op->off, buf, op->len);
		break;
	case K_MWRITE:
		if (op->off + op->len > m->size)
			st_truncate(m, op->off + op->len);
		if (!filled)
			fill(buf, TAG_MWRITE, op->n, op->off, op->len);
		st_write(m, op->off, buf, op->len);
		break;
	case K_TRUNCATE:
		st_truncate(m, op->len);
		break;
	case K_PUNCH:
		st_zero(m, op->off, op->len, 1);
		break;
	case K_ZERO:
		st_zero(m, op->off, op->len, op->keep);
		break;
	case K_COLLAPSE:
		st_collapse(m, op->off, op->len);
		break;
	case K_INSERT:
		st_insert(m, op->off, op->len);
		break;
	case K_SEAL:
		m->seals |= op->off;
		break;
	case K_RENEW:
		m->seals = 0;
		break;
	default:
		break;
	}
}
