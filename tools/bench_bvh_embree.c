/* Embree 3's side of `prism-bench bvh`: the default scene build and
 * rtcIntersect1 on it, and a 2-wide tree from rtcBuildBVH (Embree's binned
 * SAH builder with our leaf size and SAH constants) that we can read and
 * cost with Prism's SAH formula. The default scene's own tree (BVH4/8 with
 * triangle4 leaves) is not readable through Embree's API, so its SAH cost is
 * not reported. Without Embree at build time this file reports so. */
#include "bench_bvh.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PRISM_BENCH_HAVE_EMBREE
#include <embree3/rtcore.h>
#include <math.h>
#include <omp.h>

#include "bench_util.h"

/* ---- the readable tree ------------------------------------------------ */

typedef struct em_node {
    unsigned count; /* 0: inner */
    unsigned children;
    struct em_node *child[2];
    struct RTCBounds box[2];
} em_node;

static void *em_create_node(RTCThreadLocalAllocator a, unsigned int n, void *user)
{
    (void)user;
    em_node *node = rtcThreadLocalAlloc(a, sizeof *node, 16);
    memset(node, 0, sizeof *node);
    node->children = n;
    return node;
}

static void em_set_children(void *p, void **child, unsigned int n, void *user)
{
    (void)user;
    for (unsigned i = 0; i < n && i < 2; i++)
        ((em_node *)p)->child[i] = child[i];
}

static void em_set_bounds(void *p, const struct RTCBounds **b, unsigned int n, void *user)
{
    (void)user;
    for (unsigned i = 0; i < n && i < 2; i++)
        ((em_node *)p)->box[i] = *b[i];
}

static void *em_create_leaf(RTCThreadLocalAllocator a, const struct RTCBuildPrimitive *prims,
                            size_t n, void *user)
{
    (void)prims;
    (void)user;
    em_node *node = rtcThreadLocalAlloc(a, sizeof *node, 16);
    memset(node, 0, sizeof *node);
    node->count = (unsigned)n;
    return node;
}

static void set_box(prism_bvh_node *n, const struct RTCBounds *b)
{
    n->lo[0] = b->lower_x;
    n->lo[1] = b->lower_y;
    n->lo[2] = b->lower_z;
    n->hi[0] = b->upper_x;
    n->hi[1] = b->upper_y;
    n->hi[2] = b->upper_z;
}

/* Breadth-first copy of Embree's tree into Prism's layout. */
static size_t em_flatten(em_node *root, const struct RTCBounds *root_box, prism_bvh_node *out,
                         em_node **queue, size_t *leaves)
{
    size_t head = 0, tail = 1;
    queue[0] = root;
    set_box(&out[0], root_box);
    *leaves = 0;
    while (head < tail) {
        em_node *e = queue[head];
        prism_bvh_node *n = &out[head++];
        if (e->count || e->children < 2) {
            n->first = 0;
            n->count = e->count ? e->count : 1;
            ++*leaves;
            continue;
        }
        n->first = (uint32_t)tail;
        n->count = 0;
        for (int i = 0; i < 2; i++) {
            set_box(&out[tail], &e->box[i]);
            queue[tail++] = e->child[i];
        }
    }
    return tail;
}

static void root_box(const bvh_bench_scene *s, struct RTCBounds *b)
{
    const prism_bvh_node empty = {
        {INFINITY, INFINITY, INFINITY}, 0, {-INFINITY, -INFINITY, -INFINITY}, 0};
    prism_bvh_node n = empty;
    for (size_t i = 0; i < 3 * s->nt; i++)
        for (int a = 0; a < 3; a++) {
            float v = s->pos[3 * (size_t)s->idx[i] + a];
            n.lo[a] = v < n.lo[a] ? v : n.lo[a];
            n.hi[a] = v > n.hi[a] ? v : n.hi[a];
        }
    *b = (struct RTCBounds){n.lo[0], n.lo[1], n.lo[2], 0, n.hi[0], n.hi[1], n.hi[2], 0};
}

