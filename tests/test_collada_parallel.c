/* COLLADA loader, chunked parse (geometry/collada/parallel.c): cut into chunks of
 * any size, every document must load exactly as the serial parse loads it:
 * the same scene, the same warnings (their file:line:col come from the
 * chunks' shifted positions), and for bad documents the same result and
 * message. The fixtures and assets are cut everywhere a cut is allowed;
 * generated documents add nesting, transforms after child nodes, and
 * errors placed in late chunks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "exec_util.h"
#include "geometry/collada/internal.h"
#include "test_collada_util.h"

typedef struct run {
    prism_result r;
    prism_scene *s;
    char error[1024];
    char log[16384]; /* every log line, in order */
    size_t log_len;
} run;

static void keep_log(void *user, prism_log_level level, const char *msg)
{
    run *o = user;
    int n = snprintf(o->log + o->log_len, sizeof o->log - o->log_len, "%d %s\n", (int)level, msg);
    if (n > 0 && o->log_len + (size_t)n < sizeof o->log)
        o->log_len += (size_t)n;
}

/* chunk 0: the plain entry point (serial below 4 MB). */
static void load(const char *doc, size_t size, size_t chunk, run *o)
{
    memset(o, 0, sizeof *o);
    prism_load_desc d = {
        .error = o->error, .error_size = sizeof o->error, .log = keep_log, .log_user = o};
    o->r = chunk ? prism__scene_load_memory_chunked(doc, size, "gen", &d, chunk, &o->s)
                 : prism_scene_load_memory(doc, size, "gen", &d, &o->s);
}

static void assert_same_scene(const prism_scene *a, const prism_scene *b)
{
    assert_int_equal(a->triangles_count, b->triangles_count);
    assert_int_equal(a->vertices_count, b->vertices_count);
    assert_int_equal(a->solids_count, b->solids_count);
    assert_int_equal(a->materials_count, b->materials_count);
    assert_int_equal(a->surfaces_count, b->surfaces_count);
    size_t t = a->triangles_count;
    assert_memory_equal(a->positions, b->positions, 12 * a->vertices_count);
    assert_memory_equal(a->indices, b->indices, 12 * t);
    assert_memory_equal(a->triangle_solid, b->triangle_solid, 4 * t);
    assert_memory_equal(a->triangle_material_inner, b->triangle_material_inner, 4 * t);
    assert_memory_equal(a->triangle_material_outer, b->triangle_material_outer, 4 * t);
    assert_memory_equal(a->triangle_surface, b->triangle_surface, 4 * t);
    for (size_t i = 0; i < a->solids_count; i++) {
        const prism_solid *x = &a->solids[i], *y = &b->solids[i];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->path, y->path);
        assert_int_equal(x->copy_number, y->copy_number);
        assert_int_equal(x->parent, y->parent);
        assert_int_equal(x->material, y->material);
        assert_int_equal(x->first_triangle, y->first_triangle);
        assert_int_equal(x->triangle_count, y->triangle_count);
    }
    for (size_t i = 0; i < a->materials_count; i++) {
        assert_string_equal(a->materials[i].name, b->materials[i].name);
        assert_int_equal(a->materials[i].properties_count, b->materials[i].properties_count);
        for (size_t k = 0; k < a->materials[i].properties_count; k++) {
            const prism_property *p = &a->materials[i].properties[k],
                                 *q = &b->materials[i].properties[k];
            assert_string_equal(p->name, q->name);
            assert_int_equal(p->count, q->count);
            assert_memory_equal(p->value, q->value, p->count * sizeof(float));
        }
    }
    for (size_t i = 0; i < a->surfaces_count; i++) {
        assert_string_equal(a->surfaces[i].name, b->surfaces[i].name);
        assert_int_equal(a->surfaces[i].kind, b->surfaces[i].kind);
        assert_int_equal(a->surfaces[i].properties_count, b->surfaces[i].properties_count);
    }
    assert_memory_equal(&a->skipped, &b->skipped, sizeof a->skipped);
    assert_int_equal(a->stats.geometries, b->stats.geometries);
    assert_int_equal(a->stats.nodes, b->stats.nodes);
    assert_int_equal(a->stats.instances, b->stats.instances);
    assert_int_equal(a->stats.unique_triangles, b->stats.unique_triangles);
    assert_int_equal(a->stats.unique_vertices, b->stats.unique_vertices);
    assert_int_equal(a->stats.bytes, b->stats.bytes);
    assert_memory_equal(a->bbox_min, b->bbox_min, sizeof a->bbox_min);
    assert_memory_equal(a->bbox_max, b->bbox_max, sizeof a->bbox_max);
    assert_int_equal(a->up_axis, b->up_axis);
    assert_true(a->unit_meter == b->unit_meter);
    assert_int_equal(a->g4dae, b->g4dae);
    assert_int_equal(a->unit_source, b->unit_source);
    assert_int_equal(a->geant4_marks, b->geant4_marks);
    assert_string_equal(a->unit_rule, b->unit_rule);
    assert_memory_equal(&a->quirks, &b->quirks, sizeof a->quirks);
}

/* The document loads the same whole and cut into chunks of `chunk` bytes. */
static void assert_same(const char *what, const char *doc, size_t size, size_t chunk)
{
    run *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    load(doc, size, 0, a);
    load(doc, size, chunk, b);
    if (a->r != b->r || strcmp(a->error, b->error) != 0 || strcmp(a->log, b->log) != 0)
        print_error("%s, chunks of %zu: serial %s \"%s\"\n%s\nchunked %s \"%s\"\n%s\n", what, chunk,
                    prism_result_string(a->r), a->error, a->log, prism_result_string(b->r),
                    b->error, b->log);
    assert_int_equal(a->r, b->r);
    assert_string_equal(a->error, b->error);
    assert_string_equal(a->log, b->log);
    if (a->r == PRISM_SUCCESS)
        assert_same_scene(a->s, b->s);
    prism_scene_free(a->s);
    prism_scene_free(b->s);
    free(a);
    free(b);
}

static void test_fixtures(void **state)
{
    (void)state;
    static const char *files[] = {DATA("cube.dae"),
                                  DATA("g4dae_mini.dae"),
                                  DATA("nonfinite.dae"),
                                  DATA("polygons.dae"),
                                  DATA("transforms.dae"),
                                  DATA("bom.dae"),
                                  DATA("utf16.dae"),
                                  DATA("bad_cycle.dae"),
                                  DATA("bad_missing_id.dae"),
                                  DATA("bad_index_range.dae"),
                                  DATA("bad_malformed.dae"),
                                  DATA("bad_truncated.dae"),
                                  DATA("quirk_count_fewer.dae"),
                                  DATA("bad_deep_nodes.dae"),
                                  DATA("bad_deep_instances.dae"),
                                  DATA("bad_billion_laughs.dae"),
                                  DATA("bad_external_entity.dae"),
                                  DATA("quirk_count_huge.dae"),
                                  DATA("quirk_count_more.dae"),
                                  DATA("quirk_flat_positions.dae"),
                                  DATA("bad_count_short.dae"),
                                  DATA("bad_stride2_st.dae"),
                                  DATA("unit_none.dae"),
                                  DATA("unit_odd_pointer.dae"),
                                  DATA("unit_g4_meta.dae"),
                                  DATA("unit_g4_pointer_ids.dae"),
                                  DATA("unit_g4_dd_paths.dae"),
                                  DATA("unit_file_wins.dae"),
                                  DATA("lookat_degenerate.dae"),
                                  DATA("skew.dae"),
                                  DATA("chunk_plan_hang.dae"),
                                  DATA("asset_nested.dae"),
                                  PRISM_ASSETS "/tiny_detector.dae",
                                  PRISM_ASSETS "/cube.dae",
                                  PRISM_ASSETS "/sphere.dae",
                                  PRISM_ASSETS "/box_with_hole.dae"};
    static const size_t chunks[] = {1, 13, 100, 1000};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        size_t size = 0;
        char *doc = exec_read_file(files[i], &size);
        if (!doc)
            print_error("cannot read %s\n", files[i]);
        assert_non_null(doc);
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
            assert_same(files[i], doc, size, chunks[c]);
        free(doc);
    }
}

