// SPDX-License-Identifier: GPL-2.0
/*
 * cgstress's cases of the promises the format-2 kernel makes beyond the
 * streams' basics, each a role of its own (see cgstress.c's comment):
 * change readers, REMOVED accounting, the pinning reader, fd storms on
 * removal, the unprivileged reader.
 */
#include "cgstress.h"

pid_t burners[NR_BURNERS];

/* a child that burns CPU while it runs: the accounting's, stopped when parked */
void burner_main(void)
{
	volatile uint64_t x = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		for (int64_t until = now_ns() + 5 * NSEC_PER_MSEC; now_ns() < until;)
			x += getppid();
		if (getppid() == 1)
			_exit(0);
	}
}

/* ------------------------------------------------------------------ */
/* change readers: changes applied to a state equal the full snapshot    */

/* one file's state: as of its last complete snapshot, and the full snapshot being read */
struct changes {
	struct sfile *f;
	struct idmap state, next;	/* CGROUP records by id */
	uint64_t seq;		/* the state is as of this publication; 0: none */
	uint64_t path[3];	/* the snapshots that made it: the full one, then changes */
	int64_t t_path[3];	/* their publications' times */
	int nr_path;
};

static void changes_rec(void *arg, const struct snap_decoder *d, const struct snap_rec *r)
{
	struct changes *ch = arg;
	const void *rec = (const unsigned char *)r->values - sizeof(struct cgroup_stat_cgroup);
	struct idmap_entry *e;

	if (r->type == CGROUP_STAT_REC_REMOVED) {
		if (d->snap.base_seq)
			idmap_del(&ch->state, r->id);
		return;
	}
	e = idmap_get(d->snap.base_seq ? &ch->state : &ch->next, r->id, 0, true);
	free(e->rec);
	e->rec = xmalloc(r->size);
	memcpy(e->rec, rec, r->size);
	e->later = r->flags & CGROUP_STAT_CGROUP_F_LATER;
}

/* the first value in which two records of cgroup @id differ, said */
static void changes_differ(struct changes *ch, uint64_t seq, const struct cgroup_stat_cgroup *x,
			   const struct cgroup_stat_cgroup *y)
{
	struct ctrl *c = ch->f->c;
	unsigned int i;

	for (i = 0; i < x->nr_values && i < y->nr_values; i++)
		if (x->values[i] != y->values[i])
			break;
	if (i < x->nr_values && i < y->nr_values)
		FFAIL(ch->f, "cgroup %llu: the full snapshot %llu has %s %llu, its changes %llu",
		      (unsigned long long)x->id, (unsigned long long)seq, c->names[i],
		      (unsigned long long)y->values[i], (unsigned long long)x->values[i]);
	else
		FFAIL(ch->f, "cgroup %llu: the full snapshot %llu has a record of %u bytes (parent "
		      "%llu, %u values, %u devices), its changes one of %u bytes (parent %llu, %u "
		      "values, %u devices)", (unsigned long long)x->id, (unsigned long long)seq,
		      y->hdr.size, (unsigned long long)y->parent_id, y->nr_values, y->nr_devices,
		      x->hdr.size, (unsigned long long)x->parent_id, x->nr_values, x->nr_devices);
}

/*
 * Was @id made after the publication the state is as of?  A cgroup is
 * published while its mkdir runs: a later full snapshot of the same
 * publication may list it, the changes only from the next one on.
 */
static bool changes_new(struct changes *ch, uint64_t id)
{
	const struct dir *d = dir_find(id);

	return !d || d->t_created >= ch->t_path[ch->nr_path - 1];
}

/* a cgroup of the full snapshot @seq missing from the state its changes made: said */
static void changes_missing(struct changes *ch, uint64_t id, uint64_t seq)
{
	const struct dir *d = dir_find(id);
	struct idmap_entry *e = idmap_get(&ch->f->ids, id, 0, false);
	char path[128] = "";

	for (int i = 0; i < ch->nr_path; i++)
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%llu (%.3f s)",
			 i ? " -> " : "", (unsigned long long)ch->path[i],
			 (ch->t_path[i] - t_start) / 1e9);
	FFAIL(ch->f, "cgroup %llu (made at %.3f s, parent %llu) is in the full snapshot %llu, not "
	      "in the state its changes made: %s; listed in the file's snapshot %llu of %llu",
	      (unsigned long long)id, d ? (d->t_created - t_start) / 1e9 : 0.0,
	      d ? (unsigned long long)d->parent : 0ULL, (unsigned long long)seq, path,
	      e ? (unsigned long long)e->snap : 0ULL, (unsigned long long)ch->f->snaps);
}

/*
 * The state the changes made (as of publication @seq) against the full
 * snapshot of the same publication: the same cgroups with the same values,
 * but for cgroups removed between the two reads and LATER records.
 */
