// SPDX-License-Identifier: GPL-2.0
/*
 * fsmodel: the judging of the concurrent run, whose rules concurrent.c
 * states: the outcome classes, the states a read, a seek or the file
 * after a part may show, the notes on what none explains; and the
 * accesses judged, by the accessor and the reader threads, here beside
 * their judges so that these stay static to this file.
 */

#include "fsmodel.h"

const char *const access_names[NR_ACCESS_KINDS] = {
	"pread", "pwrite", "mread", "mstore", "lseek", "splice", "sendfile",
	"copy_file_range", "preadv2(RWF_NOWAIT)", "io_uring read"
};

/* The outcome classes (fsmodel.h): their names, for -a, and their cases. */
const char *const class_names[NCLASSES] = {
	"RACE", "RACE_EOF", "RACE_GROW", "RACE_SEEK", "RACE_FILE"
};
const char *const class_cases[NCLASSES] = {
	"model_race", "model_race_eof", "model_race_grow", "model_race_seek",
	"model_race_file"
};

void shift_state(struct state *s, const struct op *shift)
{
	if (shift->kind == K_COLLAPSE)
		st_collapse(s, shift->off, shift->len);
	else
		st_insert(s, shift->off, shift->len);
}

/*
 * The shift may happen here: the candidate "cand[0], then the shift",
 * unless the one made since the last write still lives.
 */
static void add_cut(struct conc *c)
{
	int k;

	if (c->current >= 0 && c->alive[c->current])
		return;
	k = c->ncand++;
	st_copy(&c->cand[k], &c->cand[0]);
	shift_state(&c->cand[k], &c->shift);
	c->alive[k] = 1;
	c->current = k;
}

static void apply_write(struct conc *c, long long off,
			const unsigned char *buf, long long len)
{
	int k;

	for (k = 0; k < c->ncand; k++)
		if (c->alive[k])
			memcpy(c->cand[k].data + off, buf, len);
	c->current = -1;
}

static long long read_len(const struct state *s, long long off, long long len)
{
	return clamp(s->size - off, 0, len);
}

/* @got (@n bytes from @off) is all @s's, inside its size. */
static int bytes_of(const struct state *s, const unsigned char *got,
		    long long off, long long n)
{
	return !n || (off + n <= s->size && !memcmp(got, s->data + off, n));
}

/* Granule by granule, each wholly @a's or @b's, inside that one's size. */
static int granules_mixed(const struct state *a, const struct state *b,
			  const unsigned char *got, long long off, long long n,
			  long long g)
{
	long long from, to;

	for (from = off; from < off + n; from = to) {
		to = (from / g + 1) * g;
		if (to > off + n)
			to = off + n;
		if (!bytes_of(a, got + (from - off), from, to - from) &&
		    !bytes_of(b, got + (from - off), from, to - from))
			return 0;
	}
	return 1;
}

/*
 * A read that overlapped the shift and crossed the smaller EOF of @a and
 * @b while it moved, no longer than the longer state's read: each granule
 * below that EOF is either state's, and from there on the bytes are the
 * larger state's.  A read that reached the old EOF of an insert goes on
 * once the size has grown, as a read racing an append does; every byte is
 * a live state's at its offset, and none is a zero the file never held
 * there (RACE_GROW).
 */
static int crossed_eof(const struct state *a, const struct state *b,
		       const unsigned char *got, long long off, long long n,
		       long long g, long long hi)
{
	const struct state *big = a->size > b->size ? a : b;
	long long eof = a->size < b->size ? a->size : b->size;
	long long k = eof > off ? eof - off : 0;

	if (n > hi || off + n <= eof)
		return 0;
	if (off < eof && !granules_mixed(a, b, got, off, eof - off, g))
		return 0;
	return bytes_of(big, got + k, off + k, n - k);
}

/*
 * Judge a read of @n bytes (@len asked at @off) in granules of @g bytes
 * against the @ns states @s live during it; with @mix the read overlapped
 * the shift, and s[0] and s[1] are the states before and after it.  Bit k
 * of *@fits says that s[k] may still be the file.  C_OK: one state's
 * length and bytes, or with @mix each granule either's and the length of
 * one; C_RACE_EOF: such bytes, but a length strictly between the live
 * states' lengths (all of them differ); C_RACE: anything else.
 */