/* ---- generated documents ---- */

typedef struct gen {
    char *d;
    size_t n, cap;
    unsigned line; /* the line being written, from 1 */
} gen;

static void put(gen *g, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(g->d + g->n, g->cap - g->n, fmt, ap);
        va_end(ap);
        assert_true(k >= 0);
        if (g->n + (size_t)k < g->cap) {
            for (int i = 0; i < k; i++)
                g->line += g->d[g->n + (size_t)i] == '\n';
            g->n += (size_t)k;
            return;
        }
        g->cap = 2 * (g->cap + (size_t)k);
        g->d = realloc(g->d, g->cap);
        assert_non_null(g->d);
    }
}

typedef enum fault {
    FAULT_NONE,
    FAULT_BAD_NUMBER,         /* "1.0x" in a float_array of a late geometry */
    FAULT_NAN,                /* a NaN coordinate: a warning with a position */
    FAULT_MISSING_REF,        /* an instance_geometry of no geometry, late in the nodes */
    FAULT_BAD_MATRIX,         /* 15 values in a late <matrix> */
    FAULT_UNBOUND,            /* a binding to no material: a warning with a position */
    FAULT_MISSING_AFTER_TEXT, /* FAULT_MISSING_REF right after a long multi-line number text */
    FAULT_UNBOUND_AFTER_TEXT  /* FAULT_UNBOUND right after a long one-line number text */
} fault;

typedef struct doc_spec {
    unsigned geometries, pmts, fault_at;
    fault fault;
    unsigned fault_line, fault_col; /* where the fault's message must point */
    bool big; /* number texts long enough to bypass expat, some over many lines */
} doc_spec;

/* `count` numbers, `per_line` to a line (0: one line). */
static void numbers(gen *g, unsigned count, unsigned per_line, unsigned seed)
{
    for (unsigned k = 0; k < count; k++)
        put(g, "%u.%u%s", (seed + k) % 97, k % 10,
            k + 1 == count                             ? ""
            : per_line && k % per_line == per_line - 1 ? "\n"
                                                       : " ");
}

static void geometry(gen *g, doc_spec *sp, unsigned i)
{
    double s = 1.0 + i % 7;
    put(g, "    <geometry id=\"g%u\" name=\"g%u\">\n      <mesh>\n", i, i);
    put(g, "        <source id=\"g%u-pos\">\n          <float_array id=\"g%u-arr\" count=\"%u\">",
        i, i, sp->big ? 312 : 12);
    if (sp->fault == FAULT_BAD_NUMBER && i == sp->fault_at) {
        sp->fault_line = g->line;
        sp->fault_col = (unsigned)(g->n - (size_t)(strrchr(g->d, '\n') - g->d));
    }
    const char *z = sp->fault == FAULT_BAD_NUMBER && i == sp->fault_at ? "1.0x"
                    : sp->fault == FAULT_NAN && i == sp->fault_at      ? "nan"
                                                                       : "0";
    put(g, "0 0 %s %g 0 0 0 %g 0 0 0 %g", z, s, s, s);
    if (sp->big) { /* padding the accessor does not read */
        put(g, i % 2 ? " " : "\n");
        numbers(g, 300, i % 2 ? 0 : 10, i);
    }
    put(g, "</float_array>\n");
    put(g,
        "          <technique_common><accessor source=\"#g%u-arr\" count=\"4\" stride=\"3\">"
        "<param name=\"X\" type=\"float\"/><param name=\"Y\" type=\"float\"/>"
        "<param name=\"Z\" type=\"float\"/></accessor></technique_common>\n        </source>\n",
        i);
    put(g,
        "        <vertices id=\"g%u-v\"><input semantic=\"POSITION\" source=\"#g%u-pos\"/>"
        "</vertices>\n",
        i, i);
    unsigned reps = sp->big ? 30 : 1;
    const char *sep = sp->big && i % 2 == 0 ? "\n" : " ";
    if (i % 3 == 0) {
        put(g,
            "        <polylist material=\"M\" count=\"%u\"><input semantic=\"VERTEX\" "
            "source=\"#g%u-v\" offset=\"0\"/>\n          <vcount>",
            2 * reps, i);
        for (unsigned r = 0; r < reps; r++)
            put(g, "4 3%s", r + 1 == reps ? "" : sep);
        put(g, "</vcount>\n          <p>");
        for (unsigned r = 0; r < reps; r++)
            put(g, "0 2 1 3 0 1 3%s", r + 1 == reps ? "" : sep);
        put(g, "</p>\n        </polylist>\n");
    } else {
        put(g,
            "        <triangles material=\"M\" count=\"%u\"><input semantic=\"VERTEX\" "
            "source=\"#g%u-v\" offset=\"0\"/>\n          <p>",
            4 * reps, i);
        for (unsigned r = 0; r < reps; r++)
            put(g, "0 2 1 0 1 3 0 3 2 1 2 3%s", r + 1 == reps ? "" : sep);
        put(g, "</p>\n        </triangles>\n");
    }
    put(g, "      </mesh>\n    </geometry>\n");
}

static void instance(gen *g, const char *url, const char *mat)
{
    put(g,
        "<instance_geometry url=\"#%s\"><bind_material><technique_common>"
        "<instance_material symbol=\"M\" target=\"#%s\"/></technique_common></bind_material>"
        "</instance_geometry>\n",
        url, mat);
}

/* A tank of pmts: some placed through instance_node, some with their own
 * geometry, some nested two deep; a transform after a child node; the
 * visual scene places the tank twice. */
