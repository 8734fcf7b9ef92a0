/* The COLLADA loader's first stage: expat callbacks, the element stack,
 * dispatch to the other stages, and the number streams. Numbers are parsed
 * as expat hands over the characters, so a float_array of any size never
 * exists as text; a number split between two callbacks waits in `carry`.
 * Entity declarations are refused outright: that stops the billion-laughs
 * expansion and external entities (which are never fetched) alike. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "geometry/fast_float.h"

#define CL_CHUNK (1u << 20)

unsigned prism__cl_up(const prism__cl *L, unsigned k)
{
    return L->depth > k ? L->stack[L->depth - 1 - k].tag : CL_T_UNKNOWN;
}

static const char *current_element(const prism__cl *L)
{
    return L->depth ? prism__cl_tag_name(L->stack[L->depth - 1].tag) : NULL;
}

static cl_source *text_source(prism__cl *L)
{
    return L->text == CL_TEXT_FLOATS && L->fsrc != CL_NONE
               ? &CL_AT(L->mesh.sources, cl_source, L->fsrc)
               : NULL;
}

static void text_fail(prism__cl *L, const char *what, const char *p, size_t n)
{
    if (n > 40)
        n = 40;
    cl_source *s = text_source(L);
    if (s) {
        /* A mesh source's number: an error only if a primitive reads the
         * source (prism__cl_source_settle); the rest of its text is skipped. */
        char msg[160];
        int k = snprintf(msg, sizeof msg, "%s: \"%.*s\"", what, (int)n, p);
        s->err_pos = prism__cl_here(L);
        s->err = prism__cl_str(L, msg,
                               k < 0                    ? 0
                               : (size_t)k < sizeof msg ? (size_t)k
                                                        : sizeof msg - 1);
        L->text = CL_TEXT_NONE;
        L->carry_len = 0;
        return;
    }
    prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_here(L), current_element(L), "%s: \"%.*s\"",
                   what, (int)n, p);
}

static void begin_text(prism__cl *L, cl_text mode)
{
    L->text = mode;
    L->text_depth = L->depth;
    L->carry_len = 0;
    L->fsrc = CL_NONE;
    L->f_reserve = 0;
}

void prism__cl_text_floats(prism__cl *L, prism__vec *dst)
{
    L->fdst = dst;
    begin_text(L, CL_TEXT_FLOATS);
}

void prism__cl_text_source(prism__cl *L, uint32_t src, size_t reserve)
{
    prism__cl_text_floats(L, &CL_AT(L->mesh.sources, cl_source, src).data);
    L->fsrc = src;
    L->f_reserve = reserve;
}

void prism__cl_text_doubles(prism__cl *L)
{
    L->dbl_count = 0;
    begin_text(L, CL_TEXT_DOUBLES);
}

void prism__cl_text_indices(prism__cl *L, uint32_t stride, uint32_t voff)
{
    L->p_stride = stride;
    L->p_voff = voff;
    L->p_phase = 0;
    L->p_ints = 0;
    begin_text(L, CL_TEXT_INDICES);
}

void prism__cl_text_counts(prism__cl *L)
{
    begin_text(L, CL_TEXT_COUNTS);
}

void prism__cl_text_small(prism__cl *L)
{
    L->small_len = 0;
    L->small[0] = 0;
    begin_text(L, CL_TEXT_SMALL);
}

static bool push_u32(prism__cl *L, prism__vec *v, uint32_t u)
{
    uint32_t *slot = prism__vec_push(v, sizeof *slot);
    if (!slot) {
        prism__cl_oom(L);
        return false;
    }
    *slot = u;
    return true;
}

