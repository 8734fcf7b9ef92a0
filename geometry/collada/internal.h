/* The COLLADA loader's internal state, shared by its stages (the entry
 * points, prism_scene_load and its kin, are geometry/scene.c's):
 *   geometry/collada/xml.c          expat callbacks, element dispatch, number streaming
 *   geometry/collada/tags.h         the element names read, sorted for the lookup
 *   geometry/collada/mesh.c         sources, vertices and primitives while parsing
 *   geometry/collada/primitives.c   </mesh>: positions cut out, primitives -> unique triangles
 *   geometry/collada/triangulate.c  polygons (concave, with holes) -> triangles
 *   geometry/collada/nodes.c        nodes, transforms, instances while parsing
 *   geometry/collada/asset.c        <asset>: the root's unit and up axis, nested ones' scopes
 *   geometry/collada/unit.c         the length unit: <unit>, the Geant4 rule, the caller's choice
 *   geometry/collada/g4dae.c        G4DAE extras: materials' property tables, optical surfaces
 *   geometry/collada/flatten.c      the walk from the scene: instancing -> world triangles
 *   geometry/collada/surfaces.c     G4DAE skin and border surfaces onto world triangles
 *   geometry/collada/parallel.c     big documents cut into chunks, parsed on all cores, merged:
 *                                   each chunk's parse and the entry point
 *   geometry/collada/chunks.c       the chunked parse's plan: where a document may be cut
 *   geometry/collada/replay.c       its scan for spans expat is spared, the simple-form tree replay
 *   geometry/collada/merge.c        the chunks' states merged into one, in document order
 *   geometry/collada/parallel_internal.h  the types and calls those four share
 *   geometry/collada/util.c         arrays, string pool, id maps, messages
 * Everything read from the file is kept in flat arrays indexed by uint32
 * (no pointers into arrays that grow), strings as offsets into one pool. */
#ifndef PRISM_COLLADA_INTERNAL_H
#define PRISM_COLLADA_INTERNAL_H

#include <expat.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geometry/big_alloc.h"
#include "triangulate.h"
#include "prism/scene.h"

#define CL_NONE UINT32_MAX
#define CL_HOLE 0x80000000u /* flag on a ring size: a hole of the previous polygon */

/* Elements nested deeper than max_depth + CL_XML_SLACK are refused. */
#define CL_XML_SLACK 64
#define CL_DEFAULT_MAX_DEPTH 256
#define CL_MAX_MAX_DEPTH 4096 /* the flattening recurses; keep the C stack small */

typedef struct prism__vec {
    void *data;
    size_t count, cap;
} prism__vec;

bool prism__vec_grow(prism__vec *v, size_t elem, size_t need);
void prism__vec_free(prism__vec *v);

static inline void *prism__vec_push(prism__vec *v, size_t elem)
{
    if (v->count == v->cap && !prism__vec_grow(v, elem, v->count + 1))
        return NULL;
    return (char *)v->data + elem * v->count++;
}

#define CL_AT(vec, T, i) (((T *)(vec).data)[i])
/* &CL_AT(...) that stays NULL for an empty array (no pointer arithmetic on NULL). */
#define CL_PTR(vec, T, i) ((vec).data ? (T *)(vec).data + (i) : (T *)NULL)

typedef uint32_t cl_str; /* offset in the string pool; 0 = no string */

typedef struct cl_pos {
    uint32_t line, col;
} cl_pos;

/* Open addressing; a slot packs key (cl_str, high half; 0 = empty) and
 * value, so that threads can insert with one compare-and-swap. */
typedef struct cl_map {
    uint64_t *slots;
    size_t cap, count;
} cl_map;

typedef enum cl_tag {
#define CL_TAG_ENUM(e, s) CL_T_##e,
#include "tags.h"
#undef CL_TAG_ENUM
    CL_T_UNKNOWN
} cl_tag;

/* A scope reference with this bit: the scope inside the prefix's element
 * at that depth (a chunk's), which the merge resolves to the real one. */
