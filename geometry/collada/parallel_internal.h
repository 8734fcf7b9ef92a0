/* What the chunked parse's files share (parallel.c, chunks.c, replay.c,
 * merge.c): the scan's segments and spans, a chunk as planned and parsed,
 * and the calls between them. The loader's other stages see only
 * prism__cl_parse_parallel, in internal.h. */
#ifndef PRISM_COLLADA_PARALLEL_INTERNAL_H
#define PRISM_COLLADA_PARALLEL_INTERNAL_H

#include "internal.h"

typedef struct cl_name {
    const char *p;
    size_t n;
} cl_name;

/* The scan of one segment of the document, between two candidate cuts. */
typedef struct cl_seg {
    const char *begin, *end;
    bool ok;          /* ended outside any tag, comment, CDATA or PI */
    prism__vec pops;  /* cl_name: end tags of elements opened before the segment */
    prism__vec opens; /* cl_name: elements still open at its end */
    prism__vec spans; /* cl_span: number texts expat need not see */
    size_t lines;     /* line ends in it, as expat counts them */
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
    bool meta;           /* an <extra> holding <meta> (a mark of a Geant4 export) */
    uint8_t kind, depth; /* depth: of the markup's deepest element below its parent */
} cl_span;

/* One chunk as parsed: [begin, end) with what re-opens and closes it. */
typedef struct cl_chunk {
    const char *begin, *end;
    char *prefix, *suffix;
    size_t prefix_len, suffix_len, depth, proxies;
    uint32_t line0;            /* lines before it */
    size_t col0;               /* bytes before it on its first line */
    size_t seg_first, seg_end; /* its segments, for their spans */
    prism__cl *L;
    bool xml_error; /* expat refused it: the serial parse will say why */
    prism__vec log;
    size_t pending;         /* bytes parsed, not yet told */
    prism__vec names;       /* char: a replayed tag's names and values, NUL-ended */
    prism__vec open_scopes; /* uint32: the scope inside each element open at its end */
} cl_chunk;

/* chunks.c: the chunks to parse (NULL for the serial parse), and their release. */
cl_chunk *prism__cl_plan(const char *data, size_t size, size_t chunk_bytes, size_t *n_out,
                         cl_seg **segs_out, size_t *nseg_out, size_t *scanned);
void prism__cl_free_chunks(cl_chunk *ch, size_t n, bool keep_first);
void prism__cl_free_segs(cl_seg *seg, size_t n);

/* replay.c: the scan of one segment, a tree told to the handlers, and two
 * helpers the planner shares. */
void prism__cl_scan_segment(cl_seg *s);
bool prism__cl_replay_tree(cl_chunk *c, const cl_span *sp);
bool prism__cl_name_end(char c);
bool prism__cl_push_name(prism__vec *v, const char *p, size_t n);

/* merge.c: the chunks' states into L, in document order. */
bool prism__cl_merge_all(prism__cl *L, cl_chunk *ch, size_t n);

#endif