/* A <p>/<h> index (kept when it is the VERTEX one) or a <vcount> entry. */
static bool take_index(prism__cl *L, const char *p, const char *end)
{
    bool overflow;
    uint32_t u = 0;
    if (prism__ff_parse_u32(p, end, &u, &overflow) != end) {
        text_fail(L, overflow ? "index beyond 32 bits" : "not an index", p, (size_t)(end - p));
        return false;
    }
    if (L->text == CL_TEXT_COUNTS) {
        if (u >= CL_HOLE) {
            text_fail(L, "vertex count too large", p, (size_t)(end - p));
            return false;
        }
        return push_u32(L, &L->mesh.rings, u);
    }
    if (L->p_phase == L->p_voff && !push_u32(L, &L->mesh.idx, u))
        return false;
    if (++L->p_phase == L->p_stride)
        L->p_phase = 0;
    L->p_ints++;
    return true;
}

/* One complete token. Returns false after an error. */
static bool take_token(prism__cl *L, const char *p, const char *end)
{
    double d;
    float f = 0;
    switch (L->text) {
    case CL_TEXT_FLOATS:
        if (prism__ff_parse_float(p, end, &f) != end)
            break;
        if (!prism__vec_grow(L->fdst, sizeof(float), L->fdst->count + 1)) {
            prism__cl_oom(L);
            return false;
        }
        CL_AT(*L->fdst, float, L->fdst->count++) = f;
        return true;
    case CL_TEXT_DOUBLES:
        if (prism__ff_parse_double(p, end, &d) != end)
            break;
        if (L->dbl_count == 16) {
            text_fail(L, "more than 16 values", p, (size_t)(end - p));
            return false;
        }
        L->dbl[L->dbl_count++] = d;
        return true;
    case CL_TEXT_INDICES:
    case CL_TEXT_COUNTS: return take_index(L, p, end);
    default: return true;
    }
    text_fail(L, "not a number", p, (size_t)(end - p));
    return false;
}

/* The hot loop for float_array text: parse in place, no copies. The array
 * grows only when full: <float_array count> reserved it, and growing it
 * up front by what the text could hold (a number every 2 bytes) made every
 * array of a chunk's text twice its size, reallocated (a tenth of a
 * large load's CPU, and the positions kept that size). */
static const char *floats_fast(prism__cl *L, const char *p, const char *end)
{
    prism__vec *v = L->fdst;
    float *out = v->data;
    size_t n = v->count, cap = v->cap;
    for (;;) {
        while (p < end && prism__ff_is_space(*p))
            p++;
        if (p == end)
            break;
        float f = 0;
        const char *q = prism__ff_parse_simple(p, end, &f);
        if (!q)
            q = prism__ff_parse_float(p, end, &f);
        if (!q || q == end || !prism__ff_is_space(*q))
            break; /* the general path decides: split token or error */
        if (n == cap) {
            v->count = n;
            if (!prism__vec_grow(v, sizeof(float), n + 1 + (size_t)(end - q) / 2)) {
                prism__cl_oom(L);
                return NULL;
            }
            out = v->data;
            cap = v->cap;
        }
        out[n++] = f;
        p = q;
    }
    v->count = n;
    return p;
}

/* The hot loop for <p> text: keep every stride-th index (the VERTEX one). */
static const char *indices_fast(prism__cl *L, const char *p, const char *end)
{
    prism__vec *v = &L->mesh.idx;
    if (!prism__vec_grow(v, sizeof(uint32_t), v->count + (size_t)(end - p) / 2 + 1)) {
        prism__cl_oom(L);
        return NULL;
    }
    uint32_t *out = v->data;
    size_t n = v->count, ints = L->p_ints;
    uint32_t phase = L->p_phase, stride = L->p_stride, voff = L->p_voff;
    for (;;) {
        while (p < end && prism__ff_is_space(*p))
            p++;
        const char *q = p;
        uint64_t x = 0;
        for (int digits = 0; q < end && prism__ff_is_digit(*q) && digits < 10; q++, digits++)
            x = x * 10 + (uint64_t)(*q - '0');
        if (q == p || q == end || !prism__ff_is_space(*q) || x > UINT32_MAX)
            break; /* the general path decides: end, split token or error */
        if (phase == voff)
            out[n++] = (uint32_t)x;
        if (++phase == stride)
            phase = 0;
        ints++;
        p = q;
    }
    v->count = n;
    L->p_ints = ints;
    L->p_phase = phase;
    return p;
}