#define CL_SCOPE_OUTER 0x80000000u

typedef struct cl_frame {
    uint8_t tag;
    bool active;    /* a stage began something here; its end handler runs */
    bool own_scope; /* an <asset>'s: it made a scope (cl_scope) for its parent */
    uint32_t scope; /* the nested <asset> scope inside it, CL_NONE: the root's */
    cl_pos pos;
} cl_frame;

/* An <asset> nested in a library, <geometry>, <visual_scene> or <node>
 * with a <unit> or an <up_axis>: they apply to what its parent holds
 * (geometry/collada/asset.c). Until prism__cl_apply_scopes: what the <asset> said;
 * after: what applies in the scope, and the matrix into the root's unit and axes. */
typedef struct cl_scope {
    uint32_t parent; /* the scope around, CL_NONE: the root's */
    uint8_t up;      /* 1 + prism_up_axis; 0: the parent's */
    bool identity;   /* c changes nothing */
    double unit;     /* <unit meter>; 0: the parent's */
    double c[9];     /* row major: scale and turn into the root's unit and axes */
} cl_scope;

typedef enum cl_text {
    CL_TEXT_NONE = 0,
    CL_TEXT_FLOATS,  /* into *fdst */
    CL_TEXT_DOUBLES, /* transform values into dbl[] */
    CL_TEXT_INDICES, /* <p>/<h>: VERTEX indices kept, others skipped */
    CL_TEXT_COUNTS,  /* <vcount>: ring sizes */
    CL_TEXT_SMALL    /* short text such as <up_axis> */
} cl_text;

typedef struct cl_source {
    cl_str id;
    cl_pos pos, acc_pos;
    prism__vec data; /* float */
    size_t declared; /* float_array count attribute */
    /* The numbers of a float_array are checked only when a primitive uses
     * the source (prism__cl_source_settle): NORMAL and TEXCOORD arrays,
     * which no stage reads, are never validated. A bad number while
     * streaming is kept here (err, message in the pool, at err_pos) and
     * the rest of the text skipped; the chunked parse keeps a long text as
     * its span of the document (lazy) and converts it only then. */
    cl_pos fa_pos;  /* the float_array's start tag */
    bool has_array; /* a float_array was read into data */
    bool settled;   /* converted and its count compared */
    cl_str err;
    cl_pos err_pos;
    const char *lazy;
    size_t lazy_n;
    bool has_accessor;
    size_t acc_count, acc_stride, acc_offset;
    /* The accessor's first <param>s: 'X', 'Y' or 'Z' for those names, '?'
     * for any other, '-' unnamed (read only where the stride is below 3:
     * the chunked parse spares expat the params of the others). */
    char acc_names[3];
    unsigned acc_params;
} cl_source;

typedef enum cl_prim_kind {
    CL_TRIANGLES,
    CL_POLYLIST,
    CL_POLYGONS,
    CL_TRISTRIPS,
    CL_TRIFANS
} cl_prim_kind;

typedef struct cl_prim {
    cl_prim_kind kind;
    uint8_t tag;
    cl_str material;
    cl_pos pos, p_pos;
    size_t count;
    bool has_count, has_vertex;
    uint32_t stride, voff; /* ints per vertex in <p>, offset of VERTEX */
    cl_str vertex_ref;
    cl_pos vertex_pos;
    size_t idx_first, idx_count;   /* in mesh.idx */
    size_t ring_first, ring_count; /* in mesh.rings */
} cl_prim;

typedef struct cl_mesh {
    bool active;
    prism__vec sources; /* cl_source */
    bool has_vertices;
    cl_str vertices_id, position_ref;
    cl_pos vertices_pos, position_pos;
    prism__vec prims; /* cl_prim */
    prism__vec idx;   /* uint32: VERTEX indices of all primitives */
    prism__vec rings; /* uint32: ring sizes, CL_HOLE flags holes */
} cl_mesh;

typedef struct cl_group {
    cl_str material; /* the primitive's material symbol */
    uint32_t first, count;
} cl_group;

