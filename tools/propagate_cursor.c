/* The batch cursor and the CUDA-start turns that the processes of one
 * node share (propagate_cursor.h). The cursor is under a process-shared
 * mutex; a batch's place among the hits is known once every batch
 * claimed before it is counted. */
#define _GNU_SOURCE /* O_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "progress.h"
#include "propagate_cursor.h"

enum { BATCH_FREE, BATCH_CLAIMED, BATCH_COUNTED, BATCH_PLACED };
enum { MADE_NEW, MADE_MAKING, MADE_READY };

/* How long a process waits for the one that makes a file's cursor */
#define MAKING_LIMIT 10.0

int propagate_cursor_init(propagate_cursor *c)
{
    pthread_mutexattr_t mattr;
    pthread_condattr_t cattr;
    int e = pthread_mutexattr_init(&mattr);
    if (e != 0)
        return e;
    e = pthread_condattr_init(&cattr);
    if (e != 0) {
        pthread_mutexattr_destroy(&mattr);
        return e;
    }
    pthread_mutexattr_setpshared(&mattr, PTHREAD_PROCESS_SHARED);
    pthread_condattr_setpshared(&cattr, PTHREAD_PROCESS_SHARED);
    e = pthread_mutex_init(&c->lock, &mattr);
    if (e == 0 && (e = pthread_cond_init(&c->changed, &cattr)) != 0)
        pthread_mutex_destroy(&c->lock);
    pthread_mutexattr_destroy(&mattr);
    pthread_condattr_destroy(&cattr);
    return e;
}

