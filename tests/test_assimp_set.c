/* Every .dae of assimp's COLLADA test set (Debian assimp-testmodels,
 * /usr/share/assimp/models/Collada/) loaded by Prism and by assimp, an
 * independent loader: world triangle count and bounding box must agree.
 * assimp is asked not to turn the up axis (so both stay in the file's
 * axes) and not to invent a "skeleton mesh" for scenes without meshes
 * (cameras.dae, lights.dae); its unit scale is on its root node. It counts
 * per instance here: the node tree is walked and each node's meshes' faces
 * summed, a face of n corners being n-2 triangles once corners that repeat
 * the previous corner's position are dropped (Prism drops triangles with a
 * repeated vertex, as teapot_instancenodes.DAE has 32 per teapot, and
 * counts them in skipped.degenerate_polygons). Where assimp is known to be
 * wrong the file is excused, with the reason, and Prism is checked against
 * an answer derived by hand from the file instead. Every file is one test case: matched or
 * excused, never silently passed over. Prism's own assets are compared
 * too. Exits 77 (skipped) when assimp's folder is absent. */
#include <ctype.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <assimp/cimport.h>
#include <assimp/config.h>
#include <assimp/scene.h>

#include "prism/scene.h"

#ifndef PRISM_ASSIMP_MODELS
#define PRISM_ASSIMP_MODELS "/usr/share/assimp/models/Collada"
#endif
#define MAX_FILES 256

typedef struct world {
    size_t triangles;
    double lo[3], hi[3];
} world;

/* A file where assimp is wrong: why, and the answer derived by hand. */
typedef struct excuse {
    const char *file;
    const char *reason;
    world want;
    const char *solid_name; /* a solid that must be there, or NULL */
} excuse;

static const excuse excuses[] = {
    {"cube_UTF16LE.dae",
     "assimp 5.2 cannot read UTF-16 (\"malformed XML\"). By hand: the same cube as "
     "cube_UTF8BOM.dae, UTF-16LE with a BOM: 8 corners at +-50 in centimetres (<unit "
     "meter=\"0.01\">), one <polylist> of 6 quads = 12 triangles, box +-0.5 m; the node "
     "holding it is named \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e (Japanese), which must come "
     "through as UTF-8",
     {12, {-0.5, -0.5, -0.5}, {0.5, 0.5, 0.5}},
     "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"},
    {"library_animation_clips.dae",
     "assimp 5.2 stops at numbers with leading blanks (\"  0.0 0.0 0.0 1.0  \" in a "
     "<color>). By hand: its only mesh (26 quads) is placed through <instance_controller> "
     "(a skin), never through <instance_geometry>, which is all Prism places (skins are "
     "animation, not detector geometry): no world triangles, an empty box",
     {0, {INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}},
     NULL},
    {"box_nested_animation.dae",
     "assimp places the mesh of a skin (<instance_controller>) where its node is, ignoring "
     "the skin's <bind_shape_matrix> (a translation by (-1, 1, 1) here), so its box "
     "[0,-2,-1]..[2,0,1] is not the bind pose either. By hand: the cube is placed only "
     "through <instance_controller>, which Prism does not place (as above): no world "
     "triangles, an empty box",
     {0, {INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}},
     NULL},
    /* Prism's own assets (assets/), whose figures test_assets.c derives. */
    {"assets/box_with_hole.dae",
     "assimp 5.2 rejects a hole in a polygon (\"Unexpected sub element <h> in tag "
     "<polygons>\"). By hand (test_assets.c): frame 32 + L 20 = 52 triangles; x -2..5, "
     "y -2..2, z 0..1 inches",
     {52, {-2 * 0.0254, -2 * 0.0254, 0}, {5 * 0.0254, 2 * 0.0254, 0.0254}},
     "Frame"},
    {"assets/tiny_detector.dae",
     "assimp does not know G4DAE's millimetres (a file without <unit> is in metres to it), "
     "so its box is +-1000. By hand (test_assets.c): 468 triangles, the world box +-1 m",
     {468, {-1, -1, -1}, {1, 1, 1}},
     "__dd__Geometry__PMT__lvPmtHemi0xc133740"},
};

