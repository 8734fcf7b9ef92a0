/* What the chunked parse (parallel.c) keeps from expat: the scan that finds
 * the spans expat need not see, and the replay of trees in the simple form
 * to the loader's handlers. Both must agree byte for byte on what that form
 * is, so its rules live in one file. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* memmem */
#endif
#include <string.h>

#include "parallel_internal.h"

/* Shorter number texts go through expat. 64 rather than the first 256: a
 * G4DAE detector's <vcount> and short <p> texts then skip it too, a small
 * but steady gain; 24 gained nothing more. */
#define CL_SPAN_MIN 64
#define CL_TREE_MAX ((size_t)1 << 18)

bool prism__cl_name_end(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '>' || c == '/';
}

bool prism__cl_push_name(prism__vec *v, const char *p, size_t n)
{
    cl_name *s = prism__vec_push(v, sizeof *s);
    if (s)
        *s = (cl_name){p, n};
    return s != NULL;
}

static const char *skip_past(const char *p, const char *end, const char *pat, size_t n)
{
    const char *q = memmem(p, (size_t)(end - p), pat, n);
    return q ? q + n : NULL;
}

static bool number_text_tag(const char *name, size_t n)
{
    return (n == 1 && (name[0] == 'p' || name[0] == 'h')) ||
           (n == 6 && memcmp(name, "vcount", 6) == 0) ||
           (n == 11 && memcmp(name, "float_array", 11) == 0);
}

/* The elements tried as a whole (the units the document is cut at), up to
 * CL_TREE_MAX bytes each: an ancestor too big to be one fails after that
 * many, and its children are tried in turn. */
static bool tree_tag(const char *name, size_t n)
{
    return (n == 4 && memcmp(name, "node", 4) == 0) || (n == 8 && memcmp(name, "geometry", 8) == 0);
}

/* Line ends (LF) in [p, p+n), and whether the bytes are text that expat
 * would pass on unchanged with LF the only line end: printable ASCII but
 * '&' and ']' (of "]]>"), tab and LF. What is not a number the number
 * parser refuses later. Byte counters over blocks of 255 let the loop
 * vectorise with byte lanes: a size_t counter vectorises at a quarter of
 * the width, and GCC does not vectorise the loop at all at -O2 without the
 * attribute below (an order of magnitude slower). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#endif
static size_t
count_text(const char *p, size_t n, bool *plain)
{
    const unsigned char *u = (const unsigned char *)p;
    size_t lf = 0;
    unsigned char bad = 0;
    while (n) {
        size_t k = n < 255 ? n : 255;
        unsigned char l = 0;
        for (size_t i = 0; i < k; i++) {
            unsigned char c = u[i];
            l += c == '\n';
            unsigned char ok = ((unsigned char)(c - 0x20) < 0x5F) & (c != '&') & (c != ']');
            ok |= (c == '\n') | (c == '\t');
            bad |= ok ^ 1;
        }
        lf += l;
        u += k;
        n -= k;
    }
    *plain = !bad;
    return lf;
}

/* What each byte may be in the simple form: a table, as the scan and the
 * replay look at every byte of a tree's tags twice (with the tests spelled
 * out, simple_tag was a large part of a G4DAE load). */
enum { CL_NAME_START = 1, CL_NAME = 2, CL_SPACE = 4, CL_VALUE = 8 };
static const unsigned char char_class[256] = {
    0,  0,  0,  0,  0,  0,  0,  0,  0,  4,  4,  0,  0,  0,  0,  0,  /* 00: tab, LF */
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  /* 10 */
    12, 8,  8,  8,  8,  8,  0,  8,  8,  8,  8,  8,  8,  10, 10, 8,  /* 20: ' ' to '/', not '&' */
    10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 11, 8,  0,  8,  8,  8,  /* 30: digits, ':', not '<' */
    8,  11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, /* 40 */
    11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 8,  8,  8,  8,  11, /* 50: '_' */
    8,  11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, /* 60 */
    11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 8,  8,  8,  8,  0,  /* 70 */
};

static bool char_is(char c, unsigned what)
{
    return (char_class[(unsigned char)c] & what) != 0;
}

static bool name_start_char(char c)
{
    return char_is(c, CL_NAME_START);
}

static bool name_char(char c)
{
    return char_is(c, CL_NAME);
}

static bool xml_space(char c)
{
    return char_is(c, CL_SPACE);
}

#define CL_ATTS_MAX 8

