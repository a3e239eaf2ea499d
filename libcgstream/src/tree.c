// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A whole subtree: every cgroup below one, those that appear while it is
 * watched, and those that go away, one batch per cycle (cycle.c).  The
 * modes (mode.c picks one per controller, best first) do the reading:
 *
 * SUBTREE (mode-subtree.c): the root's *.stat.stream.subtree files, one
 * read each per cycle.  Records carry ids; a path comes from the
 * directories: the tree knows every cgroup's id (its directory's inode)
 * from a walk at open, and an id it does not know makes it read the
 * parent's directory, once per snapshot at most (the find hook below).
 *
 * KERNEL (mode-streams.c) and FALLBACK (mode-emulation.c): each cgroup's
 * stream or *.stat files.  When the lead controller is read so, the
 * tree's membership is discovered here: new cgroups through inotify
 * (IN_CREATE on every directory), and by a walk of every directory per
 * cycle when inotify is not there or its queue overflowed.
 *
 * A cgroup is announced (ADDED) in the first batch that has its sample;
 * one never announced goes without a REMOVED.  A cgroup removed and made
 * again under the same path is a new id: REMOVED (old) comes before ADDED
 * (new) in a batch.  A cgroup that cannot be read gets one ERROR event
 * and stays (its children are still watched); its samples come back when
 * it can be read again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define CGS_INOTIFY_BUF		(16 * 1024)
#define CGS_INOTIFY_MASK	(IN_CREATE | IN_ONLYDIR)

struct cgstream_tree {
	struct cgs_set set;
	char *path;			/* the root's, for the tree's whole life */
	struct cgs_hash by_id;
	struct cgs_hash by_path;	/* the live cgroups, by the hash of their path */
	struct cgs_hash by_wd;		/* KERNEL, FALLBACK: directory watches */
	struct cgs_cg *root;
	int inotify_fd;			/* -1: walk every directory per cycle */
	bool walk_always;		/* inotify missing, or out of watches */
	bool walk_next;			/* its queue overflowed: walk once */
	size_t n_unopened;		/* cgroups without an fd (open failed) */
	char *buf;			/* inotify events */
	size_t buf_size;
};

static struct cgstream_tree *cgs_tree_of(struct cgs_set *s)
{
	return cgs_container_of(s, struct cgstream_tree, set);
}

static struct cgs_cg *cgs_tree_find(const struct cgstream_tree *t, uint64_t id)
{
	struct cgs_hnode *n = cgs_hash_first(&t->by_id, id);

	return n ? cgs_container_of(n, struct cgs_cg, key) : NULL;
}

/* the lead is not read from snapshots: the tree finds new cgroups itself */
static bool cgs_tree_discovers(const struct cgstream_tree *t)
{
	return t->set.src != &cgs_mode_subtree;
}

/* some controller is read from each cgroup's files: fds per cgroup */
static bool cgs_tree_reads(const struct cgstream_tree *t)
{
	return t->set.by_mode[CGSTREAM_MODE_KERNEL] || t->set.by_mode[CGSTREAM_MODE_FALLBACK];
}

/* a cgroup whose data file cannot be opened or read: one ERROR per cause */
static void cgs_tree_error(struct cgstream_tree *t, struct cgs_cg *m, int err)
{
	if (m->error == err)
		return;
	m->error = err;
	cgs_set_error(&t->set, m, err);
}

/* open @m's files; false when its cgroup is gone */
static bool cgs_tree_open_data(struct cgstream_tree *t, struct cgs_cg *m)
{
	uint64_t id = m->id;
	int r;

	r = cgs_cg_open(&t->set, m, &id);
	if (r == -ENOENT || id != m->id) {
		cgs_cg_close(m);	/* a newer cgroup under that path */
		return false;
	}
	if (r == -ENOMEDIUM) {
		m->opened = true;	/* none of the tree's controllers: no values */
		return true;
	}
	if (r < 0) {
		cgs_tree_error(t, m, r);	/* EMFILE, EACCES: tried again next cycle */
		return true;
	}
	return true;
}