/* A file to compare: its path, and its test name (the file name, with
 * "assets/" in front for Prism's own). */
typedef struct entry {
    char path[512], name[128];
} entry;

static entry files[MAX_FILES];
static size_t files_count;

/* ---- assimp's answer ---- */

static bool same_position(const struct aiMesh *m, unsigned a, unsigned b)
{
    const struct aiVector3D *p = &m->mVertices[a], *q = &m->mVertices[b];
    return p->x == q->x && p->y == q->y && p->z == q->z;
}

/* Triangles of a face once corners repeating the previous one are dropped
 * (cyclically): (a, a, b) gives none, (a, b, c, d) two. */
static size_t face_triangles(const struct aiMesh *m, const struct aiFace *f)
{
    size_t corners = 0;
    for (unsigned i = 0; i < f->mNumIndices; i++) {
        unsigned prev = f->mIndices[(i + f->mNumIndices - 1) % f->mNumIndices];
        if (f->mNumIndices == 1 || !same_position(m, f->mIndices[i], prev))
            corners++;
    }
    return corners >= 3 ? corners - 2 : 0;
}

static void assimp_walk(const struct aiScene *s, const struct aiNode *n, struct aiMatrix4x4 m,
                        world *w)
{
    struct aiMatrix4x4 here = m;
    aiMultiplyMatrix4(&here, &n->mTransformation);
    for (unsigned i = 0; i < n->mNumMeshes; i++) {
        const struct aiMesh *mesh = s->mMeshes[n->mMeshes[i]];
        for (unsigned f = 0; f < mesh->mNumFaces; f++)
            w->triangles += face_triangles(mesh, &mesh->mFaces[f]);
        for (unsigned v = 0; v < mesh->mNumVertices; v++) {
            struct aiVector3D p = mesh->mVertices[v];
            aiTransformVecByMatrix4(&p, &here);
            double q[3] = {p.x, p.y, p.z};
            for (int k = 0; k < 3; k++) {
                w->lo[k] = fmin(w->lo[k], q[k]);
                w->hi[k] = fmax(w->hi[k], q[k]);
            }
        }
    }
    for (unsigned c = 0; c < n->mNumChildren; c++)
        assimp_walk(s, n->mChildren[c], here, w);
}

