/* Where the chunked parse (parallel.c) may cut a document. The plan is
 * settled from the scan alone before any chunk is parsed, and a wrong cut
 * only shows later as a chunk that fails, so the rules for a safe cut are
 * kept here, apart from the parsing they make possible. */
#include <stdlib.h>
#include <string.h>

#include "parallel_internal.h"

static bool starts_tag(const char *p, const char *end, const char *name, size_t n)
{
    return (size_t)(end - p) > n && memcmp(p, name, n) == 0 && prism__cl_name_end(p[n]);
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

void prism__cl_free_chunks(cl_chunk *ch, size_t n, bool keep_first)
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

void prism__cl_free_segs(cl_seg *seg, size_t n)
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
cl_chunk *prism__cl_plan(const char *data, size_t size, size_t chunk_bytes, size_t *n_out,
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
        prism__cl_scan_segment(&seg[k]);
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
            ok = prism__cl_push_name(&stack, CL_AT(seg[k].opens, cl_name, i).p,
                                     CL_AT(seg[k].opens, cl_name, i).n);
    }
    if (ok && chunks) {
        ch[chunks - 1].end = data + size;
        ch[chunks - 1].seg_end = n;
    }
    free(cut);
    prism__vec_free(&stack);
    if (!ok || chunks < 2) {
        prism__cl_free_segs(seg, n);
        prism__cl_free_chunks(ch, chunks, false);
        return NULL;
    }
    *n_out = chunks;
    *segs_out = seg;
    *nseg_out = n;
    return ch;
}