static void changes_compare(struct changes *ch, uint64_t seq)
{
	struct ctrl *c = ch->f->c;
	size_t i;

	for (i = 0; i < ch->next.cap; i++) {
		const struct idmap_entry *e = &ch->next.e[i], *x;

		if (!e->id)
			continue;
		x = idmap_get(&ch->state, e->id, 0, false);
		if (x && (x->later || e->later))
			CCOUNT(c, change_later);
		else if (!x && e->later)
			CCOUNT(c, change_later);
		else if (!x && changes_new(ch, e->id))
			CCOUNT(c, change_new_between);
		else if (!x)
			changes_missing(ch, e->id, seq);
		else if (x->rec->hdr.size != e->rec->hdr.size ||
			 memcmp(&x->rec->id, &e->rec->id, e->rec->hdr.size - 8))
			changes_differ(ch, seq, x->rec, e->rec);
	}
	for (i = 0; i < ch->state.cap; i++) {
		const struct idmap_entry *x = &ch->state.e[i];

		if (!x->id || idmap_get(&ch->next, x->id, 0, false))
			continue;
		if (!dir_find(x->id) || rm_started(x->id, NULL, false))
			CCOUNT(c, change_removed_between);
		else
			FFAIL(ch->f, "cgroup %llu is in the state the change snapshots made, not in "
			      "the full snapshot %llu", (unsigned long long)x->id,
			      (unsigned long long)seq);
	}
	CCOUNT(c, change_compared);
}

static void changes_done(void *arg, const struct snap_decoder *d)
{
	struct changes *ch = arg;
	struct idmap tmp;

	if (ch->nr_path < 3) {
		ch->t_path[ch->nr_path] = d->snap.time_usec * 1000;
		ch->path[ch->nr_path++] = d->snap.seq;
	}
	if (d->snap.base_seq) {
		if (ch->seq)
			ch->seq = d->snap.seq;
		return;
	}
	if (ch->seq == d->snap.seq)
		changes_compare(ch, ch->seq);
	else if (ch->seq)
		CCOUNT(ch->f->c, change_skipped);
	tmp = ch->state;
	ch->state = ch->next;
	ch->next = tmp;
	idmap_clear(&ch->next);
	ch->seq = d->snap.seq;
	ch->nr_path = 1;
	ch->path[0] = ch->seq;
	ch->t_path[0] = d->snap.time_usec * 1000;
}

static void changes_abandon(void *arg)
{
	struct changes *ch = arg;

	idmap_clear(&ch->state);
	idmap_clear(&ch->next);
	ch->seq = 0;
}

/*
 * Per controller, one file on top or the root: a full snapshot, then one
 * or two change snapshots, then a full one again, as fast as they come.
 */
