/* A group of processes forked by prism-propagate (propagate_group.h). The
 * ranks meet in memory shared before the fork. For the collective steps
 * (the setup's agreements, the summary at the end) every rank puts its
 * part in its own slot, they wait for one another at a process-shared
 * barrier, each reads what it needs, and they wait again before the slots
 * are used anew; parts larger than a slot go a slot at a time. During the
 * run the ranks claim batches from the cursor in that memory
 * (propagate_cursor.h), which also holds their CUDA start's turns and
 * says which rank ended its part. A rank that dies leaves
 * the others waiting, where the parent, seeing it end without having
 * ended its part, stops them.
 *
 * Each rank tells the parent that it ended its part on a pipe of its own,
 * and the parent returns once every rank has: the outputs are complete
 * then, and what is left of a rank, its exit with CUDA's teardown, goes on
 * without the user waiting for it. On two H100s, 10^9 photons, a lone
 * process ended 0.06 s after its main returned, and the parent of two
 * ranks, when it waited for their exits, 0.145-0.167 s after theirs. */
#define _GNU_SOURCE /* strsignal */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <omp.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "propagate_cursor.h"
#include "propagate_group.h"
#include "propagate_launch.h"
#include "propagate_ranks.h"
#include "propagate_tool.h"

#define SLOT_BYTES ((size_t)64 << 10)

typedef struct shared {
    pthread_barrier_t barrier;
    int size;
    int status[PROPAGATE_MAX_RANKS]; /* a rank's exit status, as the ranks agreed it */
    propagate_cursor cursor;         /* the batches, the turns and who ended */
    unsigned char slots[];           /* size x SLOT_BYTES */
} shared;

static size_t shared_bytes(int n)
{
    return sizeof(shared) + (size_t)n * SLOT_BYTES;
}

static shared *of(propagate_group *g)
{
    return g->impl;
}

static unsigned char *slot(shared *s, int rank)
{
    return s->slots + (size_t)rank * SLOT_BYTES;
}

static void meet(shared *s)
{
    pthread_barrier_wait(&s->barrier);
}

static void fork_allgather_to(propagate_group *g, const void *mine, size_t bytes, void *all,
                              bool every)
{
    shared *s = of(g);
    for (size_t off = 0; off < bytes; off += SLOT_BYTES) {
        const size_t c = bytes - off < SLOT_BYTES ? bytes - off : SLOT_BYTES;
        memcpy(slot(s, g->rank), (const unsigned char *)mine + off, c);
        meet(s);
        if (all != NULL && (every || g->rank == 0))
            for (int r = 0; r < g->size; r++)
                memcpy((unsigned char *)all + (size_t)r * bytes + off, slot(s, r), c);
        meet(s);
    }
}

static void fork_allgather(propagate_group *g, const void *mine, size_t bytes, void *all)
{
    fork_allgather_to(g, mine, bytes, all, true);
}

static void fork_gather(propagate_group *g, const void *mine, size_t bytes, void *all)
{
    fork_allgather_to(g, mine, bytes, all, false);
}

static void fork_bcast(propagate_group *g, void *buf, size_t bytes)
{
    shared *s = of(g);
    for (size_t off = 0; off < bytes; off += SLOT_BYTES) {
        const size_t c = bytes - off < SLOT_BYTES ? bytes - off : SLOT_BYTES;
        if (g->rank == 0)
            memcpy(slot(s, 0), (unsigned char *)buf + off, c);
        meet(s);
        if (g->rank != 0)
            memcpy((unsigned char *)buf + off, slot(s, 0), c);
        meet(s);
    }
}

#define REDUCE(T, NAME)                                                                            \
    static void NAME(propagate_group *g, T *v, size_t n, group_op op)                              \
    {                                                                                              \
        shared *s = of(g);                                                                         \
        const size_t per = SLOT_BYTES / sizeof(T);                                                 \
        for (size_t off = 0; off < n; off += per) {                                                \
            const size_t c = n - off < per ? n - off : per;                                        \
            memcpy(slot(s, g->rank), v + off, c * sizeof(T));                                      \
            meet(s);                                                                               \
            for (size_t i = 0; i < c; i++) {                                                       \
                T acc;                                                                             \
                memcpy(&acc, slot(s, 0) + i * sizeof(T), sizeof(T));                               \
                for (int r = 1; r < g->size; r++) {                                                \
                    T x;                                                                           \
                    memcpy(&x, slot(s, r) + i * sizeof(T), sizeof(T));                             \
                    acc = op == GROUP_SUM   ? acc + x                                              \
                          : op == GROUP_MIN ? (x < acc ? x : acc)                                  \
                                            : (x > acc ? x : acc);                                 \
                }                                                                                  \
                v[off + i] = acc;                                                                  \
            }                                                                                      \
            meet(s);                                                                               \
        }                                                                                          \
    }