static char *make_doc(doc_spec *sp, size_t *size)
{
    gen g = {NULL, 0, 0, 1};
    put(&g, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- generated -->\n"
            "<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n"
            "  <asset><unit meter=\"0.001\"/><up_axis>Z_UP</up_axis></asset>\n");
    put(&g, "  <library_geometries>\n");
    for (unsigned i = 0; i < sp->geometries; i++)
        geometry(&g, sp, i);
    put(&g, "  </library_geometries>\n  <library_materials>\n"
            "    <material id=\"Oil\" name=\"Oil\"/>\n    <material id=\"Glass\" name=\"Glass\"/>\n"
            "  </library_materials>\n  <library_nodes>\n");
    put(&g, "    <node id=\"lvPmt\" name=\"lvPmt\">\n      ");
    instance(&g, "g0", "Glass");
    put(&g, "    </node>\n    <node id=\"lvTank\" name=\"lvTank\">\n      ");
    instance(&g, "g1", "Oil");
    for (unsigned i = 0; i < sp->pmts; i++) {
        put(&g, "      <node id=\"pv%u\" name=\"pv%u\">\n", i, i);
        bool late = i == sp->fault_at;
        unsigned values = sp->fault == FAULT_BAD_MATRIX && late ? 15 : 16;
        if (values == 15)
            sp->fault_line = g.line;
        put(&g, "        <matrix>\n");
        for (unsigned k = 0; k < values; k++)
            put(&g, "%g%s",
                k % 5 == 0 ? 1.0
                : k == 3   ? 10.0 * i
                : k == 7   ? 1.0 * (i % 9)
                           : 0.0,
                k % 4 == 3 ? "\n" : " ");
        put(&g, "</matrix>\n");
        bool after_text = sp->fault == FAULT_MISSING_AFTER_TEXT ||
                          sp->fault == FAULT_UNBOUND_AFTER_TEXT;
        if (sp->big && ((i % 7 == 3 && !late) || (late && after_text))) {
            /* number text the loader ignores, then on its last line an instance */
            bool lines = late ? sp->fault == FAULT_MISSING_AFTER_TEXT : i % 2 == 0;
            /* '&amp;' keeps expat on the late node's <extra>, so that its long
             * text is what is skipped; other <extra>s are skipped whole */
            put(&g, late ? "        <extra note=\"&amp;\"><float_array count=\"200\">"
                         : "        <extra><float_array count=\"200\">");
            numbers(&g, 200, lines ? 9 : 0, i);
            put(&g, "</float_array>");
            if (!lines) { /* two long texts on one line */
                put(&g, "<float_array count=\"100\">");
                numbers(&g, 100, 0, i + 1);
                put(&g, "</float_array>");
            }
            put(&g, "</extra>");
            bool missing = late && sp->fault == FAULT_MISSING_AFTER_TEXT;
            if (late && (missing || sp->fault == FAULT_UNBOUND_AFTER_TEXT)) {
                sp->fault_line = g.line;
                sp->fault_col = (unsigned)(g.n - (size_t)(strrchr(g.d, '\n') - g.d));
            }
            instance(&g, missing ? "nothere" : "g2",
                     late && sp->fault == FAULT_UNBOUND_AFTER_TEXT ? "NoSuch" : "Glass");
        } else if (sp->fault == FAULT_MISSING_REF && late) {
            sp->fault_line = g.line;
            put(&g, "        ");
            instance(&g, "nothere", "Glass");
        } else if (i % 4 == 1) {
            put(&g, "        ");
            instance(&g, "g2", sp->fault == FAULT_UNBOUND && late ? "NoSuch" : "Glass");
        } else {
            put(&g, "        <instance_node url=\"#lvPmt\"/>\n");
        }
        if (i % 5 == 2) {
            put(&g,
                "        <node id=\"pv%u-in\" name=\"pv%u-in\">\n          <translate>0 0 %u"
                "</translate>\n          ",
                i, i, i);
            instance(&g, sp->geometries > 3 ? "g3" : "g0", "Oil");
            put(&g, "        </node>\n");
        }
        put(&g, "        <extra><meta><copyNo>%u</copyNo></meta></extra>\n      </node>\n", i);
    }
    /* a transform after the child nodes: it applies to the tank, in order */
    put(&g, "      <translate>0 0 5</translate>\n    </node>\n  </library_nodes>\n");
    put(&g, "  <library_visual_scenes>\n    <visual_scene id=\"scene\">\n"
            "      <node id=\"world\" name=\"world\">\n");
    for (unsigned k = 0; k < 2; k++)
        put(&g,
            "        <node id=\"tank%u\" name=\"tank%u\">\n          <translate>%u 0 0"
            "</translate>\n          <instance_node url=\"#lvTank\"/>\n        </node>\n",
            k, k, 1000 * k);
    put(&g, "      </node>\n    </visual_scene>\n  </library_visual_scenes>\n"
            "  <scene><instance_visual_scene url=\"#scene\"/></scene>\n</COLLADA>\n");
    *size = g.n;
    return g.d;
}

/* Whether the chunked parse took the document (true) or left it to the
 * serial one: the comparisons above mean something only when it took it.
 * *trees (unless NULL): how many trees it replayed without expat. */
static bool chunked_trees(const char *doc, size_t size, size_t chunk, size_t *trees)
{
    prism__cl *L = calloc(1, sizeof *L);
    assert_non_null(L);
    prism__cl_init(L, "gen", NULL, size);
    bool took = prism__cl_parse_parallel(L, doc, size, chunk) && L->result == PRISM_SUCCESS;
    if (trees)
        *trees = L->trees_replayed;
    prism__cl_release(L);
    free(L);
    return took;
}

static bool chunked(const char *doc, size_t size, size_t chunk)
{
    return chunked_trees(doc, size, chunk, NULL);
}

static void test_cuts_taken(void **state)
{
    (void)state;
    doc_spec sp = {40, 300, 0, FAULT_NONE, 0, 0, false};
    size_t size;
    char *doc = make_doc(&sp, &size);
    assert_true(chunked(doc, size, 1));
    assert_true(chunked(doc, size, 3000));
    assert_false(chunked(doc, size, SIZE_MAX)); /* one chunk */
    sp.fault = FAULT_BAD_NUMBER;
    sp.fault_at = 33;
    free(doc);
    doc = make_doc(&sp, &size);
    assert_false(chunked(doc, size, 200)); /* an error: the serial parse says it */
    free(doc);
    /* a DOCTYPE, another encoding: serial */
    static const char *heads[] = {"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n",
                                  "<!DOCTYPE COLLADA>\n"};
    sp.fault = FAULT_NONE;
    char *plain = make_doc(&sp, &size);
    for (size_t i = 0; i < 2; i++) {
        const char *body = i ? plain : strchr(plain, '\n') + 1;
        size_t head = strlen(heads[i]), rest = size - (size_t)(body - plain);
        char *d = malloc(head + rest);
        assert_non_null(d);
        memcpy(d, heads[i], head);
        memcpy(d + head, body, rest);
        assert_false(chunked(d, head + rest, 200));
        assert_same("DOCTYPE or encoding", d, head + rest, 200);
        free(d);
    }
    free(plain);
    /* a document that ends right after a place to cut, with nothing after
     * the tag's name (the fuzzer's find: the check read past the end) */
    static const char cut_at_end[] = "<COLLADA>\n<library_visual_scenes>\n<visual_scene id=\"s\">\n"
                                     "      <node />";
    char *tail = malloc(sizeof cut_at_end - 1);
    assert_non_null(tail);
    memcpy(tail, cut_at_end, sizeof cut_at_end - 1);
    for (size_t chunk = 1; chunk < 64; chunk *= 2)
        assert_same("cut at the end", tail, sizeof cut_at_end - 1, chunk);
    free(tail);
    /* a bare '&' or a control character in a long text the loader ignores:
     * not XML, which only expat can say (the text must not bypass it) */
    static const char *junk[] = {"&", "\x01", "]]>", "\xC3\xA9"};
    sp.big = true;
    char *big = make_doc(&sp, &size);
    const char *at = strstr(big, "<extra><float_array count=\"200\">");
    assert_non_null(at);
    size_t cut = (size_t)(at - big) + strlen("<extra><float_array count=\"200\">") + 4;
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
        size_t j = strlen(junk[i]);
        char *d = malloc(size + j);
        assert_non_null(d);
        memcpy(d, big, cut);
        memcpy(d + cut, junk[i], j);
        memcpy(d + cut + j, big + cut, size - cut);
        assert_same("junk in a long text", d, size + j, 200);
        free(d);
    }
    free(big);
}