void *changes_reader(void *arg)
{
	struct role_arg *a = arg;
	struct changes ch[CTRLS_MAX] = { 0 };
	struct snap_hook hook[CTRLS_MAX];
	struct reader rd;

	reader_init(&rd, a->seed);
	while (running()) {
		for_each_ctrl(c) {
			int i = c - ctrls;
			struct sfile *f = &rd.f[i];
			struct cg_pick cg;

			if (f->fd < 0 || f->gone || rng_pct(&rd.rng, 2)) {
				file_close(f);
				if (!pick_for(&rd.rng, c, rng_pct(&rd.rng, 70) ? 0 : 6, &cg) ||
				    file_open(f, c, true, &cg))
					continue;
				ch[i].f = f;
				hook[i] = (struct snap_hook){ changes_rec, changes_done,
							      changes_abandon, &ch[i] };
				f->hook = &hook[i];
			}
			if (ch[i].seq && !read_snapshot(&rd, f, true) &&
			    (!rng_pct(&rd.rng, 30) || !read_snapshot(&rd, f, true)))
				read_snapshot(&rd, f, false);
			else if (!ch[i].seq)
				read_snapshot(&rd, f, false);
		}
		sleep_ms(rng_range(&rd.rng, 0, 30));
	}
	reader_fini(&rd);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* REMOVED accounting: a parent = its live children + its removed ones  */

#define ACCT_CHILDREN	64
struct acct {
	struct ctrl *c;
	struct sfile *f;
	uint64_t parent;
	unsigned int nr_children;	/* made under the parent, ever */
	struct {
		uint64_t id;
		uint64_t want[SCHEMA_NAMES_MAX];	/* its classic values before its rmdir */
		unsigned int nr_want;
		bool seen;
		int64_t t_rm;		/* when its rmdir started */
		int64_t seq_rm;		/* the publication then */
	} removed[ACCT_CHILDREN];
	unsigned int nr_removed;
	uint64_t removed_sum;
	/* the last snapshot's */
	bool parent_seen, later;
	uint64_t parent_value, live_sum;
	unsigned int flags;		/* SNAPSHOT's */
};

static void acct_rec(void *arg, const struct snap_decoder *d, const struct snap_rec *r)
{
	struct acct *x = arg;
	unsigned int i, k = x->c->acct_idx;
	uint64_t v = k < r->nr_values ? r->values[k] : 0;

	(void)d;
	x->later |= r->flags & CGROUP_STAT_CGROUP_F_LATER;
	if (r->type == CGROUP_STAT_REC_CGROUP && r->id == x->parent) {
		x->parent_seen = true;
		x->parent_value = v;
	} else if (r->type == CGROUP_STAT_REC_CGROUP) {
		x->live_sum += v;
	} else {
		for (i = 0; i < x->nr_removed && x->removed[i].id != r->id; i++)
			;
		if (i == x->nr_removed || x->removed[i].seen) {
			FFAIL(x->f, "a REMOVED record of cgroup %llu: %s", (unsigned long long)r->id,
			      i == x->nr_removed ? "not a child removed here" : "a second one");
			return;
		}
		x->removed[i].seen = true;
		x->removed_sum += v;
		COUNT(acct_removed);
		for (k = 0; k < x->removed[i].nr_want && k < r->nr_values; k++)
			if (r->values[k] != x->removed[i].want[k])
				FFAIL(x->f, "REMOVED cgroup %llu: %s %llu, its %s said %llu just "
				      "before its rmdir (no task in it since)", (unsigned long long)r->id,
				      x->c->names[k], (unsigned long long)r->values[k], x->c->classic,
				      (unsigned long long)x->removed[i].want[k]);
		if (r->nr_values != x->removed[i].nr_want)
			FFAIL(x->f, "REMOVED cgroup %llu has %u values, its %s %u",
			      (unsigned long long)r->id, r->nr_values, x->c->classic,
			      x->removed[i].nr_want);
	}
}

static void acct_done(void *arg, const struct snap_decoder *d)
{
	((struct acct *)arg)->flags = d->snap.hdr.flags;
}

/*
 * A full snapshot of the parent: false if it failed, or lost removals
 * (the round ends: its removed children's values are no longer known).
 */
static bool acct_read(struct reader *rd, struct acct *x)
{
	x->parent_seen = x->later = false;
	x->parent_value = x->live_sum = 0;
	if (read_snapshot(rd, x->f, false))
		return false;
	if (!(x->flags & CGROUP_STAT_SNAPSHOT_F_LOST))
		return true;
	COUNT(acct_lost);
	return false;
}

/*
 * The parent's value is its live children's plus its removed children's,
 * short by at most one unit per child (each child's value is rounded down
 * on its own, the parent's sum once); after a quiet spell (@quiet) every
 * removed child has been reported.
 */
static void acct_judge(struct acct *x, bool quiet)
{
	uint64_t sum = x->live_sum + x->removed_sum;
	unsigned int i;

	if (x->later) {
		COUNT(acct_skips_later);
		return;
	}
	if (!x->parent_seen)
		FFAIL(x->f, "no record of the opened cgroup");
	else if (x->parent_value < sum || x->parent_value - sum > x->nr_children)
		FFAIL(x->f, "snapshot %llu: %s %llu, its live children's %llu + its removed "
		      "children's %llu = %llu (off by %lld; %u children: at most that below)",
		      (unsigned long long)x->f->seq_last, x->c->acct_value,
		      (unsigned long long)x->parent_value, (unsigned long long)x->live_sum,
		      (unsigned long long)x->removed_sum, (unsigned long long)sum,
		      (long long)(x->parent_value - sum), x->nr_children);
	for (i = 0; quiet && i < x->nr_removed; i++)
		if (!x->removed[i].seen)
			FFAIL(x->f, "snapshot %llu (flags %#x), the first of a publication after the "
			      "rmdir of cgroup %llu (at %.3f s, publication %lld then), has no REMOVED "
			      "record of it", (unsigned long long)x->f->seq_last, x->flags,
			      (unsigned long long)x->removed[i].id,
			      (x->removed[i].t_rm - t_start) / 1e9, (long long)x->removed[i].seq_rm);
	if (quiet)
		COUNT(acct_checks_quiet);
	else
		COUNT(acct_checks_busy);
}

/* the burners into random ones of @children and running, or parked and stopped */
static void acct_burners(struct rng *rng, char (*children)[PATH_MAX], int n)
{
	for (int i = 0; i < NR_BURNERS; i++) {
		int err;

		if (n) {
			err = move_pid(children[rng_below(rng, n)], burners[i]);
			kill(burners[i], SIGCONT);
		} else {
			err = move_pid(park.path, burners[i]);
			kill(burners[i], SIGSTOP);
		}
		if (err)
			FAIL("moving burner %d: %s", burners[i], strerror(-err));
	}
}


/* removes child @path of the accounting parent, after reading its classic values */
static void acct_remove(struct reader *rd, struct acct *x, const char *path, uint64_t id)
{
	char why[160];
	ssize_t n;

	n = classic_text(x->c, path, rd->buf, TEXT_MAX);
	if (x->nr_removed < ACCT_CHILDREN && n >= 0 &&
	    !parse_body(x->c, rd->buf, n, true, -1, rd->sample, why)) {
		x->removed[x->nr_removed].id = id;
		x->removed[x->nr_removed].t_rm = now_ns();
		x->removed[x->nr_removed].seq_rm = seq_now(x->c);
		x->removed[x->nr_removed].nr_want = rd->sample->nr_values;
		memcpy(x->removed[x->nr_removed].want, rd->sample->values, 8 * rd->sample->nr_values);
		x->removed[x->nr_removed++].seen = false;
	} else {
		FAIL("read %s/%s: %s", path, x->c->classic, n < 0 ? strerror(-n) : why);
	}
	remove_ours(path, id);
}

/* the burners run in the children for 30-200 ms: a check at every publication */
static bool acct_busy(struct reader *rd, struct acct *x)
{
	int64_t end = now_ns() + rng_range(&rd->rng, 30, 200) * NSEC_PER_MSEC, left;

	while (running() && (left = end - now_ns()) > 0) {
		struct pollfd p = { .fd = x->f->fd, .events = POLLIN };

		if (poll(&p, 1, left / NSEC_PER_MSEC + 1) != 1 || !(p.revents & POLLIN))
			continue;
		if (!acct_read(rd, x))
			return false;
		acct_judge(x, false);
	}
	return true;
}

/*
 * After the rmdirs: snapshots read as publications come, until one of a
 * publication after the rmdirs returned, checked (within 5 s, times --slow).
 */
static bool acct_quiet(struct reader *rd, struct acct *x)
{
	int64_t after = seq_now(x->c), end = now_ns() + 5 * NSEC_PER_SEC * slow;

	while (after >= 0 && running() && now_ns() < end) {
		struct pollfd p = { .fd = x->f->fd, .events = POLLIN };

		if (poll(&p, 1, 100) != 1 || !(p.revents & POLLIN))
			continue;
		if (!acct_read(rd, x))
			return false;
		if ((int64_t)x->f->seq_last > after) {
			acct_judge(x, true);
			return true;
		}
	}
	COUNT(acct_waits_timed_out);
	return false;
}

/*
 * One parent: children made, the burners moved into some and out again
 * (never left to exit in them: an exiting task's last tick could land
 * after the rmdir), some children removed after their classic values were
 * read, a check at every publication and after each quiet spell.
 */
static void acct_round(struct reader *rd, struct ctrl *c, unsigned long gen)
{
	struct acct x = { .c = c, .f = &rd->f[0] };
	struct snap_hook hook = { acct_rec, acct_done, NULL, &x };
	char kids[ACCT_CHILDREN][PATH_MAX], name[64];
	uint64_t kid_ids[ACCT_CHILDREN];
	int nkids = 0, cycles = rng_range(&rd->rng, 4, 12), i;
	struct cg_pick cg = { .known = true, .under_top = true, .on = acct_area.on };

	snprintf(name, sizeof(name), "p%lu", gen);
	path_join(cg.path, sizeof(cg.path), acct_area.path, name);
	cg.id = x.parent = cg_mkdir(cg.path, acct_area.id, acct_area.on, false);
	cg.t_created = now_ns();
	if (!cg.id) {
		FAIL("mkdir %s: %s", cg.path, strerror(errno));
		sleep_ms(1000);
		return;
	}
	COUNT(acct_rounds);
	if (!wait_publication_after(c, cg.t_created, 5 * NSEC_PER_SEC) ||
	    file_open(x.f, c, true, &cg))
		goto out;
	x.f->hook = &hook;
	x.f->via = "accounting";
	if (!acct_read(rd, &x))
		goto out;
	acct_judge(&x, true);
	while (running() && cycles--) {
		for (int add = rng_range(&rd->rng, 1, 3); add-- && x.nr_children < ACCT_CHILDREN;) {
			snprintf(name, sizeof(name), "c%u", x.nr_children);
			path_join(kids[nkids], sizeof(kids[nkids]), cg.path, name);
			kid_ids[nkids] = cg_mkdir(kids[nkids], x.parent, 0, false);
			if (!kid_ids[nkids]) {
				FAIL("mkdir %s: %s", kids[nkids], strerror(errno));
				break;
			}
			nkids++;
			x.nr_children++;
			COUNT(acct_children);
		}
		acct_burners(&rd->rng, kids, nkids);
		if (!acct_busy(rd, &x))
			break;
		acct_burners(&rd->rng, kids, 0);
		for (i = nkids - 1; i >= 0; i--) {
			if (!cycles || rng_pct(&rd->rng, 50)) {
				acct_remove(rd, &x, kids[i], kid_ids[i]);
				nkids--;
				memmove(kids[i], kids[i + 1], (nkids - i) * sizeof(kids[0]));
				memmove(&kid_ids[i], &kid_ids[i + 1], (nkids - i) * sizeof(kid_ids[0]));
			}
		}
		if (!acct_quiet(rd, &x))
			break;
	}
out:
	acct_burners(&rd->rng, kids, 0);
	file_close(x.f);
	x.f->hook = NULL;
	while (nkids--)
		remove_ours(kids[nkids], kid_ids[nkids]);
	remove_ours(cg.path, cg.id);
}

void *accounting(void *arg)
{
	struct role_arg *a = arg;
	struct reader rd;
	unsigned long gen = 0;

	reader_init(&rd, a->seed);
	while (running())
		acct_round(&rd, a->c, gen++);
	reader_fini(&rd);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* pinning reader: snapshots read up to their first cgroup, kept open   */

struct pin {
	int fd;
	struct ctrl *c;
	struct cg_pick cg;
	struct snap_decoder d;
	off_t off;		/* where the snapshot goes on */
};
static struct pin pins[PIN_MAX];
static int nr_pins;

/*
 * Reads @p's snapshot a record at a time (a buffer of the next record's
 * size: 8 bytes more after each EINVAL) up to its first CGROUP record: 1
 * then, 0 if the snapshot ended first (a cgroup newer than the
 * publication), -1 on an error (reported unless its cgroup was removed).
 */
static int pin_read_first(struct pin *p, char *buf)
{
	size_t want = sizeof(struct cgroup_stat_snapshot);
	struct snap_rec r;
	char why[160];
	int ret;

	snap_decoder_init(&p->d, p->c->id);
	p->off = 0;
	for (;;) {
		ssize_t n = pread(p->fd, buf, want, p->off);
		size_t off = 0;

		if (n < 0 && errno == EINVAL && want < TEXT_MAX) {
			want += 8;
			continue;
		}
		if (n < 0 && errno == ENODEV && rm_started(p->cg.id, NULL, false))
			return -1;
		if (n < 0) {
			FAIL("%s/%s: %s", p->cg.path, file_name(p->c, true), strerror(errno));
			return -1;
		}
		if (!n)
			return 0;
		while ((ret = snap_next(&p->d, buf, n, &off, &r, why)) > 0)
			;
		if (ret < 0 || off != (size_t)n) {
			FAIL("%s/%s: a read of %zu bytes returned %zd: %s", p->cg.path,
			     file_name(p->c, true), want, n, ret < 0 ? why : "more than one record");
			return -1;
		}
		p->off += n;
		if (p->d.phase == 3)
			return 1;
		want = p->d.phase == 1 ? atomic_load(&p->c->schema_size) : 32;
		want = want ? want : 32;
	}
}

/*
 * Reads the rest of a pinned snapshot, long after: it goes on past what
 * was removed meanwhile, with valid records, none twice.
 */
static void pin_resume(struct pin *p, char *buf)
{
	struct idmap seen = { 0 };
	struct snap_rec r;
	char why[160];
	ssize_t n;
	int ret = 0;

	COUNT(pin_resumes);
	while ((n = pread(p->fd, buf, BIG_BUF, p->off)) > 0) {
		size_t off = 0;

		while ((ret = snap_next(&p->d, buf, n, &off, &r, why)) > 0) {
			struct idmap_entry *e = ret == 1 ? idmap_get(&seen, r.id, 0, true) : NULL;

			if (e && e->snap++)
				FAIL("%s/%s: cgroup %llu twice in a resumed snapshot", p->cg.path,
				     file_name(p->c, true), (unsigned long long)r.id);
		}
		if (ret < 0) {
			FAIL("%s/%s: resumed at %lld: %s", p->cg.path, file_name(p->c, true),
			     (long long)p->off, why);
			break;
		}
		p->off += n;
	}
	if (n < 0 && errno == ENODEV && rm_started(p->cg.id, NULL, false))
		COUNT(pin_resumed_gone);
	else if (n < 0)
		FAIL("%s/%s: resumed at %lld: %s", p->cg.path, file_name(p->c, true),
		     (long long)p->off, strerror(errno));
	free(seen.e);
}

/* a cgroup of the pin area with 1-3 children, published: its pick, or false */
static bool pin_area_cgroup(struct rng *rng, struct ctrl *c, unsigned long gen,
			    struct cg_pick *cg, char (*kids)[PATH_MAX], uint64_t *kid_ids, int *nkids)
{
	int want = rng_range(rng, 1, 3);
	char name[64];
	unsigned int on;

	*cg = (struct cg_pick){ .known = true, .under_top = true, .on = pin_area.on };
	snprintf(name, sizeof(name), "p%lu", gen);
	path_join(cg->path, sizeof(cg->path), pin_area.path, name);
	cg->id = cg_mkdir(cg->path, pin_area.id, pin_area.on, false);
	if (!cg->id)
		return FAIL("mkdir %s: %s", cg->path, strerror(errno)), false;
	on = enable_children(cg->path, pin_area.on);
	for (*nkids = 0; *nkids < want; ++*nkids) {
		snprintf(name, sizeof(name), "c%d", *nkids);
		path_join(kids[*nkids], PATH_MAX, cg->path, name);
		kid_ids[*nkids] = cg_mkdir(kids[*nkids], cg->id, on, false);
		if (!kid_ids[*nkids])
			return FAIL("mkdir %s: %s", kids[*nkids], strerror(errno)), true;
	}
	cg->t_created = now_ns();
	wait_publication_after(c, cg->t_created, 3 * NSEC_PER_SEC);
	return true;
}

/*
 * Opens subtree files, on cgroups of the pin area (then removes their
 * children) or of the churn, reads them up to their first cgroup and
 * keeps them; when it holds PIN_MAX, one goes (resumed first, at times).
 */
void *pinner(void *arg)
{
	struct role_arg *a = arg;
	char *buf = xmalloc(BIG_BUF), kids[3][PATH_MAX], file[PATH_MAX + 64];
	uint64_t kid_ids[3];
	unsigned long gen = 0;
	struct rng rng;

	rng_seed(&rng, a->seed);
	while (running()) {
		struct pin *p = &pins[nr_pins];
		bool area = rng_pct(&rng, 60);
		int nkids = 0, ret;

		sleep_ms(rng_range(&rng, 30, 200));
		if (nr_pins == PIN_MAX) {
			struct pin *old = &pins[rng_below(&rng, PIN_MAX)];

			if (rng_pct(&rng, 30))
				pin_resume(old, buf);
			close(old->fd);
			*old = pins[--nr_pins];
			continue;
		}
		p->c = pick_ctrl(&rng);
		if (area ? !pin_area_cgroup(&rng, p->c, gen++, &p->cg, kids, kid_ids, &nkids) :
		    !pick_cg(&rng, false, false, p->c, &p->cg))
			continue;
		ctrl_file(file, sizeof(file), p->cg.path, p->c, true);
		p->fd = open(file, O_RDONLY | O_CLOEXEC);
		if (p->fd < 0 && !(errno == ENOENT && rm_started(p->cg.id, NULL, false)))
			FAIL("open %s: %s", file, strerror(errno));
		ret = p->fd < 0 ? -1 : pin_read_first(p, buf);
		if (ret > 0) {
			nr_pins++;
			COUNT(pins);
			COUNT_N(pins_area, area);
			CCOUNT(p->c, pins);
		} else if (p->fd >= 0) {
			close(p->fd);
		}
		while (nkids--)
			remove_ours(kids[nkids], kid_ids[nkids]);
		if (area && rng_pct(&rng, 30))
			remove_ours(p->cg.path, p->cg.id);
	}
	free(buf);
	return NULL;
}

/* a cgroup's cgroup.stat nr_dying_descendants, or -1 */
static long nr_dying(const char *cg)
{
	char path[PATH_MAX], buf[512], *p;

	path_join(path, sizeof(path), cg, "cgroup.stat");
	if (read_file(path, buf, sizeof(buf)) < 0 || !(p = strstr(buf, "nr_dying_descendants ")))
		return -1;
	return atol(p + 21);
}

/*
 * The churn has stopped, the pinning files are still open: the pin area's
 * removed cgroups must all be freed within the bound, whatever the files
 * hold.  Then they are closed.
 */
void pins_check(void)
{
	int64_t t0 = now_ns(), end = t0 + DYING_DRAIN_NS * slow;
	long dying;

	while ((dying = nr_dying(pin_area.path)) > 0 && now_ns() < end)
		sleep_ms(50);
	printf("cgstress: pinning: %d files open, each read up to its first cgroup; the pin area's "
	       "nr_dying_descendants %ld after %.2f s (all of %s: %ld)\n", nr_pins, dying,
	       (now_ns() - t0) / 1e9, top, nr_dying(top));
	if (dying)
		FAIL("%s: nr_dying_descendants %ld, %.0f s after the churn stopped, with %d "
		     "pinning files open", pin_area.path, dying, DYING_DRAIN_NS * slow / 1e9, nr_pins);
	while (nr_pins)
		close(pins[--nr_pins].fd);
}

/* ------------------------------------------------------------------ */
/* storms: many files on one cgroup, removed                            */

atomic_long max_storm_rmdir_ns;

/*
 * @nfds files on a new cgroup (cpu.stat.stream only with @text_only, else
 * random controllers' text and subtree files), all epolled, then the
 * cgroup removed: every file reports EPOLLERR and reads ENODEV within the
 * hang limit.  The rmdir's time in seconds, or -1.
 */
static double storm(struct rng *rng, long nfds, bool text_only, unsigned long gen)
{
	int *fds = xcalloc(nfds, sizeof(*fds)), ep = epoll_create1(EPOLL_CLOEXEC), err;
	struct epoll_event *ev = xcalloc(nfds, sizeof(*ev));
	char path[PATH_MAX], name[64], file[PATH_MAX + 64];
	int64_t t0, t1, end;
	long i, open_fds = 0, left;
	double ret = -1;
	uint64_t id;

	snprintf(name, sizeof(name), "s%lu", gen);
	path_join(path, sizeof(path), storm_area.path, name);
	id = cg_mkdir(path, storm_area.id, storm_area.on, false);
	if (!id || ep < 0) {
		FAIL("mkdir %s or epoll_create1: %s", path, strerror(errno));
		goto out;
	}
	for (i = 0; i < nfds; i++, open_fds++) {
		struct ctrl *c = text_only ? &ctrls[0] : pick_ctrl(rng);
		struct epoll_event e = { .events = EPOLLIN | EPOLLPRI, .data.u64 = i };

		ctrl_file(file, sizeof(file), path, c, !text_only && rng_pct(rng, 50));
		fds[i] = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fds[i] < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e)) {
			FAIL("open and epoll %s (file %ld): %s", file, i, strerror(errno));
			open_fds += fds[i] >= 0;
			goto out;
		}
		if (!text_only)
			CCOUNT(c, storm_fds);
	}
	rm_start(id);
	t0 = now_ns();
	err = timed_rmdir(path, STORM_HANG_NS);
	t1 = now_ns();
	if (!err)
		rm_done(id);
	atomic_fetch_add(&rm_ends, 1);
	if (err) {
		FAIL("rmdir %s with %ld files open: %s", path, nfds, strerror(-err));
		goto out;
	}
	ret = (t1 - t0) / 1e9;
	note_max(&max_storm_rmdir_ns, t1 - t0);
	for (left = nfds, end = t1 + STORM_HANG_NS * slow; left && now_ns() < end;) {
		int n = epoll_wait(ep, ev, nfds, 100);

		for (int k = 0; k < n; k++) {
			if (!(ev[k].events & EPOLLERR))
				continue;
			epoll_ctl(ep, EPOLL_CTL_DEL, fds[ev[k].data.u64], NULL);
			COUNT(storm_err_events);
			left--;
		}
	}
	if (left)
		FAIL("%ld of the %ld files of the removed %s reported no EPOLLERR in %.0f s", left,
		     nfds, path, STORM_HANG_NS * slow / 1e9);
	for (i = 0; i < 16 && i < nfds; i++) {
		long k = rng_below(rng, nfds);

		if (pread(fds[k], file, sizeof(file), 0) >= 0 || errno != ENODEV)
			FAIL("file %ld of the removed %s: a read did not fail with ENODEV (%s)", k,
			     path, strerror(errno));
	}
	COUNT(storms);
	COUNT_N(storm_fds, nfds);
out:
	if (id && ret < 0 && !rm_started(id, NULL, false))
		remove_ours(path, id);
	for (i = 0; i < open_fds; i++)
		close(fds[i]);
	if (ep >= 0)
		close(ep);
	free(fds);
	free(ev);
	return ret;
}

