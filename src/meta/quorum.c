/* SPDX-License-Identifier: Apache-2.0 */
/* quorum: the raft glue. One libraft instance (libuv disk and TCP I/O) whose state machine is
 * the metadata image: every committed command entry is a batch (records.c) that the FSM
 * validates and applies (image.c), snapshots are the image's snapshot format. A small timer
 * watches raft's state, because libraft 0.15 has no leadership callback: it logs leader
 * changes and drives meta_ready (a barrier on the leader, catching up on a follower).
 *
 * Raft reserves id 0 for "nobody", while Kafka node ids start at 0, so the raft id of node n
 * is n + 1 everywhere in this file and nowhere else.
 *
 * libraft 0.15's disk format copies entry payloads as if their length were a multiple of 8
 * (an assert compiled out of release builds; other lengths corrupt the segment), so each
 * batch travels in an envelope (below). */

/*
** Raft entry payload:
**   OFFSET  SIZE  FIELD
**        0     4  batch length L (big-endian)
**        4     4  zero
**        8     L  the batch (records.c)
**      8+L     …  zero padding to a multiple of 8
*/
#include "meta/meta_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <raft.h>
#include <raft/uv.h>

#include "base/arena.h"
#include "base/err.h"
#include "base/slog.h"
#include "base/tclock.h"

#define META_HEARTBEAT_MS 100
#define META_ELECTION_MS 1000
#define META_SNAPSHOT_THRESHOLD 1024
#define META_SNAPSHOT_TRAILING 128
/* How often the watch timer looks at raft's state; short, so a one-voter quorum is ready a
 * few milliseconds after start. */
#define META_WATCH_MS 20

#define RAFT_ID(node) ((raft_id)(node) + 1)
#define NODE_ID(rid) ((int32_t)((rid)-1))

/* A proposal between raft_apply and its callback. */
struct meta_proposal {
    struct raft_apply req;
    struct meta *m;
    meta_propose_cb cb;
    void *arg;
    struct meta_proposal *prev, *next;
};

/* A standby being added: raft_add (as spare), then raft_assign to RAFT_STANDBY. */
struct meta_change {
    struct raft_change req;
    struct meta *m;
    raft_id id;
    bool assigning;
    meta_propose_cb cb;
    void *arg;
    struct meta_change *prev, *next;
};

struct meta {
    uv_loop_t *loop;
    /* meta_transfer_leadership: the one transfer in flight (cb NULL when none). */
    struct raft_transfer transfer;
    void (*transfer_cb)(void *arg, int err);
    void *transfer_arg;
    struct raft raft;
    struct raft_io io;
    struct raft_uv_transport transport;
    struct raft_fsm fsm;
    struct tclock *clock;
    struct tclock_timer watch;

    struct meta_image *img;
    char *cluster_id;
    int32_t node_id;
    meta_apply_cb on_apply;
    void *on_apply_arg;
    /* meta_subscribe: modules that react to applied batches, called after on_apply in the
     * order they subscribed. */
    struct meta_subscriber {
        meta_apply_cb cb;
        void *arg;
    } subs[META_MAX_SUBSCRIBERS];
    size_t n_subs;

    raft_id known_leader;
    struct raft_barrier barrier;
    bool barrier_pending;
    bool ready;
    /* The raft term whose barrier this node applied as leader: the image holds everything
     * committed before it took over (meta_controller_ready). */
    raft_term barrier_term;
    raft_term barrier_asked_term;
    bool follower_target_set;
    raft_index follower_target;
    /* A follower's readiness target, from the AppendEntries it receives (note_append): the
     * first commit index a leader announced once that commit covered an entry of the
     * leader's own term. 0 until then. libraft keeps nothing of the kind on a follower. */
    raft_index leader_commit_seen;
    raft_term seen_term;   /* the term of the AppendEntries looked at */
    raft_index term_index; /* the lowest index seen holding an entry of that term, or 0 */

    struct meta_proposal *proposals;
    struct meta_change *changes;

    /* DescribeQuorum's LastFetchTimestamp and LastCaughtUpTimestamp, which libraft does not
     * keep: the leader notes each follower's AppendEntries answers as they arrive (the I/O's
     * receive callback is wrapped: note_answer). Cleared with every new term. */
    struct meta_follower {
        raft_id id;
        int64_t answer_ms;     /* its last answer */
        int64_t caught_up_ms;  /* its last answer that showed it caught up */
        raft_index leader_end; /* the leader's last index at that follower's previous answer */
    } * followers;
    size_t n_followers, cap_followers;
    raft_term followers_term;
    int (*io_start)(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                    raft_io_recv_cb recv); /* libraft's own */
    raft_io_recv_cb io_recv_cb;            /* raft's, forwarded */

