/* Placement: the pure function that decides, for each geometry array, how
 * many bytes live in device memory and how many in mapped host memory, and
 * says why in words. No allocation, no device call: the upload carries the
 * plan out and the tests feed it made-up memory figures. */
#include <stdio.h>
#include <string.h>

#include "prism/placement.h"

/* "812 B", "12.3 kB", "1.50 MB", "80.0 GB": decimal units, as cudaMemGetInfo
 * figures are usually quoted. */
static const char *fmt_bytes(size_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB"};
    double v = (double)bytes;
    unsigned u = 0;
    while (v >= 1000.0 && u < 4) {
        v /= 1000.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%zu B", bytes);
    else
        snprintf(buf, size, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
    return buf;
}

#define FMT(bytes, slot) fmt_bytes((bytes), fmtbuf[slot], sizeof fmtbuf[slot])

static size_t reserve_of(const prism_placement_desc *d)
{
    if (d->reserve == 0)
        return PRISM_PLACEMENT_DEFAULT_RESERVE;
    if (d->reserve == PRISM_PLACEMENT_NO_RESERVE)
        return 0;
    return d->reserve;
}

static size_t element_of(const prism_placement_array *a)
{
    return a->element_size ? a->element_size : 1;
}

static void set(prism_placement *p, size_t device_bytes)
{
    p->device_bytes = device_bytes;
    p->mapped_bytes = p->bytes - device_bytes;
}

/* ---- auto: hottest first, split the splittable, map the rest. `limit`
 * names what bounds the device bytes: "above the reserve" (free memory) or
 * "of the 4.19 MB device budget" (desc.device_budget, where it is lower). */

static void auto_one(const prism_placement_array *a, prism_placement *p, size_t *avail,
                     size_t total, const char *limit, bool capped)
{
    char fmtbuf[3][32];
    if (a->bytes <= *avail) {
        set(p, a->bytes);
        snprintf(p->reason, sizeof p->reason, "device: heat %.3g, %s fits in the %s left %s",
                 a->heat, FMT(a->bytes, 0), FMT(*avail, 1), limit);
        *avail -= a->bytes;
        return;
    }
    size_t elem = element_of(a);
    size_t head = a->splittable ? (*avail / elem) * elem : 0;
    if (head > 0) {
        set(p, head);
        snprintf(p->reason, sizeof p->reason,
                 "split at element %zu: head %s on the device (all that is left %s), tail %s "
                 "mapped",
                 head / elem, FMT(head, 0), limit, FMT(a->bytes - head, 1));
        *avail -= head;
        return;
    }
    set(p, 0);
    if (!capped && total && a->bytes > total)
        snprintf(p->reason, sizeof p->reason, "mapped: %s is larger than the whole device (%s)",
                 FMT(a->bytes, 0), FMT(total, 1));
    else
        snprintf(p->reason, sizeof p->reason, "mapped: %s does not fit in the %s left %s",
                 FMT(a->bytes, 0), FMT(*avail, 1), limit);
}

static void plan_auto(const prism_placement_desc *d, prism_placement *plan, size_t avail,
                      bool capped)
{
    char fmtbuf[1][32], limit[64];
    if (capped)
        snprintf(limit, sizeof limit, "of the %s device budget", FMT(d->device_budget, 0));
    else
        snprintf(limit, sizeof limit, "above the reserve");
    /* Selection by heat, ties in input order: there are a few arrays, and a
     * sort would need scratch memory this function must not allocate. An
     * entry with a reason is done (empty arrays start done). */
    for (;;) {
        size_t best = d->array_count;
        for (size_t i = 0; i < d->array_count; i++) {
            if (plan[i].reason[0])
                continue;
            if (best == d->array_count || d->arrays[i].heat > d->arrays[best].heat)
                best = i;
        }
        if (best == d->array_count)
            return;
        auto_one(&d->arrays[best], &plan[best], &avail, d->total_bytes, limit, capped);
    }
}

/* ---- device and mapped: everything one way. */

static prism_result plan_device(const prism_placement_desc *d, prism_placement *plan, size_t avail,
                                size_t reserve, char *message, size_t message_size)
{
    char fmtbuf[4][32];
    size_t need = 0;
    for (size_t i = 0; i < d->array_count; i++)
        need += d->arrays[i].bytes;
    const bool over_budget = d->device_budget && need > d->device_budget;
    const bool fits = need <= avail && !over_budget;
    for (size_t i = 0; i < d->array_count; i++) {
        set(&plan[i], fits ? plan[i].bytes : 0);
        snprintf(plan[i].reason, sizeof plan[i].reason, "%s",
                 fits          ? "device: policy device"
                 : over_budget ? "policy device: not placed, the arrays exceed the device budget"
                               : "policy device: not placed, the arrays do not fit");
    }
    if (fits)
        return PRISM_SUCCESS;
    if (over_budget) {
        snprintf(message, message_size,
                 "placement policy device: the arrays need %s but the device budget is %s",
                 FMT(need, 0), FMT(d->device_budget, 1));
        return PRISM_ERROR_PLACEMENT;
    }
    snprintf(message, message_size,
             "placement policy device: the arrays need %s but free device memory %s less the "
             "reserve %s leaves %s",
             FMT(need, 0), FMT(d->free_bytes, 1), FMT(reserve, 2), FMT(avail, 3));
    return PRISM_ERROR_PLACEMENT;
}

static void plan_mapped(const prism_placement_desc *d, prism_placement *plan)
{
    for (size_t i = 0; i < d->array_count; i++) {
        set(&plan[i], 0);
        snprintf(plan[i].reason, sizeof plan[i].reason, "mapped: policy mapped");
    }
}

/* ---- chroma: GPUGeometry.__init__, step by step. `free` is what Chroma's
 * cuda.mem_get_info() would have answered at each step; signed, because
 * Chroma's (gpu_free - min_free_gpu_mem) goes negative. */

static void chroma_other(const prism_placement_array *a, prism_placement *p, long long *gpu_free)
{
    char fmtbuf[2][32];
    if ((long long)a->bytes <= *gpu_free) {
        set(p, a->bytes);
        *gpu_free -= (long long)a->bytes;
        snprintf(p->reason, sizeof p->reason,
                 "device: Chroma put per-triangle codes on the device unconditionally (ga.to_gpu)");
    } else {
        set(p, 0);
        snprintf(p->reason, sizeof p->reason,
                 "mapped: %s exceeds the %s free (Chroma's ga.to_gpu would have failed here)",
                 FMT(a->bytes, 0), FMT(*gpu_free > 0 ? (size_t)*gpu_free : 0, 1));
    }
}

static void chroma_nodes(const prism_placement_array *a, prism_placement *p, long long *gpu_free,
                         long long reserve)
{
    long long elem = (long long)element_of(a), n = (long long)(a->bytes / (size_t)elem);
    long long k = (*gpu_free - reserve) / elem; /* C truncates toward zero, as Python's int() */
    long long split = k < 100 ? 100 : k;
    if (split > n)
        split = n;
    set(p, (size_t)(split * elem));
    *gpu_free -= split * elem;
    if (split == n && k >= n)
        snprintf(p->reason, sizeof p->reason,
                 "device: all %lld nodes fit below (free - reserve)/node_size = %lld", n, k);
    else if (split == n)
        snprintf(p->reason, sizeof p->reason,
                 "device: all %lld nodes, as Chroma always kept at least 100 on the device", n);
    else
        snprintf(p->reason, sizeof p->reason,
                 "split at node %lld = max((free - reserve)/node_size, 100) of %lld, as Chroma",
                 split, n);
}

static void chroma_promote(const prism_placement_array *a, prism_placement *p, long long *gpu_free,
                           long long reserve)
{
    char fmtbuf[2][32];
    long long room = *gpu_free - reserve;
    if ((long long)a->bytes < room) {
        set(p, a->bytes);
        *gpu_free -= (long long)a->bytes;
        snprintf(p->reason, sizeof p->reason,
                 "device: promoted as Chroma, %s < free - reserve = %s", FMT(a->bytes, 0),
                 FMT((size_t)room, 1));
    } else {
        set(p, 0);
        snprintf(p->reason, sizeof p->reason,
                 "mapped: as Chroma, %s is not below free - reserve = %s%s", FMT(a->bytes, 0),
                 FMT(room > 0 ? (size_t)room : 0, 1), room > 0 ? "" : " (none)");
    }
}

static void plan_chroma(const prism_placement_desc *d, prism_placement *plan, size_t reserve)
{
    long long gpu_free = (long long)d->free_bytes, res = (long long)reserve;
    static const prism_array_role order[] = {PRISM_ARRAY_OTHER, PRISM_ARRAY_NODES,
                                             PRISM_ARRAY_TRIANGLES, PRISM_ARRAY_VERTICES};
    for (size_t r = 0; r < 4; r++) {
        for (size_t i = 0; i < d->array_count; i++) {
            const prism_placement_array *a = &d->arrays[i];
            if (a->role != order[r] || plan[i].reason[0])
                continue;
            if (order[r] == PRISM_ARRAY_OTHER)
                chroma_other(a, &plan[i], &gpu_free);
            else if (order[r] == PRISM_ARRAY_NODES)
                chroma_nodes(a, &plan[i], &gpu_free, res);
            else
                chroma_promote(a, &plan[i], &gpu_free, res);
        }
    }
}

/* ---- the entry point */

static prism_result check_mapped(const prism_placement_desc *d, const prism_placement *plan,
                                 char *message, size_t message_size)
{
    char fmtbuf[1][32];
    for (size_t i = 0; i < d->array_count; i++) {
        if (plan[i].mapped_bytes == 0)
            continue;
        snprintf(message, message_size,
                 "placement: \"%s\" needs %s of mapped host memory, but the context was created "
                 "with deny_mapped_memory",
                 plan[i].name ? plan[i].name : "?", FMT(plan[i].mapped_bytes, 0));
        return PRISM_ERROR_PLACEMENT;
    }
    return PRISM_SUCCESS;
}

static void init_plan(const prism_placement_desc *d, prism_placement *plan)
{
    for (size_t i = 0; i < d->array_count; i++) {
        memset(&plan[i], 0, sizeof plan[i]);
        plan[i].name = d->arrays[i].name;
        plan[i].bytes = d->arrays[i].bytes;
        plan[i].mapped_bytes = d->arrays[i].bytes;
        if (d->arrays[i].bytes == 0)
            snprintf(plan[i].reason, sizeof plan[i].reason, "empty: nothing to place");
    }
}

prism_result prism_placement_plan(const prism_placement_desc *d, prism_placement *plan,
                                  char *message, size_t message_size)
{
    char dummy[1];
    if (!message || message_size == 0)
        message = dummy, message_size = sizeof dummy;
    message[0] = 0;
    if (!d || (!plan && d->array_count) || (!d->arrays && d->array_count) ||
        (unsigned)d->policy >= PRISM_PLACEMENT_POLICY_COUNT_) {
        snprintf(message, message_size, "placement: %s",
                 !d ? "NULL descriptor"
                 : (unsigned)d->policy >= PRISM_PLACEMENT_POLICY_COUNT_
                     ? "unknown policy"
                     : "NULL arrays or plan with a nonzero count");
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    init_plan(d, plan);
    if (d->device_budget && d->policy == PRISM_PLACEMENT_CHROMA) {
        snprintf(message, message_size,
                 "placement policy chroma takes no device budget: Chroma's rule keeps at least "
                 "100 nodes on the device whatever is free");
        return PRISM_ERROR_INVALID_ARGUMENT;
    }
    size_t reserve = reserve_of(d);
    size_t avail = d->free_bytes > reserve ? d->free_bytes - reserve : 0;
    /* The budget bounds the device bytes where it is below what free memory
     * leaves; the reasons then name it rather than the reserve. */
    const bool capped = d->device_budget && d->device_budget < avail;
    if (capped)
        avail = d->device_budget;
    switch (d->policy) {
    case PRISM_PLACEMENT_DEVICE: return plan_device(d, plan, avail, reserve, message, message_size);
    case PRISM_PLACEMENT_MAPPED:
        plan_mapped(d, plan);
        if (d->deny_mapped) {
            snprintf(message, message_size,
                     "placement policy mapped: the context was created with deny_mapped_memory");
            return PRISM_ERROR_MAPPED_NOT_ALLOWED;
        }
        return PRISM_SUCCESS;
    case PRISM_PLACEMENT_CHROMA: plan_chroma(d, plan, reserve); break;
    default: plan_auto(d, plan, avail, capped); break;
    }
    return d->deny_mapped ? check_mapped(d, plan, message, message_size) : PRISM_SUCCESS;
}

static const char *const policy_names[PRISM_PLACEMENT_POLICY_COUNT_] = {"auto", "device", "mapped",
                                                                        "chroma"};

const char *prism_placement_policy_name(prism_placement_policy policy)
{
    return (unsigned)policy < PRISM_PLACEMENT_POLICY_COUNT_ ? policy_names[policy] : "?";
}

bool prism_placement_policy_parse(const char *name, prism_placement_policy *policy)
{
    for (unsigned i = 0; name && i < PRISM_PLACEMENT_POLICY_COUNT_; i++) {
        if (strcmp(name, policy_names[i]) == 0) {
            *policy = (prism_placement_policy)i;
            return true;
        }
    }
    return false;
}
