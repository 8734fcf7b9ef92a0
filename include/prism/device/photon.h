/* One photon's walk: find the next boundary in the BVH, take the inside
 * and outside materials from the triangle's orientation (its normal
 * (v1-v0)x(v2-v0) points out of the solid, so a photon going against it is
 * entering the inner material), then bulk absorption (or reemission),
 * Rayleigh scattering, or the boundary (surface or Fresnel). Both backends call
 * prism_photon_run on the same state and get the same photon. */
#ifndef PRISM_KERNELS_PHOTON_H
#define PRISM_KERNELS_PHOTON_H

#include "physics.h"
#include "spawn.h"
#include "surface_model.h"
#include "traverse.h"

#define PRISM_SPEED_OF_LIGHT 0.299792458f /* metres per nanosecond */

/* The bit a photon's walk ended with (prism_photon_end_bit's rule): the
 * first of NAN_ABORT, STEP_LIMIT, SURFACE_DETECT, SURFACE_ABSORB,
 * BULK_ABSORB, NO_HIT in its history; -1 while it is alive. One rule for
 * the host's and the device's tallies. */
PRISM_HD int prism_photon_ended(uint32_t history)
{
    if (history & PRISM_NAN_ABORT)
        return 31;
    if (history & PRISM_STEP_LIMIT)
        return 30;
    if (history & PRISM_SURFACE_DETECT)
        return 2;
    if (history & PRISM_SURFACE_ABSORB)
        return 3;
    if (history & PRISM_BULK_ABSORB)
        return 1;
    if (history & PRISM_NO_HIT)
        return 0;
    return -1;
}

typedef struct prism_propagate_params {
    uint64_t seed;
    uint64_t first_photon; /* run index of the call's photon 0 (Philox key, records) */
    uint32_t max_steps;
    uint32_t record_steps; /* K; 0 = no records */
} prism_propagate_params;

/* Start distance: a photon on a surface must not hit the surface it stands
 * on. The triangle it left is skipped exactly and its ray starts off the
 * surface (prism_photon_origin); this is for photons given on a surface,
 * whose neighbours could catch them at float rounding distance. */
PRISM_HD float prism_photon_tmin(pv3 pos)
{
    float m = fmaxf(fmaxf(fabsf(pos.x), fabsf(pos.y)), fabsf(pos.z));
    return 1e-6f * (1.0f + m);
}

PRISM_HD void prism_record_write(prism_step_record *records, const prism_propagate_params *q,
                                 uint32_t id, const prism_photon *p)
{
    if (records == 0 || q->record_steps == 0)
        return;
    uint32_t slot = p->steps < q->record_steps - 1u ? p->steps : q->record_steps - 1u;
    prism_step_record *rec = records + (size_t)id * q->record_steps + slot;
    rec->pos[0] = p->pos[0];
    rec->pos[1] = p->pos[1];
    rec->pos[2] = p->pos[2];
    rec->time = p->time;
    rec->history = p->history;
    rec->wavelength = p->wavelength;
    rec->photon = (uint32_t)(q->first_photon + id);
    rec->step = p->steps;
}

/* The photon ended: its last record carries the final history, and the
 * unused slots repeat it, so a K-vertex line strip draws right. */
PRISM_HD void prism_record_finish(prism_step_record *records, const prism_propagate_params *q,
                                  uint32_t id, const prism_photon *p)
{
    if (records == 0 || q->record_steps == 0)
        return;
    prism_record_write(records, q, id, p);
    prism_step_record *base = records + (size_t)id * q->record_steps;
    uint32_t last = p->steps < q->record_steps - 1u ? p->steps : q->record_steps - 1u;
    for (uint32_t k = last + 1u; k < q->record_steps; k++)
        base[k] = base[last];
}

PRISM_HD pv3 prism_triangle_normal(const prism_geometry_view *g, uint32_t index)
{
    const uint32_t *tri = g->triangles + 3u * (size_t)index;
    pv3 v0 = prism_trace_vertex(g, tri[0]);
    return pv3_normalize(pv3_cross(pv3_sub(prism_trace_vertex(g, tri[1]), v0),
                                   pv3_sub(prism_trace_vertex(g, tri[2]), v0)));
}

/* Where the photon's next ray starts: where it is, or, standing on
 * triangle `on` (the boundary it just crossed), just off that surface on
 * the side it goes (prism/device/spawn.h), so that no neighbour of the triangle
 * meets it again at the rounding distance of its position. */