    bool stopping;
    int closing;               /* raft still closing */
    struct tclock_timer grace; /* delays the release of libraft's memory after it closed */
    void (*io_close)(struct raft_io *io, raft_io_close_cb cb); /* libraft's own */
    raft_io_close_cb io_closed_cb;                             /* raft's, forwarded once */
    bool io_closed;
    void (*stop_cb)(void *arg);
    void *stop_arg;
};

/* ---- FSM ----------------------------------------------------------------------------------- */

/* meta_apply_cb that fans a batch out to the options' callback and every subscriber. A
 * subscriber may unsubscribe itself from its callback. */
static void notify(void *arg, const struct meta_record *recs, size_t n)
{
    struct meta *m = arg;
    if (m->on_apply)
        m->on_apply(m->on_apply_arg, recs, n);
    for (size_t i = 0; i < m->n_subs; i++) {
        struct meta_subscriber s = m->subs[i];
        s.cb(s.arg, recs, n);
        if (i < m->n_subs && (m->subs[i].cb != s.cb || m->subs[i].arg != s.arg))
            i--; /* it left: the next one moved into its slot */
    }
}

int meta_subscribe(struct meta *m, meta_apply_cb cb, void *arg)
{
    for (size_t i = 0; i < m->n_subs; i++)
        if (m->subs[i].cb == cb && m->subs[i].arg == arg)
            return ERR_EXISTS;
    if (m->n_subs == META_MAX_SUBSCRIBERS)
        return ERR_NOMEM;
    m->subs[m->n_subs].cb = cb;
    m->subs[m->n_subs].arg = arg;
    m->n_subs++;
    return 0;
}

void meta_unsubscribe(struct meta *m, meta_apply_cb cb, void *arg)
{
    for (size_t i = 0; i < m->n_subs; i++) {
        if (m->subs[i].cb == cb && m->subs[i].arg == arg) {
            memmove(&m->subs[i], &m->subs[i + 1], (m->n_subs - i - 1) * sizeof m->subs[0]);
            m->n_subs--;
            return;
        }
    }
}

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
    struct meta *m = fsm->data;
    struct meta_rbuf r = {.p = buf->base, .len = buf->len};
    uint32_t blen = meta_r_u32(&r);
    int rv = ERR_PARSE;

    if (meta_r_u32(&r) == 0 && !r.bad && blen <= meta_r_left(&r))
        rv = meta_image_apply(m->img, r.p + 8, blen, notify, m);
    else
        meta_image_refuse(m->img);

    /* A rejected batch is a normal outcome (two racing creates of one topic); the code goes
     * back to the proposer through raft_apply's result. Returning non-zero here would stop
     * raft applying anything further. */
    if (rv == ERR_PARSE)
        slog_warn("meta", "node %d: skipped a malformed batch of %zu bytes", m->node_id, buf->len);
    *result = (void *)(intptr_t)rv;
    return 0;
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n_bufs)
{
    struct meta *m = fsm->data;
    uint8_t *p;
    size_t len;

    if (meta_image_snapshot(m->img, &p, &len) != 0)
        return RAFT_NOMEM;
    *bufs = malloc(sizeof **bufs);
    if (*bufs == NULL) {
        free(p);
        return RAFT_NOMEM;
    }
    (*bufs)[0].base = p;
    (*bufs)[0].len = len;
    *n_bufs = 1;
    return 0;
}

/* FSM version 2: raft hands the snapshot buffers back here, so they are freed with the
 * allocator that made them. */
static int fsm_snapshot_finalize(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n_bufs)
{
    (void)fsm;
    for (unsigned i = 0; i < *n_bufs; i++)
        free((*bufs)[i].base);
    free(*bufs);
    *bufs = NULL;
    *n_bufs = 0;
    return 0;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
    struct meta *m = fsm->data;
    struct arena *a = NULL;
    struct meta_record *recs = NULL;
    size_t n = 0;
    int rv = meta_image_restore(m->img, buf->base, buf->len);

    if (rv != 0) {
        slog_error("meta", "node %d: cannot restore a snapshot of %zu bytes: %s", m->node_id,
                   buf->len, err_name(rv));
        return rv == ERR_NOMEM ? RAFT_NOMEM : RAFT_MALFORMED;
    }
    /* On success the buffer is ours (libraft's contract for restore). */
    raft_free(buf->base);
    /* Modules that react to metadata learn about a restored image as the records that would
     * build it; they must treat these like any applied batch. */
    if (m->on_apply || m->n_subs > 0) {
        if (meta_image_records(m->img, &a, &recs, &n) == 0)
            notify(m, recs, n);
        else
            slog_error("meta", "node %d: out of memory reporting a restored snapshot", m->node_id);
        arena_free(a);
    }
    return 0;
}

/* ---- leadership and readiness ------------------------------------------------------------ */