static int judge_bytes(const struct state *const *s, int ns, int mix,
		       long long off, long long len, const unsigned char *got,
		       long long n, long long g, unsigned int *fits)
{
	long long lo = LLONG_MAX, hi = -1, l;
	int k, bytes = 0;

	*fits = 0;
	for (k = 0; k < ns; k++) {
		l = read_len(s[k], off, len);
		lo = l < lo ? l : lo;
		hi = l > hi ? l : hi;
		if (bytes_of(s[k], got, off, n)) {
			bytes = 1;
			if (n == l)
				*fits |= 1u << k;
		}
	}
	if (mix && granules_mixed(s[0], s[1], got, off, n, g)) {
		bytes = 1;
		if (n == read_len(s[0], off, len) ||
		    n == read_len(s[1], off, len))
			*fits |= 3;
	}
	if (*fits)
		return C_OK;
	if (bytes && n > lo && n < hi)
		return C_RACE_EOF;
	return mix && crossed_eof(s[0], s[1], got, off, n, g, hi) ?
	       C_RACE_GROW : C_RACE;
}

/*
 * Judge SEEK_DATA or SEEK_HOLE from @off that found @got (or -ENXIO):
 * no data before what SEEK_DATA found, zeros where SEEK_HOLE found a hole
 * (one block of them, or up to EOF), all in one live state: ext4, f2fs
 * and tmpfs look up under i_rwsem, as the shifts run, so they see no
 * state in between (xfs takes only the ILOCK: RACE_SEEK).  A filesystem
 * may report a hole as data, never data as a hole.
 */
static int seek_fits(const struct state *s, long long off, int whence,
		     long long got)
{
	long long x, end;

	if (off >= s->size)
		return got == -ENXIO;
	if (whence == SEEK_DATA) {
		end = got == -ENXIO ? s->size : got;
		if (end < off || end > s->size ||
		    (got != -ENXIO && end == s->size))
			return 0;
	} else {
		if (got < off || got > s->size)
			return 0;
		end = (got / blksz + 1) * blksz;
		end = end < s->size ? end : s->size;
	}
	for (x = whence == SEEK_DATA ? off : got; x < end; x++)
		if (s->data[x])
			return 0;
	return 1;
}

/* C_OK, C_RACE_SEEK (with @mix: it overlapped the shift) or C_RACE. */
static int judge_seek(const struct state *const *s, int ns, int mix,
		      long long off, int whence, long long got,
		      unsigned int *fits)
{
	int k;

	*fits = 0;
	for (k = 0; k < ns; k++)
		if (seek_fits(s[k], off, whence, got))
			*fits |= 1u << k;
	return *fits ? C_OK : mix ? C_RACE_SEEK : C_RACE;
}

/* Count an access: did it overlap the shift?  @d0: done before it; @s1:
 * started after it.
 */
static void tally_access(struct tally *t, enum access_kind kind, int d0, int s1)
{
	t->accesses++;
	if (d0 || !s1)
		return;
	t->by_kind[kind]++;
	t->reads += IS_READ(kind);
	t->loads += kind == A_MREAD;
	t->seeks += kind == A_SEEK;
}

/* How a read or seek compares with the live states (@pre: the one before). */
static void note_states(const struct state *const *s, int ns, int mix,
			const struct state *pre, const struct access *a,
			const unsigned char *got, long long g)
{
	long long n = a->got, from, to;
	int k;

	for (k = 0; k < ns; k++) {
		note(" against %s (size %lld):", s[k] == pre ?
		     "the state before the shift" : "a state after the shift",
		     s[k]->size);
		if (a->kind == A_SEEK)
			continue;
		if (n != read_len(s[k], a->off, a->len))
			note("  it would give %lld bytes",
			     read_len(s[k], a->off, a->len));
		same_bytes("  read", got, s[k]->data + a->off, a->off,
			   n < read_len(s[k], a->off, a->len) ? n :
			   read_len(s[k], a->off, a->len));
	}
	if (!mix || a->kind == A_SEEK)
		return;
	for (from = a->off; from < a->off + n; from = to) {
		to = (from / g + 1) * g;
		if (to > a->off + n)
			to = a->off + n;
		if (!bytes_of(s[0], got + (from - a->off), from, to - from) &&
		    !bytes_of(s[1], got + (from - a->off), from, to - from)) {
			note(" the granule %lld..%lld is neither side's (the first such)",
			     from, to);
			return;
		}
	}
}