REDUCE(uint64_t, fork_allreduce_u64)
REDUCE(double, fork_allreduce_f64)

static void fork_host(propagate_group *g, char *name, size_t size)
{
    (void)g;
    if (gethostname(name, size) != 0 && size > 0)
        snprintf(name, size, "localhost");
    if (size > 0)
        name[size - 1] = 0;
}

/* The parent sees this rank end without having ended its part, and stops
 * the others. */
static void fork_abort(propagate_group *g, int code)
{
    (void)g;
    fflush(NULL);
    _exit(code);
}

/* In a rank: its end of its pipe to the parent (-1 in the parent). */
static int ended_notice = -1;

static void fork_end(propagate_group *g, int status)
{
    shared *s = of(g);
    fflush(NULL); /* what it printed (rank 0: the summary) is out */
    s->status[g->rank] = status;
    propagate_cursor_ended(&s->cursor, g->rank); /* after the status, which it releases */
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, 0); /* the parent may end before this rank's exit */
#endif
    if (ended_notice >= 0) {
        const char notice = 1;
        while (write(ended_notice, &notice, 1) < 0 && errno == EINTR)
            ;
        close(ended_notice);
        ended_notice = -1;
    }
    munmap(s, shared_bytes(s->size));
    free(g);
}

static const group_ops fork_ops = {
    .allreduce_u64 = fork_allreduce_u64,
    .allreduce_f64 = fork_allreduce_f64,
    .bcast = fork_bcast,
    .allgather = fork_allgather,
    .gather = fork_gather,
    .host = fork_host,
    .abort = fork_abort,
    .end = fork_end,
};

/* --- the parent --- */

static pid_t children[PROPAGATE_MAX_RANKS];
static int children_n;
static volatile sig_atomic_t signalled;

static void pass_on(int sig)
{
    signalled = sig;
    for (int i = 0; i < children_n; i++)
        if (children[i] > 0)
            kill(children[i], sig);
}

static void stop_others(int except)
{
    for (int i = 0; i < children_n; i++)
        if (i != except && children[i] > 0)
            kill(children[i], SIGTERM);
}

/* What a rank that died had said (its stderr kept, propagate_ranks.h), on
 * the parent's stderr; every rank's kept file removed. */
static void said_and_removed(const pid_t *pids, int n, const bool *died)
{
    for (int r = 0; r < n; r++) {
        char path[512];
        propagate_ranks_capture_name(path, sizeof path, (long)pids[r], r);
        FILE *f = died[r] ? fopen(path, "rb") : NULL;
        if (f != NULL) {
            char line[1024];
            while (fgets(line, sizeof line, f) != NULL) {
                line[strcspn(line, "\n")] = 0;
                if (line[0] && line[0] != '\r')
                    fprintf(stderr, "[rank %d] %s\n", r, line);
            }
            fclose(f);
        }
        unlink(path);
    }
}

/* The parent's view of its ranks while it waits. */
typedef struct waiting {
    shared *s;
    int n;
    pid_t pids[PROPAGATE_MAX_RANKS];
    int notices[PROPAGATE_MAX_RANKS]; /* the pipes' read ends, -1 once read or closed */
    bool ended[PROPAGATE_MAX_RANKS];  /* told that it ended its part */
    bool gone[PROPAGATE_MAX_RANKS];   /* its exit seen */
    bool died[PROPAGATE_MAX_RANKS];   /* gone before its part's end */
    bool failed;
    int status;
} waiting;

/* Rank k's exit, with waitpid's st: a rank gone before its part's end
 * fails the job and stops the others. */