static char *insert_at(const char *doc, size_t size, const char *after, const char *what,
                       size_t *out)
{
    const char *at = strstr(doc, after);
    assert_non_null(at);
    size_t cut = (size_t)(at - doc) + strlen(after), n = strlen(what);
    char *d = malloc(size + n);
    assert_non_null(d);
    memcpy(d, doc, cut);
    memcpy(d + cut, what, n);
    memcpy(d + cut + n, doc + cut, size - cut);
    *out = size + n;
    return d;
}

/* Markup the scan must read as expat does: a comment, a CDATA section and a
 * processing instruction whose lines look like cuts, and '>' and quotes in
 * attribute values. */
static void test_odd_markup(void **state)
{
    (void)state;
    static const struct {
        const char *after, *what;
    } cases[] = {
        {"<library_nodes>\n", "    <!-- old:\n    <node id=\"x\">\n    </node>\n    -->\n"},
        {"<library_nodes>\n", "    <?keep\n    <node id=\"x\">\n    ?>\n"},
        {"<node id=\"pv7\" name=\"pv7", ">x'>y"},
        {"<node id=\"pv9\"", " note='a\"\n    <node>' "},
        {"<library_geometries>\n",
         "    <extra><![CDATA[\n    <geometry id=\"x\">\n    ]]></extra>\n"},
        /* runs of <param/> (which expat is spared) before an element whose
         * position a message gives, on the run's last line */
        {"<node id=\"pv200\" name=\"pv200\">",
         "<param a=\"1\"/> <param b='2' c=\"x\"/>\n<param d=\"3\"/>"
         "<instance_geometry url=\"#nothere\"/>"},
        {"<node id=\"pv201\" name=\"pv201\">",
         "<param a=\"1\"/><param b=\"2\"/><instance_geometry url=\"#g2\"><bind_material>"
         "<technique_common><instance_material symbol=\"M\" target=\"#NoSuch\"/>"
         "</technique_common></bind_material></instance_geometry>"},
        {"<node id=\"pv202\" name=\"pv202\">", "<param a=\"1\" a=\"2\"/>"},
        /* a <node>'s <extra>, skipped whole, then an element whose position
         * an error gives; and ones expat must read (a comment, an entity,
         * a mismatched end tag, elements the loader reads in other places) */
        {"<node id=\"pv205\" name=\"pv205\">",
         "<extra><meta id=\"m\">\n<a><b x='1>2' y=\"\">t</b><c/></a>\n<copyNo>3</copyNo></meta>"
         "</extra><instance_geometry url=\"#nothere\"/>"},
        {"<node id=\"pv206\" name=\"pv206\">", "<extra><!-- c --><meta/></extra>"},
        {"<node id=\"pv207\" name=\"pv207\">", "<extra><meta>&amp;</meta></extra>"},
        {"<node id=\"pv208\" name=\"pv208\">", "<extra><meta></neta></extra>"},
        {"<node id=\"pv209\" name=\"pv209\">",
         "<extra><node id=\"in\"><instance_geometry url=\"#nothere\"/></node>"
         "<matrix>1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1</matrix></extra>"},
        /* characters of several bytes: a column is a character, as expat counts */
        {"<node id=\"pv204\" name=\"pv204\">",
         "<extra note=\"\xC3\xA9\xE2\x82\xAC\"/><instance_geometry url=\"#nothere\"/>"},
        {"<node id=\"pv203\" name=\"pv203\">", "<param a=\"1\"/><param b=\"&amp;\"/>"},
        {"<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">",
         "<param a=\"1\"/>"},
        /* markup spared expat between the halves of a reference: never
         * joined into "&amp;" (the serial parse refuses the document) */
        {"<library_nodes>\n", "&am<node id=\"x1\"></node>p;\n"},
        {"<node id=\"pv210\" name=\"pv210\">", "&#3<param a=\"1\"/>8;"},
        {"<node id=\"pv211\" name=\"pv211\">", "&am<extra><meta/></extra>p;"},
    };
    doc_spec sp = {40, 300, 0, FAULT_NONE, 0, 0, true};
    size_t size;
    char *doc = make_doc(&sp, &size);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t n;
        char *d = insert_at(doc, size, cases[i].after, cases[i].what, &n);
        for (size_t chunk = 50; chunk < 5000; chunk *= 3)
            assert_same("odd markup", d, n, chunk);
        if (i == 2) /* '>' in a value: still cut */
            assert_true(chunked(d, n, 500));
        free(d);
    }
    free(doc);
}

/* Geometries and nodes in the simple form are replayed to the loader's
 * handlers without expat (replay_tree); one holding anything else goes to
 * expat whole, and loads the same. Each odd tree is measured against a
 * harmless insertion of the same length, so that the cuts fall alike. */
static size_t trees_replayed(const char *doc, size_t size, size_t chunk)
{
    size_t n = 0;
    assert_true(chunked_trees(doc, size, chunk, &n));
    return n;
}

static void test_trees_replayed(void **state)
{
    (void)state;
    static const struct {
        const char *odd, *plain;
    } cases[] = {
        {"<!-- ab -->", "<xy a=\"b\"/>"},
        {"<e a=\"&amp;\"/>", "<e a=\"xxxxx\"/>"},
        {"<e>&#38;</e>", "<e>xxxxx</e>"},
        {"<e>\xC3\xA9</e>", "<e>ab</e>"},
        {"<e>\r</e>", "<e> </e>"},
        {"<e>]</e>", "<e>x</e>"},
        {"<e a=\"\t\"/>", "<e a=\" \"/>"},
        {"<?pi x?>", "<pi   />"},
        {"<e a=\"1\" b=\"1\" c=\"1\" d=\"1\" e=\"1\" f=\"1\" g=\"1\" h=\"1\" i=\"1\"/>",
         "<e a=\"1\" b=\"1\" c=\"1\" d=\"1\" e=\"1\" f=\"1\" g=\"1\" h=\"1\"      />"},
    };
    static const char *const where[] = {"<geometry id=\"g5\" name=\"g5\">",
                                        "<node id=\"pv8\" name=\"pv8\">"};
    doc_spec sp = {40, 300, 0, FAULT_NONE, 0, 0, true};
    size_t size;
    char *doc = make_doc(&sp, &size);
    /* every geometry at least, and most nodes */
    assert_true(trees_replayed(doc, size, 3000) >= 40 + 200);
    for (size_t w = 0; w < 2; w++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            assert_int_equal(strlen(cases[i].odd), strlen(cases[i].plain));
            size_t n, m;
            char *odd = insert_at(doc, size, where[w], cases[i].odd, &n);
            char *plain = insert_at(doc, size, where[w], cases[i].plain, &m);
            size_t a = trees_replayed(plain, m, 3000), b = trees_replayed(odd, n, 3000);
            if (a != b + 1)
                print_error("%s in %s: %zu trees replayed, %zu with \"%s\"\n", cases[i].odd,
                            where[w], b, a, cases[i].plain);
            assert_int_equal(a, b + 1);
            assert_same("odd tree", odd, n, 3000);
            assert_same("plain tree", plain, m, 3000);
            free(odd);
            free(plain);
        }
    free(doc);
}

