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

#include "parallel_internal.h"

#define CL_PIECE ((size_t)1 << 20) /* bytes fed to expat between progress checks */

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
    if (!L->mesh.active || !L->mesh.sources.count || L->stack[L->depth - 1].tag != CL_T_ACCESSOR)
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
    static const char lfs[] =
        "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n";
    prism__cl *L = c->L;
    size_t n = (size_t)(sp->end - sp->begin), lf = span_lfs(sp);
    if (!span_skips(L, sp, tag_at)) /* expat reads it */
        return feed_range(c, P, sp->begin, n, false);
    if (sp->kind == CL_SPAN_TREE && !prism__cl_replay_tree(c, sp))
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
            uint64_t tag_at = sp->tag ? c->prefix_len + (uint64_t)(sp->tag - c->begin) - removed
                                      : 0;
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
    cl_chunk *ch = prism__cl_plan(data, size, chunk_bytes, &n, &seg, &nseg, &L->plan_scanned);
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
        prism__cl_free_segs(seg, nseg);
        prism__cl_free_chunks(ch, n, true);
        return false;
    }
    /* one call before the chunks, on this thread: the callback hears of
     * the load (and may cancel it) even when the workers take every chunk
     * before this thread reaches a report (seen: no call at all with 16
     * threads and a few chunks) */
    L->done = 0;
    if (!prism__cl_progress(L)) {
        L->log_buf = NULL;
        prism__cl_free_segs(seg, nseg);
        prism__cl_free_chunks(ch, n, true);
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
    prism__cl_free_segs(seg, nseg);
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
        prism__cl_free_chunks(ch, n, true);
        return true;
    }
    ok = ok && prism__cl_merge_all(L, ch, n);
    prism__cl_trace(L, "merge: link");
    if (ok && L->desc && L->desc->log)
        for (size_t i = 0; i < n; i++)
            tell_logs(L, &ch[i].log);
    prism__cl_free_chunks(ch, n, true);
    prism__cl_trace(L, "free chunks");
    if (!ok)
        return false;
    L->done = size;
    L->depth = 0;
    return true;
}