static void stream_numbers(prism__cl *L, const char *p, const char *end)
{
    if (L->f_reserve) { /* what <float_array count> promised, once text comes */
        size_t want = L->fdst->count + L->f_reserve;
        L->f_reserve = 0;
        if (!prism__vec_grow(L->fdst, sizeof(float), want)) {
            prism__cl_oom(L);
            return;
        }
    }
    if (L->carry_len) {
        while (p < end && !prism__ff_is_space(*p)) {
            if (L->carry_len == sizeof L->carry) {
                text_fail(L, "number too long", L->carry, L->carry_len);
                return;
            }
            L->carry[L->carry_len++] = *p++;
        }
        if (p == end)
            return;
        size_t n = L->carry_len;
        L->carry_len = 0;
        if (!take_token(L, L->carry, L->carry + n))
            return;
    }
    for (;;) {
        if (L->text == CL_TEXT_FLOATS && !(p = floats_fast(L, p, end)))
            return;
        if (L->text == CL_TEXT_INDICES && !(p = indices_fast(L, p, end)))
            return;
        while (p < end && prism__ff_is_space(*p))
            p++;
        if (p == end)
            return;
        const char *t = p;
        while (p < end && !prism__ff_is_space(*p))
            p++;
        if (p == end) { /* may continue in the next callback */
            size_t n = (size_t)(end - t);
            if (n > sizeof L->carry) {
                text_fail(L, "number too long", t, n);
                return;
            }
            memcpy(L->carry, t, n);
            L->carry_len = n;
            return;
        }
        if (!take_token(L, t, p))
            return;
    }
}

/* A mesh source's text kept as a span of the document (chunked parse):
 * converted now, as more of its element's text or a child element comes. */
static void wake_lazy(prism__cl *L)
{
    cl_source *s = text_source(L);
    if (s && s->lazy) {
        const char *p = s->lazy;
        s->lazy = NULL;
        stream_numbers(L, p, p + s->lazy_n);
    }
}

void prism__cl_text_span(prism__cl *L, const char *p, size_t n)
{
    if (!L->text || L->text == CL_TEXT_SMALL || L->depth != L->text_depth || L->result)
        return;
    cl_source *s = L->lazy_ok ? text_source(L) : NULL;
    if (s && !s->lazy && !L->carry_len && !s->data.count) {
        s->lazy = p; /* converted if a primitive reads the source */
        s->lazy_n = n;
        return;
    }
    if (L->lazy_ok)
        wake_lazy(L);
    stream_numbers(L, p, p + n);
}

bool prism__cl_source_convert(prism__cl *L, cl_source *s)
{
    if (!s->lazy)
        return true;
    const char *p = s->lazy;
    size_t n = s->lazy_n, reserve = s->declared == SIZE_MAX ? 0 : s->declared;
    s->lazy = NULL;
    if (reserve > n / 2 + 1)
        reserve = n / 2 + 1;
    prism__cl_text_source(L, (uint32_t)(s - (cl_source *)L->mesh.sources.data), reserve);
    stream_numbers(L, p, p + n);
    if (L->text == CL_TEXT_FLOATS && L->carry_len) {
        size_t k = L->carry_len;
        L->carry_len = 0;
        take_token(L, L->carry, L->carry + k);
    }
    L->text = CL_TEXT_NONE;
    return !L->result;
}

