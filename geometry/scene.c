/* prism_scene: load (file or memory), free, and lookups. The loading work
 * is the COLLADA loader's (geometry/collada/); this file owns the entry points:
 * argument checks, timing, and where errors go. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* mmap */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif
#include <time.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#endif

#include "geometry/collada/internal.h"

static double now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The process's CPU time and minor page faults so far: where a stage on
 * all cores scales badly, system time and faults say whether the kernel
 * (page faults, mapping and unmapping) is where the time goes. */
static void usage(double *user, double *system, long *faults)
{
    *user = *system = 0;
    *faults = 0;
#if defined(__unix__) || defined(__APPLE__)
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) == 0) {
        *user = (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec;
        *system = (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
        *faults = u.ru_minflt;
    }
#endif
}

void prism__cl_trace(prism__cl *L, const char *stage)
{
    if (!L->trace)
        return;
    double t = now(), user, system;
    long faults;
    usage(&user, &system, &faults);
    char line[160];
    snprintf(line, sizeof line,
             "prism load: %-14s %8.1f ms  (CPU %8.1f ms user %7.1f ms system, %7ld faults)", stage,
             1e3 * (t - L->trace_at), 1e3 * (user - L->trace_user),
             1e3 * (system - L->trace_system), faults - L->trace_faults);
    L->desc->log(L->desc->log_user, PRISM_LOG_DEBUG, line);
    L->trace_user = user;
    L->trace_system = system;
    L->trace_faults = faults;
    L->trace_at = now();
}

static prism_result report(const prism_load_desc *desc, prism_result r, const char *msg)
{
    if (desc && desc->error && desc->error_size)
        snprintf(desc->error, desc->error_size, "%s", msg);
    if (desc && desc->log)
        desc->log(desc->log_user, PRISM_LOG_ERROR, msg);
    return r;
}

void prism__cl_init(prism__cl *L, const char *name, const prism_load_desc *desc, size_t total)
{
    L->file = name ? name : "<memory>";
    L->desc = desc;
    L->total = total;
    unsigned d = desc && desc->max_depth ? desc->max_depth : CL_DEFAULT_MAX_DEPTH;
    L->max_depth = d > CL_MAX_MAX_DEPTH ? CL_MAX_MAX_DEPTH : d;
    L->cur_geometry = L->cur_item = L->cur_material = CL_NONE;
    L->cur_optical = L->cur_surfref = L->cur_table = CL_NONE;
    L->unit = 1.0;
    L->up = PRISM_UP_Y;
    L->fsrc = CL_NONE;
    L->lazy_ok = false;
}

void prism__cl_release(prism__cl *L)
{
    free(L->stack);
    prism__vec_free(&L->pool);
    prism__cl_map_free(&L->geometry_ids);
    prism__cl_map_free(&L->node_ids);
    prism__cl_map_free(&L->scene_ids);
    prism__cl_map_free(&L->material_ids);
    prism__cl_map_free(&L->table_map);
    prism__cl_mesh_free(&L->mesh);
    prism__tri_scratch_free(&L->tri);
    for (size_t i = 0; i < L->geometries.count; i++)
        prism__cl_geometry_free(&CL_AT(L->geometries, cl_geometry, i));
    prism__vec *vecs[] = {&L->geometries, &L->nodes,    &L->items,     &L->bindings, &L->item_mats,
                          &L->node_stack, &L->scenes,   &L->materials, &L->tables,   &L->table_data,
                          &L->props,      &L->opticals, &L->surfrefs,  &L->scopes};
    for (size_t i = 0; i < sizeof vecs / sizeof *vecs; i++)
        prism__vec_free(vecs[i]);
    /* desc.trace outlives what it times: a restart, the release (and the
     * desc keeps its log for it) */
    const bool trace = L->trace;
    const prism_load_desc *desc = L->desc;
    const double trace_at = L->trace_at, trace_user = L->trace_user, trace_system = L->trace_system;
    const long trace_faults = L->trace_faults;
    memset(L, 0, sizeof *L);
    L->trace = trace;
    L->desc = desc;
    L->trace_at = trace_at;
    L->trace_user = trace_user;
    L->trace_system = trace_system;
    L->trace_faults = trace_faults;
}

static void finish_stats(prism__cl *L, prism_scene *S, double t0)
{
    S->up_axis = L->up;
    S->unit_meter = L->unit;
    S->g4dae = L->g4dae;
    S->unit_source = L->unit_source;
    S->geant4_marks = L->geant4_marks;
    memcpy(S->unit_rule, L->unit_rule, sizeof S->unit_rule);
    S->quirks = L->quirks;
    S->skipped = L->skipped;
    S->stats = L->stats;
    S->stats.bytes = L->done;
    S->stats.seconds = now() - t0;
    S->stats.triangles_per_second =
        S->stats.seconds > 0 ? (double)S->triangles_count / S->stats.seconds : 0.0;
}

/* Big documents in memory are parsed in chunks on all cores; a document
 * the chunked parse declines is parsed again, serially, from the start. */
static void parse(prism__cl *L, const void *data, size_t size, FILE *f, size_t chunk_bytes)
{
    if (data && prism__cl_parse_parallel(L, data, size, chunk_bytes))
        return;
    prism__cl_trace(L, "declined");
    if (data) {
        const char *file = L->file;
        const prism_load_desc *desc = L->desc;
        size_t total = L->total;
        prism__cl_release(L);
        prism__cl_init(L, file, desc, total);
    }
    prism__cl_parse(L, data, size, f);
    prism__cl_trace(L, "serial parse");
}

static prism_result load(const void *data, size_t size, FILE *f, const char *name, size_t total,
                         const prism_load_desc *desc, size_t chunk_bytes, prism_scene **out)
{
    double t0 = now();
    if (desc && (unsigned)desc->length_unit > (unsigned)PRISM_UNIT_MM) {
        char msg[128];
        snprintf(msg, sizeof msg, "prism_load_desc.length_unit=%d is not a prism_length_unit",
                 (int)desc->length_unit);
        return report(desc, PRISM_ERROR_INVALID_ARGUMENT, msg);
    }
    prism__cl *L = calloc(1, sizeof *L);
    prism_scene *S = calloc(1, sizeof *S);
    if (!L || !S) {
        free(L);
        free(S);
        return report(desc, PRISM_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    prism__cl_init(L, name, desc, total);
    L->trace = desc && desc->trace && desc->log; /* the trace's lines go to desc->log */
    L->trace_at = t0;
    if (L->trace)
        usage(&L->trace_user, &L->trace_system, &L->trace_faults);
    parse(L, data, size, f, chunk_bytes);
    if (L->result == PRISM_SUCCESS && prism__cl_build_ids(L)) {
        prism__cl_trace(L, "ids");
        prism__cl_quirk_summary(L);
        prism__cl_decide_unit(L);
        prism__cl_trace(L, "unit");
        if (prism__cl_build_materials(L, S) == PRISM_SUCCESS) {
            prism__cl_trace(L, "materials");
            prism__cl_build_scene(L, S);
        }
    }
    prism_result r = L->result;
    if (r != PRISM_SUCCESS) {
        report(desc, r, L->message);
        prism_scene_free(S);
        S = NULL;
    } else {
        finish_stats(L, S, t0);
    }
    prism__cl_release(L);
    prism__cl_trace(L, "release");
    free(L);
    *out = S;
    return r;
}

prism_result prism_scene_load_memory(const void *data, size_t size, const char *name,
                                     const prism_load_desc *desc, prism_scene **out)
{
    if (out)
        *out = NULL;
    if (!out || (!data && size) || size > (size_t)INT32_MAX * 1024)
        return report(desc, PRISM_ERROR_INVALID_ARGUMENT,
                      "prism_scene_load_memory: out is NULL, or data is NULL with a size");
    return load(data ? data : "", size, NULL, name, size, desc, 0, out);
}

prism_result prism__scene_load_memory_chunked(const void *data, size_t size, const char *name,
                                              const prism_load_desc *desc, size_t chunk_bytes,
                                              prism_scene **out)
{
    if (out)
        *out = NULL;
    if (!out || !data || size > (size_t)INT32_MAX * 1024)
        return report(desc, PRISM_ERROR_INVALID_ARGUMENT, "bad arguments");
    return load(data, size, NULL, name, size, desc, chunk_bytes, out);
}

/* A big regular file is mapped rather than read: the chunked parse needs it
 * whole, and mapping costs no copy and no second resident copy. */
static prism_result load_mapped(FILE *f, const char *path, size_t total,
                                const prism_load_desc *desc, prism_scene **out)
{
#if defined(__unix__) || defined(__APPLE__)
    if (total >= CL_PARALLEL_MIN_BYTES && total != SIZE_MAX / 4) {
        void *m = mmap(NULL, total, PROT_READ, MAP_PRIVATE, fileno(f), 0);
        if (m != MAP_FAILED) {
            prism_result r = load(m, total, NULL, path, total, desc, 0, out);
            munmap(m, total);
            return r;
        }
    }
#endif
    return load(NULL, 0, f, path, total, desc, 0, out);
}

prism_result prism_scene_load(const char *path, const prism_load_desc *desc, prism_scene **out)
{
    if (out)
        *out = NULL;
    if (!out || !path)
        return report(desc, PRISM_ERROR_INVALID_ARGUMENT, "prism_scene_load: path or out is NULL");
    FILE *f = fopen(path, "rb");
    if (!f) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s: cannot open: %s", path, strerror(errno));
        return report(desc, PRISM_ERROR_IO, msg);
    }
    struct stat st;
    size_t total = SIZE_MAX / 4; /* a pipe: no size known */
    const bool known = fstat(fileno(f), &st) == 0;
    if (known && S_ISDIR(st.st_mode)) { /* fopen takes a directory; its read fails */
        fclose(f);
        char msg[1024];
        snprintf(msg, sizeof msg, "%s: is a directory", path);
        return report(desc, PRISM_ERROR_IO, msg);
    }
    if (known && S_ISREG(st.st_mode))
        total = (size_t)st.st_size;
    prism_result r = load_mapped(f, path, total, desc, out);
    fclose(f);
    return r;
}

/* The world arrays are one byte longer than asked (never a zero-size
 * allocation); scene_array_free is given the same size back. */
void *prism__scene_array(prism_scene *S, size_t bytes)
{
    const prism_allocator *a = &S->arrays_allocator;
    if (a->allocate)
        return a->allocate(a->user, bytes + 1);
    return prism__big_alloc(bytes + 1);
}

static void scene_array_free(prism_scene *S, void *p, size_t bytes)
{
    const prism_allocator *a = &S->arrays_allocator;
    if (!p)
        return;
    if (a->release)
        a->release(a->user, p, bytes + 1);
    else
        free(p);
}

void prism_scene_free(prism_scene *S)
{
    if (!S)
        return;
    const size_t v = S->vertices_count, t = S->triangles_count;
    scene_array_free(S, S->positions, 3 * v * sizeof(float));
    scene_array_free(S, S->indices, 3 * t * sizeof(uint32_t));
    scene_array_free(S, S->triangle_solid, t * sizeof(uint32_t));
    scene_array_free(S, S->triangle_material_inner, t * sizeof(uint32_t));
    scene_array_free(S, S->triangle_material_outer, t * sizeof(uint32_t));
    scene_array_free(S, S->triangle_surface, t * sizeof(uint32_t));
    /* the solids' names and paths are one block, begun by solid 0's name
     * (geometry/collada/flatten.c, name_solids) */
    if (S->solids && S->solids_count)
        free(S->solids[0].name);
    free(S->solids);
    for (size_t i = 0; S->materials && i < S->materials_count; i++) {
        free(S->materials[i].name);
        prism__cl_free_properties(S->materials[i].properties, S->materials[i].properties_count);
    }
    free(S->materials);
    for (size_t i = 0; S->surfaces && i < S->surfaces_count; i++) {
        free(S->surfaces[i].name);
        prism__cl_free_properties(S->surfaces[i].properties, S->surfaces[i].properties_count);
    }
    free(S->surfaces);
    free(S);
}

bool prism_scene_has_optics(const prism_scene *S)
{
    for (size_t i = 0; S && i < S->materials_count; i++)
        if (prism_material_property(&S->materials[i], "RINDEX"))
            return true;
    return false;
}

uint32_t prism_scene_find_material(const prism_scene *S, const char *name)
{
    for (size_t i = 0; S && name && i < S->materials_count; i++)
        if (strcmp(S->materials[i].name, name) == 0)
            return (uint32_t)i;
    return PRISM_NONE;
}

const prism_property *prism_material_property(const prism_material *m, const char *name)
{
    for (size_t i = 0; m && name && i < m->properties_count; i++)
        if (m->properties[i].name && strcmp(m->properties[i].name, name) == 0)
            return &m->properties[i];
    return NULL;
}
