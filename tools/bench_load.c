/* `prism-bench load FILE`: how fast Prism's COLLADA loader reads a file,
 * against assimp on the same file in the same run: median wall time over
 * --repeat loads, MB/s (1 MB = 10^6 bytes of file) and world triangles per
 * second, and Prism's speed over assimp's. World triangles are counted per
 * instance for both (assimp's node tree is walked after the timing; an
 * n-gon is n-2 triangles). Prism's load writes every instance's world
 * triangles; assimp's peer for that is aiProcess_PreTransformVertices
 * (the `pretransf` row, the yardstick). The plain aiImportFile row
 * keeps instanced meshes once; `+flat` adds the time to build the world
 * arrays from that scene by hand. Freeing is not timed. Prism's loads run
 * first, so the process's peak RSS (getrusage) after them is Prism's; it
 * is reported with its ratio to the scene's final arrays. assimp is
 * optional at build time; without it the bench says the peer is missing. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"
#include "cli.h"
#include "prism/scene.h"
#ifdef PRISM_BENCH_HAVE_ASSIMP
#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#endif

typedef struct load_options {
    const char *file;
    int repeat, threads;
    bool json, no_assimp;
    prism_length_unit unit;
} load_options;

/* One loader's figures; ok false with `why` when it was not measured. */
typedef struct load_figures {
    bool ok;
    char why[640]; /* room for a loader message (512) and its result name */
    double seconds;
    size_t triangles;
    size_t array_bytes;              /* the scene's final arrays (Prism only) */
    double first_seconds;            /* the first load, in a fresh process (Prism only) */
    double rss_base_mb, rss_peak_mb; /* process peak RSS before and after (Prism only) */
} load_figures;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: prism-bench load FILE.dae [--repeat N] [--threads N] [--unit U] [--no-assimp]\n"
            "                                 [--json]\n"
            "Loads FILE N times (default 3) with Prism (prism_scene_load) and with assimp\n"
            "and reports the median: seconds, MB/s of file and world triangles per second,\n"
            "and Prism's speed over assimp's. Rows: assimp with aiProcess_PreTransformVertices\n"
            "(pretransf: world arrays, as Prism's load makes), aiImportFile with no\n"
            "post-processing (assimp), and the same plus world arrays built by hand (+flat).\n"
            "Prism's peak RSS is reported with its ratio to the scene's final arrays.\n"
            "  --threads N   OpenMP threads for Prism (default: all)\n"
            "  --unit U      m, cm, mm or auto: the file's length unit for Prism (default auto:\n"
            "                its <unit>, else mm for a Geant4 export, else m)\n"
            "  --no-assimp   measure Prism only\n"
            "  --json        one JSON object instead of the table\n");
}

static int parse(int argc, char **argv, load_options *o)
{
    *o = (load_options){NULL, 3, 0, false, false, PRISM_UNIT_AUTO};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--json"))
            o->json = true;
        else if (!strcmp(a, "--no-assimp"))
            o->no_assimp = true;
        else if (!strcmp(a, "--unit") && i + 1 < argc) {
            if (prism_length_unit_parse(argv[++i], &o->unit) != PRISM_SUCCESS) {
                fprintf(stderr, "prism-bench load: --unit: expected m, cm, mm or auto, got '%s'\n",
                        argv[i]);
                return 2;
            }
        } else if ((!strcmp(a, "--repeat") || !strcmp(a, "--threads")) && i + 1 < argc) {
            bool repeat = !strcmp(a, "--repeat");
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || v < (repeat ? 1 : 0) || v > 1000) {
                fprintf(stderr,
                        "prism-bench load: %s needs a whole number from %d to 1000, not '%s'\n", a,
                        repeat ? 1 : 0, argv[i]);
                return 2;
            }
            if (repeat)
                o->repeat = (int)v;
            else
                o->threads = (int)v;
        } else if (a[0] == '-' || o->file) {
            fprintf(stderr, "prism-bench load: unexpected '%s'\n", a);
            return 2;
        } else
            o->file = a;
    }
    if (!o->file) {
        usage(stderr);
        return 2;
    }
    return -1;
}

static size_t file_bytes(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        n = end > 0 ? (size_t)end : 0;
    }
    fclose(f);
    return n;
}

/* ---- Prism ---- */

static double peak_rss_mb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_maxrss / 1024.0; /* kilobytes on Linux */
}

/* What the scene keeps: world vertices, triangles and their four
 * per-triangle arrays, and the solids (names not counted). */