void prism__cl_on_text(prism__cl *L, const char *s, size_t len)
{
    if (!L->text || L->depth != L->text_depth || L->result || L->phase)
        return;
    if (L->text == CL_TEXT_SMALL) {
        size_t n = len;
        if (n > sizeof L->small - 1 - L->small_len)
            n = sizeof L->small - 1 - L->small_len;
        memcpy(L->small + L->small_len, s, n);
        L->small_len += n;
        L->small[L->small_len] = 0;
        return;
    }
    if (L->lazy_ok)
        wake_lazy(L);
    stream_numbers(L, s, s + len);
}

static void XMLCALL on_text(void *user, const XML_Char *s, int len)
{
    prism__cl_on_text(user, s, (size_t)len);
}

/* The element's text is complete: parse a number left waiting. */
static void end_text(prism__cl *L)
{
    if (L->text != CL_TEXT_SMALL && L->carry_len) {
        size_t n = L->carry_len;
        L->carry_len = 0;
        take_token(L, L->carry, L->carry + n);
    }
    L->text = CL_TEXT_NONE;
}

static bool ignored_top_level(const char *name)
{
    return strcmp(name, "library_effects") == 0 || strcmp(name, "library_images") == 0;
}

static void dispatch_start(prism__cl *L, unsigned tag, const char *name, const XML_Char **atts)
{
    unsigned parent = prism__cl_up(L, 1);
    switch (tag) {
    case CL_T_UNIT:
    case CL_T_UP_AXIS: prism__cl_asset_start(L, tag, atts); return;
    case CL_T_MATRIX:
        if (parent == CL_T_NODE)
            prism__cl_node_start(L, tag, atts);
        else
            prism__cl_g4dae_start(L, tag, atts);
        return;
    case CL_T_GEOMETRY:
    case CL_T_MESH:
    case CL_T_SOURCE:
    case CL_T_FLOAT_ARRAY:
    case CL_T_ACCESSOR:
    case CL_T_VERTICES:
    case CL_T_INPUT:
    case CL_T_TRIANGLES:
    case CL_T_POLYLIST:
    case CL_T_POLYGONS:
    case CL_T_TRISTRIPS:
    case CL_T_TRIFANS:
    case CL_T_LINES:
    case CL_T_LINESTRIPS:
    case CL_T_P:
    case CL_T_PH:
    case CL_T_H:
    case CL_T_VCOUNT: prism__cl_mesh_start(L, tag, atts); return;
    case CL_T_PARAM:
        if (parent == CL_T_COLLADA)
            L->skipped.unknown_elements++;
        else
            prism__cl_mesh_start(L, tag, atts);
        return;
    case CL_T_META: /* G4DAE's per-node <extra><meta>: a mark of a Geant4 export */
        if (parent == CL_T_COLLADA)
            L->skipped.unknown_elements++;
        L->g4_meta = L->g4_meta || parent == CL_T_EXTRA;
        return;
    case CL_T_VISUAL_SCENE:
    case CL_T_NODE:
    case CL_T_TRANSLATE:
    case CL_T_ROTATE:
    case CL_T_SCALE:
    case CL_T_LOOKAT:
    case CL_T_SKEW:
    case CL_T_INSTANCE_GEOMETRY:
    case CL_T_INSTANCE_NODE:
    case CL_T_INSTANCE_MATERIAL:
    case CL_T_INSTANCE_VISUAL_SCENE: prism__cl_node_start(L, tag, atts); return;
    case CL_T_MATERIAL:
    case CL_T_PROPERTY:
    case CL_T_OPTICALSURFACE:
    case CL_T_SKINSURFACE:
    case CL_T_BORDERSURFACE:
    case CL_T_VOLUMEREF:
    case CL_T_PHYSVOLREF: prism__cl_g4dae_start(L, tag, atts); return;
    case CL_T_UNKNOWN:
        if (parent == CL_T_COLLADA && !ignored_top_level(name))
            L->skipped.unknown_elements++;
        return;
    default: return;
    }
}

/* A chunk's prefix: the frame is pushed and, for a node or visual scene, a
 * stand-in node that the merge maps to the real one (geometry/collada/merge.c). */