static void fill_prims(const bvh_bench_scene *s, struct RTCBuildPrimitive *p)
{
#pragma omp parallel for schedule(static)
    for (long t = 0; t < (long)s->nt; t++) {
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 3; a++) {
                float v = s->pos[3 * (size_t)s->idx[3 * t + k] + a];
                lo[a] = v < lo[a] ? v : lo[a];
                hi[a] = v > hi[a] ? v : hi[a];
            }
        p[t] = (struct RTCBuildPrimitive){lo[0], lo[1], lo[2], 0, hi[0], hi[1], hi[2], (unsigned)t};
    }
}

/* One rtcBuildBVH; with `cost`, costs the tree. Returns seconds. */
double bvh_bench_embree_build_binary(bvh_bench_embree *e, bool cost)
{
    const bvh_bench_scene *s = e->s;
    struct RTCBuildPrimitive *prims = e->prims;
    if (!prims)
        return 0.0;
    double t0 = prism_bench_now(); /* the boxes count, as they do in Prism's build */
    fill_prims(s, prims);
    RTCBVH bvh = rtcNewBVH(e->device);
    struct RTCBuildArguments a = rtcDefaultBuildArguments();
    a.buildQuality = RTC_BUILD_QUALITY_MEDIUM;
    a.maxBranchingFactor = 2;
    a.maxDepth = PRISM_BVH_MAX_DEPTH;
    a.minLeafSize = 1;
    a.maxLeafSize = e->leaf;
    a.traversalCost = 1.0f;
    a.intersectionCost = 1.0f;
    a.bvh = bvh;
    a.primitives = prims;
    a.primitiveCount = a.primitiveArrayCapacity = s->nt;
    a.createNode = em_create_node;
    a.setNodeChildren = em_set_children;
    a.setNodeBounds = em_set_bounds;
    a.createLeaf = em_create_leaf;
    em_node *root = rtcBuildBVH(&a);
    double t = prism_bench_now() - t0;
    if (cost && root) {
        prism_bvh_node *nodes = malloc(2 * s->nt * sizeof *nodes);
        em_node **queue = malloc(2 * s->nt * sizeof *queue);
        if (nodes && queue) {
            struct RTCBounds rb;
            root_box(s, &rb);
            e->binary_nodes = em_flatten(root, &rb, nodes, queue, &e->binary_leaves);
            e->binary_sah = prism_bvh_sah_cost(nodes, e->binary_nodes);
        }
        free(nodes);
        free(queue);
    }
    rtcReleaseBVH(bvh);
    return t;
}

/* ---- the default scene ------------------------------------------------ */

double bvh_bench_embree_build_default(bvh_bench_embree *e)
{
    const bvh_bench_scene *s = e->s;
    if (e->scene)
        rtcReleaseScene(e->scene);
    RTCScene scene = rtcNewScene(e->device);
    RTCGeometry g = rtcNewGeometry(e->device, RTC_GEOMETRY_TYPE_TRIANGLE);
    /* Embree reads vertices 16 bytes at a time: its own buffers are padded. */
    float *v = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                       3 * sizeof(float), s->nv);
    unsigned *ix = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                           3 * sizeof(unsigned), s->nt);
    if (v && ix) {
        memcpy(v, s->pos, s->nv * 3 * sizeof(float));
        memcpy(ix, s->idx, s->nt * 3 * sizeof(unsigned));
    }
    rtcCommitGeometry(g);
    rtcAttachGeometry(scene, g);
    rtcReleaseGeometry(g);
    double t0 = prism_bench_now();
    rtcCommitScene(scene);
    double t = prism_bench_now() - t0;
    e->scene = scene;
    return t;
}