/* cycles a new cgroup waits for the removal of the one its path had */
#define CGS_HOLD_CYCLES		2

/* a live member other than @m at @m's path, or NULL */
static struct cgs_cg *cgs_tree_at_path(const struct cgstream_tree *t, const struct cgs_cg *m)
{
	struct cgs_hnode *n = cgs_hash_first(&t->by_path, cgs_hash_str(m->path));

	for (; n; n = cgs_hash_next(n)) {
		struct cgs_cg *o = cgs_container_of(n, struct cgs_cg, path_key);

		if (o != m && !strcmp(o->path, m->path))
			return o;
	}
	return NULL;
}

/*
 * A new cgroup at a path another member still has is not announced yet.
 * rmdir takes a cgroup offline, and the kernel records its removal (and
 * final values), a little after it returns: a cgroup made again at once
 * under the same path may be in a snapshot before the old one's REMOVED
 * record.  Announcing it then would hand out two cgroups under one path,
 * the new one's ADDED before the old one's REMOVED, which a consumer that
 * keys cgroups by path (the exporter's labels) cannot have.  So it waits
 * for the old one to go (the next snapshot, as a rule, with its final
 * values), CGS_HOLD_CYCLES cycles at most: then the old one is dropped
 * without them, before the new one's ADDED.
 */
static bool cgs_tree_hold(struct cgs_set *s, struct cgs_cg *m)
{
	struct cgs_cg *old = cgs_tree_at_path(cgs_tree_of(s), m);

	if (!old) {
		m->hold_cycle = 0;
		return false;
	}
	if (!m->hold_cycle)
		m->hold_cycle = s->cycle;
	if (s->cycle - m->hold_cycle < CGS_HOLD_CYCLES)
		return true;
	cgs_set_drop(s, old, CGSTREAM_EVENT_REMOVED, 0);
	return false;
}

/*
 * A new cgroup: @name (@len bytes) in @parent's directory, @id its inode.
 * KERNEL and FALLBACK open its data file and watch its directory.  NULL
 * when it is gone already or there is no memory (it is found again).
 */
static struct cgs_cg *cgs_tree_add(struct cgstream_tree *t, struct cgs_cg *parent,
				   const char *name, size_t len, uint64_t id)
{
	char path[PATH_MAX];
	struct cgs_cg *m;
	int plen;

	plen = snprintf(path, sizeof(path), "%s/%.*s", parent->path, (int)len, name);
	if (plen < 0 || (size_t)plen >= sizeof(path))
		return NULL;	/* no file in it could be opened either */
	m = cgs_cg_new(path, (size_t)plen);
	if (!m)
		return NULL;
	m->id = id;
	m->parent_id = parent->id;
	if (cgs_set_link(&t->set, m) < 0) {
		cgs_cg_free(m);
		return NULL;
	}
	cgs_hash_add(&t->by_id, &m->key, m->id);
	cgs_hash_add(&t->by_path, &m->path_key, cgs_hash_str(m->path));
	if (cgs_tree_reads(t)) {
		t->n_unopened++;
		if (!cgs_tree_open_data(t, m)) {
			/* gone already: never announced, so no event */
			cgs_set_drop(&t->set, m, CGSTREAM_EVENT_REMOVED, 0);
			return NULL;
		}
		if (m->opened)
			t->n_unopened--;
	} else {
		m->opened = true;
	}
	if (!cgs_tree_discovers(t))
		return m;
	if (t->inotify_fd >= 0 && !t->walk_always) {
		m->wd = inotify_add_watch(t->inotify_fd, m->path, CGS_INOTIFY_MASK);
		if (m->wd >= 0)
			cgs_hash_add(&t->by_wd, &m->wd_key, (uint64_t)m->wd);
		else
			t->walk_always = true;	/* ENOSPC: out of watches */
	}
	return m;
}