static void prefix_start(prism__cl *L, unsigned tag)
{
    if (tag == CL_T_NODE || tag == CL_T_VISUAL_SCENE) {
        L->stack[L->depth - 1].active = true;
        cl_node *n = prism__vec_push(&L->nodes, sizeof *n);
        uint32_t *slot = n ? prism__vec_push(&L->node_stack, sizeof *slot) : NULL;
        if (!slot) {
            prism__cl_oom(L);
            return;
        }
        memset(n, 0, sizeof *n);
        n->m[0] = n->m[5] = n->m[10] = n->m[15] = 1.0;
        n->first_item = n->last_item = CL_NONE;
        n->scope = L->stack[L->depth - 1].scope;
        *slot = (uint32_t)(L->nodes.count - 1);
        L->node_depth += tag == CL_T_NODE;
    }
}

void prism__cl_on_start(prism__cl *L, const char *name, const char **atts)
{
    if (L->result || L->phase == CL_PHASE_SUFFIX)
        return;
    cl_pos pos = prism__cl_here(L);
    unsigned tag = prism__cl_tag(name);
    /* a replayed tag has no stream offset: none that a span could match */
    L->last_start = L->replay_at ? UINT64_MAX : (uint64_t)XML_GetCurrentByteIndex(L->xp);
    if (L->lazy_ok && L->text && L->depth == L->text_depth)
        wake_lazy(L);
    if (L->text && L->carry_len && L->depth == L->text_depth) {
        /* an element inside number text ends the number before it */
        size_t n = L->carry_len;
        L->carry_len = 0;
        take_token(L, L->carry, L->carry + n);
    }
    if (L->result)
        return;
    if (L->depth >= (size_t)L->max_depth + CL_XML_SLACK) {
        prism__cl_fail(L, PRISM_ERROR_LIMIT, pos, name, "elements nested deeper than %u",
                       L->max_depth + CL_XML_SLACK);
        return;
    }
    if (L->depth == L->stack_cap) {
        prism__vec v = {L->stack, L->depth, L->stack_cap};
        if (!prism__vec_grow(&v, sizeof(cl_frame), L->depth + 1)) {
            prism__cl_oom(L);
            return;
        }
        L->stack = v.data;
        L->stack_cap = v.cap;
    }
    /* an element is in its parent's scope; a chunk's prefix re-opens
     * elements whose scopes the merge knows */
    uint32_t scope = L->phase == CL_PHASE_PREFIX ? CL_SCOPE_OUTER | (uint32_t)L->depth
                     : L->depth                  ? L->stack[L->depth - 1].scope
                                                 : CL_NONE;
    L->stack[L->depth++] = (cl_frame){(uint8_t)tag, false, false, scope, pos};
    if (L->phase == CL_PHASE_PREFIX) {
        L->root_seen = true;
        prefix_start(L, tag);
        return;
    }
    if (L->depth == 1) {
        L->root_seen = true;
        if (tag != CL_T_COLLADA)
            prism__cl_fail(L, PRISM_ERROR_PARSE, pos, name, "not a COLLADA document");
        return;
    }
    dispatch_start(L, tag, name, atts);
}

static void XMLCALL on_start(void *user, const XML_Char *name, const XML_Char **atts)
{
    prism__cl_on_start(user, name, atts);
}

void prism__cl_on_end(prism__cl *L)
{
    if (L->result || !L->depth)
        return;
    if (L->phase == CL_PHASE_SUFFIX) { /* closed in a later chunk, for real */
        L->depth--;
        return;
    }
    unsigned tag = L->stack[L->depth - 1].tag;
    bool had_text = L->text && L->depth == L->text_depth;
    if (had_text)
        end_text(L);
    if (!L->result && tag == CL_T_UP_AXIS && had_text)
        prism__cl_up_axis_end(L);
    if (!L->result && L->stack[L->depth - 1].active) {
        prism__cl_mesh_end(L, tag);
        prism__cl_node_end(L, tag);
        prism__cl_g4dae_end(L, tag);
    }
    L->depth--;
}