static void barrier_cb(struct raft_barrier *req, int status)
{
    struct meta *m = req->data;
    m->barrier_pending = false;
    if (status == 0)
        m->barrier_term = m->barrier_asked_term;
    /* On failure (leadership lost) the watch timer tries again if this node leads again. */
    if (status == 0 && !m->ready) {
        m->ready = true;
        slog_info("meta", "node %d: metadata ready (controller, applied up to %llu)", m->node_id,
                  (unsigned long long)raft_last_applied(&m->raft));
    }
}

static struct meta_follower *follower_find(const struct meta *m, raft_id id)
{
    for (size_t i = 0; i < m->n_followers; i++)
        if (m->followers[i].id == id)
            return &m->followers[i];
    return NULL;
}

static struct meta_follower *follower_add(struct meta *m, raft_id id)
{
    if (m->n_followers == m->cap_followers) {
        size_t cap = m->cap_followers ? m->cap_followers * 2 : 8;
        struct meta_follower *p = realloc(m->followers, cap * sizeof *p);
        if (p == NULL)
            return NULL;
        m->followers = p;
        m->cap_followers = cap;
    }
    struct meta_follower *f = &m->followers[m->n_followers++];
    *f = (struct meta_follower){.id = id, .answer_ms = -1, .caught_up_ms = -1};
    return f;
}

/* On the leader, an AppendEntries answer from follower `id` of this term: the time it came,
 * and whether it shows the follower caught up, by Kafka's rule (KIP-836): its log reached what
 * the leader's had when the follower answered before. Out of memory only loses timestamps. */
static void note_answer(struct meta *m, raft_id id, const struct raft_append_entries_result *r)
{
    struct meta_follower *f;

    if (m->stopping || raft_state(&m->raft) != RAFT_LEADER || r->term != m->raft.current_term)
        return;
    if (m->followers_term != m->raft.current_term) {
        m->followers_term = m->raft.current_term;
        m->n_followers = 0;
    }
    f = follower_find(m, id);
    if (f == NULL && (f = follower_add(m, id)) == NULL)
        return;
    f->answer_ms = tclock_now_ms(m->clock);
    if (r->rejected == 0 && r->last_log_index >= f->leader_end)
        f->caught_up_ms = f->answer_ms;
    f->leader_end = raft_last_index(&m->raft);
}