static size_t scene_array_bytes(const prism_scene *s)
{
    return s->vertices_count * 3 * sizeof(float) + s->triangles_count * 7 * sizeof(uint32_t) +
           s->solids_count * sizeof(prism_solid);
}

static void measure_prism(const load_options *o, load_figures *fig)
{
    fig->rss_base_mb = peak_rss_mb();
#ifdef _OPENMP
    if (o->threads > 0)
        omp_set_num_threads(o->threads);
#endif
    double *t = calloc((size_t)o->repeat, sizeof *t);
    if (!t) {
        snprintf(fig->why, sizeof fig->why, "out of memory");
        return;
    }
    for (int i = 0; i < o->repeat; i++) {
        char msg[512] = "";
        prism_load_desc desc = {.error = msg, .error_size = sizeof msg, .length_unit = o->unit};
        tool_env_load(&desc);
        prism_scene *s = NULL;
        double t0 = prism_bench_now();
        prism_result r = prism_scene_load(o->file, &desc, &s);
        t[i] = prism_bench_now() - t0;
        if (r != PRISM_SUCCESS) {
            snprintf(fig->why, sizeof fig->why, "%s: %s", prism_result_string(r), msg);
            free(t);
            return;
        }
        fig->triangles = s->triangles_count;
        fig->array_bytes = scene_array_bytes(s);
        prism_scene_free(s);
        if (i == 0) /* one load's peak: later ones may reuse what malloc kept */
            fig->rss_peak_mb = peak_rss_mb();
    }
    fig->first_seconds = t[0]; /* before the median sorts them */
    fig->seconds = prism_bench_median(t, (size_t)o->repeat);
    fig->ok = true;
    free(t);
}

/* ---- assimp ---- */

#ifdef PRISM_BENCH_HAVE_ASSIMP
static size_t assimp_triangles(const struct aiScene *s, const struct aiNode *n)
{
    size_t t = 0;
    for (unsigned i = 0; i < n->mNumMeshes; i++) {
        const struct aiMesh *m = s->mMeshes[n->mMeshes[i]];
        for (unsigned f = 0; f < m->mNumFaces; f++)
            if (m->mFaces[f].mNumIndices >= 3)
                t += m->mFaces[f].mNumIndices - 2;
    }
    for (unsigned c = 0; c < n->mNumChildren; c++)
        t += assimp_triangles(s, n->mChildren[c]);
    return t;
}

static size_t assimp_vertices(const struct aiScene *s, const struct aiNode *n)
{
    size_t v = 0;
    for (unsigned i = 0; i < n->mNumMeshes; i++)
        v += s->mMeshes[n->mMeshes[i]]->mNumVertices;
    for (unsigned c = 0; c < n->mNumChildren; c++)
        v += assimp_vertices(s, n->mChildren[c]);
    return v;
}

/* World arrays as Prism makes them: every instance's vertices transformed,
 * faces fanned into triangles. */
typedef struct flat_world {
    float *pos;
    uint32_t *idx;
    size_t nv, nt;
} flat_world;

static void flatten_node(const struct aiScene *s, const struct aiNode *n, struct aiMatrix4x4 m,
                         flat_world *w)
{
    aiMultiplyMatrix4(&m, &n->mTransformation);
    for (unsigned i = 0; i < n->mNumMeshes; i++) {
        const struct aiMesh *mesh = s->mMeshes[n->mMeshes[i]];
        uint32_t base = (uint32_t)w->nv;
        for (unsigned v = 0; v < mesh->mNumVertices; v++, w->nv++) {
            struct aiVector3D p = mesh->mVertices[v];
            aiTransformVecByMatrix4(&p, &m);
            w->pos[3 * w->nv] = p.x, w->pos[3 * w->nv + 1] = p.y, w->pos[3 * w->nv + 2] = p.z;
        }
        for (unsigned f = 0; f < mesh->mNumFaces; f++) {
            const struct aiFace *face = &mesh->mFaces[f];
            for (unsigned k = 2; k < face->mNumIndices; k++, w->nt++) {
                w->idx[3 * w->nt] = base + face->mIndices[0];
                w->idx[3 * w->nt + 1] = base + face->mIndices[k - 1];
                w->idx[3 * w->nt + 2] = base + face->mIndices[k];
            }
        }
    }
    for (unsigned c = 0; c < n->mNumChildren; c++)
        flatten_node(s, n->mChildren[c], m, w);
}