typedef struct cl_geometry {
    cl_str id, name;
    cl_pos pos;
    float *positions; /* file units and axes */
    uint32_t vertices;
    uint32_t *tris;
    uint32_t triangles;
    cl_group *groups;
    uint32_t groups_count;
    bool all_used;  /* every vertex is in a triangle: the box can come from vertices */
    uint32_t scope; /* the nested <asset> scope of its positions, CL_NONE: the root's */
} cl_geometry;

typedef enum cl_item_kind { CL_ITEM_GEOMETRY, CL_ITEM_NODE, CL_ITEM_CHILD } cl_item_kind;

typedef struct cl_item {
    cl_item_kind kind;
    cl_str url;
    cl_pos pos;
    uint32_t target; /* child node, or the resolved geometry / node */
    uint32_t next;
    uint32_t bind_first, bind_count; /* cl_binding, instance_geometry only */
    uint32_t mat_first;              /* resolved material per geometry group */
} cl_item;

typedef struct cl_binding {
    cl_str symbol, target;
    cl_pos pos;
} cl_binding;

typedef struct cl_node {
    cl_str id, name;
    cl_pos pos;
    double m[16]; /* local transform, row major */
    uint32_t first_item, last_item;
    uint8_t state; /* flattening: 0 new, 1 on the path, 2 counted */
    bool is_scene;
    uint64_t sub_triangles, sub_vertices, sub_visits, sub_solids;
    uint32_t copies;
    uint32_t scope; /* the nested <asset> scope of its transforms, CL_NONE: the root's */
} cl_node;

typedef struct cl_table {
    cl_str name;
    cl_pos pos;
    size_t first, count; /* in table_data */
} cl_table;

typedef struct cl_prop {
    bool optical; /* owner is an opticalsurface, else a material */
    uint32_t owner;
    cl_str name, ref;
    cl_pos pos;
} cl_prop;

typedef struct cl_material {
    cl_str id, name;
    cl_pos pos;
} cl_material;

typedef struct cl_optical {
    cl_str name;
    cl_pos pos;
    int model, finish, type;
    double value;
} cl_optical;

typedef struct cl_surfref {
    cl_str name, optical;
    cl_pos pos;
    prism_surface_kind kind;
    cl_str ref[2];
    cl_pos ref_pos[2];
    unsigned refs;
} cl_surfref;

/* Rules of COLLADA that exporters break and the loader forgives, with a
 * warning (prism_quirk_counts); past CL_QUIRK_LOG_MAX of one kind, the
 * rest are counted and told in one line. */
typedef enum cl_quirk {
    CL_QUIRK_FLOAT_ARRAY_COUNT = 0,
    CL_QUIRK_FLAT_POSITIONS,
    CL_QUIRK_LOOKAT, /* no view direction or no sideways axis: one is made up */
    CL_QUIRK_KINDS
} cl_quirk;
#define CL_QUIRK_LOG_MAX 8

/* What the expat callbacks do with the events of a chunk (geometry/collada/parallel.c):
 * the prefix re-opens the elements open where the chunk begins, the suffix
 * closes those open where it ends; neither runs the stages. */
typedef enum cl_phase { CL_PHASE_BODY = 0, CL_PHASE_PREFIX, CL_PHASE_SUFFIX } cl_phase;