/*
 * Read @parent's directory and add the cgroups in it the tree does not
 * know.  In kernfs a directory entry's d_ino is the inode's number, the
 * cgroup's id.  New cgroups join the live list after @parent: a walk of
 * the list reaches them too.
 */
static void cgs_tree_scan(struct cgstream_tree *t, struct cgs_cg *parent)
{
	struct dirent *de;
	DIR *d;

	parent->scanned = t->set.snaps;
	d = opendir(parent->path);
	if (!d)
		return;	/* gone meanwhile: its read says so */
	while ((de = readdir(d))) {
		uint64_t id = de->d_ino;

		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (de->d_type == DT_UNKNOWN) {
			struct stat st;

			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISDIR(st.st_mode))
				continue;
			id = st.st_ino;
		} else if (de->d_type != DT_DIR) {
			continue;
		}
		if (!cgs_tree_find(t, id))
			cgs_tree_add(t, parent, de->d_name, strlen(de->d_name), id);
	}
	closedir(d);
}

/* every directory the tree knows, and those it finds on the way */
static void cgs_tree_walk(struct cgstream_tree *t)
{
	for (struct cgs_cg *m = t->set.head; m; m = m->next)
		cgs_tree_scan(t, m);
}

/* IN_CREATE events: the new directories, and what was made in them before
 * their watch was */
static void cgs_tree_inotify(struct cgstream_tree *t)
{
	ssize_t n;

	while ((n = read(t->inotify_fd, t->buf, t->buf_size)) > 0) {
		for (char *p = t->buf; p < t->buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)(void *)p;
			struct cgs_hnode *h;

			p += sizeof(*e) + e->len;
			if (e->mask & IN_Q_OVERFLOW) {
				t->walk_next = true;
				continue;
			}
			if (!(e->mask & IN_CREATE) || !(e->mask & IN_ISDIR) || !e->len)
				continue;
			h = cgs_hash_first(&t->by_wd, (uint64_t)e->wd);
			if (h) {
				struct cgs_cg *parent = cgs_container_of(h, struct cgs_cg, wd_key);
				struct cgs_cg *tail = t->set.tail;
				struct stat st;
				char path[PATH_MAX];

				if ((size_t)snprintf(path, sizeof(path), "%s/%s", parent->path,
						     e->name) >= sizeof(path) ||
				    stat(path, &st) < 0 || cgs_tree_find(t, st.st_ino))
					continue;
				if (!cgs_tree_add(t, parent, e->name, strlen(e->name), st.st_ino))
					continue;
				/* the new ones (this and its descendants) */
				for (struct cgs_cg *m = tail ? tail->next : t->set.head; m;
				     m = m->next)
					cgs_tree_scan(t, m);
			}
		}
	}
}

/* cgroups whose data file could not be opened: again */
static void cgs_tree_reopen(struct cgstream_tree *t)
{
	struct cgs_cg *m, *next;

	for (m = t->set.head; m && t->n_unopened; m = next) {
		next = m->next;
		if (m->opened)
			continue;
		if (!cgs_tree_open_data(t, m))
			cgs_set_drop(&t->set, m, CGSTREAM_EVENT_REMOVED, 0);
		else if (m->opened)
			t->n_unopened--;
	}
}

/* the root is gone: REMOVED for all, the root last; the tree ends */
static int cgs_tree_end(struct cgstream_tree *t)
{
	while (t->set.tail)
		cgs_set_drop(&t->set, t->set.tail, CGSTREAM_EVENT_REMOVED, -ENODEV);
	cgs_set_end(&t->set, -ENODEV);
	return -ENODEV;
}

/* SUBTREE: the member a record names; a new id, below a known parent,
 * is looked for in the parent's directory, once per snapshot: each
 * controller's may be the first to list a cgroup made during the cycle */
static struct cgs_cg *cgs_tree_find_record(struct cgs_set *s, uint64_t id, uint64_t parent_id)
{
	struct cgstream_tree *t = cgs_tree_of(s);
	struct cgs_cg *m = cgs_tree_find(t, id), *parent;

