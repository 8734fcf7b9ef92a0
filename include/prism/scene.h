/* prism_scene: the world-space triangles, solids, materials and surfaces of
 * a COLLADA file, flattened and in metres. A plain struct in the cgltf
 * manner: one call builds it, one call frees it. */
#ifndef PRISM_SCENE_H
#define PRISM_SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An index that refers to nothing (no surface, no parent, no material). */
#define PRISM_NONE UINT32_MAX

typedef enum prism_up_axis {
    PRISM_UP_Y = 0, /* COLLADA's default */
    PRISM_UP_X,
    PRISM_UP_Z
} prism_up_axis;

/** A property table of a material or surface: `count` (wavelength, value)
 * pairs, sorted by increasing wavelength. Wavelengths in nm; lengths
 * (ABSLENGTH, RAYLEIGH, ...) in metres; other values as the file gave them.
 * A Geant4 constant property (SCINTILLATIONYIELD, YIELDRATIO, ...; G4DAE
 * writes it as a table over energies -1 and 1) has count 1 and wavelength 0. */
typedef struct prism_property {
    char *name; /* "RINDEX", "ABSLENGTH", "RAYLEIGH", "EFFICIENCY", ... */
    float *wavelength_nm;
    float *value;
    size_t count;
} prism_property;

typedef struct prism_material {
    char *name;
    prism_property *properties;
    size_t properties_count;
} prism_material;

typedef enum prism_surface_kind {
    PRISM_SURFACE_SKIN = 0, /* on every triangle of one logical volume */
    PRISM_SURFACE_BORDER    /* between two placed volumes, in that order */
} prism_surface_kind;

/** A G4DAE optical surface (opticalsurface + skin/border surface). A skin
 * surface covers every triangle of every placement of its logical volume
 * (the node holding the instance_geometry). A border surface covers the
 * triangles of whichever of its two placed volumes is the daughter of the
 * other; one that matches no such pair (siblings, or volumes the file
 * lacks) is kept but covers nothing, with a warning. Border wins over skin. */
typedef struct prism_surface {
    char *name;
    prism_surface_kind kind;
    int model, finish, type;    /* Geant4's enum values, as written in the file */
    double value;               /* sigma_alpha or polish */
    prism_property *properties; /* REFLECTIVITY, EFFICIENCY, SPECULARLOBE, ... */
    size_t properties_count;
} prism_surface;

/** A placed volume: one instance of a geometry in the world. For G4DAE
 * files the name is the logical volume's node id and the path runs through
 * the physical volume nodes that placed it. */
typedef struct prism_solid {
    char *name;        /* node name (or id) of the placement */
    char *path;        /* node names from the root, joined with '/' */
    int copy_number;   /* n-th placement of the same node, from 0 */
    uint32_t parent;   /* enclosing solid, or PRISM_NONE */
    uint32_t material; /* material inside it, or PRISM_NONE */
    uint32_t first_triangle;
    uint32_t triangle_count;
} prism_solid;

/** What the loader left out, and why. */
typedef struct prism_skip_counts {
    size_t lines;               /* <lines>/<linestrips> primitives */
    size_t degenerate_polygons; /* polygons with < 3 distinct vertices */
    size_t nonfinite_vertices;  /* NaN/inf coordinates: triangles using them are dropped */
    size_t unknown_elements;    /* elements the loader does not read (e.g. <library_animations>) */
} prism_skip_counts;

/* What the loader read although the file broke a rule of COLLADA, as
 * exporters in the wild do; each one also gets a warning naming
 * file:line:col (the first few of each kind, then a count). */
typedef struct prism_quirk_counts {
    size_t float_array_counts; /* <float_array count> disagreeing with its text: the
                                  numbers read are the fewer of the two */
    size_t flat_positions;     /* positions of two components (accessor stride 2, params
                                  X and Y): read with z = 0 */
} prism_quirk_counts;

/* A unit the caller may impose on a load (prism_load_desc.length_unit). */
typedef enum prism_length_unit {
    PRISM_UNIT_AUTO = 0, /* the file's <unit>; without one, mm for a Geant4 export, else m */
    PRISM_UNIT_M,
    PRISM_UNIT_CM,
    PRISM_UNIT_MM
} prism_length_unit;