/* A comment of 2.5 MB ending a node, then a node replayed: expat is fed
 * the comment in 1 MB buffers, and the short last one (the node's end tag)
 * must be read before the next node is replayed, or that node would be
 * taken for the first one's child. */
static void test_long_token_before_tree(void **state)
{
    (void)state;
    doc_spec sp = {40, 300, 0, FAULT_NONE, 0, 0, false};
    size_t size, n;
    char *doc = make_doc(&sp, &size);
    size_t len = (size_t)5 << 19;
    char *comment = malloc(len + 1);
    assert_non_null(comment);
    memset(comment, 'x', len);
    memcpy(comment, "<!-- ", 5);
    memcpy(comment + len - 4, " -->", 4);
    comment[len] = 0;
    char *d = insert_at(doc, size, "<copyNo>20</copyNo></meta></extra>", comment, &n);
    assert_true(chunked(d, n, 3000));
    assert_same("long comment", d, n, 3000);
    free(d);
    free(comment);
    free(doc);
}

/* Lines of many events (every line break gone but those before a node or
 * a geometry, where the document is cut): columns as expat counts them. */
static void test_long_lines(void **state)
{
    (void)state;
    static const fault faults[] = {FAULT_NONE, FAULT_NAN, FAULT_UNBOUND};
    for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
        doc_spec sp = {40, 300, 250, faults[f], 0, 0, true};
        if (sp.fault == FAULT_NAN)
            sp.fault_at = 33;
        size_t size;
        char *doc = make_doc(&sp, &size);
        for (size_t i = 0; i < size; i++) {
            if (doc[i] != '\n')
                continue;
            size_t k = i + 1;
            while (k < size && doc[k] == ' ')
                k++;
            if (strncmp(doc + k, "<node", 5) != 0 && strncmp(doc + k, "<geometry", 9) != 0)
                doc[i] = ' ';
        }
        assert_true(chunked(doc, size, 3000));
        assert_same("long lines", doc, size, 3000);
        free(doc);
    }
}

/* Line ends of CR LF, and some lone CRs: lines as expat counts them. */
static void test_carriage_returns(void **state)
{
    (void)state;
    for (int f = FAULT_NONE; f <= FAULT_UNBOUND_AFTER_TEXT; f++) {
        doc_spec sp = {40, 300, 250, (fault)f, 0, 0, true};
        if (sp.fault == FAULT_BAD_NUMBER || sp.fault == FAULT_NAN)
            sp.fault_at = 33;
        size_t size, n = 0, lines = 0;
        char *doc = make_doc(&sp, &size);
        char *d = malloc(2 * size);
        assert_non_null(d);
        for (size_t i = 0; i < size; i++) {
            if (doc[i] == '\n' && ++lines % 7 != 0)
                d[n++] = '\r'; /* CR LF, and every 7th line a lone LF */
            d[n++] = doc[i] == '\n' && lines % 11 == 0 ? '\r' : doc[i]; /* a lone CR */
        }
        assert_same("CR LF", d, n, 3000);
        free(d);
        free(doc);
    }
}

static void test_generated(void **state)
{
    (void)state;
    static const size_t chunks[] = {1, 200, 3000, 40000};
    for (int f = FAULT_NONE; f <= 2 * FAULT_UNBOUND_AFTER_TEXT + 1; f++) {
        doc_spec sp = {40, 300, 250, (fault)(f / 2), 0, 0, f % 2 == 1};
        if (sp.fault == FAULT_BAD_NUMBER || sp.fault == FAULT_NAN)
            sp.fault_at = 33;
        size_t size;
        char *doc = make_doc(&sp, &size);
        char what[64];
        snprintf(what, sizeof what, "generated, fault %d%s", f / 2, f % 2 ? ", long texts" : "");
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
            assert_same(what, doc, size, chunks[c]);
        free(doc);
    }
}

/* Sources no primitive reads as positions (here NORMAL, long enough for
 * the chunked parse to keep as spans): their numbers are never converted,
 * so a bad one loads, and their count is not compared; the same bad number
 * in the POSITION array fails at its line and column. `where`: 0 a bad
 * normal, 1 a bad normal after a comment in its text, 2 a bad position,
 * 3 a bad position after a comment, 4 positions with a comment in their
 * text and no fault. Serial and chunked alike. */
static char *normals_doc(int where, unsigned *line, unsigned *col, size_t *size)
{
    gen g = {NULL, 0, 0, 1};
    put(&g, "<COLLADA>\n<library_geometries>\n");
    for (unsigned i = 0; i < 30; i++) {
        bool bad = i == 17;
        put(&g, "<geometry id=\"g%u\"><mesh>\n<source id=\"p\"><float_array count=\"%u\">", i,
            9 + 100);
        if (bad && where == 3) { /* a long text, a comment, the bad number */
            put(&g, "0 0 0 1 0 0 0 1 0 ");
            numbers(&g, 99, 0, i);
            put(&g, " <!-- c -->");
        }
        if (bad && (where == 2 || where == 3)) {
            *line = g.line;
            *col = (unsigned)(g.n - (size_t)(strrchr(g.d, '\n') - g.d));
            put(&g, "1.0x ");
            if (where == 2)
                numbers(&g, 108, 0, i);
        } else if (bad && where == 4) { /* a long text, a comment, the rest */
            put(&g, "0 0 0 1 0 0 0 1 %u ", i);
            numbers(&g, 99, 0, i);
            put(&g, " <!-- c -->5");
        } else {
            put(&g, "0 0 0 1 0 0 0 1 %u ", i);
            numbers(&g, 100, 0, i);
        }
        put(&g,
            "</float_array><technique_common><accessor count=\"3\" stride=\"3\"/>"
            "</technique_common></source>\n<source id=\"n\"><float_array count=\"%u\">",
            bad ? 7 : 300); /* a count the unread text disagrees with */
        if (bad && where == 0)
            put(&g, "1.0x ");
        numbers(&g, 297, 0, i);
        if (bad && where == 1) /* a long text, a comment, the bad number */
            put(&g, " <!-- c -->1.0x 2");
        put(&g, "</float_array><technique_common><accessor count=\"100\" stride=\"3\"/>"
                "</technique_common></source>\n<vertices id=\"v\"><input semantic=\"POSITION\" "
                "source=\"#p\"/></vertices>\n<triangles count=\"1\"><input semantic=\"VERTEX\" "
                "source=\"#v\" offset=\"0\"/><input semantic=\"NORMAL\" source=\"#n\" "
                "offset=\"1\"/><p>0 0 1 0 2 0</p></triangles>\n</mesh></geometry>\n");
    }
    put(&g, "</library_geometries>\n<library_visual_scenes><visual_scene id=\"s\"><node>\n");
    for (unsigned i = 0; i < 30; i++)
        put(&g, "<instance_geometry url=\"#g%u\"/>\n", i);
    put(&g, "</node></visual_scene></library_visual_scenes>\n</COLLADA>\n");
    *size = g.n;
    return g.d;
}