	if (m || !parent_id)
		return m;
	parent = cgs_tree_find(t, parent_id);
	if (parent && parent->scanned != s->snaps) {
		cgs_tree_scan(t, parent);
		m = cgs_tree_find(t, id);
	}
	return m;
}

/* the cgroups that appeared, before the cycle's reads; files to open again */
static int cgs_tree_refresh(struct cgs_set *s)
{
	struct cgstream_tree *t = cgs_tree_of(s);

	if (t->n_unopened)
		cgs_tree_reopen(t);
	if (!cgs_tree_discovers(t))
		return 0;	/* the snapshot names them */
	if (t->inotify_fd >= 0)
		cgs_tree_inotify(t);
	if (t->walk_always || t->walk_next) {
		t->walk_next = false;
		cgs_tree_walk(t);
	}
	return 0;
}

static void cgs_tree_failed(struct cgs_set *s, struct cgs_cg *m, int err)
{
	struct cgstream_tree *t = cgs_tree_of(s);

	if (err != -ENODEV)
		cgs_tree_error(t, m, err);
	else if (m == t->root)
		cgs_tree_end(t);
	else
		cgs_set_drop(s, m, CGSTREAM_EVENT_REMOVED, 0);
}

static void cgs_tree_unlinked(struct cgs_set *s, struct cgs_cg *m)
{
	struct cgstream_tree *t = cgs_tree_of(s);
	struct cgs_cg *held;

	cgs_hash_del(&t->by_id, &m->key);
	cgs_hash_del(&t->by_path, &m->path_key);
	/* a cgroup held back for @m's path goes out this cycle */
	held = cgs_tree_at_path(t, m);
	if (held && !held->announced)
		cgs_set_list(s, held);
	if (m->wd >= 0) {
		cgs_hash_del(&t->by_wd, &m->wd_key);
		inotify_rm_watch(t->inotify_fd, m->wd);	/* EINVAL once it is gone */
		m->wd = -1;
	}
	if (!m->opened && cgs_tree_reads(t) && t->n_unopened)
		t->n_unopened--;
	if (m == t->root)
		t->root = NULL;
}

static int cgs_tree_tick_failed(struct cgs_set *s, int err)
{
	return err == -ENODEV ? cgs_tree_end(cgs_tree_of(s)) : err;
}

static const struct cgs_set_ops cgs_tree_ops = {
	.refresh = cgs_tree_refresh,
	.find = cgs_tree_find_record,
	.failed = cgs_tree_failed,
	.unlinked = cgs_tree_unlinked,
	.hold = cgs_tree_hold,
	.tick_failed = cgs_tree_tick_failed,
};

/* --- the object --- */

CGS_EXPORT void cgstream_tree_close(struct cgstream_tree *t)
{
	if (!t)
		return;
	cgs_set_fini(&t->set);
	cgs_hash_free(&t->by_id);
	cgs_hash_free(&t->by_path);
	cgs_hash_free(&t->by_wd);
	if (t->inotify_fd >= 0)
		close(t->inotify_fd);
	free(t->buf);
	free(t->path);
	free(t);
}

/* the root cgroup: its id, data file and watch */
static int cgs_tree_root(struct cgstream_tree *t)
{
	struct cgs_cg *root = cgs_cg_new(t->path, strlen(t->path));
	struct stat st;
	int r = 0;

	if (!root)
		return -ENOMEM;
	if (stat(t->path, &st) < 0)
		r = -errno;
	else
		root->id = st.st_ino;
	if (r == 0 && cgs_tree_reads(t))
		r = cgs_cg_open(&t->set, root, &root->id);
	else
		root->opened = true;
	if (r == 0 && cgs_tree_discovers(t)) {
		t->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (t->inotify_fd >= 0)
			root->wd = inotify_add_watch(t->inotify_fd, t->path, CGS_INOTIFY_MASK);
		t->walk_always = root->wd < 0;
	}
	if (r >= 0)
		r = cgs_set_link(&t->set, root);
	if (r < 0) {
		cgs_cg_free(root);
		return r;
	}
	t->root = root;
	cgs_hash_add(&t->by_id, &root->key, root->id);
	cgs_hash_add(&t->by_path, &root->path_key, cgs_hash_str(root->path));
	if (root->wd >= 0)
		cgs_hash_add(&t->by_wd, &root->wd_key, (uint64_t)root->wd);
	return 0;
}