/* Who decided the unit (prism_scene.unit_source), strongest first. */
typedef enum prism_unit_source {
    PRISM_UNIT_FROM_USER = 0, /* prism_load_desc.length_unit or unit_meter */
    PRISM_UNIT_FROM_FILE,     /* the file's <unit meter="..."> */
    PRISM_UNIT_FROM_GEANT4,   /* no <unit>, written by a Geant4 exporter: millimetres */
    PRISM_UNIT_FROM_DEFAULT   /* no <unit>: metres, COLLADA's default */
} prism_unit_source;

/* Marks a Geant4 exporter (G4DAE and its kin) leaves in a file
 * (prism_scene.geant4_marks). */
enum {
    PRISM_GEANT4_EXTRAS = 1u << 0,      /* G4DAE material or optical-surface extras */
    PRISM_GEANT4_META = 1u << 1,        /* <meta> inside an <extra> (G4DAE's copy numbers) */
    PRISM_GEANT4_POINTER_IDS = 1u << 2, /* ids ending in a pointer, "Name0x2601920" (at least
                                           half of the geometry, node and material ids) */
    PRISM_GEANT4_DD_PATHS = 1u << 3     /* "__dd__" detector-description paths in ids */
};

typedef struct prism_load_stats {
    size_t bytes;   /* bytes of the file read */
    double seconds; /* wall time of the load */
    double triangles_per_second;
    size_t geometries;       /* <geometry> elements */
    size_t nodes;            /* <node> elements */
    size_t instances;        /* instance_geometry placements after flattening */
    size_t unique_triangles; /* triangles before instancing */
    size_t unique_vertices;
} prism_load_stats;

/* Where the loader puts a scene's six world arrays (positions, indices and
 * the four per-triangle arrays). All-zero = malloc. prism_pinned_allocator
 * (prism/memory.h) makes them pinned host memory of a context, so the
 * geometry upload sends them to the device in one DMA each at the link's
 * speed, with no staging copy: the arrays are born where they are copied
 * from. `allocate` returns NULL when out of memory; `release` gets the
 * pointer and the size asked for. */
typedef struct prism_allocator {
    void *(*allocate)(void *user, size_t bytes);
    void (*release)(void *user, void *pointer, size_t bytes);
    void *user;
} prism_allocator;

typedef struct prism_scene {
    /* World-space vertex positions in metres, 3 floats per vertex. */
    float *positions;
    size_t vertices_count;

    /* 3 vertex indices per triangle, counter-clockwise seen from outside
     * (the normal (v1-v0)x(v2-v0) points out of the solid). */
    uint32_t *indices;
    size_t triangles_count;

    /* Per triangle. */
    uint32_t *triangle_solid;
    uint32_t *triangle_material_inner; /* the solid's material */
    uint32_t *triangle_material_outer; /* the enclosing solid's material, or PRISM_NONE */
    uint32_t *triangle_surface;        /* optical surface or PRISM_NONE */

    prism_solid *solids;
    size_t solids_count;
    prism_material *materials;
    size_t materials_count;
    prism_surface *surfaces;
    size_t surfaces_count;

    float bbox_min[3], bbox_max[3]; /* metres; min > max when empty */
    prism_up_axis up_axis;
    double unit_meter; /* the unit the file's lengths were in */
    bool g4dae;        /* the file carried G4DAE extras */
    prism_unit_source unit_source;
    uint32_t geant4_marks; /* PRISM_GEANT4_* found in the file, whatever decided the unit */
    /* Which rule decided unit_meter, in words, e.g. "<unit meter=\"0.001\"> in
     * the file", "Geant4 export (pointer-suffixed ids): millimetres", "no
     * <unit>: metres (COLLADA default)", "mm (user's choice)". Also logged
     * once (PRISM_LOG_INFO) by the load. */
    char unit_rule[160];
    prism_quirk_counts quirks;

    prism_skip_counts skipped;
    prism_load_stats stats;
    prism_allocator arrays_allocator; /* what the six world arrays came from (zero: malloc) */
} prism_scene;

/** Progress callback: `done` of `total` bytes read. Return false to cancel
 * (the load then fails with PRISM_ERROR_IO and "cancelled"). */
typedef bool (*prism_progress_fn)(void *user, size_t done, size_t total);

/* Defaults (all-zero): unit from the file's <unit>; a file without one is
 * in millimetres when a Geant4 exporter wrote it (any of the
 * PRISM_GEANT4_* marks), else in metres (COLLADA's default); no log; no
 * progress; nesting limit 256 (at most 4096); up to 2^32-1 world
 * triangles; no trace.
 *
 * trace: a debugging trace to `log` at PRISM_LOG_DEBUG, one line a stage
 * of the load (scan, parse, merge, ids, unit, materials, flatten, write,
 * release) with its wall time, and the process's CPU time (user, system)
 * and minor page faults over it: where a stage on all cores scales badly,
 * they say whether the kernel's page handling is where the time goes. */