PRISM_HD pv3 prism_photon_origin(const prism_geometry_view *g, uint32_t on, pv3 pos, pv3 dir)
{
    if (on >= g->triangle_count) /* PRISM_TRACE_NONE: not on a surface */
        return pos;
    const uint32_t *tri = g->triangles + 3u * (size_t)on;
    pv3 a = prism_trace_vertex(g, tri[0]), b = prism_trace_vertex(g, tri[1]),
        c = prism_trace_vertex(g, tri[2]);
    pv3 n = pv3_normalize(pv3_cross(pv3_sub(b, a), pv3_sub(c, a)));
    return prism_spawn(pos, a, b, c, n, dir);
}

/* The point of the triangle at `hit`, from its barycentrics: off by a
 * rounding of its coordinates whatever the length of the ray (o + t d
 * carries the rounding of t), so a photon on a boundary is on it. */
PRISM_HD pv3 prism_photon_hit_point(const prism_geometry_view *g, const prism_trace_hit *hit)
{
    const uint32_t *tri = g->triangles + 3u * (size_t)hit->index;
    return prism_triangle_point(prism_trace_vertex(g, tri[0]), prism_trace_vertex(g, tri[1]),
                                prism_trace_vertex(g, tri[2]), hit->u, hit->v);
}

/* Move the photon `d` metres through a medium of index n. */
PRISM_HD void prism_photon_move(prism_photon *p, pv3 *pos, pv3 dir, float d, float n)
{
    *pos = pv3_madd(*pos, dir, d);
    p->time += d * n / PRISM_SPEED_OF_LIGHT;
}

/* The boundary at `hit` (unit normal n): a surface of Geant4's glisur or
 * unified model (surface_model.h), a CHROMA surface's four probabilities,
 * or Fresnel. Only the table rows the branch needs are interpolated: four
 * for CHROMA, two to six for Geant4's models, the two indices for Fresnel
 * and dielectric_dielectric. Returns the history bit. */
PRISM_HD uint32_t prism_photon_boundary(const prism_geometry_view *g, const prism_optics_view *o,
                                        prism_photon *p, prism_ray_state *st,
                                        const prism_trace_hit *hit, pv3 n, prism_rng *r)
{
    prism_triangle_info info = g->triangle_info[hit->index];
    int entering = pv3_dot(st->dir, n) < 0.0f;
    uint32_t inner = prism_materials_inner(info.materials);
    uint32_t outer = prism_materials_outer(info.materials);
    uint32_t from = entering ? outer : inner, to = entering ? inner : outer;
    pv3 nn = entering ? n : pv3_scale(n, -1.0f);
    p->solid = info.solid;
    p->triangle = info.id;
    p->reserved = hit->index;
    const float *t = info.surface != 0xFFFFFFFFu ? prism_optics_surface_table(o, info.surface) : 0;
    if (t != 0) {
        prism_optics_lerp l = prism_optics_lerp_at(o, p->wavelength);
        prism_surface_params sp = prism_optics_surface_params(o, info.surface);
        if (prism_surface_is_geant4(sp)) {
            float n1 = 1.0f, n2 = 1.0f;
            if (sp.type == PRISM_SURFACE_DIELECTRIC_DIELECTRIC) {
                n1 = prism_optics_rindex(o, from, p->wavelength);
                n2 = prism_optics_rindex(o, to, p->wavelength);
            }
            prism_ray_state sc = *st; /* copies for the call (surface_model.h) */
            prism_rng rc = *r;
            uint32_t bits = prism_surface_geant4_entry(&sc, nn, o, t, l, sp, n1, n2, &rc);
            *st = sc;
            return bits;
        }
        float probs[4];
        for (int k = 0; k < 4; k++)
            probs[k] = prism_optics_surface_row(o, t, k, l);
        return prism_surface_interact(st, nn, probs, r);
    }
    float n1 = prism_optics_rindex(o, from, p->wavelength);
    float n2 = prism_optics_rindex(o, to, p->wavelength);
    return prism_fresnel(st, nn, n1, n2, r);
}

/* Bulk reemission (a wavelength shifter or scintillator that absorbed the
 * photon, as Chroma's and Geant4-based reemission do): a new wavelength
 * from material m's emission spectrum (its inverse CDF), a direction
 * uniform on the sphere with a random polarisation perpendicular to it,
 * and the time of the decay: exponential with time_fast with probability
 * yield_ratio, else with time_slow. */