/* Seconds to flatten, or a negative number when out of memory. */
static double assimp_flatten(const struct aiScene *s, size_t triangles)
{
    double t0 = prism_bench_now();
    flat_world w = {malloc(3 * sizeof(float) * (assimp_vertices(s, s->mRootNode) + 1)),
                    malloc(3 * sizeof(uint32_t) * (triangles + 1)), 0, 0};
    struct aiMatrix4x4 identity;
    aiIdentityMatrix4(&identity);
    if (w.pos && w.idx)
        flatten_node(s, s->mRootNode, identity, &w);
    double t = prism_bench_now() - t0;
    bool ok = w.pos && w.idx;
    free(w.pos);
    free(w.idx);
    return ok ? t : -1.0;
}
#endif

/* aiProcess_PreTransformVertices: assimp's own world arrays. Its meshes
 * keep polygons, so triangles are counted as fans of its faces. */
static void measure_pretransformed(const load_options *o, load_figures *fig)
{
#ifdef PRISM_BENCH_HAVE_ASSIMP
    if (o->no_assimp) {
        snprintf(fig->why, sizeof fig->why, "not asked for (--no-assimp)");
        return;
    }
    double *t = calloc((size_t)o->repeat, sizeof *t);
    if (!t) {
        snprintf(fig->why, sizeof fig->why, "out of memory");
        return;
    }
    for (int i = 0; i < o->repeat; i++) {
        double t0 = prism_bench_now();
        const struct aiScene *s = aiImportFile(o->file, aiProcess_PreTransformVertices);
        t[i] = prism_bench_now() - t0;
        if (!s) {
            snprintf(fig->why, sizeof fig->why, "assimp failed: %s", aiGetErrorString());
            free(t);
            return;
        }
        fig->triangles = assimp_triangles(s, s->mRootNode);
        aiReleaseImport(s);
    }
    fig->seconds = prism_bench_median(t, (size_t)o->repeat);
    fig->ok = true;
    free(t);
#else
    (void)o;
    snprintf(fig->why, sizeof fig->why,
             "the peer is missing: this prism-bench was built without assimp (libassimp-dev)");
#endif
}

/* `fig`: aiImportFile alone; `flat`: the same plus building world arrays
 * (assimp keeps instances shared, Prism's load includes that work). */
static void measure_assimp(const load_options *o, load_figures *fig, load_figures *flat)
{
#ifdef PRISM_BENCH_HAVE_ASSIMP
    const char *why = o->no_assimp ? "not asked for (--no-assimp)" : NULL;
    double *t = why ? NULL : calloc(2 * (size_t)o->repeat, sizeof *t);
    if (!why && !t)
        why = "out of memory";
    for (int i = 0; !why && i < o->repeat; i++) {
        double t0 = prism_bench_now();
        const struct aiScene *s = aiImportFile(o->file, 0);
        t[i] = prism_bench_now() - t0;
        if (!s) {
            snprintf(fig->why, sizeof fig->why, "assimp failed: %s", aiGetErrorString());
            why = fig->why;
            break;
        }
        fig->triangles = flat->triangles = assimp_triangles(s, s->mRootNode);
        double tf = assimp_flatten(s, fig->triangles);
        aiReleaseImport(s);
        if (tf < 0)
            why = "out of memory";
        t[o->repeat + i] = t[i] + tf;
    }
    if (why) {
        snprintf(fig->why, sizeof fig->why, "%s", why);
        snprintf(flat->why, sizeof flat->why, "%s", why);
    } else {
        fig->seconds = prism_bench_median(t, (size_t)o->repeat);
        flat->seconds = prism_bench_median(t + o->repeat, (size_t)o->repeat);
        fig->ok = flat->ok = true;
    }
    free(t);
#else
    (void)o;
    snprintf(fig->why, sizeof fig->why,
             "the peer is missing: this prism-bench was built without assimp (libassimp-dev)");
    snprintf(flat->why, sizeof flat->why, "%s", fig->why);
#endif
}

/* ---- report ---- */

static double mb_per_s(size_t bytes, const load_figures *f)
{
    return bytes / 1e6 / f->seconds;
}
static double tri_per_s(const load_figures *f)
{
    return (double)f->triangles / f->seconds;
}

static void json_loader(const char *name, size_t bytes, const load_figures *f)
{
    printf("\"%s\":", name);
    if (!f->ok) {
        printf("{\"measured\":false,\"why\":");
        tool_json_string(f->why);
        printf("}");
        return;
    }
    printf("{\"measured\":true,\"seconds\":%.6f,\"mb_per_s\":%.2f,\"triangles\":%zu,"
           "\"triangles_per_s\":%.0f}",
           f->seconds, mb_per_s(bytes, f), f->triangles, tri_per_s(f));
}