void bvh_bench_embree_trace(bvh_bench_embree *e, const bvh_bench_rays *set, int threads,
                            bvh_bench_trace *tr)
{
    RTCScene scene = e->scene;
    tr->ids = malloc(set->n * sizeof *tr->ids);
    size_t hits = 0;
    double t0 = bvh_bench_clock(threads);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1024) reduction(+ : hits)
    for (long i = 0; i < (long)set->n; i++) {
        const prism_ray *r = &set->rays[i];
        struct RTCIntersectContext ctx;
        rtcInitIntersectContext(&ctx);
        struct RTCRayHit rh = {0};
        rh.ray.org_x = r->org[0];
        rh.ray.org_y = r->org[1];
        rh.ray.org_z = r->org[2];
        rh.ray.dir_x = r->dir[0];
        rh.ray.dir_y = r->dir[1];
        rh.ray.dir_z = r->dir[2];
        rh.ray.tnear = r->tmin;
        rh.ray.tfar = r->tmax;
        rh.ray.mask = ~0u;
        rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
        rtcIntersect1(scene, &ctx, &rh);
        bool hit = rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
        hits += hit;
        if (tr->ids)
            tr->ids[i] = hit ? rh.hit.primID : PRISM_BVH_MISS;
    }
    double t = bvh_bench_clock(threads) - t0;
    tr->rays_per_second = t > 0 ? (double)set->n / t : 0.0;
    tr->hits = hits;
}

bool bvh_bench_embree_open(const bvh_bench_scene *s, int threads, unsigned leaf,
                           bvh_bench_embree *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    char config[64];
    snprintf(config, sizeof config, "threads=%d", threads);
    RTCDevice dev = rtcNewDevice(config);
    if (!dev) {
        snprintf(err, err_size, "rtcNewDevice failed (error %d)", (int)rtcGetDeviceError(NULL));
        return false;
    }
    out->available = true;
    out->device = dev;
    out->s = s;
    out->leaf = leaf;
    out->prims = malloc((s->nt ? s->nt : 1) * sizeof(struct RTCBuildPrimitive));
    snprintf(out->version, sizeof out->version, "%ld.%ld.%ld",
             (long)rtcGetDeviceProperty(dev, RTC_DEVICE_PROPERTY_VERSION_MAJOR),
             (long)rtcGetDeviceProperty(dev, RTC_DEVICE_PROPERTY_VERSION_MINOR),
             (long)rtcGetDeviceProperty(dev, RTC_DEVICE_PROPERTY_VERSION_PATCH));
    return true;
}

void bvh_bench_embree_close(bvh_bench_embree *e)
{
    for (int k = 0; k < 2; k++) {
        free(e->trace[k].ids);
        e->trace[k].ids = NULL;
    }
    free(e->prims);
    e->prims = NULL;
    if (e->scene)
        rtcReleaseScene(e->scene);
    if (e->device)
        rtcReleaseDevice(e->device);
    e->scene = e->device = NULL;
}

#else

bool bvh_bench_embree_open(const bvh_bench_scene *s, int threads, unsigned leaf,
                           bvh_bench_embree *out, char *err, size_t err_size)
{
    (void)s, (void)threads, (void)leaf;
    memset(out, 0, sizeof *out);
    snprintf(err, err_size, "this prism-bench was built without Embree 3 (libembree-dev)");
    return false;
}

double bvh_bench_embree_build_default(bvh_bench_embree *e)
{
    (void)e;
    return 0.0;
}

double bvh_bench_embree_build_binary(bvh_bench_embree *e, bool cost)
{
    (void)e, (void)cost;
    return 0.0;
}

void bvh_bench_embree_trace(bvh_bench_embree *e, const bvh_bench_rays *set, int threads,
                            bvh_bench_trace *out)
{
    (void)e, (void)set, (void)threads;
    memset(out, 0, sizeof *out);
}

void bvh_bench_embree_close(bvh_bench_embree *e)
{
    (void)e;
}

#endif