typedef struct prism_load_desc {
    double unit_meter;  /* >0 overrides the file's <unit> (length_unit wins when set) */
    unsigned max_depth; /* node/instance nesting limit; 0 = 256 */
    prism_log_fn log;
    void *log_user;
    prism_progress_fn progress;
    void *progress_user;
    char *error; /* if set, the error message is written here */
    size_t error_size;
    size_t max_triangles;          /* >0: refuse files that place more world triangles
                                   or solids (PRISM_ERROR_LIMIT) before allocating them */
    const prism_allocator *arrays; /* the world arrays' memory; NULL = malloc */
    prism_length_unit length_unit; /* not AUTO: overrides the file's <unit> and the
                                      Geant4 rule (PRISM_ERROR_INVALID_ARGUMENT when
                                      not a prism_length_unit) */
    bool trace;                    /* log each stage's times (PRISM_LOG_DEBUG); see above */
} prism_load_desc;

/** Read a unit as a command line gives it: "auto", "m", "cm" or "mm" (in
 * any case), into *out.
 * Tools share it for their --unit option.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL, or any other text: *out is
 *   left alone).
 * @thread_safety Any thread. */
PRISM_API prism_result prism_length_unit_parse(const char *text, prism_length_unit *out);

/** "auto", "m", "cm" or "mm"; "?" for anything else.
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API const char *prism_length_unit_name(prism_length_unit unit);

/** Metres per unit: 1, 0.01 or 0.001; 0 for AUTO and anything else.
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API double prism_length_unit_meter(prism_length_unit unit);

/** Load a COLLADA file. On failure *out is NULL, nothing is left allocated,
 * and the message ("FILE:LINE:COL: <element>: what") goes to desc->error
 * and to desc->log.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL path or out, a length_unit
 *   outside prism_length_unit), PRISM_ERROR_IO (the file cannot be opened
 *   or read; cancelled by desc->progress), PRISM_ERROR_PARSE,
 *   PRISM_ERROR_LIMIT (nesting, desc->max_triangles, counts beyond 2^32-1),
 *   PRISM_ERROR_OUT_OF_MEMORY (also desc->arrays returning NULL).
 * @thread_safety Reentrant: loads share nothing; a large document is
 *   parsed on OpenMP threads. With desc->arrays from prism_pinned_allocator,
 *   as that context. */
PRISM_API prism_result prism_scene_load(const char *path, const prism_load_desc *desc,
                                        prism_scene **out);

/** As prism_scene_load, from memory; `name` stands for the file in messages.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL out, NULL data with a size, a
 *   size beyond 2^31 KiB, a bad length_unit), PRISM_ERROR_IO (cancelled by
 *   desc->progress),
 *   PRISM_ERROR_PARSE, PRISM_ERROR_LIMIT, PRISM_ERROR_OUT_OF_MEMORY.
 * @thread_safety Reentrant, as prism_scene_load; `data` is only read. */
PRISM_API prism_result prism_scene_load_memory(const void *data, size_t size, const char *name,
                                               const prism_load_desc *desc, prism_scene **out);

/** Free a scene. Accepts NULL.
 * @errors None.
 * @thread_safety Any thread, the scene being in use nowhere else. Arrays
 *   from prism_pinned_allocator go back to its context: as that context. */
PRISM_API void prism_scene_free(prism_scene *scene);

/** Whether any material of the scene carries a RINDEX table. Without one
 * every material is vacuum to prism_propagate (index 1, and light crosses
 * every bare boundary untouched): a geometry without optics, which tools
 * say once so that nobody mistakes the result for physics. False for NULL.
 * @errors None.
 * @thread_safety Reentrant; reads the scene only. */
PRISM_API bool prism_scene_has_optics(const prism_scene *scene);

/** Index of the material named so, or PRISM_NONE.
 * @errors None (PRISM_NONE for NULL scene or name).
 * @thread_safety Reentrant; reads the scene only. */
PRISM_API uint32_t prism_scene_find_material(const prism_scene *scene, const char *name);
/** The material's property named so ("RINDEX"), or NULL.
 * @errors None (NULL for NULL material or name).
 * @thread_safety Reentrant; reads the material only. */
PRISM_API const prism_property *prism_material_property(const prism_material *material,
                                                        const char *name);

#ifdef __cplusplus
}
#endif

#endif
