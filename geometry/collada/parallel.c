/* The COLLADA loader on all cores: a big document is cut into chunks at the
 * start tags of <geometry> (in <library_geometries>) and <node> (at any
 * depth of <library_nodes> or a <visual_scene>); each chunk gets its own
 * expat parser and its own loader state, and the states are merged in
 * document order. Expat alone reads a document at a few hundred MB/s and
 * the stages behind it halve that, so one core cannot load a large
 * detector in the time asked for; cutting the document is what lets both
 * scale.
 *
 * Where a chunk begins, expat is fed a prefix re-opening the elements open
 * there (<COLLADA><library_nodes><node>...), and where it ends a suffix
 * closing those still open; the prefix's nodes become stand-ins that the
 * merge maps onto the real nodes. The open elements at each cut come from a
 * light scan of every chunk (tags, comments, CDATA, PIs, quoted attribute
 * values), run in parallel; expat then checks each chunk against the prefix
 * and suffix, so a chunk that disagrees with the scan fails to parse.
 *
 * Some of the document never goes through expat. The text of big
 * <float_array>, <p>, <h> and <vcount> elements (most of a G4DAE
 * detector's bytes) is converted by the chunk's thread straight from the
 * document (a <float_array>'s only once a primitive reads it as positions:
 * its span waits on its source, and normals are never converted); runs of
 * <param/> and a <node>'s <extra> (G4DAE's <meta>), which no stage reads,
 * are left out. A whole <geometry> or <node> is not shown to expat either
 * when its markup is in the simple form: the chunk tells its tags and text
 * to the loader's handlers itself (replay_tree), as expat would have. The
 * scan marks only spans that expat would accept as they stand (a strict
 * subset of XML, checked byte by byte), and expat is fed their line ends
 * alone. Positions are therefore counted from the document itself: expat
 * gives the byte offset of each event, which maps back through the prefix
 * and the spans left out; a replayed event gives its own.
 *
 * Anything unusual sends the document to the serial parse, which then gives
 * the usual answer: an encoding other than UTF-8, a DOCTYPE (entities must
 * be seen whole), no place to cut, and any error in any chunk (so every
 * message, with its file:line:col, is the serial parse's). Cancelling is
 * the one failure kept: progress is asked on the caller's thread only. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* memmem */
#endif
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "internal.h"

#define CL_PIECE ((size_t)1 << 20) /* bytes fed to expat between progress checks */
/* Shorter number texts go through expat. 64 rather than the first 256: a
 * G4DAE detector's <vcount> and short <p> texts then skip it too, a small
 * but steady gain; 24 gained nothing more. */
#define CL_SPAN_MIN 64
#define CL_TREE_MAX ((size_t)1 << 18)

typedef struct cl_name {
    const char *p;
    size_t n;
} cl_name;

/* The scan of one segment of the document, between two candidate cuts. */
typedef struct cl_seg {
    const char *begin, *end;
    bool ok;           /* ended outside any tag, comment, CDATA or PI */
    prism__vec pops;   /* cl_name: end tags of elements opened before the segment */
    prism__vec opens;  /* cl_name: elements still open at its end */
    prism__vec spans;  /* cl_span: number texts expat need not see */
    size_t lines;      /* line ends in it, as expat counts them */
    bool has_cr;
} cl_seg;

/* What expat need not see: the text of a number element (tag: the element's
 * '<'), markup the loader never reads (tag NULL): a run of <param .../>,
 * or a <node>'s <extra> (G4DAE's <meta> and copy numbers); or a whole
 * <geometry> or <node> in the simple form, which the chunk replays to the
 * loader's handlers itself (replay_tree). */
typedef enum cl_span_kind {
    CL_SPAN_TEXT,
    CL_SPAN_PARAMS,
    CL_SPAN_EXTRA,
    CL_SPAN_TREE
} cl_span_kind;

typedef struct cl_span {
    const char *tag, *begin, *end;
    size_t lf; /* line ends in it */
    bool plain;
    bool meta; /* an <extra> holding <meta> (a mark of a Geant4 export) */
    uint8_t kind, depth; /* depth: of the markup's deepest element below its parent */
} cl_span;

/* One chunk as parsed: [begin, end) with what re-opens and closes it. */
typedef struct cl_chunk {
    const char *begin, *end;
    char *prefix, *suffix;
    size_t prefix_len, suffix_len, depth, proxies;
    uint32_t line0; /* lines before it */
    size_t col0;    /* bytes before it on its first line */
    size_t seg_first, seg_end; /* its segments, for their spans */
    prism__cl *L;
    bool xml_error; /* expat refused it: the serial parse will say why */
    prism__vec log;
    size_t pending; /* bytes parsed, not yet told */
    prism__vec names; /* char: a replayed tag's names and values, NUL-ended */
    prism__vec open_scopes; /* uint32: the scope inside each element open at its end */
} cl_chunk;

typedef struct cl_par {
    size_t total, done;
    int stop; /* set when a chunk fails or the load is cancelled */
    int cancelled;
} cl_par;