/* Past the first 8-byte block of [p, end) holding the quote q or a byte
 * not allowed in a value (below ' ', above '~', '<', '&'): the blocks
 * before it are tested a word at a time, as ids and URLs make most of a
 * tag's bytes. */
static const char *plain_value(const char *p, const char *end, char q)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    const uint64_t lt = ones * '<', amp = ones * '&', quote = ones * (unsigned char)q,
                   del = ones * 0x7F;
#define CL_ZERO_BYTE(v) (((v)-ones) & ~(v)&highs)
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t bad = (x & highs) | ((x - ones * 0x20) & ~x & highs) | CL_ZERO_BYTE(x ^ lt) |
                       CL_ZERO_BYTE(x ^ amp) | CL_ZERO_BYTE(x ^ quote) | CL_ZERO_BYTE(x ^ del);
        if (bad)
            break;
        p += 8;
    }
#undef CL_ZERO_BYTE
    return p;
}

/* One tag at p ('<') in the form expat accepts as it stands: ASCII names,
 * at most 8 distinct attribute names, values of printable ASCII without '<'
 * or '&' (so expat's normalisation leaves them as they are). Returns the
 * byte after its '>', or NULL for anything else (left to expat). `atts`,
 * unless NULL, gets each attribute's name and value (*n_atts of them). */
static const char *simple_tag(const char *p, const char *end, cl_name *name, bool *close,
                              bool *empty, cl_name atts[2 * CL_ATTS_MAX], size_t *n_atts)
{
    *close = ++p < end && *p == '/';
    p += *close;
    if (p == end || !name_start_char(*p))
        return NULL;
    const char *nm = p, *names[CL_ATTS_MAX];
    while (p < end && name_char(*p))
        p++;
    *name = (cl_name){nm, (size_t)(p - nm)};
    size_t lens[CL_ATTS_MAX], count = 0;
    if (n_atts)
        *n_atts = 0;
    for (;;) {
        const char *ws = p;
        while (p < end && xml_space(*p))
            p++;
        if (p < end && *p == '>') {
            *empty = false;
            return p + 1;
        }
        if (!*close && end - p >= 2 && p[0] == '/' && p[1] == '>') {
            *empty = true;
            return p + 2;
        }
        if (*close || p == ws || p == end || !name_start_char(*p) || count == CL_ATTS_MAX)
            return NULL;
        const char *a = p;
        while (p < end && name_char(*p))
            p++;
        names[count] = a;
        lens[count] = (size_t)(p - a);
        for (size_t k = 0; k < count; k++)
            if (lens[k] == lens[count] && memcmp(names[k], a, lens[k]) == 0)
                return NULL;
        count++;
        while (p < end && xml_space(*p))
            p++;
        if (p == end || *p++ != '=')
            return NULL;
        while (p < end && xml_space(*p))
            p++;
        if (p == end || (*p != '"' && *p != '\''))
            return NULL;
        char q = *p++;
        const char *v = p;
        p = plain_value(p, end, q);
        for (; p < end && *p != q; p++)
            if (!char_is(*p, CL_VALUE))
                return NULL;
        if (p == end)
            return NULL;
        if (atts) {
            atts[2 * count - 2] = (cl_name){a, lens[count - 1]};
            atts[2 * count - 1] = (cl_name){v, (size_t)(p - v)};
            *n_atts = count;
        }
        p++;
    }
}

/* [p, end) is exactly an empty <param .../> in that form. */
static bool simple_param(const char *p, const char *end)
{
    cl_name nm;
    bool close, empty;
    return simple_tag(p, end, &nm, &close, &empty, NULL, NULL) == end && !close && empty &&
           nm.n == 5 && memcmp(nm.p, "param", 5) == 0;
}

/* The element at p and all it holds, its tags in the simple form above and
 * at most 16 deep, within `end`. Returns the byte after its end tag, or
 * NULL. Its text is not looked at: count_text says whether the whole span
 * is plain (printable ASCII, tab and LF without '&' or ']'), which its use
 * requires. *meta: a <meta> start tag right inside an <extra>, as the
 * stages would see it. */