static unsigned long storm_gen;

void *stormer(void *arg)
{
	struct role_arg *a = arg;
	struct rng rng;

	rng_seed(&rng, a->seed);
	while (running()) {
		for (int64_t until = now_ns() + rng_range(&rng, 3000, 8000) * NSEC_PER_MSEC;
		     running() && now_ns() < until;)
			sleep_ms(100);
		if (running())
			storm(&rng, storm_fds, false, storm_gen++);
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The rmdir of a cgroup with 500 and with 4,000 epolled cpu.stat.stream
 * files, three times each: printed, with the ratio of the medians (8 for
 * removal in O(N), 64 for O(N^2)).  A measurement, not a bound.
 */
void storm_measure(void)
{
	static const long sizes[2] = { 500, 4000 };
	double t[2][3], med[2];
	struct rng rng;

	rng_seed(&rng, seed ^ 0x570);
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < 3; k++)
			t[s][k] = storm(&rng, sizes[s], true, storm_gen++);
		qsort(t[s], 3, sizeof(t[s][0]), cmp_double);
		med[s] = t[s][1];
		printf("cgstress: storm: rmdir with %ld epolled %s files: %.4f %.4f %.4f s "
		       "(median %.4f s)\n", sizes[s], file_name(&ctrls[0], false), t[s][0], t[s][1],
		       t[s][2], med[s]);
	}
	if (med[0] > 0 && med[1] > 0)
		printf("cgstress: storm: 4000 / 500 files: rmdir %.1f times as long (8x the files)\n",
		       med[1] / med[0]);
}