static void watch_cb(struct tclock_timer *t)
{
    struct meta *m = t->data;
    raft_id leader;
    const char *address;

    if (m->stopping)
        return;
    raft_leader(&m->raft, &leader, &address);
    if (leader != m->known_leader) {
        m->known_leader = leader;
        if (leader == m->raft.id)
            slog_info("meta", "node %d is now the controller (raft leader, term %llu)", m->node_id,
                      (unsigned long long)m->raft.current_term);
        else if (leader != 0)
            slog_info("meta", "node %d: controller is node %d at %s", m->node_id, NODE_ID(leader),
                      address ? address : "?");
        else
            slog_info("meta", "node %d: no controller known", m->node_id);
    }
    if (raft_state(&m->raft) == RAFT_LEADER) {
        /* A new leader may not have applied everything its predecessors committed; the
         * barrier entry commits after all of it, so its callback means the image is whole.
         * Every term of leadership gets its own: the controller decides only on a whole image
         * (meta_controller_ready). */
        if (!m->barrier_pending && m->barrier_term != m->raft.current_term) {
            m->barrier.data = m;
            m->barrier_asked_term = m->raft.current_term;
            if (raft_barrier(&m->raft, &m->barrier, barrier_cb) == 0)
                m->barrier_pending = true;
        }
        return;
    }
    if (m->ready)
        return;
    /* A follower is ready once it has applied what its leader had committed, in the leader's
     * own term, when the follower first heard of it (note_append). Not this node's own commit
     * index, which a rejected AppendEntries (the leader's log ahead of this one, as after a
     * restart that missed entries) leaves where the restart put it, short of what the
     * cluster committed. */
    if (leader == 0)
        return;
    if (!m->follower_target_set && m->leader_commit_seen > 0) {
        m->follower_target = m->leader_commit_seen;
        m->follower_target_set = true;
    }
    if (m->follower_target_set && raft_last_applied(&m->raft) >= m->follower_target) {
        m->ready = true;
        slog_info("meta", "node %d: metadata ready (follower, applied up to %llu)", m->node_id,
                  (unsigned long long)raft_last_applied(&m->raft));
    }
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

/* mkdir -p: creates `dir` and its missing parents. 0 or -errno (base/err.h). */
static int make_dirs(const char *dir)
{
    char path[4096];
    size_t n = strlen(dir);

    if (n == 0 || n >= sizeof path)
        return n == 0 ? -ENOENT : -ENAMETOOLONG;
    memcpy(path, dir, n + 1);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* libraft 0.15 may run the close callback of its uv I/O twice: a segment writer that
 * finishes closing after everything else fires it a second time (upstream canonical/raft
 * #341; the fix was reverted there). raft's callback frees its memory, so a second run is a
 * double free. The I/O's close is wrapped to forward the first call only, and the I/O
 * itself is released after a grace period so that such a straggler still finds it alive. */
#define META_CLOSE_GRACE_MS 250

static struct meta *meta_of_io(struct raft_io *io)
{
    return (struct meta *)(void *)((char *)io - offsetof(struct meta, io));
}

static void io_closed_once(struct raft_io *io)
{
    struct meta *m = meta_of_io(io);
    if (m->io_closed)
        return;
    m->io_closed = true;
    m->io_closed_cb(io);
}

static void io_close_guarded(struct raft_io *io, raft_io_close_cb cb)
{
    struct meta *m = meta_of_io(io);
    m->io_closed_cb = cb;
    m->io_close(io, io_closed_once);
}

/* A follower's readiness target (watch_cb) from a leader's AppendEntries. A leader's commit
 * index is complete — at least everything any earlier leader committed — only once it covers
 * an entry of the leader's own term (raft's rule: a new leader counts earlier entries
 * committed only through one of its own), so announced commit indexes count only from then
 * on: after the whole quorum restarted, a new leader first announces the commit index it
 * restarted with. An entry's term shows in the message: the entry before the new ones
 * (prev_log_term) or the new ones themselves. */
static void note_append(struct meta *m, const struct raft_append_entries *ae)
{
    raft_index first = 0;

    if (m->ready || m->leader_commit_seen > 0 || ae->term < m->raft.current_term)
        return;
    if (ae->term != m->seen_term) {
        m->seen_term = ae->term;
        m->term_index = 0;
    }
    if (ae->prev_log_index > 0 && ae->prev_log_term == ae->term)
        first = ae->prev_log_index;
    for (unsigned k = 0; k < ae->n_entries && first == 0; k++)
        if (ae->entries[k].term == ae->term)
            first = ae->prev_log_index + 1 + k;
    if (first > 0 && (m->term_index == 0 || first < m->term_index))
        m->term_index = first;
    if (m->term_index > 0 && ae->leader_commit >= m->term_index)
        m->leader_commit_seen = ae->leader_commit;
}

/* libraft 0.15 records no time for a follower's answers, nor on a follower what its leader
 * has committed; the I/O's receive callback is wrapped to note both before raft handles each
 * message. */
static void io_recv_noting(struct raft_io *io, struct raft_message *msg)
{
    struct meta *m = meta_of_io(io);
    if (msg->type == RAFT_IO_APPEND_ENTRIES_RESULT)
        note_answer(m, msg->server_id, &msg->append_entries_result);
    if (msg->type == RAFT_IO_APPEND_ENTRIES)
        note_append(m, &msg->append_entries);
    m->io_recv_cb(io, msg);
}

static int io_start_noting(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                           raft_io_recv_cb recv)
{
    struct meta *m = meta_of_io(io);
    m->io_recv_cb = recv;
    return m->io_start(io, msecs, tick, io_recv_noting);
}

bool meta_dir_holds_log(const char *path)
{
    static const char *const marks[] = {"metadata1", "metadata2", "__cluster_metadata-0"};
    char p[PATH_MAX * 2 + 32];
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", path, marks[i]);
        if (access(p, F_OK) == 0)
            return true;
    }
    return false;
}

static void finish(struct meta *m)
{
    void (*cb)(void *) = m->stop_cb;
    void *arg = m->stop_arg;

    raft_uv_close(&m->io);
    raft_uv_tcp_close(&m->transport);
    /* libraft fails its pending requests while closing; anything still listed here never got
     * a callback, and its callback is owed. */
    while (m->proposals) {
        struct meta_proposal *p = m->proposals;
        m->proposals = p->next;
        p->cb(p->arg, ERR_SHUTDOWN);
        free(p);
    }
    while (m->changes) {
        struct meta_change *c = m->changes;
        m->changes = c->next;
        c->cb(c->arg, ERR_SHUTDOWN);
        free(c);
    }
    meta_image_free(m->img);
    free(m->cluster_id);
    free(m->followers);
    free(m);
    if (cb)
        cb(arg);
}

static void grace_over_cb(struct tclock_timer *t)
{
    tclock_timer_close(t);
    finish(t->data);
}

static void closed_one(struct meta *m)
{
    if (--m->closing > 0)
        return;
    tclock_timer_init(m->clock, &m->grace, grace_over_cb, m);
    if (tclock_timer_start(&m->grace, META_CLOSE_GRACE_MS, 0) != 0)
        grace_over_cb(&m->grace); /* no memory for a timer: release at once */
}

static void raft_closed_cb(struct raft *r)
{
    closed_one(r->data);
}

static void close_all(struct meta *m)
{
    m->stopping = true;
    m->closing = 1;
    tclock_timer_close(&m->watch);
    raft_close(&m->raft, raft_closed_cb);
}

/* "1@host:port,2@host:port", Kafka's controller.quorum.voters spelling, for the start line. */
static void format_voters(const struct meta_options *o, char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < o->n_voters && off < size; i++) {
        int k = snprintf(buf + off, size - off, "%s%d@%s", i ? "," : "", o->voters[i].id,
                         o->voters[i].address);
        if (k < 0)
            break;
        off += (size_t)k;
    }
}

int meta_start(uv_loop_t *loop, const struct meta_options *opts, struct meta **out)
{
    struct raft_configuration conf;
    struct meta *m;
    bool voter = false;
    char voters[1024];
    int rv;

    if (opts->clock == NULL || opts->node_id < 0 || opts->dir == NULL ||
        opts->listen_address == NULL || (opts->n_voters > 0 && opts->voters == NULL)) {
        slog_error("meta", "cannot start: clock, node id, dir and listen address are required");
        return ERR_INVALID_REQUEST;
    }
    rv = make_dirs(opts->dir);
    if (rv != 0) {
        slog_error("meta", "cannot create raft dir %s: %s", opts->dir, strerror(-rv));
        return ERR_IO;
    }
    m = calloc(1, sizeof *m);
    if (m == NULL)
        return ERR_NOMEM;
    m->loop = loop;
    m->clock = opts->clock;
    tclock_timer_init(m->clock, &m->watch, watch_cb, m);
    m->node_id = opts->node_id;
    m->on_apply = opts->on_apply;
    m->on_apply_arg = opts->on_apply_arg;
    m->img = meta_image_new();
    m->cluster_id = strdup(opts->cluster_id ? opts->cluster_id : "");
    if (m->img == NULL || m->cluster_id == NULL) {
        rv = ERR_NOMEM;
        goto err;
    }

    rv = raft_uv_tcp_init(&m->transport, loop);
    if (rv != 0) {
        slog_error("meta", "raft transport init: %s", raft_strerror(rv));
        rv = ERR_IO;
        goto err;
    }
    rv = raft_uv_init(&m->io, loop, opts->dir, &m->transport);
    if (rv != 0) {
        slog_error("meta", "raft storage in %s: %s", opts->dir, m->io.errmsg);
        rv = ERR_IO;
        goto err_after_transport;
    }
    m->io_close = m->io.close;
    m->io.close = io_close_guarded;
    m->io_start = m->io.start;
    m->io.start = io_start_noting;
    m->fsm = (struct raft_fsm){
        .version = 2,
        .data = m,
        .apply = fsm_apply,
        .snapshot = fsm_snapshot,
        .restore = fsm_restore,
        .snapshot_finalize = fsm_snapshot_finalize,
    };
    rv = raft_init(&m->raft, &m->io, &m->fsm, RAFT_ID(opts->node_id), opts->listen_address);
    if (rv != 0) {
        slog_error("meta", "raft init in %s: %s", opts->dir, raft_errmsg(&m->raft));
        rv = ERR_IO;
        goto err_after_io;
    }
    m->raft.data = m;
    raft_set_heartbeat_timeout(&m->raft, META_HEARTBEAT_MS);
    raft_set_election_timeout(&m->raft, META_ELECTION_MS);
    /* Pre-vote (raft thesis 9.6): a voter cut off for a while asks whether it could win
     * before it bumps its term, so its return does not depose a healthy controller. */
    raft_set_pre_vote(&m->raft, true);
    raft_set_snapshot_threshold(&m->raft, META_SNAPSHOT_THRESHOLD);
    raft_set_snapshot_trailing(&m->raft, META_SNAPSHOT_TRAILING);

    for (size_t i = 0; i < opts->n_voters; i++)
        if (opts->voters[i].id == opts->node_id)
            voter = true;
    format_voters(opts, voters, sizeof voters);
    slog_info("meta", "node %d starting as %s: dir %s, listener %s, voters %s", opts->node_id,
              voter ? "voter" : "standby", opts->dir, opts->listen_address, voters);

    /* Only voters bootstrap: a standby's configuration comes from the leader once it is
     * added, and bootstrapping it would make it a second, disjoint cluster. */
    if (voter) {
        raft_configuration_init(&conf);
        for (size_t i = 0; i < opts->n_voters && rv == 0; i++)
            rv = raft_configuration_add(&conf, RAFT_ID(opts->voters[i].id), opts->voters[i].address,
                                        RAFT_VOTER);
        if (rv == 0)
            rv = raft_bootstrap(&m->raft, &conf);
        raft_configuration_close(&conf);
        if (rv == RAFT_CANTBOOTSTRAP)
            rv = 0; /* an existing data dir: the normal restart path */
        if (rv != 0) {
            slog_error("meta", "raft bootstrap in %s: %s (%s)", opts->dir, raft_strerror(rv),
                       raft_errmsg(&m->raft));
            rv = ERR_IO;
            goto err_after_raft;
        }
    }
    rv = raft_start(&m->raft);
    if (rv != 0) {
        /* Either the log failed to load (damaged segments) or the raft listener could not
         * bind; libraft's message says which when it has one. */
        slog_error("meta",
                   "cannot start the metadata quorum (log %s, listener %s): %s (%s); refusing "
                   "to start (see docs/operations.md, start-up refusals)",
                   opts->dir, opts->listen_address, raft_strerror(rv), raft_errmsg(&m->raft));
        rv = ERR_IO;
        goto err_after_raft;
    }
    /* A voter's log always starts with the bootstrap configuration. If libraft loaded none,
     * segments of the log are missing or damaged (libraft drops a torn or corrupt segment
     * without saying so), and this node would wait for an election forever. */
    if (voter && m->raft.configuration.n == 0) {
        slog_error("meta",
                   "the metadata log in %s has no raft configuration (a segment is missing or "
                   "damaged; last index %llu); refusing to start rather than wait forever",
                   opts->dir, (unsigned long long)raft_last_index(&m->raft));
        rv = ERR_CORRUPT_MESSAGE;
        goto err_after_raft;
    }
    rv = tclock_timer_start(&m->watch, 0, META_WATCH_MS);
    if (rv != 0)
        goto err_after_raft;
    *out = m;
    return 0;

err_after_raft:
    /* raft_close is asynchronous: the instance is released once the loop runs its close. */
    close_all(m);
    return rv;
err_after_io:
    raft_uv_close(&m->io);
err_after_transport:
    raft_uv_tcp_close(&m->transport);
err:
    meta_image_free(m->img);
    free(m->cluster_id);
    free(m);
    return rv;
}

bool meta_ready(const struct meta *m)
{
    return m->ready;
}

static int map_raft_err(struct meta *m, int status);

static void transfer_cb(struct raft_transfer *req)
{
    struct meta *m = req->data;
    void (*cb)(void *, int) = m->transfer_cb;
    raft_id leader;
    const char *address;

    m->transfer_cb = NULL;
    raft_leader(&m->raft, &leader, &address);
    if (leader != 0 && leader != m->raft.id)
        slog_info("meta", "node %d handed the controller over to node %d", m->node_id,
                  NODE_ID(leader));
    if (cb)
        cb(m->transfer_arg, leader != 0 && leader != m->raft.id ? 0 : ERR_REQUEST_TIMED_OUT);
}

int meta_transfer_leadership(struct meta *m, void (*cb)(void *arg, int err), void *arg)
{
    int rv;
    if (m->stopping || raft_state(&m->raft) != RAFT_LEADER)
        return ERR_NOT_CONTROLLER;
    if (m->transfer_cb != NULL)
        return ERR_EXISTS;
    m->transfer.data = m;
    m->transfer_cb = cb;
    m->transfer_arg = arg;
    /* id 0: libraft picks the voter whose log is most up to date. */
    rv = raft_transfer(&m->raft, &m->transfer, 0, transfer_cb);
    if (rv != 0) {
        m->transfer_cb = NULL;
        /* A one-voter quorum has nobody to hand over to. */
        return rv == RAFT_NOTFOUND ? ERR_NOTFOUND : map_raft_err(m, rv);
    }
    return 0;
}

bool meta_controller_ready(const struct meta *m)
{
    return m->ready && raft_state((struct raft *)&m->raft) == RAFT_LEADER &&
           m->barrier_term == m->raft.current_term;
}

void meta_stop(struct meta *m, void (*cb)(void *arg), void *arg)
{
    m->stop_cb = cb;
    m->stop_arg = arg;
    close_all(m);
}

/* ---- proposals ---------------------------------------------------------------------------- */

static int map_raft_err(struct meta *m, int status)
{
    if (m->stopping || status == RAFT_SHUTDOWN)
        return ERR_SHUTDOWN;
    if (status == RAFT_NOTLEADER || status == RAFT_LEADERSHIPLOST)
        return ERR_NOT_CONTROLLER;
    if (status == RAFT_NOMEM)
        return ERR_NOMEM;
    slog_warn("meta", "node %d: raft request failed: %s", m->node_id, raft_strerror(status));
    return ERR_UNKNOWN_SERVER_ERROR;
}

static void apply_cb(struct raft_apply *req, int status, void *result)
{
    struct meta_proposal *p = req->data;
    struct meta *m = p->m;
    meta_propose_cb cb = p->cb;
    void *arg = p->arg;
    int err = status == 0 ? (int)(intptr_t)result : map_raft_err(m, status);

    if (p->prev)
        p->prev->next = p->next;
    else
        m->proposals = p->next;
    if (p->next)
        p->next->prev = p->prev;
    free(p);
    cb(arg, err);
}

int meta_propose(struct meta *m, const struct meta_record *recs, size_t n, meta_propose_cb cb,
                 void *arg)
{
    struct meta_proposal *p;
    struct raft_buffer rb;
    uint8_t *buf;
    size_t len;
    int rv;

    if (m->stopping || raft_state(&m->raft) != RAFT_LEADER)
        return ERR_NOT_CONTROLLER;
    rv = meta_batch_encode(recs, n, &buf, &len);
    if (rv != 0)
        return rv;
    if (len > UINT32_MAX) {
        free(buf);
        return ERR_INVALID_REQUEST;
    }
    /* Entry payloads must come from raft's allocator, which frees them; the envelope is
     * described at the top of this file. */
    rb.len = (8 + len + 7) & ~(size_t)7;
    rb.base = raft_calloc(1, rb.len);
    if (rb.base == NULL) {
        free(buf);
        return ERR_NOMEM;
    }
    meta_put_u32(rb.base, (uint32_t)len);
    memcpy((uint8_t *)rb.base + 8, buf, len);
    free(buf);
    p = calloc(1, sizeof *p);
    if (p == NULL) {
        rv = ERR_NOMEM;
        goto err_after_buf;
    }
    p->m = m;
    p->cb = cb;
    p->arg = arg;
    p->req.data = p;
    rv = raft_apply(&m->raft, &p->req, &rb, 1, apply_cb);
    if (rv != 0) {
        rv = map_raft_err(m, rv);
        goto err_after_proposal;
    }
    p->next = m->proposals;
    if (m->proposals)
        m->proposals->prev = p;
    m->proposals = p;
    return 0;

err_after_proposal:
    free(p);
err_after_buf:
    raft_free(rb.base);
    return rv;
}

/* ---- standbys ----------------------------------------------------------------------------- */

static void change_done(struct meta_change *c, int err)
{
    struct meta *m = c->m;
    meta_propose_cb cb = c->cb;
    void *arg = c->arg;

    if (c->prev)
        c->prev->next = c->next;
    else
        m->changes = c->next;
    if (c->next)
        c->next->prev = c->prev;
    free(c);
    cb(arg, err);
}

static int map_change_err(struct meta *m, int status)
{
    if (status == RAFT_CANTCHANGE)
        return ERR_REQUEST_TIMED_OUT;
    return map_raft_err(m, status);
}

static void change_cb(struct raft_change *req, int status)
{
    struct meta_change *c = req->data;
    struct meta *m = c->m;
    int rv;

    if (status != 0) {
        change_done(c, map_change_err(m, status));
        return;
    }
    if (c->assigning) {
        slog_info("meta", "node %d: added node %d as a standby", m->node_id, NODE_ID(c->id));
        change_done(c, 0);
        return;
    }
    /* raft_add makes a spare (no log); a second change makes it a standby (log, no vote). */
    c->assigning = true;
    rv = raft_assign(&m->raft, &c->req, c->id, RAFT_STANDBY, change_cb);
    if (rv != 0)
        change_done(c, map_change_err(m, rv));
}

int meta_add_standby(struct meta *m, int32_t id, const char *address, meta_propose_cb cb, void *arg)
{
    const struct raft_configuration *conf = &m->raft.configuration;
    struct meta_change *c;
    bool spare = false;
    int rv;

    if (m->stopping || raft_state(&m->raft) != RAFT_LEADER)
        return ERR_NOT_CONTROLLER;
    if (id < 0 || address == NULL)
        return ERR_INVALID_REQUEST;
    for (unsigned i = 0; i < conf->n; i++) {
        if (conf->servers[i].id != RAFT_ID(id))
            continue;
        /* A spare is a half-done earlier add: finish it rather than refuse it. */
        if (conf->servers[i].role != RAFT_SPARE)
            return ERR_EXISTS;
        spare = true;
    }
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return ERR_NOMEM;
    c->m = m;
    c->id = RAFT_ID(id);
    c->cb = cb;
    c->arg = arg;
    c->req.data = c;
    c->assigning = spare;
    if (spare)
        rv = raft_assign(&m->raft, &c->req, c->id, RAFT_STANDBY, change_cb);
    else
        rv = raft_add(&m->raft, &c->req, c->id, address, change_cb);
    if (rv != 0) {
        free(c);
        return map_change_err(m, rv);
    }
    c->next = m->changes;
    if (m->changes)
        m->changes->prev = c;
    m->changes = c;
    return 0;
}

/* ---- look-ups on the live image ------------------------------------------------------------ */

const struct meta_topic *meta_topic_by_name(const struct meta *m, const char *name)
{
    return meta_image_topic_by_name(m->img, name);
}

const struct meta_topic *meta_topic_by_id(const struct meta *m, const uint8_t id[16])
{
    return meta_image_topic_by_id(m->img, id);
}

const struct meta_topic *const *meta_topics(const struct meta *m, size_t *n)
{
    return meta_image_topics(m->img, n);
}

const struct meta_broker *meta_brokers(const struct meta *m, size_t *n)
{
    return meta_image_brokers(m->img, n);
}

const struct meta_acls *meta_acls(const struct meta *m)
{
    return meta_image_acls(m->img);
}

const struct meta_scram *meta_scram_credentials(const struct meta *m, size_t *n)
{
    return meta_image_scram(m->img, n);
}

const struct meta_scram *meta_scram_find(const struct meta *m, const char *user, int8_t mechanism)
{
    return meta_image_scram_find(m->img, user, mechanism);
}

const struct meta_quota *meta_quotas(const struct meta *m, size_t *n)
{
    return meta_image_quotas(m->img, n);
}

bool meta_quota_lookup(const struct meta *m, const char *user, const char *client_id, int key,
                       double *value)
{
    return meta_image_quota_lookup(m->img, user, client_id, key, value);
}

const struct meta_listener *meta_broker_listener(const struct meta_broker *b, const char *name)
{
    if (b->n_listeners < 1)
        return NULL;
    if (name == NULL)
        return &b->listeners[0];
    for (int32_t i = 0; i < b->n_listeners; i++)
        if (strcmp(b->listeners[i].name, name) == 0)
            return &b->listeners[i];
    return NULL;
}

const struct meta_broker *meta_broker_by_id(const struct meta *m, int32_t id)
{
    return meta_image_broker_by_id(m->img, id);
}

const char *meta_config_get(const struct meta *m, int8_t resource_type, const char *name,
                            const char *key)
{
    return meta_image_config_get(m->img, resource_type, name, key);
}

const struct meta_config_entry *meta_configs(const struct meta *m, int8_t resource_type,
                                             const char *name, int32_t *n)
{
    return meta_image_configs(m->img, resource_type, name, n);
}

void meta_raft_state(const struct meta *m, struct meta_raft_state *out)
{
    /* libraft's accessor takes a non-const handle but only reads. */
    struct raft *r = (struct raft *)&m->raft;
    out->term = r->current_term;
    out->commit_index = r->commit_index;
    out->applied_index = raft_last_applied(r);
}

int64_t meta_offset(const struct meta *m)
{
    return meta_image_offset(m->img);
}

const struct meta_image *meta_get_image(const struct meta *m)
{
    return m->img;
}

int64_t meta_next_producer_id(const struct meta *m)
{
    return meta_image_next_producer_id(m->img);
}

const char *meta_cluster_id(const struct meta *m)
{
    return m->cluster_id;
}

int32_t meta_controller_id(const struct meta *m)
{
    raft_id leader;
    const char *address;
    /* raft_leader takes a non-const raft but only reads it. */
    raft_leader((struct raft *)&m->raft, &leader, &address);
    return leader ? NODE_ID(leader) : -1;
}

bool meta_is_controller(const struct meta *m)
{
    return raft_state((struct raft *)&m->raft) == RAFT_LEADER;
}

int meta_describe_quorum(const struct meta *m, struct arena *a, struct meta_quorum *out)
{
    const struct raft_configuration *conf = &m->raft.configuration;
    int64_t now = tclock_now_ms(m->clock);

    memset(out, 0, sizeof *out);
    out->leader_id = meta_controller_id(m);
    out->leader_epoch = -1;
    out->high_watermark = -1;
    if (m->stopping || !meta_is_controller(m))
        return ERR_NOT_CONTROLLER;
    out->leader_epoch = (int32_t)m->raft.current_term;
    out->high_watermark = (int64_t)m->raft.commit_index;
    out->voters = arena_alloc(a, (conf->n + 1) * sizeof *out->voters);
    out->observers = arena_alloc(a, (conf->n + 1) * sizeof *out->observers);
    if (out->voters == NULL || out->observers == NULL)
        return ERR_NOMEM;
    for (unsigned i = 0; i < conf->n; i++) {
        const struct raft_server *s = &conf->servers[i];
        struct meta_quorum_replica *r;
        /* Spares hold no log: they are half-done additions, not members. */
        if (s->role == RAFT_VOTER)
            r = &out->voters[out->n_voters++];
        else if (s->role == RAFT_STANDBY)
            r = &out->observers[out->n_observers++];
        else
            continue;
        r->id = NODE_ID(s->id);
        r->last_fetch_ms = -1;
        if (s->id == m->raft.id) {
            r->log_end_offset = (int64_t)raft_last_index((struct raft *)&m->raft);
            r->last_caught_up_ms = now;
            continue;
        }
        raft_index match = m->raft.leader_state.progress[i].match_index;
        const struct meta_follower *f =
            m->followers_term == m->raft.current_term ? follower_find(m, s->id) : NULL;
        r->log_end_offset = match > 0 ? (int64_t)match : -1;
        r->last_fetch_ms = f != NULL ? f->answer_ms : -1;
        r->last_caught_up_ms = f != NULL ? f->caught_up_ms : -1;
    }
    return 0;
}