static const char *simple_subtree(const char *p, const char *end, unsigned *depth, bool *meta)
{
    cl_name open[16];
    unsigned n = 0, deepest = 0;
    for (;;) {
        cl_name nm;
        bool close, empty;
        const char *q = simple_tag(p, end, &nm, &close, &empty, NULL, NULL);
        if (!q)
            return NULL;
        if (close) {
            if (!n || open[n - 1].n != nm.n || memcmp(open[n - 1].p, nm.p, nm.n) != 0)
                return NULL;
            n--;
        } else {
            if (n && nm.n == 4 && memcmp(nm.p, "meta", 4) == 0 && open[n - 1].n == 5 &&
                memcmp(open[n - 1].p, "extra", 5) == 0)
                *meta = true;
            if (!empty && n == 16)
                return NULL;
            if (!empty)
                open[n++] = nm;
        }
        deepest = n + empty > deepest ? n + empty : deepest;
        if (!n) {
            *depth = deepest;
            return q;
        }
        const char *lt = memchr(q, '<', (size_t)(end - q));
        if (!lt)
            return NULL;
        p = lt;
    }
}

/* The <param> run in progress goes on to `lt` when only white space lies
 * between them. */
static bool run_continues(const cl_seg *s, const char *lt)
{
    if (!s->spans.count)
        return false;
    const cl_span *last = &CL_AT(s->spans, cl_span, s->spans.count - 1);
    if (last->kind != CL_SPAN_PARAMS)
        return false;
    for (const char *q = last->end; q < lt; q++)
        if (!xml_space(*q))
            return false;
    return true;
}

/* Tags only: the text between them may hold anything but '<'. */
void prism__cl_scan_segment(cl_seg *s)
{
    const char *p = s->begin, *end = s->end;
    for (;;) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (!lt)
            break;
        p = lt + 1;
        if (p == end)
            return;
        if (*p == '!') {
            if (end - p >= 3 && p[1] == '-' && p[2] == '-')
                p = skip_past(p + 3, end, "-->", 3);
            else if (end - p >= 8 && memcmp(p, "![CDATA[", 8) == 0)
                p = skip_past(p + 8, end, "]]>", 3);
            else
                return; /* <!DOCTYPE: entities need the whole document */
            if (!p)
                return;
            continue;
        }
        if (*p == '?') {
            if (!(p = skip_past(p + 1, end, "?>", 2)))
                return;
            continue;
        }
        bool close = *p == '/';
        const char *name = p += close;
        while (p < end && !prism__cl_name_end(*p))
            p++;
        if (p == name || p == end)
            return;
        size_t n = (size_t)(p - name);
        char last = 0;
        while (p < end && *p != '>') {
            if (*p == '"' || *p == '\'') {
                const char *q = memchr(p + 1, *p, (size_t)(end - p - 1));
                if (!q)
                    return;
                p = q;
            }
            last = *p++;
        }
        if (p++ == end)
            return;
        bool ok = true;
        if (close && s->opens.count)
            s->opens.count--; /* expat checks the name */
        else if (close)
            ok = prism__cl_push_name(&s->pops, name, n);
        else if (last != '/')
            ok = prism__cl_push_name(&s->opens, name, n);
        if (!ok)
            return;
        if (!close && last == '/' && n == 5 && simple_param(lt, p)) {
            if (run_continues(s, lt)) {
                CL_AT(s->spans, cl_span, s->spans.count - 1).end = p;
                continue;
            }
            cl_span *sp = prism__vec_push(&s->spans, sizeof *sp);
            if (!sp)
                return;
            *sp = (cl_span){NULL, lt, p, 0, false, false, CL_SPAN_PARAMS, 1};
            continue;
        }
        unsigned deep;
        bool meta = false;
        const char *after;
        if (!close && last != '/' && n == 5 && memcmp(name, "extra", 5) == 0 &&
            (after = simple_subtree(lt, end, &deep, &meta))) {
            s->opens.count--; /* closed within: the span holds it all */
            cl_span *sp = prism__vec_push(&s->spans, sizeof *sp);
            if (!sp)
                return;
            *sp = (cl_span){NULL, lt, after, 0, false, meta, CL_SPAN_EXTRA, (uint8_t)deep};
            p = after;
            continue;
        }
        bool plain;
        size_t lf;
        if (!close && last != '/' && tree_tag(name, n) &&
            (after = simple_subtree(lt, (size_t)(end - lt) > CL_TREE_MAX ? lt + CL_TREE_MAX : end,
                                    &deep, &meta)) &&
            (lf = count_text(lt, (size_t)(after - lt), &plain), plain)) {
            /* a tree that is not plain is scanned tag by tag instead, so
             * that its long number texts still spare expat */
            s->opens.count--;
            cl_span *sp = prism__vec_push(&s->spans, sizeof *sp);
            if (!sp)
                return;
            *sp = (cl_span){NULL, lt, after, lf, true, false, CL_SPAN_TREE, (uint8_t)deep};
            p = after;
            continue;
        }
        if (close || last == '/' || !number_text_tag(name, n))
            continue;
        const char *text_end = memchr(p, '<', (size_t)(end - p));
        if (!text_end || text_end - p < CL_SPAN_MIN)
            continue;
        cl_span *sp = prism__vec_push(&s->spans, sizeof *sp);
        if (!sp)
            return;
        *sp = (cl_span){name - 1, p, text_end, 0, false, false, CL_SPAN_TEXT, 0};
        p = text_end;
    }
    /* Line ends as expat counts them: LF, CR LF, and a lone CR. The plain
     * count vectorises; CRs are rare enough to take the slow one. The
     * number texts are checked in the same pass. */
    size_t lines = 0, len = (size_t)(end - s->begin);
    const char *at = s->begin;
    bool plain;
    for (size_t i = 0; i < s->spans.count; i++) {
        cl_span *sp = &CL_AT(s->spans, cl_span, i);
        lines += count_text(at, (size_t)(sp->begin - at), &plain);
        if (sp->kind != CL_SPAN_TREE) /* a tree's were counted when found */
            sp->lf = count_text(sp->begin, (size_t)(sp->end - sp->begin), &sp->plain);
        lines += sp->lf;
        at = sp->end;
    }
    lines += count_text(at, (size_t)(end - at), &plain);
    const unsigned char *u = (const unsigned char *)s->begin;
    s->has_cr = memchr(s->begin, '\r', len) != NULL;
    if (s->has_cr)
        for (size_t i = 0; i < len; i++)
            lines += u[i] == '\r' && (i + 1 == len || u[i + 1] != '\n');
    s->lines = lines;
    s->ok = true;
}