static void rank_gone(waiting *w, int k, int st)
{
    children[k] = 0;
    w->gone[k] = true;
    /* a rank that ended its part: the outputs are settled whatever
     * becomes of it afterwards (its exit, CUDA's teardown) */
    const bool done = propagate_cursor_has_ended(&w->s->cursor, k);
    if (k == 0)
        w->status = done ? w->s->status[0] : WIFEXITED(st) ? WEXITSTATUS(st) : PROPAGATE_FAILED;
    if (done && !WIFEXITED(st) && !signalled)
        fprintf(stderr,
                "prism-propagate: rank %d of %d ended by signal %d (%s) after its part of "
                "the run: the outputs are complete\n",
                k, w->n, WTERMSIG(st), strsignal(WTERMSIG(st)));
    if (done || w->failed)
        return;
    w->failed = true;
    w->died[k] = true;
    stop_others(k);
    if (signalled)
        return; /* the user stopped the run: the ranks end with it */
    if (WIFSIGNALED(st))
        fprintf(stderr,
                "prism-propagate: rank %d of %d ended by signal %d (%s) before the run's "
                "end: the others stopped, no output written\n",
                k, w->n, WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        fprintf(stderr,
                "prism-propagate: rank %d of %d ended (exit %d) before the run's end: the "
                "others stopped, no output written\n",
                k, w->n, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static int rank_of(const waiting *w, pid_t pid)
{
    int k = 0;
    while (k < w->n && w->pids[k] != pid)
        k++;
    return k;
}

/* The next exit of a rank not yet seen gone; false when none is left. */
static bool reap_one(waiting *w)
{
    int st = 0;
    const pid_t pid = waitpid(-1, &st, 0);
    if (pid < 0)
        return errno == EINTR; /* EINTR: a signal passed on; else no children left */
    const int k = rank_of(w, pid);
    if (k < w->n && !w->gone[k])
        rank_gone(w, k, st);
    return true;
}

/* One round of the ranks' notices: a byte is a rank that ended its part;
 * a pipe closed without one, a rank gone before that. False when poll
 * cannot be used (then the exits are waited for instead). */
static bool read_notices(waiting *w)
{
    struct pollfd p[PROPAGATE_MAX_RANKS];
    int rank[PROPAGATE_MAX_RANKS], m = 0;
    for (int k = 0; k < w->n; k++)
        if (w->notices[k] >= 0) {
            p[m] = (struct pollfd){.fd = w->notices[k], .events = POLLIN};
            rank[m++] = k;
        }
    if (poll(p, (nfds_t)m, -1) < 0)
        return errno == EINTR;
    for (int i = 0; i < m; i++) {
        if (p[i].revents == 0)
            continue;
        const int k = rank[i];
        char notice;
        const ssize_t got = read(w->notices[k], &notice, 1);
        if (got < 0 && errno == EINTR)
            continue;
        close(w->notices[k]);
        w->notices[k] = -1;
        if (got == 1) {
            w->ended[k] = true;
            if (k == 0)
                w->status = w->s->status[0];
            continue;
        }
        int st = 0;
        while (waitpid(w->pids[k], &st, 0) < 0 && errno == EINTR)
            ;
        rank_gone(w, k, st);
    }
    return true;
}

/* Whether the parent still waits: for every rank to end its part, or once
 * the job failed, for every rank's exit (the stopped ones remove their
 * temporary files first). */
static bool still_waiting(const waiting *w)
{
    for (int k = 0; k < w->n; k++)
        if (!w->gone[k] && (w->failed || !w->ended[k]))
            return true;
    return false;
}

/* The parent, until its ranks ended their parts: the job's exit status. */
static int wait_ranks(shared *s, int n, const int *notices)
{
    waiting w = {.s = s, .n = n, .status = PROPAGATE_FAILED};
    memcpy(w.pids, children, sizeof(pid_t) * (size_t)n);
    memcpy(w.notices, notices, sizeof(int) * (size_t)n);
    bool polling = true;
    while (still_waiting(&w)) {
        if (polling && !w.failed)
            polling = read_notices(&w);
        else if (!reap_one(&w))
            break; /* no children left to wait for */
    }
    for (int k = 0; k < n; k++) {
        int st = 0; /* an ended rank already gone: said if it died */
        if (!w.gone[k] && waitpid(w.pids[k], &st, WNOHANG) == w.pids[k])
            rank_gone(&w, k, st);
        if (w.notices[k] >= 0)
            close(w.notices[k]);
    }
    said_and_removed(w.pids, n, w.died);
    return w.failed ? PROPAGATE_FAILED : w.status;
}

/* The first n pipes closed, but for rank `keep`'s write end. */
static void close_pipes(int (*pipes)[2], int n, int keep)
{
    for (int k = 0; k < n; k++) {
        close(pipes[k][0]);
        if (k != keep)
            close(pipes[k][1]);
    }
}

bool propagate_group_fork(int n, propagate_group **g, int *status)
{
    *g = NULL;
    *status = PROPAGATE_FAILED;
    if (n < 2 || n > PROPAGATE_MAX_RANKS) {
        fprintf(stderr, "prism-propagate: %d processes: 2 to %d\n", n, PROPAGATE_MAX_RANKS);
        return false;
    }
    const double t0 = omp_get_wtime();
    shared *s = mmap(NULL, shared_bytes(n), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                     0);
    pthread_barrierattr_t attr;
    if (s == MAP_FAILED || pthread_barrierattr_init(&attr) != 0) {
        fprintf(stderr, "prism-propagate: no shared memory for %d processes: %s\n", n,
                strerror(errno));
        return false;
    }
    pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    const int made = pthread_barrier_init(&s->barrier, &attr, (unsigned)n);
    pthread_barrierattr_destroy(&attr);
    if (made != 0) {
        fprintf(stderr, "prism-propagate: a barrier for %d processes: %s\n", n, strerror(made));
        munmap(s, shared_bytes(n));
        return false;
    }
    const int locked = propagate_cursor_init(&s->cursor);
    if (locked != 0) {
        fprintf(stderr, "prism-propagate: a lock for %d processes: %s\n", n, strerror(locked));
        pthread_barrier_destroy(&s->barrier);
        munmap(s, shared_bytes(n));
        return false;
    }
    s->size = n;
    int pipes[PROPAGATE_MAX_RANKS][2]; /* rank k's notice that it ended its part */
    for (int k = 0; k < n; k++)
        if (pipe(pipes[k]) != 0) {
            fprintf(stderr, "prism-propagate: a pipe for rank %d of %d: %s\n", k, n,
                    strerror(errno));
            close_pipes(pipes, k, -1);
            pthread_barrier_destroy(&s->barrier);
            munmap(s, shared_bytes(n));
            return false;
        }
    fflush(NULL); /* nothing buffered is written twice */
    const pid_t parent = getpid();
    children_n = n;
    for (int k = 0; k < n; k++) {
        const pid_t pid = fork();
        if (pid == 0) {
#ifdef __linux__
            prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
            if (getppid() != parent) /* the parent died before that */
                _exit(PROPAGATE_FAILED);
            ended_notice = pipes[k][1];
            close_pipes(pipes, n, k);
            propagate_group *mine = calloc(1, sizeof *mine);
            if (mine == NULL)
                _exit(PROPAGATE_FAILED); /* the parent stops the others */
            *mine = (propagate_group){.rank = k,
                                      .size = n,
                                      .local_rank = k,
                                      .local_size = n,
                                      .launcher = "fork",
                                      .init_seconds = omp_get_wtime() - t0,
                                      .launch_seconds = propagate_launch_seconds(getpid(), parent),
                                      .node = &s->cursor,
                                      .member = k,
                                      .claims = true,
                                      .ops = &fork_ops,
                                      .impl = s};
            children_n = 0;
            *g = mine;
            return true;
        }
        if (pid < 0) {
            fprintf(stderr, "prism-propagate: cannot start rank %d of %d: %s\n", k, n,
                    strerror(errno));
            for (int j = 0; j < k; j++)
                kill(children[j], SIGKILL);
            for (int j = 0; j < k; j++)
                waitpid(children[j], NULL, 0);
            close_pipes(pipes, n, -1);
            munmap(s, shared_bytes(n));
            return false;
        }
        children[k] = pid;
    }
    int notices[PROPAGATE_MAX_RANKS];
    for (int k = 0; k < n; k++) { /* the read ends only: a rank's exit closes its pipe */
        close(pipes[k][1]);
        notices[k] = pipes[k][0];
    }
    /* the parent: the user's signals go on to the ranks, which remove
     * their temporary files as a lone process does */
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = pass_on;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
    *status = wait_ranks(s, n, notices);
    munmap(s, shared_bytes(n));
    if (signalled) { /* end as the signal would have ended a lone run */
        signal(signalled, SIG_DFL);
        raise(signalled);
    }
    return false;
}