static void test_unread_arrays(void **state)
{
    (void)state;
    for (int where = 0; where < 5; where++) {
        unsigned line = 0, col = 0;
        size_t size;
        char *doc = normals_doc(where, &line, &col, &size);
        char what[64];
        snprintf(what, sizeof what, "unread arrays, case %d", where);
        assert_same(what, doc, size, 600);
        assert_same(what, doc, size, 1);
        run *o = malloc(sizeof *o);
        assert_non_null(o);
        load(doc, size, 600, o);
        if (where < 2 || where == 4) {
            assert_true(chunked(doc, size, 600)); /* not sent to the serial parse */
            assert_int_equal(o->r, PRISM_SUCCESS);
            assert_int_equal(o->s->triangles_count, 30);
            assert_true(o->s->bbox_max[2] == 29.0f);
            /* 29 normal arrays disagree with their count: none is read */
            assert_int_equal(o->s->quirks.float_array_counts, 0);
        } else {
            assert_false(chunked(doc, size, 600));
            char head[96];
            snprintf(head, sizeof head, "gen:%u:%u: <float_array>: not a number: \"1.0x\"", line,
                     col);
            if (strncmp(o->error, head, strlen(head)) != 0)
                print_error("expected %s, got \"%s\"\n", head, o->error);
            assert_int_equal(o->r, PRISM_ERROR_PARSE);
            assert_int_equal(strncmp(o->error, head, strlen(head)), 0);
            assert_null(o->s);
        }
        prism_scene_free(o->s);
        free(o);
        free(doc);
    }
}

/* The faults' messages point where the fault is, cut or not. */
static void test_error_positions(void **state)
{
    (void)state;
    static const struct {
        fault f;
        const char *element, *what;
    } cases[] = {{FAULT_BAD_NUMBER, "<float_array>", "not a number: \"1.0x\""},
                 {FAULT_MISSING_REF, "<instance_geometry>", "no <geometry id=\"nothere\">"},
                 {FAULT_BAD_MATRIX, "<matrix>", "15 values where 16 are needed"},
                 {FAULT_MISSING_AFTER_TEXT, "<instance_geometry>", "no <geometry id=\"nothere\">"}};
    for (size_t i = 0; i < 2 * sizeof cases / sizeof *cases; i++) {
        size_t c = i / 2;
        doc_spec sp = {40, 300,       cases[c].f == FAULT_BAD_NUMBER ? 33 : 250, cases[c].f, 0,
                       0,  i % 2 == 1};
        if (cases[c].f == FAULT_MISSING_AFTER_TEXT && !sp.big)
            continue;
        size_t size;
        char *doc = make_doc(&sp, &size);
        run *o = malloc(sizeof *o);
        assert_non_null(o);
        load(doc, size, 500, o);
        char head[64];
        snprintf(head, sizeof head, "gen:%u:", sp.fault_line);
        if (strncmp(o->error, head, strlen(head)) != 0 || !strstr(o->error, cases[c].what))
            print_error("expected %s ... %s, got \"%s\"\n", head, cases[c].what, o->error);
        assert_int_equal(strncmp(o->error, head, strlen(head)), 0);
        assert_non_null(strstr(o->error, cases[c].element));
        assert_non_null(strstr(o->error, cases[c].what));
        if (cases[c].f == FAULT_BAD_NUMBER || cases[c].f == FAULT_MISSING_AFTER_TEXT) {
            /* the column where the text, or the element after a long text, begins */
            snprintf(head, sizeof head, "gen:%u:%u:", sp.fault_line, sp.fault_col);
            assert_int_equal(strncmp(o->error, head, strlen(head)), 0);
        }
        assert_null(o->s);
        free(o);
        free(doc);
    }
}

typedef struct progress_log {
    size_t calls, last, total;
    bool backwards;
    size_t cancel_after;
} progress_log;

static bool on_progress(void *user, size_t done, size_t total)
{
    progress_log *p = user;
    p->backwards = p->backwards || done < p->last || done > total;
    p->last = done;
    p->total = total;
    return ++p->calls <= p->cancel_after;
}

static void test_progress_and_cancel(void **state)
{
    (void)state;
    doc_spec sp = {400, 4000, 0, FAULT_NONE, 0, 0, true};
    size_t size;
    char *doc = make_doc(&sp, &size);
    for (size_t cancel = 0; cancel < 2; cancel++) {
        progress_log p = {0, 0, 0, false, cancel ? SIZE_MAX : 0};
        char err[512] = "";
        prism_load_desc d = {
            .progress = on_progress, .progress_user = &p, .error = err, .error_size = sizeof err};
        prism_scene *s = NULL;
        prism_result r = prism__scene_load_memory_chunked(doc, size, "gen", &d, 1 << 16, &s);
        assert_false(p.backwards);
        assert_true(p.calls >= 1);
        if (cancel) {
            assert_int_equal(r, PRISM_SUCCESS);
            assert_int_equal(p.total, size);
            prism_scene_free(s);
        } else {
            assert_int_equal(r, PRISM_ERROR_IO);
            assert_null(s);
            assert_non_null(strstr(err, "cancelled"));
            assert_int_equal(strncmp(err, "gen:", 4), 0);
        }
    }
    free(doc);
}

/* A file of 4 MB or more goes through the mapping and the default chunks. */
static void test_big_file(void **state)
{
    (void)state;
    doc_spec sp = {6000, 12000, 0, FAULT_NONE, 0, 0, true};
    size_t size;
    char *doc = make_doc(&sp, &size);
    assert_true(size >= CL_PARALLEL_MIN_BYTES);
    char path[] = PRISM_BINARY_DIR "/test_collada_parallel_big.dae";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(doc, 1, size, f), size);
    fclose(f);
    run *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    load(doc, size, SIZE_MAX, a); /* one chunk: the serial parse */
    memset(b, 0, sizeof *b);
    prism_load_desc d = {
        .error = b->error, .error_size = sizeof b->error, .log = keep_log, .log_user = b};
    b->r = prism_scene_load(path, &d, &b->s);
    remove(path);
    assert_int_equal(a->r, PRISM_SUCCESS);
    assert_int_equal(b->r, PRISM_SUCCESS);
    a->s->stats.bytes = b->s->stats.bytes;
    assert_same_scene(a->s, b->s);
    assert_true(a->s->triangles_count > 50000);
    prism_scene_free(a->s);
    prism_scene_free(b->s);
    free(a);
    free(b);
    free(doc);
}

/* The id maps and the instances are resolved on all cores once a document
 * holds more than 20,000 nodes and geometries: a repeated id must still
 * name its first element, as in the serial parse, however the threads
 * race. The first "dup" geometry lies at x = 0, the second at x = 100;
 * the first node "n0" places one triangle, the second two. Each first is
 * in one thread's half of the ids, each second in the other's. */