PRISM_HD void prism_photon_reemit(const prism_optics_view *o, uint32_t m,
                                  const prism_material_params *mp, prism_photon *p,
                                  prism_ray_state *st, prism_rng *r)
{
    p->wavelength = prism_optics_emission_wavelength(o, m, prism_rng_uniform(r));
    st->dir = prism_sample_cone(r, st->dir, -1.0f);
    st->pol = prism_sample_polarisation(r, st->dir);
    float tau = prism_rng_uniform(r) < mp->yield_ratio ? mp->time_fast : mp->time_slow;
    float u = prism_rng_uniform(r);
    if (tau > 0.0f)
        p->time -= tau * prism_logf(u);
}

/* The bit that ends the photon before its next ray is traced (its state
 * is not finite, or it has taken its steps), or 0. Read by both halves of
 * a step, so the trace half can skip the walk and the interaction half
 * ends the photon, each without telling the other. */
PRISM_HD uint32_t prism_photon_stop(const prism_propagate_params *q, const prism_photon *p)
{
    pv3 pos = pv3_load(p->pos), dir = pv3_load(p->dir);
    if (!pv3_finite(pos) || !pv3_finite(dir) || !(pv3_dot(dir, dir) > 0.5f))
        return PRISM_NAN_ABORT;
    if (p->steps >= q->max_steps)
        return PRISM_STEP_LIMIT;
    return 0;
}

/* The hit of the ray from `org` made a distance from the photon at `pos`:
 * the interaction half moves the photon from where it is, not from where
 * its ray started (prism_photon_origin). */
PRISM_HD void prism_photon_hit_from(prism_trace_hit *hit, pv3 org, pv3 pos, pv3 dir)
{
    hit->t += pv3_dot(pv3_sub(org, pos), dir);
}

/* The first half of a step: the closest boundary along the photon's ray,
 * from its origin (prism_photon_origin) and start distance, skipping the
 * triangle it stands on; hit->index PRISM_TRACE_NONE when it meets none or
 * prism_photon_stop ends it first. Reads the photon, writes only the hit,
 * so a CUDA wavefront can run it as a kernel of its own
 * (engine/cuda/photon_kernels.cuh, which walks the same tree with its
 * GPU walk and must write the same record). */
PRISM_HD void prism_photon_trace(const prism_geometry_view *g, const prism_propagate_params *q,
                                 const prism_photon *p, prism_trace_hit *hit)
{
    hit->t = INFINITY;
    hit->index = PRISM_TRACE_NONE;
    hit->u = hit->v = 0.0f;
    if (prism_photon_stop(q, p) != 0)
        return;
    pv3 pos = pv3_load(p->pos), dir = pv3_load(p->dir);
    pv3 org = prism_photon_origin(g, p->reserved, pos, dir);
    if (prism_trace_closest(g, org, dir, prism_photon_tmin(org), INFINITY, p->reserved, hit))
        prism_photon_hit_from(hit, org, pos, dir);
}

/* The second half of a step: the interaction at (or before) the boundary
 * prism_photon_trace found for this photon in this state. Returns 1 while
 * the photon lives. */