static double rss_ratio(const load_figures *p)
{
    return p->array_bytes ? p->rss_peak_mb * 1048576.0 / (double)p->array_bytes : 0.0;
}

static void print_json(const load_options *o, size_t bytes, const load_figures *p,
                       const load_figures *pt, const load_figures *a, const load_figures *af)
{
    printf("{\"bench\":\"load\",\"file\":");
    tool_json_string(o->file);
    printf(",\"bytes\":%zu,\"repeat\":%d,", bytes, o->repeat);
    json_loader("prism", bytes, p);
    if (p->ok)
        printf(",\"prism_first_seconds\":%.6f,\"prism_peak_rss_mb\":%.1f,\"rss_before_mb\":%.1f,"
               "\"scene_arrays_mb\":%.1f,\"peak_rss_over_arrays\":%.3f",
               p->first_seconds, p->rss_peak_mb, p->rss_base_mb, p->array_bytes / 1048576.0,
               rss_ratio(p));
    putchar(',');
    json_loader("assimp_pretransformed", bytes, pt);
    putchar(',');
    json_loader("assimp", bytes, a);
    putchar(',');
    json_loader("assimp_flattened", bytes, af);
    if (p->ok && pt->ok)
        printf(",\"speedup_pretransformed\":%.3f", pt->seconds / p->seconds);
    else
        printf(",\"speedup_pretransformed\":null");
    if (p->ok && a->ok)
        printf(",\"speedup\":%.3f,\"speedup_flattened\":%.3f", a->seconds / p->seconds,
               af->seconds / p->seconds);
    else
        printf(",\"speedup\":null,\"speedup_flattened\":null");
    printf("}\n");
}

static void table_row(const char *name, size_t bytes, const load_figures *f)
{
    if (f->ok)
        printf("%-9s %10.6f %10.1f %14zu %12.3f\n", name, f->seconds, mb_per_s(bytes, f),
               f->triangles, tri_per_s(f) / 1e6);
    else
        printf("%-9s not measured: %s\n", name, f->why);
}

static void print_table(const load_options *o, size_t bytes, const load_figures *p,
                        const load_figures *pt, const load_figures *a, const load_figures *af)
{
    printf("prism-bench load %s: %.3f MB, median of %d loads\n", o->file, bytes / 1e6, o->repeat);
    printf("%-9s %10s %10s %14s %12s\n", "loader", "seconds", "MB/s", "world tris", "Mtris/s");
    table_row("prism", bytes, p);
    table_row("pretransf", bytes, pt);
    table_row("assimp", bytes, a);
    table_row("+flat", bytes, af);
    if (p->ok)
        printf("Prism's first load %.6f s; peak RSS %.1f MB (%.1f MB before loading), %.2fx the "
               "scene's final arrays (%.1f MB)\n",
               p->first_seconds, p->rss_peak_mb, p->rss_base_mb, rss_ratio(p),
               p->array_bytes / 1048576.0);
    if (p->ok && pt->ok)
        printf("Prism is %.2fx assimp with aiProcess_PreTransformVertices\n",
               pt->seconds / p->seconds);
    if (p->ok && a->ok) {
        printf("Prism is %.2fx aiImportFile's speed, %.2fx with world arrays built (+flat)",
               a->seconds / p->seconds, af->seconds / p->seconds);
        if (p->triangles != a->triangles)
            printf(" (note: world triangles differ: %zu vs %zu)", p->triangles, a->triangles);
        printf("\n");
    }
}

int prism_bench_load(int argc, char **argv)
{
    load_options o;
    int status = parse(argc, argv, &o);
    if (status >= 0)
        return status;
    size_t bytes = file_bytes(o.file);
    if (bytes == 0) {
        fprintf(stderr, "prism-bench load: cannot read '%s' (or it is empty)\n", o.file);
        return 1;
    }
    load_figures p = {0}, pt = {0}, a = {0}, af = {0};
    measure_prism(&o, &p); /* first: the peak RSS after it is Prism's */
    measure_pretransformed(&o, &pt);
    measure_assimp(&o, &a, &af);
    if (o.json)
        print_json(&o, bytes, &p, &pt, &a, &af);
    else
        print_table(&o, bytes, &p, &pt, &a, &af);
    return p.ok ? 0 : 1;
}