static char *dup_doc(unsigned fill, size_t *size)
{
    gen g = {NULL, 0, 0, 1};
    const char *tri = "<mesh><source id=\"%s-p\"><float_array id=\"%s-a\" count=\"9\">"
                      "%u 0 0 %u 1 0 %u 0 1</float_array><technique_common><accessor "
                      "source=\"#%s-a\" count=\"3\" stride=\"3\"/></technique_common></source>"
                      "<vertices id=\"%s-v\"><input semantic=\"POSITION\" source=\"#%s-p\"/>"
                      "</vertices><triangles count=\"1\"><input semantic=\"VERTEX\" "
                      "source=\"#%s-v\" offset=\"0\"/><p>0 1 2</p></triangles></mesh>";
    put(&g, "<?xml version=\"1.0\"?>\n<COLLADA version=\"1.4.1\">\n<library_geometries>\n");
    for (unsigned i = 0; i < fill + 2; i++) {
        char id[32];
        unsigned x = i == fill + 1 ? 100 : 0;
        snprintf(id, sizeof id, i == 0 || i == fill + 1 ? "dup" : "g%u", i);
        put(&g, "<geometry id=\"%s\">", id);
        put(&g, tri, id, id, x, x, x, id, id, id, id);
        put(&g, "</geometry>\n");
    }
    put(&g, "</library_geometries>\n<library_nodes>\n");
    for (unsigned i = 0; i < fill + 2; i++) /* the second n0 would place two triangles */
        put(&g, "<node id=\"%s%u\"><instance_geometry url=\"#%s\"/>%s</node>\n",
            i == 0 || i == fill + 1 ? "n" : "m", i == 0 || i == fill + 1 ? 0 : i,
            i == fill + 1 ? "g1" : "dup", i == fill + 1 ? "<instance_geometry url=\"#g2\"/>" : "");
    put(&g, "</library_nodes>\n<library_visual_scenes><visual_scene id=\"s\">"
            "<node id=\"top\"><instance_node url=\"#n0\"/></node>"
            "</visual_scene></library_visual_scenes>\n"
            "<scene><instance_visual_scene url=\"#s\"/></scene>\n</COLLADA>\n");
    *size = g.n;
    return g.d;
}

static void test_repeated_ids_on_all_cores(void **state)
{
    (void)state;
    size_t size;
    char *doc = dup_doc(12000, &size);
    run *o = malloc(sizeof *o);
    assert_non_null(o);
    for (size_t chunk = 0; chunk < 2; chunk++) {
        load(doc, size, chunk ? 1 << 16 : SIZE_MAX, o);
        assert_int_equal(o->r, PRISM_SUCCESS);
        /* node n0 (the first) places geometry dup (the first): x = 0 */
        assert_int_equal(o->s->triangles_count, 1);
        assert_int_equal(o->s->solids_count, 1);
        assert_true(o->s->bbox_max[0] == 0.0f);
        assert_true(o->s->bbox_max[1] == 1.0f);
        prism_scene_free(o->s);
    }
    free(o);
    free(doc);
}

/* The solids' names and paths are written on all cores into one block
 * once a scene places more than 10,000 solids: each must still read as
 * in a small scene, whatever its length (every 1000th node holds a child
 * solid one level deeper), serially parsed and cut into chunks. */
static void test_many_solid_names(void **state)
{
    (void)state;
    const unsigned count = 12001;
    gen g = {NULL, 0, 0, 1};
    put(&g, "<COLLADA version=\"1.4.1\">\n<library_geometries><geometry id=\"g\"><mesh>"
            "<source id=\"p\"><float_array id=\"a\" count=\"9\">0 0 0 1 0 0 0 1 0"
            "</float_array><technique_common><accessor source=\"#a\" count=\"3\" "
            "stride=\"3\"/></technique_common></source><vertices id=\"v\"><input "
            "semantic=\"POSITION\" source=\"#p\"/></vertices><triangles count=\"1\"><input "
            "semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>0 1 2</p></triangles>"
            "</mesh></geometry></library_geometries>\n<library_visual_scenes>"
            "<visual_scene id=\"s\"><node name=\"top\">\n");
    for (unsigned i = 0; i < count; i++)
        put(&g, "<node name=\"n%u\"><instance_geometry url=\"#g\"/>%s</node>\n", i,
            i % 1000 == 999 ? "<node name=\"inner-child\"><instance_geometry url=\"#g\"/></node>"
                            : "");
    put(&g, "</node></visual_scene></library_visual_scenes>\n"
            "<scene><instance_visual_scene url=\"#s\"/></scene>\n</COLLADA>\n");
    run *o = malloc(sizeof *o);
    assert_non_null(o);
    for (int chunked = 0; chunked < 2; chunked++) {
        load(g.d, g.n, chunked ? 1 << 16 : SIZE_MAX, o);
        assert_int_equal(o->r, PRISM_SUCCESS);
        const prism_scene *sc = o->s;
        assert_int_equal(sc->solids_count, count + count / 1000);
        char name[32], path[64];
        for (size_t k = 0, i = 0; k < sc->solids_count; k++, i++) {
            const prism_solid *so = &sc->solids[k];
            snprintf(name, sizeof name, "n%zu", i);
            snprintf(path, sizeof path, "top/n%zu", i);
            assert_string_equal(so->name, name);
            assert_string_equal(so->path, path);
            if (i % 1000 == 999) {
                so = &sc->solids[++k];
                snprintf(path, sizeof path, "top/n%zu/inner-child", i);
                assert_string_equal(so->name, "inner-child");
                assert_string_equal(so->path, path);
            }
        }
        prism_scene_free(o->s);
    }
    free(o);
    free(g.d);
}

/* Nested <asset>s across cuts: the chunked parse takes asset_nested.dae
 * (its library's, geometries' and nodes' <asset>s in chunks before the
 * elements they scope) and loads it as the serial parse. And an <asset>
 * after a child node, out of the schema's order, in a chunk of its own: it
 * scopes its node (a stand-in there) and the children after it, not the
 * child before. Node a: <translate>1 0 0</translate> in half metres, Z
 * up, in a root of metres, Y up: x = 0.5; c's <translate>0 1 0</translate>
 * in the same: z = -0.5; b's triangle has only its parent's. */
static void test_nested_assets_cut(void **state)
{
    (void)state;
    size_t size = 0;
    char *doc = exec_read_file(DATA("asset_nested.dae"), &size);
    assert_non_null(doc);
    for (size_t chunk = 1; chunk < 4096; chunk *= 4) {
        assert_true(chunked(doc, size, chunk));
        assert_same("asset_nested.dae", doc, size, chunk);
    }
    free(doc);
    static const char late[] =
        "<COLLADA><library_geometries><geometry id=\"t\"><mesh><source id=\"p\"><float_array "
        "count=\"9\">0 0 0 1 0 0 0 1 0</float_array></source><vertices id=\"v\"><input "
        "semantic=\"POSITION\" source=\"#p\"/></vertices><triangles count=\"1\"><input "
        "semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>0 1 2</p></triangles></mesh>"
        "</geometry></library_geometries>\n<library_visual_scenes><visual_scene id=\"s\">\n"
        "  <node id=\"a\"><translate>1 0 0</translate>\n"
        "    <node id=\"b\"><instance_geometry url=\"#t\"/></node>\n"
        "    <asset><unit meter=\"0.5\"/><up_axis>Z_UP</up_axis></asset>\n"
        "    <node id=\"c\"><translate>0 1 0</translate><instance_geometry url=\"#t\"/></node>\n"
        "  </node>\n</visual_scene></library_visual_scenes></COLLADA>\n";
    size = sizeof late - 1;
    for (size_t chunk = 1; chunk < 256; chunk *= 2) {
        assert_true(chunked(late, size, chunk));
        assert_same("late <asset>", late, size, chunk);
    }
    run *o = malloc(sizeof *o);
    assert_non_null(o);
    load(late, size, SIZE_MAX, o);
    assert_int_equal(o->r, PRISM_SUCCESS);
    const float *p = o->s->positions;
    assert_true(p[0] == 0.5f && p[1] == 0.0f && p[2] == 0.0f);    /* b's first corner */
    assert_true(p[3] == 1.5f && p[4] == 0.0f && p[5] == 0.0f);    /* b's (1,0,0) */
    assert_true(p[9] == 0.5f && p[10] == 0.0f && p[11] == -0.5f); /* c's first corner */
    prism_scene_free(o->s);
    free(o);
}