/* The first outcome of each class is described; @what says which. */
static const char *const class_what[NCLASSES] = {
	"what no order of the accesses and the shift explains (the first such, RACE):",
	"every granule is a live state's, but the length is none of theirs (the first such, RACE_EOF)",
	"each granule below the smaller EOF is a live state's, and past it the larger state's bytes (the first such, RACE_GROW)",
	"what no state live during it answers (the first such, RACE_SEEK)",
	"the file after a part is none of the states the orders allow (the first such, RACE_FILE)",
};

static void note_access(const struct conc *c, const char *who,
			const struct op *shift, const struct access *a,
			const char *what)
{
	const char *when = a->d0 ? "after" : a->s1 ? "overlapping" : "before";
	char text[160];

	op_text(shift, text, sizeof(text));
	if (a->kind == A_SEEK)
		note("round %lld: %s: lseek(%lld, %s), %s the %s, gave %lld: %s",
		     c->round, who, a->off,
		     a->whence == SEEK_DATA ? "SEEK_DATA" : "SEEK_HOLE", when,
		     text + strcspn(text, " ") + 1, a->got, what);
	else
		note("round %lld: %s: %s off=%lld len=%lld, %s the %s, gave %lld bytes: %s",
		     c->round, who, access_names[a->kind], a->off, a->len,
		     when, text + strcspn(text, " ") + 1, a->got, what);
}

/* The round's first part: its plan, and what its first @done accesses gave. */
static void note_round(const struct conc *c, int done)
{
	char text[160];
	int i;

	op_text(&c->shift, text, sizeof(text));
	note("round %lld: the shifter's %s (after %ld us) answered %s", c->round,
	     text + strcspn(text, " ") + 1, c->shift_delay_us, ename(c->shift.got));
	note("the accessor's accesses (the file was %lld bytes before):",
	     c->start.size);
	for (i = 0; i < done; i++)
		note("  %s off=%lld len=%lld after %ld us -> %lld",
		     access_names[c->acc[i].kind], c->acc[i].off, c->acc[i].len,
		     c->acc[i].delay_us, c->acc[i].got);
}

/*
 * The first part: judge a read of the accessor (@a, the @index-th access)
 * in granules of @g bytes, and keep the candidates it allows.
 */
static void judge_read(struct conc *c, const struct access *a, int index,
		       long long g)
{
	const struct state *s[MAX_ACCESSES + 2];
	int idx[MAX_ACCESSES + 2];
	int k, ns = 0, mix, v, cur = c->current;
	unsigned int fits;

	/* The state before and the cut from it first: they may mix. */
	mix = c->alive[0] && cur > 0 && c->alive[cur];
	if (mix) {
		idx[ns++] = 0;
		idx[ns++] = cur;
	}
	for (k = 0; k < c->ncand; k++)
		if (c->alive[k] && !(mix && (k == 0 || k == cur)))
			idx[ns++] = k;
	for (k = 0; k < ns; k++)
		s[k] = &c->cand[idx[k]];
	v = judge_bytes(s, ns, mix, a->off, a->len, c->buf, a->got, g, &fits);
	if (v == C_OK)
		goto prune;
	if (!c->tally.outcome[v]++) {
		note_access(c, "the accessor", &c->shift, a, class_what[v]);
		note_states(s, ns, mix, &c->cand[0], a, c->buf, g);
		note_round(c, index + 1);
	}
	/* RACE teaches nothing; RACE_EOF: both sides were the file. */
	if (v == C_RACE)
		return;
	fits = 3;
prune:
	for (k = 0; k < ns; k++)
		if (!(fits & 1u << k))
			c->alive[idx[k]] = 0;
}

/*
 * Make @a on @t into @buf (@opn names a write's data); the reader classes
 * of conc_readers.c read through @rd's pipe, targets and ring.
 */