typedef struct prism__cl {
    const char *file;
    const prism_load_desc *desc;
    XML_Parser xp;
    size_t total, done;
    prism_result result;
    char message[768];

    cl_phase phase;
    uint64_t last_start; /* expat's byte index of the last start tag */
    /* A chunk parsed on its own (geometry/collada/parallel.c): expat counts from the
     * chunk's prefix and never sees the spans it is spared, so positions are
     * counted from the document itself (expat's own count would also walk
     * every byte again). What expat saw at stream offset x is at
     * doc + x - stream0 + removed. */
    const char *doc, *doc_at, *doc_line; /* chunk start; counted up to; its line's start */
    const char *doc_line0;               /* the line start of the chunk's first byte */
    const char *col_from;                /* on doc_line: where col was counted to */
    uint32_t col;
    uint64_t stream0, removed;
    /* A tree replayed without expat (geometry/collada/replay.c): the document
     * byte of the event the handlers are told; NULL while expat reports. */
    const char *replay_at;
    size_t trees_replayed; /* by the chunked parse: all its chunks', once merged */
    size_t plan_scanned;   /* bytes the chunk planner's cut searches read (at most the size) */
    uint32_t doc_lines, doc_lines0; /* line of doc_at, of the chunk's first byte */
    bool doc_cr;                    /* the chunk holds a CR: line ends need the slow count */
    prism__vec *log_buf;            /* chunks buffer their log lines (char: level, text, NUL) */

    cl_frame *stack;
    size_t depth, stack_cap;
    unsigned max_depth, node_depth;
    bool root_seen;

    /* text streaming */
    cl_text text;
    size_t text_depth;
    char carry[128];
    size_t carry_len;
    prism__vec *fdst;
    uint32_t fsrc;    /* mesh source of the float text streaming, CL_NONE: not one */
    size_t f_reserve; /* floats to reserve once its text arrives */
    bool lazy_ok;     /* chunked parse: a long float_array text may wait (lazy) */
    double dbl[16];
    unsigned dbl_count;
    char small[128];
    size_t small_len;
    uint32_t p_stride, p_voff, p_phase;
    size_t p_ints, ring_start;
    bool ring_hole;

    prism__vec pool; /* char */
    cl_map geometry_ids, node_ids, scene_ids, material_ids;

    cl_mesh mesh;
    prism__tri_scratch tri;
    prism__vec geometries; /* cl_geometry */
    uint32_t cur_geometry;
    bool geometry_has_mesh;

    prism__vec nodes, items, bindings; /* cl_node, cl_item, cl_binding */
    prism__vec item_mats;              /* uint32: material per geometry group */
    prism__vec node_stack;             /* uint32 */
    uint32_t cur_item;
    prism__vec scenes; /* uint32: pseudo-nodes of <visual_scene> */
    cl_str scene_url;
    cl_pos scene_pos;

    prism__vec materials, tables, table_data, props, opticals, surfrefs;
    uint32_t cur_material, cur_optical, cur_surfref, cur_table;
    cl_map table_map; /* table name -> index, built with the materials */

    double unit;
    bool has_unit, has_up; /* the root <asset>'s */
    prism_up_axis up;
    double file_unit;  /* the root's <unit meter> (1 without one), kept when a rule overrides it */
    prism__vec scopes; /* cl_scope */
    bool g4dae;
    bool g4_meta; /* a <meta> inside an <extra> */
    prism_unit_source unit_source;
    uint32_t geant4_marks;
    char unit_rule[160];

    prism_quirk_counts quirks;
    size_t lookat_quirks; /* CL_QUIRK_LOOKAT's count: prism_quirk_counts has no field for it */
    size_t quirks_logged[CL_QUIRK_KINDS]; /* warnings given, each kind */
    size_t quirks_kept[CL_QUIRK_KINDS];   /* a chunk's: warnings kept for the merge */

    prism_skip_counts skipped;
    prism_load_stats stats;

    /* desc.trace: each stage's wall time, the process's CPU time (user,
     * system) and page faults in it (scene.c) */
    bool trace;
    double trace_at, trace_user, trace_system;
    long trace_faults;
} prism__cl;

/* geometry/collada/util.c */
cl_str prism__cl_str(prism__cl *L, const char *s, size_t n);
static inline const char *prism__cl_s(const prism__cl *L, cl_str s)
{
    return (const char *)L->pool.data + s;
}
cl_str prism__cl_url(prism__cl *L, const char *url, cl_pos pos, const char *element);
bool prism__cl_map_put(prism__cl *L, cl_map *m, cl_str key, uint32_t val);
/* The id maps (geometries, nodes, scenes, materials), built once the whole
 * document is read, in document order (a repeated id keeps its first). */