/* One mesh of `vertices` vertices, in short lines (a vertex or a triangle
 * to a line), with a scene placing it: the scene before the mesh (no tag
 * line after it: the mesh runs to the end) or after it. */
static char *long_mesh_doc(unsigned vertices, bool scene_first, size_t *size)
{
    gen g = {NULL, 0, 0, 1};
    const char *scene = "<library_visual_scenes>\n<visual_scene id=\"s\">\n"
                        "  <node id=\"n\">\n    <instance_geometry url=\"#big\"/>\n  </node>\n"
                        "</visual_scene>\n</library_visual_scenes>\n";
    put(&g,
        "<?xml version=\"1.0\"?>\n<COLLADA version=\"1.4.1\">\n%s<library_geometries>\n"
        "  <geometry id=\"big\">\n<mesh>\n<source id=\"p\">\n"
        "<float_array id=\"a\" count=\"%u\">\n",
        scene_first ? scene : "", 3 * vertices);
    for (unsigned v = 0; v < vertices; v++)
        put(&g, "%u.5 %u.25 %u\n", v % 1000, v / 1000, v % 7);
    put(&g,
        "</float_array>\n<technique_common><accessor source=\"#a\" count=\"%u\" "
        "stride=\"3\"/></technique_common>\n</source>\n<vertices id=\"v\"><input "
        "semantic=\"POSITION\" source=\"#p\"/></vertices>\n<triangles count=\"%u\">"
        "<input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/>\n<p>\n",
        vertices, vertices - 2);
    for (unsigned t = 0; t + 2 < vertices; t++)
        put(&g, "%u %u %u\n", t, t + 1, t + 2);
    put(&g,
        "</p>\n</triangles>\n</mesh>\n  </geometry>\n</library_geometries>\n%s"
        "<scene><instance_visual_scene url=\"#s\"/></scene>\n</COLLADA>\n",
        scene_first ? "" : scene);
    *size = g.n;
    return g.d;
}

/* A long mesh planned in 128 chunks: the planner's searches for a cut read
 * each byte at most once. Each used to read on to the next tag line, here
 * the end of the mesh: 64 times the document, and 3.5 s for a 140 MB mesh
 * on 32 threads (issue 27). With the scene after the mesh the chunked parse
 * takes the document (a cut at the scene's node); with the scene first
 * there is no cut and the serial parse takes it. Either way the scene is
 * the serial parse's. */
static void test_plan_linear(void **state)
{
    (void)state;
    for (int scene_first = 0; scene_first < 2; scene_first++) {
        size_t size;
        char *doc = long_mesh_doc(600000, scene_first, &size);
        assert_true(size > ((size_t)20 << 20));
        size_t chunk = size / 128;
        prism__cl *L = calloc(1, sizeof *L);
        assert_non_null(L);
        prism__cl_init(L, "gen", NULL, size);
        bool took = prism__cl_parse_parallel(L, doc, size, chunk) && L->result == PRISM_SUCCESS;
        size_t scanned = L->plan_scanned;
        prism__cl_release(L);
        free(L);
        assert_int_equal(took, !scene_first);
        if (scanned > size)
            print_error("the planner read %zu bytes of %zu\n", scanned, size);
        assert_true(scanned <= size);
        assert_true(scanned >= size / 2); /* it did look: from size/128 to the mesh's end */
        run *a = malloc(sizeof *a), *b = malloc(sizeof *b);
        assert_non_null(a);
        assert_non_null(b);
        load(doc, size, SIZE_MAX, a); /* one chunk: the serial parse */
        load(doc, size, chunk, b);
        assert_int_equal(a->r, PRISM_SUCCESS);
        assert_int_equal(b->r, PRISM_SUCCESS);
        assert_string_equal(a->log, b->log);
        assert_int_equal(a->s->triangles_count, 599998);
        assert_same_scene(a->s, b->s);
        prism_scene_free(a->s);
        prism_scene_free(b->s);
        free(a);
        free(b);
        free(doc);
    }
}

/* The fuzzer's find (tests/data/collada/chunk_plan_hang.dae): 20,000 short
 * lines and no tag line to cut at, planned in chunks of 1 byte, as the
 * fuzz harness forces them. It ran past libFuzzer's 10 s; now the first
 * search ends the planning. */
static void test_plan_hang_regression(void **state)
{
    (void)state;
    size_t size = 0;
    char *doc = exec_read_file(DATA("chunk_plan_hang.dae"), &size);
    assert_non_null(doc);
    assert_int_equal(size % 61, 0); /* 1 + size % 61: the harness's chunks of 1 byte */
    prism__cl *L = calloc(1, sizeof *L);
    assert_non_null(L);
    prism__cl_init(L, "fuzz", NULL, size);
    assert_false(prism__cl_parse_parallel(L, doc, size, 1 + size % 61));
    assert_true(L->plan_scanned <= size);
    prism__cl_release(L);
    free(L);
    assert_same("chunk_plan_hang.dae", doc, size, 1 + size % 61);
    free(doc);
}

/* Big arrays come on huge pages where the system gives them; free()
 * releases them like any other (the sanitizers check the pairing). */
static void test_big_alloc(void **state)
{
    (void)state;
    size_t sizes[] = {1, 4096, (size_t)8 << 20, ((size_t)24 << 20) + 5};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = prism__big_alloc(sizes[i]);
        assert_non_null(p);
        memset(p, 0xA5, sizes[i]);
        assert_int_equal(p[sizes[i] - 1], 0xA5);
        free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_cuts_taken),
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_odd_markup),
        cmocka_unit_test(test_carriage_returns),
        cmocka_unit_test(test_trees_replayed),
        cmocka_unit_test(test_long_token_before_tree),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_error_positions),
        cmocka_unit_test(test_unread_arrays),
        cmocka_unit_test(test_progress_and_cancel),
        cmocka_unit_test(test_big_file),
        cmocka_unit_test(test_repeated_ids_on_all_cores),
        cmocka_unit_test(test_many_solid_names),
        cmocka_unit_test(test_big_alloc),
        cmocka_unit_test(test_nested_assets_cut),
        cmocka_unit_test(test_plan_linear),
        cmocka_unit_test(test_plan_hang_regression),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
