/* The COLLADA loader's small tools: growable arrays, the string pool, id
 * maps, attribute reading and the one place messages are formatted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bool prism__vec_grow(prism__vec *v, size_t elem, size_t need)
{
    if (need <= v->cap)
        return true;
    size_t cap = v->cap ? v->cap : 16;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / elem)
            return false;
        cap *= 2;
    }
    void *p = realloc(v->data, cap * elem);
    if (!p)
        return false;
    v->data = p;
    v->cap = cap;
    return true;
}

void prism__vec_free(prism__vec *v)
{
    free(v->data);
    v->data = NULL;
    v->count = v->cap = 0;
}

/* Strings live in one pool; offset 0 is the empty string, so 0 = "none". */
cl_str prism__cl_str(prism__cl *L, const char *s, size_t n)
{
    if (L->pool.count == 0 && !prism__vec_push(&L->pool, 1))
        goto oom;
    if (L->pool.count + n + 1 > UINT32_MAX)
        goto oom;
    if (!prism__vec_grow(&L->pool, 1, L->pool.count + n + 1))
        goto oom;
    cl_str at = (cl_str)L->pool.count;
    char *d = (char *)L->pool.data + at;
    memcpy(d, s, n);
    d[n] = 0;
    L->pool.count += n + 1;
    return at;
oom:
    prism__cl_oom(L);
    return 0;
}

/* "#id" -> the pool string "id". External documents are never opened. */
cl_str prism__cl_url(prism__cl *L, const char *url, cl_pos pos, const char *element)
{
    if (!url || url[0] != '#' || !url[1]) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, pos, element,
                       "reference \"%s\" is not a local \"#id\" (other documents are not read)",
                       url ? url : "");
        return 0;
    }
    return prism__cl_str(L, url + 1, strlen(url + 1));
}

/* Eight bytes a step: G4DAE ids run to 50 characters and more, and a byte
 * at a time (FNV-1a) made hashing most of the time the id maps of a large
 * detector took to build. */
static uint32_t hash_str(const char *s)
{
    size_t n = strlen(s);
    uint64_t h = 0x9E3779B97F4A7C15u ^ n, w;
    for (; n >= 8; n -= 8, s += 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDu;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53u;
    h ^= h >> 29;
    return (uint32_t)h;
}

#define SLOT_KEY(x) ((cl_str)((x) >> 32))
#define SLOT_VAL(x) ((uint32_t)(x))
#define SLOT(k, v) (((uint64_t)(k) << 32) | (v))

static bool map_rehash(prism__cl *L, cl_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i])
            continue;
        size_t j = hash_str(prism__cl_s(L, SLOT_KEY(m->slots[i]))) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return true;
}

/* Insert key -> val. A duplicate id keeps its first value (documents with
 * repeated ids exist in the wild; the first is what other loaders use). */
bool prism__cl_map_put(prism__cl *L, cl_map *m, cl_str key, uint32_t val)
{
    if (!key)
        return true;
    if ((m->count + 1) * 2 > m->cap && !map_rehash(L, m)) {
        prism__cl_oom(L);
        return false;
    }
    const char *k = prism__cl_s(L, key);
    size_t j = hash_str(k) & (m->cap - 1);
    for (; m->slots[j]; j = (j + 1) & (m->cap - 1))
        if (strcmp(prism__cl_s(L, SLOT_KEY(m->slots[j])), k) == 0)
            return true;
    m->slots[j] = SLOT(key, val);
    m->count++;
    return true;
}

/* As prism__cl_map_put, from many threads at once into a map sized for
 * every key (no re-hash): an empty slot is taken by compare-and-swap, and
 * of a repeated key the smallest value stays (the first in the document,
 * as the serial insert keeps), whatever the threads' order. Returns whether
 * the key was new. */