propagate_cursor *propagate_cursor_attach(const char *path, char *err, size_t err_size)
{
    const size_t bytes = sizeof(propagate_cursor);
    const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    /* every process sizes it (a file only grows: one already sized, and
     * perhaps in use, keeps its bytes) before any maps it */
    struct stat st;
    if (fstat(fd, &st) != 0 || ((size_t)st.st_size < bytes && ftruncate(fd, (off_t)bytes) != 0)) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    propagate_cursor *c = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const int mapped = errno;
    close(fd);
    if (c == MAP_FAILED) {
        snprintf(err, err_size, "%s: %s", path, strerror(mapped));
        return NULL;
    }
    /* the first to come makes the lock; the others wait until it has */
    int expect = MADE_NEW;
    if (__atomic_compare_exchange_n(&c->made, &expect, MADE_MAKING, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        const int e = propagate_cursor_init(c);
        if (e != 0) {
            snprintf(err, err_size, "%s: a lock for processes: %s", path, strerror(e));
            munmap(c, bytes); /* the others time out below */
            return NULL;
        }
        __atomic_store_n(&c->made, MADE_READY, __ATOMIC_RELEASE);
        return c;
    }
    const double t0 = tool_now();
    while (__atomic_load_n(&c->made, __ATOMIC_ACQUIRE) != MADE_READY) {
        if (tool_now() - t0 > MAKING_LIMIT) {
            snprintf(err, err_size, "%s: not made ready by the process that made it in %.0f s",
                     path, MAKING_LIMIT);
            munmap(c, bytes);
            return NULL;
        }
        usleep(200);
    }
    return c;
}

void propagate_cursor_detach(propagate_cursor *c)
{
    if (c != NULL)
        munmap(c, sizeof *c);
}

int propagate_cursor_claim(propagate_cursor *c, uint64_t total, uint64_t batch, uint64_t contexts,
                           uint64_t *first, uint64_t *count, uint64_t *seq)
{
    pthread_mutex_lock(&c->lock);
    *count = 0;
    const uint64_t left = c->next_first < total ? total - c->next_first : 0;
    if (left > 0) /* its entry free first (the batch CURSOR_RING before it placed) */
        while (!c->stopped && c->ring[c->next_seq % CURSOR_RING].state != BATCH_FREE)
            pthread_cond_wait(&c->changed, &c->lock);
    if (c->stopped) {
        pthread_mutex_unlock(&c->lock);
        return -1;
    }
    if (left > 0) {
        *count = prism_propagate_stream_cut(left, batch, contexts);
        *first = c->next_first;
        *seq = c->next_seq;
        c->ring[*seq % CURSOR_RING] = (cursor_entry){.seq = *seq, .state = BATCH_CLAIMED};
        c->next_first += *count;
        c->next_seq++;
    }
    pthread_mutex_unlock(&c->lock);
    return 0;
}

/* Batch seq's count told (once: a batch told early keeps it), and every
 * batch counted in a row from the first not placed given its place. Under
 * the lock. */
static void count_batch(propagate_cursor *c, uint64_t seq, uint64_t count, uint64_t hits)
{
    cursor_entry *e = &c->ring[seq % CURSOR_RING];
    if (e->seq != seq || e->state != BATCH_CLAIMED)
        return;
    e->count = count;
    e->hits = hits;
    e->state = BATCH_COUNTED;
    for (cursor_entry *n; (n = &c->ring[c->placed_upto % CURSOR_RING])->state == BATCH_COUNTED &&
                          n->seq == c->placed_upto;) {
        n->at = c->hits_upto;
        n->state = BATCH_PLACED;
        c->hits_upto += n->hits;
        c->photons_upto += n->count;
        c->placed_upto++;
    }
    pthread_cond_broadcast(&c->changed);
}

void propagate_cursor_count(propagate_cursor *c, uint64_t seq, uint64_t count, uint64_t hits)
{
    pthread_mutex_lock(&c->lock);
    count_batch(c, seq, count, hits);
    pthread_mutex_unlock(&c->lock);
}

int propagate_cursor_place(propagate_cursor *c, uint64_t seq, uint64_t count, uint64_t hits,
                           uint64_t *at)
{
    pthread_mutex_lock(&c->lock);
    cursor_entry *e = &c->ring[seq % CURSOR_RING];
    count_batch(c, seq, count, hits);
    while (!c->stopped && e->state != BATCH_PLACED)
        pthread_cond_wait(&c->changed, &c->lock);
    const int rc = e->state == BATCH_PLACED ? 0 : -1;
    if (rc == 0) {
        *at = e->at;
        e->state = BATCH_FREE;
        pthread_cond_broadcast(&c->changed);
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

void propagate_cursor_stop(propagate_cursor *c)
{
    pthread_mutex_lock(&c->lock);
    c->stopped = 1;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
}

uint64_t propagate_cursor_placed(propagate_cursor *c, uint64_t *photons)
{
    pthread_mutex_lock(&c->lock);
    const uint64_t hits = c->hits_upto;
    if (photons != NULL)
        *photons = c->photons_upto;
    pthread_mutex_unlock(&c->lock);
    return hits;
}

void propagate_cursor_turn(propagate_cursor *c, int member, double limit)
{
    if (member <= 0 || member >= PROPAGATE_MAX_RANKS)
        return;
    const double t0 = tool_now();
    while (!__atomic_load_n(&c->turned[member - 1], __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&c->ended[member - 1], __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&c->stopped, __ATOMIC_ACQUIRE) && tool_now() - t0 < limit)
        usleep(500);
}

void propagate_cursor_turned(propagate_cursor *c, int member)
{
    if (member >= 0 && member < PROPAGATE_MAX_RANKS)
        __atomic_store_n(&c->turned[member], 1, __ATOMIC_RELEASE);
}

void propagate_cursor_ended(propagate_cursor *c, int member)
{
    if (member >= 0 && member < PROPAGATE_MAX_RANKS)
        __atomic_store_n(&c->ended[member], 1, __ATOMIC_RELEASE);
}

bool propagate_cursor_has_ended(propagate_cursor *c, int member)
{
    return member >= 0 && member < PROPAGATE_MAX_RANKS &&
           __atomic_load_n(&c->ended[member], __ATOMIC_ACQUIRE) != 0;
}

void propagate_node_turn(propagate_group *g)
{
    if (g != NULL && g->node != NULL)
        propagate_cursor_turn(g->node, g->member, CURSOR_TURN_LIMIT);
}

void propagate_node_turned(propagate_group *g)
{
    if (g != NULL && g->node != NULL)
        propagate_cursor_turned(g->node, g->member);
}