/* A tree in the simple form, told to the loader's handlers as expat would
 * tell it: a start tag with its attributes (values as they stand: the form
 * leaves nothing to normalise), an end tag (an empty element's at the end
 * of its tag, as expat tells it), the text between tags in one piece; a
 * number text right after its own start tag as a span. Positions come from
 * replay_at.
 *
 * Written by hand rather than left to expat because expat was a third of
 * a large G4DAE load (perf) once the number text had been taken from it:
 * nearly all of what it still read was these trees' tags. Replayed, such
 * a load takes about a fifth less time on many cores. Anything outside
 * the form still goes to expat. */
bool prism__cl_replay_tree(cl_chunk *c, const cl_span *sp)
{
    prism__cl *L = c->L;
    const char *p = sp->begin, *end = sp->end;
    bool number_text = false; /* the last event was a number element's start tag */
    while (p < end && !L->result) {
        if (*p != '<') {
            const char *lt = memchr(p, '<', (size_t)(end - p));
            size_t n = (size_t)((lt ? lt : end) - p);
            L->replay_at = p;
            if (number_text && n >= CL_SPAN_MIN)
                prism__cl_text_span(L, p, n);
            else
                prism__cl_on_text(L, p, n);
            number_text = false;
            p += n;
            continue;
        }
        cl_name nm, at[2 * CL_ATTS_MAX];
        size_t na;
        bool close, empty;
        const char *q = simple_tag(p, end, &nm, &close, &empty, at, &na);
        if (!q) { /* not expected: the scan found the form */
            c->xml_error = true;
            break;
        }
        L->replay_at = p;
        number_text = false;
        if (close) {
            prism__cl_on_end(L);
            p = q;
            continue;
        }
        /* names and values NUL-ended, as expat hands them over */
        size_t bytes = nm.n + 1;
        for (size_t i = 0; i < 2 * na; i++)
            bytes += at[i].n + 1;
        if (!prism__vec_grow(&c->names, 1, bytes)) {
            prism__cl_oom(L);
            break;
        }
        char *w = c->names.data;
        const char *atts[2 * CL_ATTS_MAX + 1], *name = w;
        memcpy(w, nm.p, nm.n);
        w[nm.n] = 0;
        w += nm.n + 1;
        for (size_t i = 0; i < 2 * na; i++) {
            atts[i] = w;
            memcpy(w, at[i].p, at[i].n);
            w[at[i].n] = 0;
            w += at[i].n + 1;
        }
        atts[2 * na] = NULL;
        prism__cl_on_start(L, name, atts);
        if (empty) {
            L->replay_at = q; /* expat tells an empty element's end at its own end */
            prism__cl_on_end(L);
        } else
            number_text = number_text_tag(nm.p, nm.n);
        p = q;
    }
    L->replay_at = NULL;
    L->trees_replayed++;
    return !L->result && !c->xml_error;
}