CGS_EXPORT int cgstream_tree_open(const char *cgroup, const struct cgstream_opts *opts,
				  struct cgstream_tree **ret)
{
	struct cgs_set_conf conf;
	struct cgstream_tree *t;
	char *mount = NULL;
	struct cgs_opts o;
	int r;

	if (!cgroup || !ret)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->inotify_fd = -1;
	r = cgs_opts_root(opts, &o, &mount);
	if (r == 0)
		r = cgs_resolve(mount, cgroup, &t->path);
	if (r == 0)
		r = cgs_set_conf_pick(&conf, t->path, mount, &o, true);
	if (r < 0)
		goto fail;
	if (cgs_hash_init(&t->by_id) < 0 || cgs_hash_init(&t->by_path) < 0 ||
	    cgs_hash_init(&t->by_wd) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	r = cgs_set_init(&t->set, &cgs_tree_ops, &conf);
	if (r < 0)
		goto fail;
	t->buf_size = CGS_INOTIFY_BUF;
	t->buf = malloc(t->buf_size);
	r = t->buf ? cgs_tree_root(t) : -ENOMEM;
	if (r < 0)
		goto fail;
	cgs_tree_walk(t);
	free(mount);
	*ret = t;
	return 0;
fail:
	free(mount);
	cgstream_tree_close(t);
	return r;
}

CGS_EXPORT int cgstream_tree_fd(const struct cgstream_tree *t)
{
	return t ? t->set.epoll_fd : -EINVAL;
}

CGS_EXPORT int cgstream_tree_mode(const struct cgstream_tree *t)
{
	return t ? t->set.src->mode : -EINVAL;
}

CGS_EXPORT int cgstream_tree_ctrl_mode(const struct cgstream_tree *t, unsigned int ctrl)
{
	return t ? cgs_set_ctrl_mode(&t->set, ctrl) : -EINVAL;
}

CGS_EXPORT int cgstream_tree_publication(const struct cgstream_tree *t, unsigned int ctrl,
					 struct cgstream_publication *pub, size_t pub_size)
{
	struct cgstream_publication p;
	struct cgs_flush f;
	int r;

	if (!t || !pub || pub_size < sizeof(p))
		return -EINVAL;
	r = cgs_set_publication(&t->set, ctrl, &f);
	if (r < 0)
		return r;
	p = (struct cgstream_publication){ .seq = f.seq, .time_usec = f.time_usec,
					   .skipped = f.missed };
	memcpy(pub, &p, sizeof(p));
	if (pub_size > sizeof(p))
		memset((char *)pub + sizeof(p), 0, pub_size - sizeof(p));
	return 0;
}

CGS_EXPORT int cgstream_tree_sync(struct cgstream_tree *t)
{
	return t ? cgs_set_sync(&t->set) : -EINVAL;
}

CGS_EXPORT const char *cgstream_tree_path(const struct cgstream_tree *t)
{
	return t ? t->path : NULL;
}

CGS_EXPORT size_t cgstream_tree_size(const struct cgstream_tree *t)
{
	return t ? t->set.n_live : 0;
}

CGS_EXPORT int cgstream_tree_wait(struct cgstream_tree *t, int timeout_ms)
{
	return t ? cgs_poll_in(t->set.epoll_fd, timeout_ms) : -EINVAL;
}

CGS_EXPORT int cgstream_tree_process(struct cgstream_tree *t, struct cgstream_event *events,
				     size_t max, size_t event_size)
{
	if (!t)
		return -EINVAL;
	return cgs_set_process(&t->set, events, max, event_size);
}