PRISM_HD int prism_photon_interact(const prism_geometry_view *g, const prism_optics_view *o,
                                   const prism_propagate_params *q, prism_photon *p, uint32_t id,
                                   const prism_trace_hit *trace)
{
    const uint32_t stop = prism_photon_stop(q, p);
    if (stop != 0) {
        p->history |= stop;
        return 0;
    }
    if (trace->index == PRISM_TRACE_NONE) {
        p->history |= PRISM_NO_HIT;
        return 0;
    }
    const prism_trace_hit hit = *trace;
    prism_ray_state st;
    pv3 pos = pv3_load(p->pos);
    st.dir = pv3_load(p->dir);
    st.pol = pv3_load(p->pol);
    prism_rng r = prism_rng_make(q->seed, q->first_photon + id, p->steps + 1u, PRISM_RNG_PROPAGATE);
    /* The material the photon is in is the one on its side of that triangle. */
    uint32_t mats = g->triangle_info[hit.index].materials;
    pv3 n = prism_triangle_normal(g, hit.index);
    int entering = pv3_dot(st.dir, n) < 0.0f;
    uint32_t here = entering ? prism_materials_outer(mats) : prism_materials_inner(mats);
    prism_material_sample m = prism_optics_material(o, here, p->wavelength);
    float d_abs = -m.absorption_length * prism_logf(prism_rng_uniform(&r));
    float d_sca = -m.scattering_length * prism_logf(prism_rng_uniform(&r));
    uint32_t what;
    int alive = 1;
    if (d_abs < hit.t && d_abs <= d_sca) {
        prism_photon_move(p, &pos, st.dir, d_abs, m.rindex);
        what = PRISM_BULK_ABSORB;
        alive = 0;
        /* Reemission: read only on an absorption, so the common step pays
         * nothing for it. One draw decides, then five for the new photon. */
        float reemit = prism_optics_reemission_prob(o, here, p->wavelength);
        const prism_material_params *mp = reemit > 0.0f ? prism_optics_material_params(o, here) : 0;
        if (mp != 0 && mp->has_spectrum != 0u && prism_rng_uniform(&r) < reemit) {
            prism_photon_reemit(o, here, mp, p, &st, &r);
            p->reserved = 0xFFFFFFFFu;
            what = PRISM_BULK_REEMIT;
            alive = 1;
        }
    } else if (d_sca < hit.t) {
        prism_photon_move(p, &pos, st.dir, d_sca, m.rindex);
        prism_rayleigh(&st, &r);
        p->reserved = 0xFFFFFFFFu;
        what = PRISM_RAYLEIGH_SCATTER;
    } else {
        prism_photon_move(p, &pos, st.dir, hit.t, m.rindex);
        pos = prism_photon_hit_point(g, &hit);
        what = prism_photon_boundary(g, o, p, &st, &hit, n, &r);
        alive = (what & PRISM_TERMINAL_FLAGS) == 0;
    }
    p->history |= what;
    p->steps++;
    pv3_store(pos, p->pos);
    pv3_store(st.dir, p->dir);
    pv3_store(st.pol, p->pol);
    return alive;
}

/* One interaction: the two halves in turn. Returns 1 while the photon
 * lives. */
PRISM_HD int prism_photon_step(const prism_geometry_view *g, const prism_optics_view *o,
                               const prism_propagate_params *q, prism_photon *p, uint32_t id)
{
    prism_trace_hit hit;
    prism_photon_trace(g, q, p, &hit);
    return prism_photon_interact(g, o, q, p, id, &hit);
}

/* After a launch's steps: a photon alive at its step limit ends with
 * STEP_LIMIT; an ended photon's records are finished. Returns whether it
 * still lives (it goes into the next launch's queue). */
PRISM_HD int prism_photon_settle(const prism_propagate_params *q, prism_step_record *records,
                                 uint32_t id, prism_photon *p, int alive)
{
    if (alive && p->steps >= q->max_steps) {
        p->history |= PRISM_STEP_LIMIT;
        alive = 0;
    }
    if (!alive) {
        /* the skip triangle is an index in the tree's leaf order: cleared,
         * so a final photon is the same whichever tree traced it */
        p->reserved = 0xFFFFFFFFu;
        prism_record_finish(records, q, id, p);
    }
    return alive;
}

/* Up to `budget` interactions of photon `id`. Returns 1 if it still lives
 * (it goes into the next launch's queue); on its end, its records are
 * finished. */
PRISM_HD int prism_photon_run(const prism_geometry_view *g, const prism_optics_view *o,
                              const prism_propagate_params *q, prism_photon *photons,
                              prism_step_record *records, uint32_t id, uint32_t budget)
{
    prism_photon p = photons[id];
    int alive = 1;
    for (uint32_t k = 0; k < budget && alive; k++) {
        alive = prism_photon_step(g, o, q, &p, id);
        if (alive)
            prism_record_write(records, q, id, &p);
    }
    alive = prism_photon_settle(q, records, id, &p, alive);
    photons[id] = p;
    return alive;
}

/* One interaction of photon `id` from the hit prism_photon_trace (or a
 * walk that finds the same) gave for its present state: prism_photon_run
 * with a budget of 1, the trace done beforehand. */
PRISM_HD int prism_photon_run_hit(const prism_geometry_view *g, const prism_optics_view *o,
                                  const prism_propagate_params *q, prism_photon *photons,
                                  prism_step_record *records, uint32_t id,
                                  const prism_trace_hit *hit)
{
    prism_photon p = photons[id];
    int alive = prism_photon_interact(g, o, q, &p, id, hit);
    if (alive)
        prism_record_write(records, q, id, &p);
    alive = prism_photon_settle(q, records, id, &p, alive);
    photons[id] = p;
    return alive;
}

#endif