bool prism__cl_build_ids(prism__cl *L);
uint32_t prism__cl_map_get(const prism__cl *L, const cl_map *m, const char *key);
void prism__cl_map_free(cl_map *m);
void prism__cl_fail(prism__cl *L, prism_result r, cl_pos pos, const char *element, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));
void prism__cl_oom(prism__cl *L);
void prism__cl_log(prism__cl *L, prism_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A forgiven quirk at pos: counted, and "FILE:LINE:COL: <element>: what"
 * logged as a warning while fewer than CL_QUIRK_LOG_MAX of its kind were. */
void prism__cl_quirk(prism__cl *L, cl_quirk kind, cl_pos pos, const char *element, const char *fmt,
                     ...) __attribute__((format(printf, 5, 6)));
/* After the load: one line for the quirks of each kind not logged one by one. */
void prism__cl_quirk_summary(prism__cl *L);
/* A chunk's kept log line of `level` (as kept, kind bits included): whether
 * to tell it, counting a quirk's warning against the document's limit. */
bool prism__cl_quirk_tell(prism__cl *L, unsigned level);
#define CL_LOG_QUIRK(kind) (0x80u | ((unsigned)(kind) << 4))
cl_pos prism__cl_here(const prism__cl *L);
const char *prism__cl_attr(const XML_Char **atts, const char *name);
bool prism__cl_attr_size(prism__cl *L, const XML_Char **atts, const char *name, size_t *out,
                         const char *element);
const char *prism__cl_tag_name(unsigned tag);
unsigned prism__cl_tag(const char *name);

/* scene.c: with desc.trace, "prism load: STAGE  12.3 ms" for the time
 * since the last mark (a no-op otherwise). */
void prism__cl_trace(prism__cl *L, const char *stage);

/* scene.c: a loader state ready to parse, and its release. */
void prism__cl_init(prism__cl *L, const char *name, const prism_load_desc *desc, size_t total);
void prism__cl_release(prism__cl *L); /* frees what L holds, not L */

/* geometry/collada/xml.c: parse a whole document into L (data/size, or a FILE *). */
prism_result prism__cl_parse(prism__cl *L, const void *data, size_t size, void *file);
XML_Parser prism__cl_make_parser(prism__cl *L);
bool prism__cl_progress(prism__cl *L);

/* geometry/collada/parallel.c: parse `data` in chunks on all cores into L. Returns
 * false, with L untouched or to be re-initialised, when the document must be
 * parsed serially: too small, not plain UTF-8, a DOCTYPE, no place to cut,
 * or any error (the serial parse then reports it as it always has).
 * chunk_bytes 0 picks the size; tests pass a small one to force the path. */
bool prism__cl_parse_parallel(prism__cl *L, const char *data, size_t size, size_t chunk_bytes);
/* Documents from this size up are parsed in parallel by default. */
#define CL_PARALLEL_MIN_BYTES ((size_t)4 << 20)

/* scene.c: prism_scene_load_memory with the chunk size forced (tests, fuzz). */
prism_result prism__scene_load_memory_chunked(const void *data, size_t size, const char *name,
                                              const prism_load_desc *desc, size_t chunk_bytes,
                                              prism_scene **out);
unsigned prism__cl_up(const prism__cl *L, unsigned k); /* tag of the k-th ancestor */
static inline void prism__cl_activate(prism__cl *L)
{
    L->stack[L->depth - 1].active = true;
}
/* The parent element was taken up by a stage (not skipped as out of place). */
static inline bool prism__cl_parent_active(const prism__cl *L)
{
    return L->depth > 1 && L->stack[L->depth - 2].active;
}
static inline cl_pos prism__cl_top_pos(const prism__cl *L)
{
    return L->stack[L->depth - 1].pos;
}
/* Route the text of the element just opened to a number stream. */
void prism__cl_text_floats(prism__cl *L, prism__vec *dst);
/* A mesh source's float_array: its numbers into data, `reserve` floats
 * reserved when the text arrives, number errors kept on the source. */
void prism__cl_text_source(prism__cl *L, uint32_t src, size_t reserve);
/* Convert a source's waiting span (lazy) into its data; false on OOM. */
bool prism__cl_source_convert(prism__cl *L, cl_source *s);
void prism__cl_text_doubles(prism__cl *L);
void prism__cl_text_indices(prism__cl *L, uint32_t stride, uint32_t voff);
void prism__cl_text_counts(prism__cl *L);
void prism__cl_text_small(prism__cl *L);
/* Number text read from the document directly (geometry/collada/parallel.c), as if
 * expat had passed it on. */
void prism__cl_text_span(prism__cl *L, const char *p, size_t n);
/* expat's three events, for a tree the chunked parse replays itself: a
 * start tag (name, then attribute names and values, NULL-ended), an end
 * tag, character data. */
void prism__cl_on_start(prism__cl *L, const char *name, const char **atts);
void prism__cl_on_end(prism__cl *L);
void prism__cl_on_text(prism__cl *L, const char *s, size_t n);

/* geometry/collada/mesh.c */
void prism__cl_mesh_start(prism__cl *L, unsigned tag, const XML_Char **atts);
void prism__cl_mesh_end(prism__cl *L, unsigned tag);
void prism__cl_ring_end(prism__cl *L);
/* A source a primitive reads: its numbers converted and checked (a bad one
 * fails the load at its position), its count compared. False on failure. */
bool prism__cl_source_settle(prism__cl *L, cl_source *s);
/* geometry/collada/primitives.c: </mesh>: positions and triangles of the geometry */
void prism__cl_mesh_finish(prism__cl *L);
void prism__cl_geometry_free(cl_geometry *g);
void prism__cl_mesh_free(cl_mesh *m);

/* geometry/collada/nodes.c */
void prism__cl_node_start(prism__cl *L, unsigned tag, const XML_Char **atts);
void prism__cl_node_end(prism__cl *L, unsigned tag);
void prism__cl_mat_mul(const double a[16], const double b[16], double out[16]);
/* geometry/collada/flatten.c: instancing -> world triangles, solids (and surfaces) */
prism_result prism__cl_build_scene(prism__cl *L, prism_scene *scene);

/* geometry/collada/unit.c: the unit from the caller, the file's <unit>, the marks of a
 * Geant4 exporter, or COLLADA's metres; sets L->unit, unit_source,
 * geant4_marks and unit_rule, and logs the rule once. Run once the whole
 * document is read (the marks are counted over the id arrays). */
void prism__cl_decide_unit(prism__cl *L);

/* geometry/collada/asset.c: <unit> and <up_axis> in an <asset> (the root's,
 * or a nested one's: a scope for its parent), and the end of <up_axis>. */
void prism__cl_asset_start(prism__cl *L, unsigned tag, const XML_Char **atts);
void prism__cl_up_axis_end(prism__cl *L);
/* Once the unit is decided: each scope's matrix into the root's unit and
 * axes, and the node transforms of nested scopes brought into them. */
void prism__cl_apply_scopes(prism__cl *L);

/* geometry/collada/g4dae.c */
void prism__cl_g4dae_start(prism__cl *L, unsigned tag, const XML_Char **atts);
void prism__cl_g4dae_end(prism__cl *L, unsigned tag);
prism_result prism__cl_build_materials(prism__cl *L, prism_scene *scene);
/* Per solid: the node holding its instance_geometry and its placed volume;
 * out: the surface of each solid (left alone when the file has none). */
prism_result prism__cl_build_surfaces(prism__cl *L, prism_scene *scene, const uint32_t *holder,
                                      const uint32_t *pv, uint32_t *surface_of);
void prism__cl_free_properties(prism_property *p, size_t n);
/* One of the scene's six world arrays, `bytes` long (+1), from the scene's
 * arrays_allocator (malloc when it has none); prism_scene_free releases it. */
void *prism__scene_array(prism_scene *S, size_t bytes);
prism_result prism__cl_gather_optical(prism__cl *L, uint32_t owner, prism_surface *s);

#endif