static void XMLCALL on_end(void *user, const XML_Char *name)
{
    (void)name;
    prism__cl_on_end(user);
}

static void XMLCALL on_entity_decl(void *user, const XML_Char *name, int is_param,
                                   const XML_Char *value, int value_length, const XML_Char *base,
                                   const XML_Char *system_id, const XML_Char *public_id,
                                   const XML_Char *notation)
{
    prism__cl *L = user;
    prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_here(L), "!ENTITY",
                   "entity declarations are not allowed (%s entity \"%s\"%s)",
                   system_id ? "external" : "internal", name, system_id ? ", never fetched" : "");
}

static void XMLCALL on_skipped_entity(void *user, const XML_Char *name, int is_param)
{
    prism__cl *L = user;
    prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_here(L), current_element(L),
                   "reference to undeclared entity \"%s\"", name);
}

XML_Parser prism__cl_make_parser(prism__cl *L)
{
    XML_Parser xp = XML_ParserCreate(NULL);
    if (!xp)
        return NULL;
    XML_SetUserData(xp, L);
    XML_SetElementHandler(xp, on_start, on_end);
    XML_SetCharacterDataHandler(xp, on_text);
    XML_SetEntityDeclHandler(xp, on_entity_decl);
    XML_SetSkippedEntityHandler(xp, on_skipped_entity);
    XML_SetParamEntityParsing(xp, XML_PARAM_ENTITY_PARSING_NEVER);
    return xp;
}

bool prism__cl_progress(prism__cl *L)
{
    if (L->desc && L->desc->progress &&
        !L->desc->progress(L->desc->progress_user, L->done, L->total)) {
        prism__cl_fail(L, PRISM_ERROR_IO, prism__cl_here(L), current_element(L), "cancelled");
        return false;
    }
    return true;
}

static bool feed(prism__cl *L, const void *data, size_t size, FILE *f)
{
    if (f) {
        for (;;) {
            void *buf = XML_GetBuffer(L->xp, CL_CHUNK);
            if (!buf) {
                prism__cl_oom(L);
                return false;
            }
            size_t n = fread(buf, 1, CL_CHUNK, f);
            if (n < CL_CHUNK && ferror(f)) {
                prism__cl_fail(L, PRISM_ERROR_IO, prism__cl_here(L), current_element(L),
                               "read error");
                return false;
            }
            L->done += n;
            if (XML_ParseBuffer(L->xp, (int)n, n == 0) != XML_STATUS_OK)
                return false;
            if (n == 0 || !prism__cl_progress(L))
                return n == 0;
        }
    }
    const char *p = data;
    for (size_t at = 0;;) {
        size_t n = size - at < CL_CHUNK ? size - at : CL_CHUNK;
        L->done = at + n;
        if (XML_Parse(L->xp, p + at, (int)n, at + n == size) != XML_STATUS_OK)
            return false;
        at += n;
        if (at == size || !prism__cl_progress(L))
            return at == size;
    }
}

prism_result prism__cl_parse(prism__cl *L, const void *data, size_t size, void *file)
{
    L->xp = prism__cl_make_parser(L);
    if (!L->xp) {
        prism__cl_oom(L);
        return L->result;
    }
    if (!feed(L, data, size, file) && !L->result) {
        enum XML_Error code = XML_GetErrorCode(L->xp);
        prism__cl_fail(L, PRISM_ERROR_PARSE, prism__cl_here(L), current_element(L), "XML error: %s",
                       XML_ErrorString(code));
    }
    XML_ParserFree(L->xp);
    L->xp = NULL;
    if (!L->result && !L->root_seen)
        prism__cl_fail(L, PRISM_ERROR_PARSE, (cl_pos){1, 1}, NULL, "empty document");
    return L->result;
}