static bool ci_equal(const char *a, size_t n, const char *b)
{
    if (strlen(b) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((a[i] | 0x20) != (b[i] | 0x20))
            return false;
    return true;
}

/* UTF-8 without a DOCTYPE: what every chunk's parser may assume. The
 * DOCTYPE itself is found by the scan (it refuses "<!" other than comments
 * and CDATA). */
static bool plain_utf8(const char *d, size_t size)
{
    if (size >= 3 && memcmp(d, "\xEF\xBB\xBF", 3) == 0)
        d += 3, size -= 3;
    if (!size || (d[0] != '<' && d[0] != ' ' && d[0] != '\t' && d[0] != '\n' && d[0] != '\r'))
        return false; /* UTF-16 and the like */
    if (size < 5 || memcmp(d, "<?xml", 5) != 0)
        return true;
    const char *end = memchr(d, '>', size < 1024 ? size : 1024);
    if (!end)
        return false;
    const char *e = memmem(d, (size_t)(end - d), "encoding", 8);
    if (!e)
        return true;
    const char *q = e + 8;
    while (q < end && (*q == ' ' || *q == '=' || *q == '\t'))
        q++;
    if (q == end || (*q != '"' && *q != '\''))
        return false;
    const char *v = q + 1, *ve = memchr(v, *q, (size_t)(end - v));
    if (!ve)
        return false;
    size_t n = (size_t)(ve - v);
    return ci_equal(v, n, "utf-8") || ci_equal(v, n, "utf8") || ci_equal(v, n, "us-ascii");
}

static bool name_end(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '>' || c == '/';
}

static bool starts_tag(const char *p, const char *end, const char *name, size_t n)
{
    return (size_t)(end - p) > n && memcmp(p, name, n) == 0 && name_end(p[n]);
}

/* The first line after the one holding `from` that starts (after
 * indentation) with a <node or <geometry start tag; `limit` if none before
 * it. *line: the start of that line. */
static const char *find_cut(const char *from, const char *limit, const char **line)
{
    const char *p = from;
    while (p < limit) {
        const char *nl = memchr(p, '\n', (size_t)(limit - p));
        if (!nl)
            return limit;
        p = *line = nl + 1;
        while (p < limit && (*p == ' ' || *p == '\t'))
            p++;
        if (starts_tag(p, limit, "<node", 5) || starts_tag(p, limit, "<geometry", 9))
            return p;
    }
    return limit;
}

/* The candidate cuts: the first tag line after each multiple of
 * chunk_bytes, in cut[1..], cut[0] the document's start; returns their
 * count, cut[count] the end. A search that would start before the last
 * cut's line would find that cut again: it is not made, and one from that
 * line starts at the cut (no line end lies between). A search that finds
 * nothing ends the planning: the later ones would find nothing either. So
 * the searches never read a byte twice (*scanned counts what they read);
 * they used to, each to the end of a document whose last tag line came
 * early (one long mesh): 128 chunks of a 100 MB mesh read 6 GB. */
static size_t find_cuts(const char *data, size_t size, size_t chunk_bytes, size_t want,
                        const char **cut, size_t *scanned)
{
    const char *end = data + size, *line = data;
    size_t n = 1;
    cut[0] = data;
    for (size_t k = 1; k < want; k++) {
        const char *from = data + k * chunk_bytes;
        if (from < line)
            continue;
        if (from < cut[n - 1])
            from = cut[n - 1];
        const char *c = find_cut(from, end, &line);
        *scanned += (size_t)(c - from);
        if (c == end)
            break;
        cut[n++] = c;
    }
    cut[n] = end;
    return n;
}

static bool push_name(prism__vec *v, const char *p, size_t n)
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
    return (n == 4 && memcmp(name, "node", 4) == 0) ||
           (n == 8 && memcmp(name, "geometry", 8) == 0);
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
static size_t count_text(const char *p, size_t n, bool *plain)
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
    0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 0, 0, 0, 0, 0, /* 00: tab, LF */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 10 */
    12, 8, 8, 8, 8, 8, 0, 8, 8, 8, 8, 8, 8, 10, 10, 8, /* 20: ' ' to '/', not '&' */
    10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 11, 8, 0, 8, 8, 8, /* 30: digits, ':', not '<' */
    8, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, /* 40 */
    11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 8, 8, 8, 8, 11, /* 50: '_' */
    8, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, /* 60 */
    11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 8, 8, 8, 8, 0, /* 70 */
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
#define CL_ZERO_BYTE(v) (((v) - ones) & ~(v) & highs)
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
           nm.n == 5 &&
           memcmp(nm.p, "param", 5) == 0;
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
static void scan_segment(cl_seg *s)
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
        while (p < end && !name_end(*p))
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
            ok = push_name(&s->pops, name, n);
        else if (last != '/')
            ok = push_name(&s->opens, name, n);
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

static bool name_is(const cl_name *a, const char *s)
{
    return a->n == strlen(s) && memcmp(a->p, s, a->n) == 0;
}

/* Whether a chunk may begin at a start tag `first` with `stack` open: a
 * <geometry> of <library_geometries>, or a <node> whose ancestors are all
 * nodes of <library_nodes> or of a <visual_scene>. Only there do the stages
 * carry nothing across the cut but the chain of open nodes. */
static bool cut_allowed(const cl_name *stack, size_t depth, const char *first, const char *end)
{
    if (depth < 2 || !name_is(&stack[0], "COLLADA"))
        return false;
    if (starts_tag(first, end, "<geometry", 9))
        return depth == 2 && name_is(&stack[1], "library_geometries");
    size_t i = 2;
    if (name_is(&stack[1], "library_visual_scenes")) {
        if (depth < 3 || !name_is(&stack[2], "visual_scene"))
            return false;
        i = 3;
    } else if (!name_is(&stack[1], "library_nodes")) {
        return false;
    }
    for (; i < depth; i++)
        if (!name_is(&stack[i], "node"))
            return false;
    return true;
}

static char *tags(const cl_name *stack, size_t depth, bool close, size_t *len)
{
    size_t n = 1;
    for (size_t i = 0; i < depth; i++)
        n += stack[i].n + 3;
    char *s = malloc(n), *o = s;
    if (!s)
        return NULL;
    for (size_t k = 0; k < depth; k++) {
        const cl_name *t = &stack[close ? depth - 1 - k : k];
        *o++ = '<';
        if (close)
            *o++ = '/';
        memcpy(o, t->p, t->n);
        o += t->n;
        *o++ = '>';
    }
    *o = 0;
    *len = (size_t)(o - s);
    return s;
}

static size_t count_proxies(const cl_name *stack, size_t depth)
{
    size_t n = 0;
    for (size_t i = 0; i < depth; i++)
        n += name_is(&stack[i], "node") || name_is(&stack[i], "visual_scene");
    return n;
}

static size_t column_of(const char *data, const char *p)
{
    size_t c = 0;
    while (p > data && p[-1] != '\n' && p[-1] != '\r')
        p--, c++;
    return c;
}

static void free_chunks(cl_chunk *ch, size_t n, bool keep_first)
{
    for (size_t i = 0; ch && i < n; i++) {
        free(ch[i].prefix);
        free(ch[i].suffix);
        prism__vec_free(&ch[i].log);
        prism__vec_free(&ch[i].names);
        prism__vec_free(&ch[i].open_scopes);
        if (ch[i].L && (i || !keep_first)) {
            prism__cl_release(ch[i].L);
            if (i)
                free(ch[i].L);
        }
    }
    free(ch);
}

static void free_segs(cl_seg *seg, size_t n)
{
    for (size_t k = 0; seg && k < n; k++) {
        prism__vec_free(&seg[k].pops);
        prism__vec_free(&seg[k].opens);
        prism__vec_free(&seg[k].spans);
    }
    free(seg);
}

/* Scan the segments between candidate cuts, follow the open elements from
 * one cut to the next, and keep the cuts where a chunk may begin. Returns
 * the chunks (count in *n), or NULL for the serial parse. */
static cl_chunk *plan(const char *data, size_t size, size_t chunk_bytes, size_t *n_out,
                      cl_seg **segs_out, size_t *nseg_out, size_t *scanned)
{
    size_t want = size / chunk_bytes + 1;
    const char **cut = malloc((want + 1) * sizeof *cut);
    if (!cut)
        return NULL;
    size_t n = find_cuts(data, size, chunk_bytes, want, cut, scanned);
    if (n < 2) { /* one segment: nothing to cut, nor to scan */
        free(cut);
        return NULL;
    }
    cl_seg *seg = calloc(n, sizeof *seg);
    cl_chunk *ch = calloc(n, sizeof *ch);
    prism__vec stack = {0};
    bool ok = seg && ch;
    long long segs = ok ? (long long)n : 0;
#pragma omp parallel for schedule(dynamic, 1) if (segs > 1)
    for (long long k = 0; k < segs; k++) {
        seg[k].begin = cut[k];
        seg[k].end = cut[k + 1];
        scan_segment(&seg[k]);
    }
    size_t chunks = 0, line = 0;
    for (size_t k = 0; ok && k < n; k++) {
        const cl_name *top = stack.data;
        if (!seg[k].ok) {
            ok = false;
            break;
        }
        if (!k || cut_allowed(top, stack.count, cut[k], data + size)) {
            cl_chunk *c = &ch[chunks++];
            c->begin = cut[k];
            c->line0 = (uint32_t)line;
            c->depth = stack.count;
            c->proxies = count_proxies(top, stack.count);
            c->prefix = tags(top, stack.count, false, &c->prefix_len);
            c->col0 = column_of(data, cut[k]);
            c->seg_first = k;
            ok = c->prefix && line <= UINT32_MAX;
            if (chunks > 1) {
                ch[chunks - 2].end = cut[k];
                ch[chunks - 2].seg_end = k;
                ch[chunks - 2].suffix = tags(top, stack.count, true, &ch[chunks - 2].suffix_len);
                ok = ok && ch[chunks - 2].suffix;
            }
        }
        line += seg[k].lines;
        /* the segment's end tags close what was open, by name */
        const cl_name *pop = seg[k].pops.data;
        for (size_t i = 0; ok && i < seg[k].pops.count; i++) {
            const cl_name *t = stack.count ? &CL_AT(stack, cl_name, stack.count - 1) : NULL;
            ok = t && t->n == pop[i].n && memcmp(t->p, pop[i].p, t->n) == 0;
            stack.count -= ok;
        }
        for (size_t i = 0; ok && i < seg[k].opens.count; i++)
            ok = push_name(&stack, CL_AT(seg[k].opens, cl_name, i).p,
                           CL_AT(seg[k].opens, cl_name, i).n);
    }
    if (ok && chunks) {
        ch[chunks - 1].end = data + size;
        ch[chunks - 1].seg_end = n;
    }
    free(cut);
    prism__vec_free(&stack);
    if (!ok || chunks < 2) {
        free_segs(seg, n);
        free_chunks(ch, chunks, false);
        return NULL;
    }
    *n_out = chunks;
    *segs_out = seg;
    *nseg_out = n;
    return ch;
}

static bool feed(cl_chunk *c, const char *p, size_t n, bool final)
{
    return XML_Parse(c->L->xp, p, (int)n, final) == XML_STATUS_OK;
}

/* Progress is asked on the caller's thread only (OpenMP's thread 0): a
 * callback that updates a window must not be called from a worker. */
static void step(cl_chunk *c, cl_par *P, size_t n, bool flush)
{
    /* counted in the chunk and told every MB: an atomic on a shared line
     * per span (240,000 in the --unique detector) bounces between cores,
     * and the caller asked for progress by the MB */
    c->pending += n;
    if (c->pending < CL_PIECE && !flush)
        return;
    size_t done;
#pragma omp atomic capture
    done = P->done += c->pending;
    c->pending = 0;
#ifdef _OPENMP
    if (omp_get_thread_num() != 0)
        return;
#endif
    prism__cl *L = c->L;
    L->done = done;
    if (!prism__cl_progress(L)) {
#pragma omp atomic write
        P->cancelled = 1;
#pragma omp atomic write
        P->stop = 1;
    }
}

/* Feed [p, p+n) in pieces, asking for progress and watching for a stop. */
static bool feed_range(cl_chunk *c, cl_par *P, const char *p, size_t n, bool final)
{
    prism__cl *L = c->L;
    for (size_t at = 0;;) {
        int stop;
#pragma omp atomic read
        stop = P->stop;
        if (stop || L->result)
            return false;
        size_t k = n - at < CL_PIECE ? n - at : CL_PIECE;
        if (!feed(c, p + at, k, final && at + k == n)) {
            c->xml_error = !L->result;
            return false;
        }
        at += k;
        step(c, P, k, false);
        if (at == n)
            return true;
    }
}

/* A number text: converted here when the element's stage wants it (the
 * start tag just seen is its own), then only its line ends go to expat.
 * Columns on the text's last line are shifted by what expat did not see. */
/* The <param>s of a mesh source's accessor of stride below 3: the mesh
 * stage reads their names (two-component positions). */
static bool params_read(const prism__cl *L)
{
    if (!L->mesh.active || !L->mesh.sources.count ||
        L->stack[L->depth - 1].tag != CL_T_ACCESSOR)
        return false;
    const cl_source *s = &CL_AT(L->mesh.sources, cl_source, L->mesh.sources.count - 1);
    return s->has_accessor && s->acc_stride < 3;
}

/* Whether expat may be spared the span: a number text right after its own
 * start tag; markup where the loader reads no text and its elements would
 * not pass the depth limit: a <param> run that would not be the root's
 * child (counted as unknown) and whose names no stage reads, a <node>'s
 * <extra> (no stage reads below; its <meta>, which marks a Geant4 export,
 * was noted by the scan). */
static bool span_skips(const prism__cl *L, const cl_span *sp, uint64_t tag_at)
{
    if (!sp->plain || L->result)
        return false;
    if (sp->kind == CL_SPAN_TEXT)
        return L->last_start == tag_at;
    if (L->text || L->depth + sp->depth >= (size_t)L->max_depth + CL_XML_SLACK)
        return false;
    if (sp->kind == CL_SPAN_PARAMS)
        return L->depth > 1 && !params_read(L);
    if (sp->kind == CL_SPAN_TREE)
        return L->depth > 0;
    return L->depth && L->stack[L->depth - 1].tag == CL_T_NODE; /* nothing below reads it */
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
static bool replay_tree(cl_chunk *c, const cl_span *sp)
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

/* The line ends expat is fed for a span it is spared: the span's own, and
 * at least one for markup, which keeps what comes before it and after it
 * apart as they are in the document ("&am" <node/> "p;" must not reach
 * expat as "&amp;"). */
static size_t span_lfs(const cl_span *sp)
{
    return sp->kind != CL_SPAN_TEXT && !sp->lf ? 1 : sp->lf;
}

static bool take_span(cl_chunk *c, cl_par *P, const cl_span *sp, uint64_t tag_at)
{
    static const char lfs[] = "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n";
    prism__cl *L = c->L;
    size_t n = (size_t)(sp->end - sp->begin), lf = span_lfs(sp);
    if (!span_skips(L, sp, tag_at)) /* expat reads it */
        return feed_range(c, P, sp->begin, n, false);
    if (sp->kind == CL_SPAN_TREE && !replay_tree(c, sp))
        return false;
    if (sp->tag)
        prism__cl_text_span(L, sp->begin, n);
    L->g4_meta = L->g4_meta || sp->meta;
    for (size_t left = lf; left && !L->result;) {
        size_t k = left < sizeof lfs - 1 ? left : sizeof lfs - 1;
        if (!feed(c, lfs, k, false)) {
            c->xml_error = !L->result;
            return false;
        }
        left -= k;
    }
    step(c, P, n, false);
    return !L->result;
}

static void parse_chunk(cl_chunk *c, const cl_seg *seg, bool last, cl_par *P)
{
    prism__cl *L = c->L;
    L->xp = prism__cl_make_parser(L);
    if (!L->xp) {
        prism__cl_oom(L);
        return;
    }
#ifdef PRISM_HAVE_XML_REPARSE_DEFERRAL
    /* expat 2.6 (and Debian's 2.5 with the backport) may hold back a short
     * buffer that ends a long token. A chunk takes its spans and replays
     * its trees between buffers, so all it fed must have been told by then
     * (a tree after a 2 MB comment ending a node would be read as its
     * child). The cost, a long token read again on each buffer, is what
     * expat before 2.6 always paid. */
    XML_SetReparseDeferralEnabled(L->xp, XML_FALSE);
#endif
    if (c->depth) {
        L->phase = CL_PHASE_PREFIX;
        if (!feed(c, c->prefix, c->prefix_len, false) || L->depth != c->depth)
            c->xml_error = true;
    }
    L->phase = CL_PHASE_BODY;
    /* stream offsets (what expat saw) of document bytes: prefix in, spans out */
    L->doc = L->doc_at = c->begin;
    L->doc_line = L->doc_line0 = c->begin - c->col0;
    L->doc_lines = L->doc_lines0 = c->line0 + 1;
    for (size_t k = c->seg_first; k < c->seg_end; k++)
        L->doc_cr = L->doc_cr || seg[k].has_cr;
    L->stream0 = c->prefix_len;
    L->removed = 0;
    uint64_t removed = 0;
    const char *at = c->begin;
    bool ok = !c->xml_error;
    for (size_t k = c->seg_first; ok && k < c->seg_end; k++) {
        for (size_t i = 0; ok && i < seg[k].spans.count; i++) {
            const cl_span *sp = &CL_AT(seg[k].spans, cl_span, i);
            ok = feed_range(c, P, at, (size_t)(sp->begin - at), false);
            uint64_t tag_at =
                sp->tag ? c->prefix_len + (uint64_t)(sp->tag - c->begin) - removed : 0;
            bool skip = ok && span_skips(L, sp, tag_at);
            ok = ok && take_span(c, P, sp, tag_at);
            if (skip)
                L->removed = removed += (uint64_t)(sp->end - sp->begin) - span_lfs(sp);
            at = sp->end;
        }
    }
    if (ok && feed_range(c, P, at, (size_t)(c->end - at), last))
        step(c, P, 0, true);
    if (!last && !c->xml_error && !L->result) {
        /* the elements the next chunk's prefix re-opens: their scopes */
        if (!prism__vec_grow(&c->open_scopes, sizeof(uint32_t), L->depth + 1))
            prism__cl_oom(L);
        for (size_t k = 0; !L->result && k < L->depth; k++)
            CL_AT(c->open_scopes, uint32_t, c->open_scopes.count++) = L->stack[k].scope;
        L->phase = CL_PHASE_SUFFIX;
        if (!feed(c, c->suffix, c->suffix_len, true))
            c->xml_error = !L->result;
    }
    XML_ParserFree(L->xp);
    L->xp = NULL;
    if ((c->xml_error || L->result)) {
#pragma omp atomic write
        P->stop = 1;
    }
}

static uint32_t shift(cl_str s, uint32_t base)
{
    return s ? s + base : 0;
}

static bool append_u32(prism__vec *dst, const prism__vec *src)
{
    if (!prism__vec_grow(dst, sizeof(uint32_t), dst->count + src->count + 1))
        return false;
    if (src->count)
        memcpy((uint32_t *)dst->data + dst->count, src->data, src->count * sizeof(uint32_t));
    dst->count += src->count;
    return true;
}

/* Where chunk C's arrays go in L's, and the L nodes its stand-ins are. */
typedef struct cl_base {
    uint32_t sb, nb, ib, bb, gb, mb, tb, pb, ob, fb, cb;
    size_t db;
    uint32_t *open; /* per stand-in: the real node, in L */
    uint32_t scb;
    uint32_t *outer; /* per prefix element: the scope inside it, in L */
} cl_base;

#define CL_VECS(X)                                                                                \
    X(pool, 1) X(nodes, sizeof(cl_node)) X(items, sizeof(cl_item))                                 \
    X(bindings, sizeof(cl_binding)) X(geometries, sizeof(cl_geometry))                             \
    X(materials, sizeof(cl_material)) X(tables, sizeof(cl_table)) X(table_data, sizeof(float))     \
    X(props, sizeof(cl_prop)) X(opticals, sizeof(cl_optical)) X(surfrefs, sizeof(cl_surfref))      \
    X(scenes, sizeof(uint32_t)) X(scopes, sizeof(cl_scope))

static uint32_t node_of(const cl_base *b, size_t proxies, uint32_t local)
{
    return local < proxies ? b->open[local] : b->nb + (uint32_t)(local - proxies);
}

/* A chunk's scope reference in L. */
static uint32_t scope_of(const cl_base *b, uint32_t local)
{
    if (local == CL_NONE)
        return CL_NONE;
    return local & CL_SCOPE_OUTER ? b->outer[local & ~CL_SCOPE_OUTER] : b->scb + local;
}

static bool is_identity(const double *m)
{
    for (int i = 0; i < 16; i++)
        if (m[i] != (i % 5 == 0 ? 1.0 : 0.0))
            return false;
    return true;
}

/* In order: every chunk's offsets in L, and its stand-ins' real nodes (the
 * nodes open where the chunk begins: those open where the one before it
 * ends). Then L's arrays grow once to their final sizes. */
static bool plan_merge(prism__cl *L, cl_chunk *ch, size_t n, cl_base *base)
{
    cl_base at = {0};
#define X(v, elem) size_t v = L->v.count;
    CL_VECS(X)
#undef X
    prism__vec open = {0}, open_sc = {0}; /* at the cut: the real nodes, the scopes */
    bool ok = append_u32(&open, &L->node_stack) && append_u32(&open_sc, &ch[0].open_scopes);
    for (size_t i = 1; ok && i < n; i++) {
        prism__cl *C = ch[i].L;
        size_t px = ch[i].proxies, depth = ch[i].depth;
        ok = open.count == px && C->nodes.count >= px && pool + C->pool.count <= UINT32_MAX &&
             open_sc.count == depth && scopes + C->scopes.count < CL_SCOPE_OUTER;
        if (!ok)
            break;
        at = (cl_base){(uint32_t)pool, (uint32_t)nodes, (uint32_t)items, (uint32_t)bindings,
                       (uint32_t)geometries, (uint32_t)materials, (uint32_t)tables,
                       (uint32_t)props, (uint32_t)opticals, (uint32_t)surfrefs, (uint32_t)scenes,
                       table_data, malloc((px + 1) * sizeof(uint32_t)), (uint32_t)scopes,
                       malloc((depth + 1) * sizeof(uint32_t))};
        ok = at.open != NULL && at.outer != NULL;
        if (ok) {
            memcpy(at.open, open.data, px * sizeof(uint32_t));
            if (depth)
                memcpy(at.outer, open_sc.data, depth * sizeof(uint32_t));
        }
        base[i] = at;
        open_sc.count = 0;
        ok = ok && prism__vec_grow(&open_sc, sizeof(uint32_t), ch[i].open_scopes.count + 1);
        for (size_t k = 0; ok && k < ch[i].open_scopes.count; k++)
            CL_AT(open_sc, uint32_t, open_sc.count++) =
                scope_of(&at, CL_AT(ch[i].open_scopes, uint32_t, k));
        open.count = 0;
        for (size_t k = 0; ok && k < C->node_stack.count; k++) {
            uint32_t *slot = prism__vec_push(&open, sizeof *slot);
            ok = slot != NULL;
            if (ok)
                *slot = node_of(&at, px, CL_AT(C->node_stack, uint32_t, k));
        }
#define X(v, elem) v += C->v.count;
        CL_VECS(X)
#undef X
        nodes -= px;
    }
    prism__vec_free(&open);
    prism__vec_free(&open_sc);
#define X(v, elem) ok = ok && prism__vec_grow(&L->v, elem, v + 1);
    CL_VECS(X)
#undef X
    return ok;
}

/* One chunk's arrays into their places in L: offsets into the string pool
 * and the arrays moved; the stand-ins stay out. Chunks do this at once. */
static void copy_chunk(prism__cl *L, prism__cl *C, const cl_base *b, size_t px)
{
    uint32_t sb = b->sb;
    if (C->pool.count)
        memcpy((char *)L->pool.data + sb, C->pool.data, C->pool.count);
    for (size_t i = px; i < C->nodes.count; i++) {
        cl_node n = CL_AT(C->nodes, cl_node, i);
        n.id = shift(n.id, sb);
        n.name = shift(n.name, sb);
        n.first_item = n.first_item == CL_NONE ? CL_NONE : n.first_item + b->ib;
        n.last_item = n.last_item == CL_NONE ? CL_NONE : n.last_item + b->ib;
        n.scope = scope_of(b, n.scope);
        CL_AT(L->nodes, cl_node, b->nb + i - px) = n;
    }
    for (size_t i = 0; i < C->items.count; i++) {
        cl_item it = CL_AT(C->items, cl_item, i);
        it.url = shift(it.url, sb);
        it.next = it.next == CL_NONE ? CL_NONE : it.next + b->ib;
        it.bind_first += b->bb;
        if (it.kind == CL_ITEM_CHILD)
            it.target = node_of(b, px, it.target);
        CL_AT(L->items, cl_item, b->ib + i) = it;
    }
    for (size_t i = 0; i < C->bindings.count; i++) {
        cl_binding x = CL_AT(C->bindings, cl_binding, i);
        x.symbol = shift(x.symbol, sb);
        x.target = shift(x.target, sb);
        CL_AT(L->bindings, cl_binding, b->bb + i) = x;
    }
    for (size_t i = 0; i < C->scenes.count; i++)
        CL_AT(L->scenes, uint32_t, b->cb + i) = node_of(b, px, CL_AT(C->scenes, uint32_t, i));
    for (size_t i = 0; i < C->geometries.count; i++) {
        cl_geometry g = CL_AT(C->geometries, cl_geometry, i);
        g.id = shift(g.id, sb);
        g.name = shift(g.name, sb);
        for (uint32_t k = 0; k < g.groups_count; k++)
            g.groups[k].material = shift(g.groups[k].material, sb);
        g.scope = scope_of(b, g.scope);
        CL_AT(L->geometries, cl_geometry, b->gb + i) = g;
    }
    C->geometries.count = 0; /* their arrays are L's now */
    for (size_t i = 0; i < C->scopes.count; i++) {
        cl_scope x = CL_AT(C->scopes, cl_scope, i);
        x.parent = scope_of(b, x.parent);
        CL_AT(L->scopes, cl_scope, b->scb + i) = x;
    }
    for (size_t i = 0; i < C->materials.count; i++) {
        cl_material m = CL_AT(C->materials, cl_material, i);
        m.id = shift(m.id, sb);
        m.name = shift(m.name, sb);
        CL_AT(L->materials, cl_material, b->mb + i) = m;
    }
    for (size_t i = 0; i < C->tables.count; i++) {
        cl_table t = CL_AT(C->tables, cl_table, i);
        t.name = shift(t.name, sb);
        t.first += b->db;
        CL_AT(L->tables, cl_table, b->tb + i) = t;
    }
    if (C->table_data.count)
        memcpy((float *)L->table_data.data + b->db, C->table_data.data,
               C->table_data.count * sizeof(float));
    for (size_t i = 0; i < C->props.count; i++) {
        cl_prop p = CL_AT(C->props, cl_prop, i);
        p.name = shift(p.name, sb);
        p.ref = shift(p.ref, sb);
        if (p.owner != CL_NONE)
            p.owner += p.optical ? b->ob : b->mb;
        CL_AT(L->props, cl_prop, b->pb + i) = p;
    }
    for (size_t i = 0; i < C->opticals.count; i++) {
        cl_optical o = CL_AT(C->opticals, cl_optical, i);
        o.name = shift(o.name, sb);
        CL_AT(L->opticals, cl_optical, b->ob + i) = o;
    }
    for (size_t i = 0; i < C->surfrefs.count; i++) {
        cl_surfref r = CL_AT(C->surfrefs, cl_surfref, i);
        r.name = shift(r.name, sb);
        r.optical = shift(r.optical, sb);
        r.ref[0] = shift(r.ref[0], sb);
        r.ref[1] = shift(r.ref[1], sb);
        CL_AT(L->surfrefs, cl_surfref, b->fb + i) = r;
    }
}

/* In order again: the stand-ins' items follow the real nodes' own, a
 * transform after a child node multiplies in; the rest of the state. */
static void link_chunk(prism__cl *L, const prism__cl *C, const cl_base *b, size_t px)
{
    for (size_t i = 0; i < px; i++) {
        const cl_node *n = &CL_AT(C->nodes, cl_node, i);
        cl_node *r = &CL_AT(L->nodes, cl_node, b->open[i]);
        if (n->first_item != CL_NONE) {
            if (r->last_item == CL_NONE)
                r->first_item = n->first_item + b->ib;
            else
                CL_AT(L->items, cl_item, r->last_item).next = n->first_item + b->ib;
            r->last_item = n->last_item + b->ib;
        }
        if (!is_identity(n->m))
            prism__cl_mat_mul(r->m, n->m, r->m);
        if (n->scope != CL_NONE && !(n->scope & CL_SCOPE_OUTER)) /* its <asset> came here */
            r->scope = scope_of(b, n->scope);
    }
    if (C->scene_url) {
        L->scene_url = shift(C->scene_url, b->sb);
        L->scene_pos = C->scene_pos;
    }
    if (C->has_unit)
        L->unit = C->unit, L->has_unit = true;
    if (C->has_up)
        L->up = C->up, L->has_up = true;
    L->g4dae = L->g4dae || C->g4dae;
    L->g4_meta = L->g4_meta || C->g4_meta;
    L->quirks.float_array_counts += C->quirks.float_array_counts;
    L->quirks.flat_positions += C->quirks.flat_positions;
    L->lookat_quirks += C->lookat_quirks;

    L->skipped.lines += C->skipped.lines;
    L->skipped.degenerate_polygons += C->skipped.degenerate_polygons;
    L->skipped.nonfinite_vertices += C->skipped.nonfinite_vertices;
    L->skipped.unknown_elements += C->skipped.unknown_elements;
    L->stats.geometries += C->stats.geometries;
    L->stats.nodes += C->stats.nodes;
    L->stats.unique_triangles += C->stats.unique_triangles;
    L->stats.unique_vertices += C->stats.unique_vertices;
}

/* The chunks' states into L, in document order. The copying, most of the
 * work (serial, a visible part of a large load), runs on all cores between
 * two short passes in order. */
static bool merge_all(prism__cl *L, cl_chunk *ch, size_t n)
{
    cl_base *base = calloc(n, sizeof *base);
    bool ok = base && plan_merge(L, ch, n, base);
    prism__cl_trace(L, "merge: plan");
    if (ok) {
        size_t last = 0;
#define X(v, elem) last = L->v.count;                                                             \
    for (size_t i = 1; i < n; i++)                                                                 \
        last += ch[i].L->v.count - (&L->v == &L->nodes ? ch[i].proxies : 0);                       \
    L->v.count = last;
        CL_VECS(X)
#undef X
        long long count = (long long)n;
#pragma omp parallel for schedule(dynamic, 1)
        for (long long i = 1; i < count; i++)
            copy_chunk(L, ch[i].L, &base[i], ch[i].proxies);
        prism__cl_trace(L, "merge: copy");
        for (size_t i = 1; i < n; i++)
            link_chunk(L, ch[i].L, &base[i], ch[i].proxies);
    }
    for (size_t i = 0; base && i < n; i++)
        free(base[i].open), free(base[i].outer);
    free(base);
    return ok;
}

static void tell_logs(prism__cl *L, const prism__vec *log)
{
    for (size_t at = 0; at < log->count;) {
        const char *e = (const char *)log->data + at;
        size_t n = strlen(e + 1);
        unsigned level = (unsigned char)e[0];
        if (prism__cl_quirk_tell(L, level))
            L->desc->log(L->desc->log_user, (prism_log_level)(level & 0x0Fu), e + 1);
        at += n + 2;
    }
}

static int threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

bool prism__cl_parse_parallel(prism__cl *L, const char *data, size_t size, size_t chunk_bytes)
{
    int nt = threads();
    if (!chunk_bytes) {
        /* One thread takes this path too: expat is spared the number text,
         * which makes even a one-thread parse faster than the serial one. */
        if (size < CL_PARALLEL_MIN_BYTES)
            return false;
        /* four chunks a thread even out the uneven ones; 1 MB keeps the
         * per-chunk cost (a parser, a state, a merge) out of sight */
        chunk_bytes = size / (16 * (size_t)nt);
        chunk_bytes = chunk_bytes < CL_PIECE ? CL_PIECE : chunk_bytes;
    }
    if (size > (size_t)INT32_MAX * 1024 || !plain_utf8(data, size))
        return false;
    size_t n = 0;
    cl_seg *seg = NULL;
    size_t nseg = 0;
    cl_chunk *ch = plan(data, size, chunk_bytes, &n, &seg, &nseg, &L->plan_scanned);
    prism__cl_trace(L, "scan");
    if (!ch)
        return false;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        ch[i].L = i ? calloc(1, sizeof(prism__cl)) : L;
        ok = ch[i].L != NULL;
        if (ok && i) {
            prism__cl_init(ch[i].L, L->file, L->desc, L->total);
            ch[i].L->root_seen = true;
        }
        if (ok) {
            ch[i].L->log_buf = &ch[i].log;
            ch[i].L->lazy_ok = true; /* long float_array texts wait till read */
        }
    }
    if (!ok) {
        free_segs(seg, nseg);
        free_chunks(ch, n, true);
        return false;
    }
    /* one call before the chunks, on this thread: the callback hears of
     * the load (and may cancel it) even when the workers take every chunk
     * before this thread reaches a report (seen: no call at all with 16
     * threads and a few chunks) */
    L->done = 0;
    if (!prism__cl_progress(L)) {
        L->log_buf = NULL;
        free_segs(seg, nseg);
        free_chunks(ch, n, true);
        return true;
    }
    cl_par P = {size, 0, 0, 0};
    long long count = (long long)n;
#pragma omp parallel for schedule(dynamic, 1)
    for (long long i = 0; i < count; i++)
        parse_chunk(&ch[i], seg, i == count - 1, &P);
    for (size_t i = 1; i < n; i++)
        L->trees_replayed += ch[i].L->trees_replayed;
    prism__cl_trace(L, "parse chunks");
    free_segs(seg, nseg);
    L->log_buf = NULL;
    L->lazy_ok = false;
    for (size_t i = 0; i < n && ok; i++)
        ok = !ch[i].xml_error && !ch[i].L->result;
    if (P.cancelled) {
        /* the message from the chunk that asked, else where the caller's is */
        for (size_t i = 0; i < n; i++)
            if (ch[i].L->result == PRISM_ERROR_IO) {
                if (i) {
                    L->result = ch[i].L->result;
                    memcpy(L->message, ch[i].L->message, sizeof L->message);
                }
                break;
            }
        if (!L->result)
            prism__cl_fail(L, PRISM_ERROR_IO, (cl_pos){0, 0}, NULL, "cancelled");
        free_chunks(ch, n, true);
        return true;
    }
    ok = ok && merge_all(L, ch, n);
    prism__cl_trace(L, "merge: link");
    if (ok && L->desc && L->desc->log)
        for (size_t i = 0; i < n; i++)
            tell_logs(L, &ch[i].log);
    free_chunks(ch, n, true);
    prism__cl_trace(L, "free chunks");
    if (!ok)
        return false;
    L->done = size;
    L->depth = 0;
    return true;
}