static bool map_put_shared(const prism__cl *L, cl_map *m, cl_str key, uint32_t val)
{
    if (!key)
        return false;
    const char *k = prism__cl_s(L, key);
    for (size_t j = hash_str(k) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        uint64_t cur = __atomic_load_n(&m->slots[j], __ATOMIC_ACQUIRE);
        if (!cur && __atomic_compare_exchange_n(&m->slots[j], &cur, SLOT(key, val), false,
                                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return true;
        if (strcmp(prism__cl_s(L, SLOT_KEY(cur)), k) != 0)
            continue;
        while (SLOT_VAL(cur) > val &&
               !__atomic_compare_exchange_n(&m->slots[j], &cur, SLOT(SLOT_KEY(cur), val), false,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        }
        return false;
    }
}

static bool map_reserve(cl_map *m, size_t n)
{
    size_t cap = 64;
    while (cap < 2 * n + 2)
        cap *= 2;
    m->slots = calloc(cap, sizeof *m->slots);
    m->cap = cap;
    m->count = 0;
    return m->slots != NULL;
}

/* Built after the parse rather than as elements arrive: chunks parsed apart
 * would each build maps that the merge then re-hashes (a third of a
 * many-PMT detector's load). Sized up front, the maps never re-hash; all
 * cores fill them (one map a core left a serial stage of a large load). */
bool prism__cl_build_ids(prism__cl *L)
{
    size_t scenes = 0;
    for (size_t i = 0; i < L->nodes.count; i++)
        scenes += CL_AT(L->nodes, cl_node, i).is_scene;
    if (!map_reserve(&L->geometry_ids, L->geometries.count) ||
        !map_reserve(&L->node_ids, L->nodes.count - scenes) ||
        !map_reserve(&L->scene_ids, scenes) || !map_reserve(&L->material_ids, L->materials.count)) {
        prism__cl_oom(L);
        return false;
    }
    long long ng = (long long)L->geometries.count, nn = (long long)L->nodes.count,
              nm = (long long)L->materials.count;
    size_t cg = 0, cn = 0, cs = 0, cm = 0;
#pragma omp parallel if (nn + ng > 20000)
    {
#pragma omp for schedule(static) nowait reduction(+ : cg)
        for (long long i = 0; i < ng; i++)
            cg += map_put_shared(L, &L->geometry_ids, CL_AT(L->geometries, cl_geometry, i).id,
                                 (uint32_t)i);
#pragma omp for schedule(static) nowait reduction(+ : cn, cs)
        for (long long i = 0; i < nn; i++) {
            const cl_node *n = &CL_AT(L->nodes, cl_node, i);
            bool added = map_put_shared(L, n->is_scene ? &L->scene_ids : &L->node_ids, n->id,
                                        (uint32_t)i);
            cs += added && n->is_scene;
            cn += added && !n->is_scene;
        }
#pragma omp for schedule(static) nowait reduction(+ : cm)
        for (long long i = 0; i < nm; i++)
            cm += map_put_shared(L, &L->material_ids, CL_AT(L->materials, cl_material, i).id,
                                 (uint32_t)i);
    }
    L->geometry_ids.count = cg;
    L->node_ids.count = cn;
    L->scene_ids.count = cs;
    L->material_ids.count = cm;
    return true;
}

uint32_t prism__cl_map_get(const prism__cl *L, const cl_map *m, const char *key)
{
    if (!m->cap)
        return CL_NONE;
    size_t j = hash_str(key) & (m->cap - 1);
    for (; m->slots[j]; j = (j + 1) & (m->cap - 1))
        if (strcmp(prism__cl_s(L, SLOT_KEY(m->slots[j])), key) == 0)
            return SLOT_VAL(m->slots[j]);
    return CL_NONE;
}

void prism__cl_map_free(cl_map *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* A chunk's position from the document: lines by memchr from the last
 * position asked (events come in order), columns in characters as expat
 * counts them (a UTF-8 sequence is one; CR LF and a lone CR end a line). */
static cl_pos doc_here(prism__cl *L, const char *to)
{
    if (to < L->doc_at) { /* not expected: count again from the chunk's start */
        L->doc_at = L->doc;
        L->doc_line = L->doc_line0;
        L->doc_lines = L->doc_lines0;
    }
    const char *p = L->doc_at;
    for (;;) {
        const char *nl = memchr(p, '\n', (size_t)(to - p)), *cr = NULL;
        if (L->doc_cr)
            cr = memchr(p, '\r', (size_t)((nl ? nl : to) - p));
        if (cr) { /* a lone CR ends a line; before LF it is part of the line end */
            p = cr + 1;
            if (p < to && *p == '\n')
                p++;
            L->doc_lines++;
            L->doc_line = p;
            continue;
        }
        if (!nl)
            break;
        p = nl + 1;
        L->doc_lines++;
        L->doc_line = p;
    }
    L->doc_at = to;
    /* the column from the last one asked on the same line: counted from
     * the line's start each time, a document on one line took time
     * quadratic in its length */
    if (L->col_from < L->doc_line || L->col_from > to) {
        L->col_from = L->doc_line;
        L->col = 1;
    }
    for (const char *q = L->col_from; q < to; q++)
        L->col += ((unsigned char)*q & 0xC0) != 0x80;
    L->col_from = to;
    return (cl_pos){L->doc_lines, L->col};
}

cl_pos prism__cl_here(const prism__cl *L)
{
    cl_pos p = {0, 0};
    /* doc_here moves the count on: not a change of state */
    if (L->replay_at)
        return doc_here((prism__cl *)L, L->replay_at);
    if (L->xp && L->doc) {
        XML_Index idx = XML_GetCurrentByteIndex(L->xp);
        if (L->phase == CL_PHASE_BODY && idx >= (XML_Index)L->stream0)
            p = doc_here((prism__cl *)L, L->doc + (idx - (XML_Index)L->stream0) + L->removed);
        return p;
    }
    if (L->xp) {
        p.line = (uint32_t)XML_GetCurrentLineNumber(L->xp);
        p.col = (uint32_t)XML_GetCurrentColumnNumber(L->xp) + 1;
    }
    return p;
}

void prism__cl_log(prism__cl *L, prism_log_level level, const char *fmt, ...)
{
    if (!L->desc || !L->desc->log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + 1, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (!L->log_buf) {
        L->desc->log(L->desc->log_user, level, line + 1);
        return;
    }
    /* A chunk on a worker thread: kept, told in document order after the merge. */
    size_t len = n < 0 ? 0 : (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 2;
    line[0] = (char)level;
    line[len + 1] = 0;
    prism__vec *b = L->log_buf;
    if (prism__vec_grow(b, 1, b->count + len + 2)) {
        memcpy((char *)b->data + b->count, line, len + 2);
        b->count += len + 2;
    }
}

static size_t *quirk_count(prism__cl *L, cl_quirk kind)
{
    return kind == CL_QUIRK_FLOAT_ARRAY_COUNT ? &L->quirks.float_array_counts
           : kind == CL_QUIRK_FLAT_POSITIONS  ? &L->quirks.flat_positions
                                              : &L->lookat_quirks;
}

/* A chunk (geometry/collada/parallel.c) keeps its first CL_QUIRK_LOG_MAX of each
 * kind, marked with the kind, and the merge tells them against the one
 * limit of the whole document: the log reads as the serial parse's. */
void prism__cl_quirk(prism__cl *L, cl_quirk kind, cl_pos pos, const char *element, const char *fmt,
                     ...)
{
    ++*quirk_count(L, kind);
    size_t *told = L->log_buf ? &L->quirks_kept[kind] : &L->quirks_logged[kind];
    if (*told >= CL_QUIRK_LOG_MAX || !L->desc || !L->desc->log)
        return;
    ++*told;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    unsigned level = PRISM_LOG_WARNING | (L->log_buf ? CL_LOG_QUIRK(kind) : 0u);
    prism__cl_log(L, (prism_log_level)level, "%s:%u:%u: <%s>: %s", L->file, pos.line, pos.col,
                  element, what);
}

bool prism__cl_quirk_tell(prism__cl *L, unsigned level)
{
    if (!(level & CL_LOG_QUIRK(0)))
        return true;
    size_t *told = &L->quirks_logged[(level >> 4) & 7u];
    return *told < CL_QUIRK_LOG_MAX && ++*told;
}

void prism__cl_quirk_summary(prism__cl *L)
{
    static const char *const what[CL_QUIRK_KINDS] = {
        "<float_array>s whose count disagrees with their text",
        "position sources of two components read with z = 0",
        "<lookat>s with no view direction or no sideways axis"};
    for (int k = 0; k < CL_QUIRK_KINDS; k++) {
        size_t n = *quirk_count(L, (cl_quirk)k), told = L->quirks_logged[k];
        if (n > told && L->desc && L->desc->log)
            prism__cl_log(L, PRISM_LOG_WARNING, "%s: %zu more %s (not listed one by one)", L->file,
                          n - told, what[k]);
    }
}

/* Record the first error ("FILE:LINE:COL: <element>: what") and stop the
 * parser; later errors are consequences of the first and are dropped. */
void prism__cl_fail(prism__cl *L, prism_result r, cl_pos pos, const char *element, const char *fmt,
                    ...)
{
    if (L->result != PRISM_SUCCESS)
        return;
    L->result = r;
    int n = snprintf(L->message, sizeof L->message, "%s:%u:%u: <%s>: ", L->file, pos.line, pos.col,
                     element ? element : "document");
    if (n < 0 || (size_t)n >= sizeof L->message)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->message + n, sizeof L->message - (size_t)n, fmt, ap);
    va_end(ap);
    if (L->xp)
        XML_StopParser(L->xp, XML_FALSE);
}

void prism__cl_oom(prism__cl *L)
{
    cl_pos here = prism__cl_here(L);
    const char *el = L->depth ? prism__cl_tag_name(L->stack[L->depth - 1].tag) : NULL;
    prism__cl_fail(L, PRISM_ERROR_OUT_OF_MEMORY, here, el, "out of memory");
}

const char *prism__cl_attr(const XML_Char **atts, const char *name)
{
    for (; atts && atts[0]; atts += 2)
        if (strcmp(atts[0], name) == 0)
            return atts[1];
    return NULL;
}

/* A non-negative integer attribute. Absent: false, *out untouched. */
bool prism__cl_attr_size(prism__cl *L, const XML_Char **atts, const char *name, size_t *out,
                         const char *element)
{
    const char *v = prism__cl_attr(atts, name);
    if (!v)
        return false;
    const char *p = v;
    while (*p == ' ')
        p++;
    size_t x = 0;
    bool ok = *p >= '0' && *p <= '9';
    for (; *p >= '0' && *p <= '9'; p++) {
        if (x > (SIZE_MAX - 9) / 10) {
            ok = false;
            break;
        }
        x = x * 10 + (size_t)(*p - '0');
    }
    while (*p == ' ')
        p++;
    if (!ok || *p) {
        prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_here(L), element,
                       "%s=\"%s\" is not a non-negative integer", name, v);
        return false;
    }
    *out = x;
    return true;
}

static const char *const tag_names[] = {
#define CL_TAG_ENUM(e, s) s,
#include "tags.h"
#undef CL_TAG_ENUM
};

const char *prism__cl_tag_name(unsigned tag)
{
    return tag < CL_T_UNKNOWN ? tag_names[tag] : "element";
}

unsigned prism__cl_tag(const char *name)
{
    size_t lo = 0, hi = CL_T_UNKNOWN;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(name, tag_names[mid]);
        if (c == 0)
            return (unsigned)mid;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return CL_T_UNKNOWN;
}