/* ------------------------------------------------------------------ */
/* the unprivileged reader: uid 65534, the private subtree              */

pid_t noperm_pid;

/*
 * May a reader without privileges see @id, in a snapshot of top read since
 * @r0?  Not where it, or a directory between top and it, is 0700 since
 * before @r0.  -1 if @id is not ours (yet).
 */
static int noperm_visible(uint64_t id, int64_t r0)
{
	const struct dir *d = dir_find(id);

	if (!d)
		return -1;
	for (; d && id != top_id; id = d->parent, d = dir_find(id))
		if (d->t_private && d->t_private < r0)
			return 0;
	return 1;
}

/* one snapshot of top through @fd, checked: records as the rules allow */
static void noperm_snapshot(int fd, struct ctrl *c, bool changes, char *buf, struct idmap *ids,
			    uint64_t snap)
{
	const off_t start = changes ? (off_t)CGROUP_STAT_STREAM_CHANGES : 0;
	int64_t r0 = now_ns();
	struct snap_decoder d;
	size_t len = 0, nr = 0;
	struct snap_rec r;
	char why[160];
	ssize_t n;
	int i, ret;

	snap_decoder_init(&d, c->id);
	while ((n = pread(fd, buf, BIG_BUF, start + len)) > 0) {
		size_t off = 0;

		while ((ret = snap_next(&d, buf, n, &off, &r, why)) > 0) {
			int vis;

			if (ret != 1)
				continue;
			nr++;
			/*
			 * Made, not yet in the table: its cg_mkdir() is still
			 * under way (a thread can wait seconds between the mkdir
			 * and the table under TCG with KASAN).  Once no call is,
			 * every cgroup of ours is in it.
			 */
			for (i = 0; (vis = noperm_visible(r.id, r0)) < 0 && i < 3000 &&
				    atomic_load(&sh->mkdir_inflight); i++)
				sleep_ms(10);
			if (vis < 0)	/* its call may have ended since the look */
				vis = noperm_visible(r.id, r0);
			if (vis < 0)
				FAIL("%s/%s as uid %d: a %s record (flags %#x) of cgroup %llu, "
				     "parent %llu (%s), not one of ours", top, file_name(c, true),
				     NOBODY,
				     r.type == CGROUP_STAT_REC_CGROUP ? "CGROUP" : "REMOVED",
				     r.flags, (unsigned long long)r.id,
				     (unsigned long long)r.parent_id,
				     !r.parent_id ? "none" : r.parent_id == top_id ? "the top" :
				     dir_find(r.parent_id) ? "ours" : "not ours either");
			else if (!vis)
				FAIL("%s/%s as uid %d: a %s record of cgroup %llu, at or under a "
				     "0700 directory", top, file_name(c, true), NOBODY,
				     r.type == CGROUP_STAT_REC_CGROUP ? "CGROUP" : "REMOVED",
				     (unsigned long long)r.id);
			if (r.type == CGROUP_STAT_REC_CGROUP)
				idmap_get(ids, r.id, 0, true)->snap = snap;
		}
		if (ret < 0) {
			FAIL("%s/%s as uid %d: at %zu: %s", top, file_name(c, true), NOBODY, len, why);
			return;
		}
		len += n;
	}
	if (n < 0) {
		FAIL("%s/%s as uid %d: a read: %s", top, file_name(c, true), NOBODY, strerror(errno));
		return;
	}
	for (i = 0; i < NR_FIXED - 1 && !d.snap.base_seq; i++) {
		struct idmap_entry *e = idmap_get(ids, cgs[i].p.id, 0, false);

		if (has_files(c, &cgs[i].p) && (!e || e->snap != snap))
			FAIL("%s/%s as uid %d: snapshot %llu lacks %s", top, file_name(c, true),
			     NOBODY, (unsigned long long)d.snap.seq, cgs[i].p.path);
	}
	COUNT(noperm_snapshots);
	COUNT_N(noperm_records, nr);
}

/* the unprivileged reader's process: full and change snapshots of top, until told */
void noperm_main(void)
{
	int fds[CTRLS_MAX];
	struct idmap ids = { 0 };
	char *buf = xmalloc(BIG_BUF), path[PATH_MAX];
	uint64_t snap = 0;

	in_child = true;
	child_failures = &sh->child_failures;
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		FAIL("becoming uid %d: %s", NOBODY, strerror(errno));
		_exit(1);
	}
	/* after the change of credentials, which clears it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	for_each_ctrl(c) {
		ctrl_file(path, sizeof(path), top, c, true);
		fds[c - ctrls] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[c - ctrls] < 0) {
			FAIL("open %s as uid %d: %s", path, NOBODY, strerror(errno));
			_exit(1);
		}
	}
	while (!atomic_load(&sh->stop)) {
		snap++;
		for_each_ctrl(c)
			noperm_snapshot(fds[c - ctrls], c, snap % 2 == 0, buf, &ids, snap);
		sleep_ms(10 + snap % 40);
	}
	_exit(0);
}