static int access_one(struct target *t, struct access *a, uint64_t opn,
		      unsigned char *buf, struct reader *rd)
{
	long long i;
	uint64_t w;

	switch (a->kind) {
	case A_PWRITE:
		fill(buf, TAG_CWRITE, opn, a->off, a->len);
		a->got = pwrite_all(t->fd, buf, a->len, a->off);
		if (a->got) {
			note("pwrite off=%lld len=%lld: %s", a->off, a->len,
			     ename(a->got));
			return -1;
		}
		break;
	case A_MSTORE:
		w = word_of(TAG_CSTORE, opn, a->off);
		if (sigsetjmp(bus_jump, 1)) {
			note("SIGBUS storing through the mapping at %lld", a->off);
			return -1;
		}
		bus_armed = 1;
		__atomic_store_n((uint64_t *)(t->map + a->off), w, __ATOMIC_RELAXED);
		bus_armed = 0;
		memcpy(buf, &w, 8);
		break;
	case A_PREAD:
		/*
		 * One call: a second one, after a short read at EOF, would
		 * read on past the EOF an insert has moved meanwhile, and
		 * join two states in one access.
		 */
		a->got = pread(t->fd, buf, a->len, a->off);
		if (a->got < 0) {
			note("pread off=%lld len=%lld: %s", a->off, a->len,
			     strerror(errno));
			return -1;
		}
		break;
	case A_MREAD:
		if (sigsetjmp(bus_jump, 1)) {
			note("SIGBUS loading through the mapping at %lld..%lld",
			     a->off, a->off + a->len);
			return -1;
		}
		bus_armed = 1;
		for (i = 0; i < a->len; i += 8) {
			w = __atomic_load_n((uint64_t *)(t->map + a->off + i),
					    __ATOMIC_RELAXED);
			memcpy(buf + i, &w, 8);
		}
		bus_armed = 0;
		a->got = a->len;
		break;
	case A_SEEK:
		a->got = lseek(t->fd, a->off, a->whence);
		if (a->got < 0 && errno != ENXIO) {
			note("lseek(%lld, %d): %s", a->off, a->whence,
			     strerror(errno));
			return -1;
		}
		if (a->got < 0)
			a->got = -ENXIO;
		break;
	default:
		return read_by(rd, t, a, buf);
	}
	return 0;
}

void access_round(struct conc *c)
{
	int i, d0, s1;

	c->ncand = 1;
	c->alive[0] = 1;
	c->current = -1;
	st_copy(&c->cand[0], &c->start);
	for (i = 0; i < c->nacc; i++) {
		struct access *a = &c->acc[i];

		pause_us(a->delay_us);
		d0 = is_set(&c->done);
		if (c->alive[0]) {
			/* The shift may come just before this access... */
			add_cut(c);
			/* ...and if it is done, it came before. */
			if (d0)
				c->alive[0] = 0;
		}
		if (access_one(&c->t, a, c->round * MAX_ACCESSES + i, c->buf,
			       NULL))
			goto failed;
		s1 = is_set(&c->started);
		/* The shift comes after this access: no cut so far holds. */
		if (c->alive[0] && !s1) {
			c->ncand = 1;
			c->current = -1;
		}
		a->d0 = d0;
		a->s1 = s1;
		tally_access(&c->tally, a->kind, d0, s1);
		if (a->kind == A_PWRITE)
			apply_write(c, a->off, c->buf, a->len);
		else if (a->kind == A_MSTORE)
			apply_write(c, a->off, c->buf, 8);
		else
			judge_read(c, a, i, IS_READ(a->kind) ? pagesz : 8);
	}
	return;
failed:
	note_round(c, i + 1);
	c->failed = 1;
}

/*
 * The second part: a reader's next access, aimed at the part of the file
 * that moves (from the shift's offset on) three times in four: a read of
 * up to READ_PAGES pages by one of the six classes (pread and those of
 * conc_readers.c), a run of loads through the mapping inside the part that
 * exists before and after the shift, or SEEK_DATA or SEEK_HOLE.
 */
static void plan_read(struct conc *c, struct rng *r, struct access *a)
{
	/* The splice family twice as often: see READERS. */
	static const enum access_kind classes[] = {
		A_PREAD, A_NOWAIT, A_URING, A_SPLICE, A_SENDFILE, A_COPY,
		A_SPLICE, A_SENDFILE, A_COPY
	};
	long long pre = c->rpre.size, post = c->rpost.size;
	long long lim = pre < post ? pre : post, span = pre > post ? pre : post;
	long long from = chance(r, 75) ? c->rshift.off : 0;

	switch (below(r, 8)) {
	case 0:
		a->kind = A_MREAD;
		a->off = (from + below(r, lim - 8 - from)) & ~7LL;
		a->len = 8 * (1 + below(r, (lim - a->off) / 8 < 1024 ?
					(lim - a->off) / 8 : 1024));
		break;
	case 1:
		a->kind = A_SEEK;
		a->whence = chance(r, 50) ? SEEK_DATA : SEEK_HOLE;
		a->off = from + below(r, span + pagesz - from);
		a->len = 0;
		break;
	default:
		a->kind = classes[below(r, sizeof(classes) / sizeof(classes[0]))];
		a->off = chance(r, 20) ? pick_off(r, pre, span) :
			 from + below(r, span - from);
		a->len = 1 + below(r, (chance(r, 80) ? 4 : READ_PAGES) * pagesz);
		a->drop = chance(r, 12);
	}
}