static bool assimp_world(const char *path, world *w)
{
    struct aiPropertyStore *props = aiCreatePropertyStore();
    aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, 1);
    aiSetImportPropertyInteger(props, AI_CONFIG_IMPORT_NO_SKELETON_MESHES, 1);
    const struct aiScene *s = aiImportFileExWithProperties(path, 0, NULL, props);
    aiReleasePropertyStore(props);
    if (!s) {
        print_error("assimp: %s: %s\n", path, aiGetErrorString());
        return false;
    }
    *w = (world){0, {INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
    struct aiMatrix4x4 identity;
    aiIdentityMatrix4(&identity);
    assimp_walk(s, s->mRootNode, identity, w);
    aiReleaseImport(s);
    return true;
}

/* ---- the comparison ---- */

static const excuse *find_excuse(const char *file)
{
    for (size_t i = 0; i < sizeof excuses / sizeof excuses[0]; i++)
        if (!strcmp(excuses[i].file, file))
            return &excuses[i];
    return NULL;
}

/* Boxes agree to 1e-4 of their size (float positions, different order of
 * transform products); empty boxes agree with empty boxes. */
static bool same_box(const char *file, const float lo[3], const float hi[3], const world *w)
{
    if (w->triangles == 0) {
        bool empty = lo[0] > hi[0] && lo[1] > hi[1] && lo[2] > hi[2];
        if (!empty)
            print_error("%s: Prism's box is not empty\n", file);
        return empty;
    }
    double size = 0;
    for (int k = 0; k < 3; k++)
        size = fmax(size, w->hi[k] - w->lo[k]);
    double tol = 1e-4 * size + 1e-9;
    bool ok = true;
    for (int k = 0; k < 3; k++)
        if (!(fabs(lo[k] - w->lo[k]) <= tol && fabs(hi[k] - w->hi[k]) <= tol)) {
            print_error("%s: box axis %d: Prism [%.9g, %.9g], want [%.9g, %.9g]\n", file, k, lo[k],
                        hi[k], w->lo[k], w->hi[k]);
            ok = false;
        }
    return ok;
}

static bool has_solid(const prism_scene *s, const char *name)
{
    for (size_t i = 0; i < s->solids_count; i++)
        if (s->solids[i].name && !strcmp(s->solids[i].name, name))
            return true;
    return false;
}

/* Prism's scene against the expected world; says what differs. */
static bool agrees(const char *file, const prism_scene *s, const world *want,
                   const char *solid_name)
{
    bool ok = true;
    if (s->triangles_count != want->triangles) {
        print_error("%s: Prism %zu world triangles, want %zu (Prism skipped %zu degenerate "
                    "polygons)\n",
                    file, s->triangles_count, want->triangles, s->skipped.degenerate_polygons);
        ok = false;
    }
    if (!same_box(file, s->bbox_min, s->bbox_max, want))
        ok = false;
    if (solid_name && !has_solid(s, solid_name)) {
        print_error("%s: no solid named \"%s\"\n", file, solid_name);
        ok = false;
    }
    return ok;
}

/* The scene is freed before any failure is reported: cmocka leaves the
 * test by longjmp, and the sanitizer run must not see a leak. */
static void test_file(void **state)
{
    const entry *e = *state;
    const char *path = e->path, *file = e->name;
    char msg[1024] = "";
    prism_load_desc desc = {.error = msg, .error_size = sizeof msg};
    prism_scene *s = NULL;
    prism_result r = prism_scene_load(path, &desc, &s);
    if (r != PRISM_SUCCESS) {
        print_error("Prism failed on %s: %s: %s\n", file, prism_result_string(r), msg);
        fail();
    }
    const excuse *ex = find_excuse(file);
    world want;
    bool ok;
    if (ex) {
        print_message("%s: excused: %s\n", file, ex->reason);
        want = ex->want;
        ok = agrees(file, s, &want, ex->solid_name);
    } else if (assimp_world(path, &want)) {
        ok = agrees(file, s, &want, NULL);
        if (ok)
            print_message("%s: matched assimp: %zu triangles\n", file, want.triangles);
    } else {
        print_error("%s: assimp failed and the file has no excuse\n", file);
        ok = false;
    }
    prism_scene_free(s);
    assert_true(ok);
}

static bool is_dae(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && name[n - 4] == '.' && tolower((unsigned char)name[n - 3]) == 'd' &&
           tolower((unsigned char)name[n - 2]) == 'a' && tolower((unsigned char)name[n - 1]) == 'e';
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

/* Adds the folder's .dae files, sorted, names prefixed; false when the
 * folder is absent. */
static bool list_files(const char *folder, const char *prefix)
{
    DIR *d = opendir(folder);
    if (!d)
        return false;
    size_t first = files_count;
    struct dirent *de;
    while ((de = readdir(d)) && files_count < MAX_FILES) {
        entry *e = &files[files_count];
        size_t n = strlen(folder), m = strlen(de->d_name);
        if (!is_dae(de->d_name) || n + m + 2 > sizeof e->path ||
            strlen(prefix) + m + 1 > sizeof e->name)
            continue;
        memcpy(e->path, folder, n);
        e->path[n] = '/';
        memcpy(e->path + n + 1, de->d_name, m + 1);
        strcpy(e->name, prefix);
        strcat(e->name, de->d_name);
        files_count++;
    }
    closedir(d);
    qsort(&files[first], files_count - first, sizeof files[0], by_name);
    return true;
}

int main(void)
{
    if (!list_files(PRISM_ASSIMP_MODELS, "") || files_count == 0) {
        fprintf(stderr, "no COLLADA files in %s (Debian assimp-testmodels): skipped\n",
                PRISM_ASSIMP_MODELS);
        return 77;
    }
#ifdef PRISM_ASSETS
    list_files(PRISM_ASSETS, "assets/"); /* a second opinion on their hand-made figures */
#endif
    static struct CMUnitTest tests[MAX_FILES];
    for (size_t i = 0; i < files_count; i++)
        tests[i] = (struct CMUnitTest){files[i].name, test_file, NULL, NULL, &files[i]};
    return _cmocka_run_group_tests("assimp_set", tests, files_count, NULL, NULL);
}
