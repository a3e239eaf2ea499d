// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Many cgroups the caller names, read once per cycle (cycle.c) by the
 * modes picked for the cgroup2 root (mode.c), one per controller:
 * per-cgroup streams paced by the root's own stream of the lead
 * controller (mode-streams.c), or the emulation (mode-emulation.c).  The group's membership is named: members are found
 * by a hash of their path, so adding and removing are O(1) whatever the
 * group's size.
 * A member whose read fails leaves the group with a REMOVED (its cgroup
 * is gone) or ERROR event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct cgstream_group {
	struct cgs_set set;
	struct cgs_hash by_path;
	char *root;
};

static struct cgstream_group *cgs_group_of(struct cgs_set *s)
{
	return cgs_container_of(s, struct cgstream_group, set);
}

static void cgs_group_failed(struct cgs_set *s, struct cgs_cg *m, int err)
{
	cgs_set_drop(s, m, err == -ENODEV ? CGSTREAM_EVENT_REMOVED : CGSTREAM_EVENT_ERROR, err);
}

static void cgs_group_unlinked(struct cgs_set *s, struct cgs_cg *m)
{
	cgs_hash_del(&cgs_group_of(s)->by_path, &m->key);
}

static const struct cgs_set_ops cgs_group_ops = {
	.failed = cgs_group_failed,
	.unlinked = cgs_group_unlinked,
};

CGS_EXPORT int cgstream_group_new(const struct cgstream_opts *opts,
				  struct cgstream_group **ret)
{
	struct cgs_set_conf conf;
	struct cgstream_group *g;
	struct cgs_opts o;
	int r;

	if (!ret)
		return -EINVAL;
	r = cgs_opts_load(opts, &o);
	if (r < 0)
		return r;
	if (o.mode == CGSTREAM_MODE_SUBTREE)
		return -EINVAL;	/* a tree's mode */
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	r = cgs_find_root(&o, &g->root);
	if (r < 0)
		goto fail;
	r = cgs_set_conf_pick(&conf, g->root, g->root, &o, false);
	if (r < 0)
		goto fail;
	r = cgs_hash_init(&g->by_path);
	if (r < 0)
		goto fail;
	r = cgs_set_init(&g->set, &cgs_group_ops, &conf);
	if (r < 0) {
		cgs_hash_free(&g->by_path);
		goto fail;
	}
	*ret = g;
	return 0;
fail:
	free(g->root);
	free(g);
	return r;
}

CGS_EXPORT void cgstream_group_free(struct cgstream_group *g)
{
	if (!g)
		return;
	cgs_set_fini(&g->set);
	cgs_hash_free(&g->by_path);
	free(g->root);
	free(g);
}

static struct cgs_cg *cgs_group_find(struct cgstream_group *g, const char *path)
{
	for (struct cgs_hnode *n = cgs_hash_first(&g->by_path, cgs_hash_str(path)); n;
	     n = cgs_hash_next(n)) {
		struct cgs_cg *m = cgs_container_of(n, struct cgs_cg, key);

		if (strcmp(m->path, path) == 0)
			return m;
	}
	return NULL;
}

CGS_EXPORT int cgstream_group_add(struct cgstream_group *g, const char *cgroup,
				  void *userdata)
{
	struct cgs_cg *m;
	char *path = NULL;
	int r;

	if (!g || !cgroup)
		return -EINVAL;
	r = cgs_resolve(g->root, cgroup, &path);
	if (r < 0)
		return r;
	if (cgs_group_find(g, path)) {
		free(path);
		return -EEXIST;
	}
	m = cgs_cg_new(path, strlen(path));
	free(path);
	if (!m)
		return -ENOMEM;
	m->userdata = userdata;
	m->announced = true;	/* a group has no ADDED events */
	r = cgs_cg_open(&g->set, m, &m->id);
	if (r >= 0)
		r = cgs_set_link(&g->set, m);
	if (r < 0) {
		cgs_cg_free(m);
		return r;
	}
	cgs_hash_add(&g->by_path, &m->key, cgs_hash_str(m->path));
	return 0;
}

CGS_EXPORT int cgstream_group_remove(struct cgstream_group *g, const char *cgroup)
{
	struct cgs_cg *m;
	char *path = NULL;
	int r;

	if (!g || !cgroup)
		return -EINVAL;
	r = cgs_resolve(g->root, cgroup, &path);
	if (r < 0)
		return r;
	m = cgs_group_find(g, path);
	free(path);
	if (!m)
		return -ENOENT;
	m->quiet = true;	/* the caller asked: no event for it */
	cgs_set_drop(&g->set, m, CGSTREAM_EVENT_REMOVED, 0);
	return 0;
}

CGS_EXPORT size_t cgstream_group_size(const struct cgstream_group *g)
{
	return g ? g->set.n_live : 0;
}

CGS_EXPORT int cgstream_group_fd(const struct cgstream_group *g)
{
	return g ? g->set.epoll_fd : -EINVAL;
}

CGS_EXPORT int cgstream_group_mode(const struct cgstream_group *g)
{
	return g ? g->set.src->mode : -EINVAL;
}

CGS_EXPORT int cgstream_group_ctrl_mode(const struct cgstream_group *g, unsigned int ctrl)
{
	return g ? cgs_set_ctrl_mode(&g->set, ctrl) : -EINVAL;
}

CGS_EXPORT int cgstream_group_wait(struct cgstream_group *g, int timeout_ms)
{
	return g ? cgs_poll_in(g->set.epoll_fd, timeout_ms) : -EINVAL;
}

CGS_EXPORT int cgstream_group_process(struct cgstream_group *g,
				      struct cgstream_event *events, size_t max,
				      size_t event_size)
{
	if (!g)
		return -EINVAL;
	return cgs_set_process(&g->set, events, max, event_size);
}