/*
 * sendfile and copy_file_range (do_splice_direct(), a pipe's worth a
 * call), io_uring and RWF_NOWAIT (finished by pread) call into the
 * filesystem again after a call that stopped short, at a page boundary or
 * at EOF, and each call sees one state.  So, judged exactly, not allowed:
 *  - a read that stopped at the old EOF of an insert goes on over the
 *    grown file, up to where a read of it ends: RACE_GROW's shape (each
 *    granule below the old EOF either state's, the bytes past it the new
 *    state's) with the length of a read of the state after (copy cuts its
 *    length at the size it found first, so never this);
 *  - a read whose call stopped at a page boundary at or past the new EOF
 *    of a collapse ends there, the next call finding EOF: RACE_EOF's
 *    shape (every granule a live state's) ending at such a boundary.
 */
static int two_calls(const struct conc *c, const struct access *a, int ns,
		     int v)
{
	long long end = a->off + a->got;

	if (ns != 2 || (a->kind != A_SENDFILE && a->kind != A_COPY &&
			a->kind != A_URING && a->kind != A_NOWAIT))
		return 0;
	if (v == C_RACE_GROW)
		return a->kind != A_COPY && c->rpost.size > c->rpre.size &&
		       a->got == read_len(&c->rpost, a->off, a->len);
	return v == C_RACE_EOF && c->rpost.size < c->rpre.size &&
	       end % pagesz == 0 && end >= c->rpost.size;
}

/*
 * sendfile() and copy_file_range() may copy less than asked and leave the
 * rest to their caller (xfs's copy remaps whole blocks only, so it stops
 * short of a partial last block; a splice stops at a pipe buffer it
 * cannot confirm): a read shorter than the longest live state's, each
 * granule a live state's inside its size, is such a prefix, not a race.
 * A short read of the other classes is not.
 */
static int cut_short(const struct state *const *s, int ns,
		     const struct access *a, const unsigned char *got)
{
	long long most = 0;
	int k;

	if (a->kind != A_SENDFILE && a->kind != A_COPY)
		return 0;
	for (k = 0; k < ns; k++)
		if (read_len(s[k], a->off, a->len) > most)
			most = read_len(s[k], a->off, a->len);
	if (a->got >= most)
		return 0;
	return ns == 2 ? granules_mixed(s[0], s[1], got, a->off, a->got, pagesz) :
	       bytes_of(s[0], got, a->off, a->got);
}

void *reader(void *arg)
{
	struct reader *rd = arg;
	struct conc *c = rd->c;
	const struct state *s[2];
	struct access a;
	struct rng r;
	unsigned int fits;
	int n, after, d0, s1, v, ns;

	for (;;) {
		pthread_barrier_wait(&c->go);
		if (c->quit)
			return NULL;
		if (c->part != 2)
			goto next;
		/* Its own stream each round: the same seed, the same plans. */
		r.s = seed ^ 0x72656164ULL ^
		      (uint64_t)(c->round * READERS + rd->id) * 0x9e3779b97f4a7c15ULL;
		for (n = after = 0; n < READS_MOST && after < READS_AFTER; n++) {
			plan_read(c, &r, &a);
			d0 = is_set(&c->done);
			if (access_one(&c->rt, &a, 0, rd->buf, rd)) {
				pthread_mutex_lock(&c->lock);
				c->failed = 1;
				pthread_mutex_unlock(&c->lock);
				break;
			}
			s1 = is_set(&c->started);
			after += d0;
			a.d0 = d0;
			a.s1 = s1;
			tally_access(&rd->tally, a.kind, d0, s1);
			/* The states live during it: s[0] before, s[1] after. */
			ns = 0;
			if (!d0)
				s[ns++] = &c->rpre;
			if (s1)
				s[ns++] = &c->rpost;
			if (a.kind == A_SEEK)
				v = judge_seek(s, ns, ns == 2, a.off, a.whence,
					       a.got, &fits);
			else
				v = judge_bytes(s, ns, ns == 2, a.off, a.len,
						rd->buf, a.got,
						IS_READ(a.kind) ? pagesz : 8,
						&fits);
			if (two_calls(c, &a, ns, v)) {
				rd->tally.continued++;
				continue;
			}
			if (v != C_OK && a.kind != A_SEEK &&
			    cut_short(s, ns, &a, rd->buf)) {
				rd->tally.short_copies++;
				continue;
			}
			if (v == C_OK)
				continue;
			/* The first of each class, from any thread, noted. */
			pthread_mutex_lock(&c->lock);
			if (!c->noted[v]++) {
				note_access(c, "a reader", &c->rshift, &a,
					    class_what[v]);
				note_states(s, ns, ns == 2, &c->rpre, &a,
					    rd->buf,
					    IS_READ(a.kind) ? pagesz : 8);
			}
			pthread_mutex_unlock(&c->lock);
			rd->tally.outcome[v]++;
		}
next:
		pthread_barrier_wait(&c->end);
	}
}

/*
 * After a part: the file, read and through the mapping, must be exactly
 * one of the @nw states @w; returns which.  Otherwise count a RACE (the
 * first one described, and *@raced set), write w[0] into the file again,
 * since the model is the truth, and return 0.  -1 on an error.
 */
static int settle_file(struct conc *c, struct target *t,
		       const struct state *const *w, int nw, const char *part,
		       int *raced)
{
	long long n = pread_all(t->fd, t->buf, t->maplen + 1, 0);
	int k;

	*raced = 0;
	if (n < 0 || !nw) {
		note("round %lld: %s: reading the file after it: %s", c->round,
		     part, n < 0 ? strerror(-n) : "no state is left");
		return -1;
	}
	for (k = 0; k < nw; k++) {
		if (n != w[k]->size || memcmp(t->buf, w[k]->data, n))
			continue;
		if (map_copy(t->buf, t->map, n, 0))
			return -1;
		if (!memcmp(t->buf, w[k]->data, n))
			return k;
		break;
	}
	if (!c->tally.outcome[C_RACE_FILE]++) {
		*raced = 1;
		note("round %lld: %s: the file after it (%lld bytes) %s none of the states the orders allow (the first such, RACE_FILE):",
		     c->round, part, n, k < nw ?
		     "reads as one of them, but its mapping shows" : "is");
		for (k = 0; k < nw; k++) {
			if (n != w[k]->size)
				note(" a state of %lld bytes", w[k]->size);
			else
				same_bytes(" against a state", t->buf,
					   w[k]->data, 0, n);
		}
	}
	if (ftruncate(t->fd, w[0]->size) ||
	    pwrite_all(t->fd, w[0]->data, w[0]->size, 0) ||
	    pread_all(t->fd, t->buf, w[0]->size + 1, 0) != w[0]->size ||
	    memcmp(t->buf, w[0]->data, w[0]->size)) {
		note("round %lld: %s: writing the model's state into the file again failed",
		     c->round, part);
		return -1;
	}
	return 0;
}

/*
 * After the first part the file must be exactly one of the live
 * candidates, which the next round starts from.
 */
int judge_round(struct conc *c)
{
	const struct state *w[MAX_ACCESSES + 2];
	int k, nw = 0, raced;

	if (c->shift.got) {
		note("the shift answered %s", ename(c->shift.got));
		return -1;
	}
	if (c->failed)
		return -1;
	if (c->alive[0]) {
		/* Done, so it came after the last access. */
		add_cut(c);
		c->alive[0] = 0;
	}
	for (k = 1; k < c->ncand; k++)
		if (c->alive[k])
			w[nw++] = &c->cand[k];
	k = settle_file(c, &c->t, w, nw, "the accessor's part", &raced);
	if (raced)
		note_round(c, c->nacc);
	if (k < 0)
		return -1;
	st_copy(&c->start, w[k]);
	return 0;
}

/*
 * After the second part the file must be exactly the state after the
 * shift.  An insert's hole is then filled with data, so that the file
 * stays data all through and a transient hole always shows.
 */
int judge_rround(struct conc *c)
{
	const struct state *w[1] = { &c->rpost };
	struct op *s = &c->rshift;
	int raced;

	if (s->got) {
		note("round %lld: the readers' shift answered %s", c->round,
		     ename(s->got));
		return -1;
	}
	if (c->failed ||
	    settle_file(c, &c->rt, w, 1, "the readers' part", &raced) < 0)
		return -1;
	st_copy(&c->rpre, &c->rpost);
	if (s->kind == K_COLLAPSE)
		return 0;
	fill(c->rpre.data + s->off, TAG_FILL, c->round, s->off, s->len);
	if (pwrite_all(c->rt.fd, c->rpre.data + s->off, s->len, s->off)) {
		note("round %lld: filling the inserted range: %s", c->round,
		     strerror(errno));
		return -1;
	}
	return 0;
}
