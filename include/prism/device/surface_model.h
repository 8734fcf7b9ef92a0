/* Geant4's optical surface models (the glisur and unified models of
 * G4OpBoundaryProcess; the unified model is Levin & Moisan's, "A more
 * physical approach to model the surface treatment of scintillation
 * counters", IEEE NSS 1996), written for the per-photon code both backends
 * run: only + - * / sqrtf and kmath.h's log, sine and cosine, so a photon
 * is the same bits on the host and in CUDA's exact kernels.
 *
 * What a surface does, as Geant4 does it:
 *   dielectric_metal: absorbed with 1-R (detected with E of that), else
 *     reflected: polished (unified) or any finish but ground (glisur) about
 *     the normal; unified with another finish by the lobe constants (spike
 *     about the normal, lobe about a facet, backscatter, Lambertian);
 *     glisur ground about a facet smeared by the polish.
 *   dielectric_dielectric polished / ground: absorbed or detected with
 *     1-R, else Fresnel between the two materials' RINDEX at the (facet)
 *     normal, with Geant4's amplitudes for the polarisation; a reflection
 *     of a unified non-polished surface takes its kind from the lobe
 *     constants (with none given, Geant4's default: all Lambertian).
 *   frontpainted: no refraction: absorbed / detected with 1-R, else
 *     reflected, specular spike (polished) or Lambertian (ground).
 *   backpainted: Fresnel into a layer of index PRISM_SURF_RINDEX (the next
 *     material's when 0), the paint behind it absorbing / detecting with
 *     1-R and reflecting the rest (Lambertian for ground, specular about
 *     the normal for polished) back through the layer.
 *
 * Simplified against Geant4: TRANSMITTANCE, complex RINDEX (metals'
 * reflectivity from the index) and the LUT / dichroic types are not read;
 * the facet loops, which Geant4 runs until the photon leaves the surface,
 * stop after PRISM_G4_MAX_FACETS tries (the photon then keeps the last
 * state, or for a facet sample the macroscopic normal); a photon trapped
 * between a back paint and its layer is absorbed after PRISM_G4_MAX_PAINT
 * paint bounces; Geant4's "same material" shortcut (a polished
 * dielectric_dielectric surface between one material does nothing) is not
 * taken: with equal indices the Fresnel step transmits anyway, but 1-R
 * still absorbs first. Back-painted layers are of zero thickness, as in
 * Geant4.
 *
 * History bits (prism/propagate.h): spike, lobe and Fresnel reflections
 * REFLECT_SPECULAR (with TOTAL_INTERNAL when it was total); backscatter
 * REFLECT_SPECULAR too (a retro-reflection off a deep groove, no bit of
 * its own: tell it by the reversed direction); Lambertian REFLECT_DIFFUSE;
 * a Fresnel crossing REFRACT; absorption SURFACE_ABSORB, detection
 * SURFACE_DETECT. A back-painted surface's return through its layer is
 * named by the paint's reflection. */
#ifndef PRISM_KERNELS_SURFACE_MODEL_H
#define PRISM_KERNELS_SURFACE_MODEL_H

#include "physics.h"

/* The models' entry (prism_surface_geant4_entry) is called, not inlined,
 * in CUDA code: its loops and vectors would otherwise add their registers
 * to the whole photon kernel's (ptxas -v, sm_90: 96 -> 128 a thread), though
 * most steps never reach a Geant4 surface. Its caller passes it copies of
 * the photon's state and stream: a pointer to the originals would move
 * them to local memory for the whole step. The call works on them in
 * local memory (copying them into registers there measured 121 registers
 * for the kernel: a call's registers count for its kernel). Static: each
 * kernel file has its own, built with its own arithmetic (exact or fast). */
#if defined(__CUDACC__)
#define PRISM_G4_ENTRY static __host__ __device__ __noinline__
#else
#define PRISM_G4_ENTRY static inline
#endif

/* The retry loops stay loops in CUDA code (unrolled, they cost registers
 * for iterations that almost never run). */
#if defined(__CUDACC__)
#define PRISM_G4_LOOP _Pragma("unroll 1")
#else
#define PRISM_G4_LOOP
#endif

#define PRISM_G4_MAX_FACETS 16
#define PRISM_G4_MAX_PAINT 16
#define PRISM_G4_HALF_PI 1.57079637f
#define PRISM_G4_INV_TWO_PI 0.159154943f

/* The reflection kinds of the unified model. */
enum { PRISM_G4_SPIKE = 0, PRISM_G4_LOBE, PRISM_G4_BACKSCATTER, PRISM_G4_LAMBERT };

/* What the models read of a surface at the photon's wavelength. */
typedef struct prism_g4_surface {
    uint32_t model, finish;
    float sigma;             /* unified: sigma_alpha (rad); glisur: polish */
    float spike, lobe, back; /* unified lobe constants (Lambertian: the rest) */
} prism_g4_surface;

/* A surface whose model, type and finish Prism models as Geant4 does;
 * anything else (CHROMA, or values out of range) reads the four CHROMA
 * probabilities. */
PRISM_HD int prism_surface_is_geant4(prism_surface_params sp)
{
    return sp.model <= PRISM_SURFACE_MODEL_UNIFIED &&
           sp.type <= PRISM_SURFACE_DIELECTRIC_DIELECTRIC &&
           sp.finish <= PRISM_FINISH_GROUND_BACKPAINTED;
}

/* A standard normal deviate by Box and Muller's transform of two uniforms
 * (the cosine branch). */
PRISM_HD float prism_gauss(prism_rng *r)
{
    float u = prism_rng_uniform(r), s, c;
    prism_sincos_turn(prism_rng_uniform(r), &s, &c);
    return sqrtf(-2.0f * prism_logf(u)) * c;
}

/* Unit vector (x, y, z) of the frame whose z axis is unit n. */
PRISM_HD pv3 prism_frame_vector(pv3 n, float x, float y, float z)
{
    pv3 a = pv3_perpendicular(n), b = pv3_cross(n, a);
    return pv3_normalize(pv3_madd(pv3_madd(pv3_scale(n, z), a, x), b, y));
}

/* A micro-facet normal for a photon going along d onto a surface of unit
 * normal nn (against d). Unified (Geant4's GetFacetNormal): the facet's
 * angle alpha to nn has density g(alpha; 0, sigma) sin(alpha) on (0, pi/2)
 * (a Gaussian by rejection against f_max sin(alpha), f_max = min(1,
 * 4 sigma)), its azimuth uniform; a facet the photon would meet from behind
 * (d . facet >= 0) is drawn again. Glisur: nn plus (1 - polish) times a
 * point uniform in the unit ball, again facing the photon. */
PRISM_HD pv3 prism_g4_facet(const prism_g4_surface *s, pv3 d, pv3 nn, prism_rng *r)
{
    if (s->model == PRISM_SURFACE_MODEL_UNIFIED) {
        if (!(s->sigma > 0.0f))
            return nn;
        float f_max = fminf(1.0f, 4.0f * s->sigma);
        PRISM_G4_LOOP
        for (int k = 0; k < PRISM_G4_MAX_FACETS; k++) {
            float sa = -1.0f, ca = 1.0f;
            PRISM_G4_LOOP
            for (int t = 0; t < 4 * PRISM_G4_MAX_FACETS; t++) {
                float alpha = s->sigma * prism_gauss(r);
                float u = prism_rng_uniform(r);
                if (!(alpha > 0.0f && alpha < PRISM_G4_HALF_PI))
                    continue;
                prism_sincos_turn(alpha * PRISM_G4_INV_TWO_PI, &sa, &ca);
                if (u * f_max <= sa)
                    break;
                sa = -1.0f;
            }
            if (sa < 0.0f) /* no angle accepted: a sigma far too large */
                return nn;
            float sp, cp;
            prism_sincos_turn(prism_rng_uniform(r), &sp, &cp);
            pv3 f = prism_frame_vector(nn, sa * cp, sa * sp, ca);
            if (pv3_dot(d, f) < 0.0f)
                return f;
        }
        return nn;
    }
    float rough = 1.0f - s->sigma;
    if (!(rough > 0.0f))
        return nn;
    PRISM_G4_LOOP
    for (int k = 0; k < PRISM_G4_MAX_FACETS; k++) {
        pv3 b = nn;
        int inside = 0;
        PRISM_G4_LOOP
        for (int t = 0; t < PRISM_G4_MAX_FACETS && !inside; t++) {
            b.x = 2.0f * prism_rng_uniform(r) - 1.0f;
            b.y = 2.0f * prism_rng_uniform(r) - 1.0f;
            b.z = 2.0f * prism_rng_uniform(r) - 1.0f;
            inside = pv3_dot(b, b) <= 1.0f;
        }
        if (!inside)
            return nn;
        pv3 f = pv3_madd(nn, b, rough);
        if (pv3_dot(d, f) < 0.0f)
            return pv3_normalize(f);
    }
    return nn;
}

/* The unified model's choice among its four kinds (Geant4's
 * ChooseReflection): one uniform against the cumulative constants. */
PRISM_HD int prism_g4_choose(const prism_g4_surface *s, prism_rng *r)
{
    float u = prism_rng_uniform(r);
    if (u < s->spike)
        return PRISM_G4_SPIKE;
    if (u < s->spike + s->lobe)
        return PRISM_G4_LOBE;
    if (u < s->spike + s->lobe + s->back)
        return PRISM_G4_BACKSCATTER;
    return PRISM_G4_LAMBERT;
}

/* pol mirrored in the plane of unit f: -pol + 2 (pol . f) f, Geant4's
 * polarisation of a reflection about f. */
PRISM_HD pv3 prism_g4_mirror_pol(pv3 pol, pv3 f)
{
    return pv3_madd(pv3_scale(pol, -1.0f), f, 2.0f * pv3_dot(pol, f));
}

/* A reflection of kind `kind` off a surface of normal nn (against the
 * photon) with facet f (used by LOBE), polarisation as Geant4's
 * DoReflection: mirrored about the facet, which for a Lambertian direction
 * is the bisector of the old and new directions. Returns the history bit. */
PRISM_HD uint32_t prism_g4_reflect(prism_ray_state *st, int kind, pv3 nn, pv3 f, prism_rng *r)
{
    if (kind == PRISM_G4_BACKSCATTER) {
        st->dir = pv3_scale(st->dir, -1.0f);
        st->pol = pv3_scale(st->pol, -1.0f);
        return PRISM_REFLECT_SPECULAR;
    }
    if (kind == PRISM_G4_LAMBERT) {
        pv3 d = prism_sample_lambert(r, nn);
        pv3 b = pv3_normalize(pv3_sub(d, st->dir));
        st->pol = prism_fix_polarisation(r, prism_g4_mirror_pol(st->pol, b), d);
        st->dir = d;
        return PRISM_REFLECT_DIFFUSE;
    }
    if (kind == PRISM_G4_SPIKE)
        f = nn;
    st->dir = pv3_normalize(prism_reflect(st->dir, f));
    st->pol = prism_fix_polarisation(r, prism_g4_mirror_pol(st->pol, f), st->dir);
    return PRISM_REFLECT_SPECULAR;
}

/* One Fresnel event of Geant4's DielectricDielectric at facet f (global
 * normal nn, both against the photon) from index na into nb. The incident
 * field is split into its component along A = d x f (s, "perp") and the
 * rest (p, "parl"; its magnitude, as Geant4 takes it); the transmitted
 * amplitudes are t_s = 2 na c1 E_s / (na c1 + nb c2) and t_p = 2 na c1 E_p
 * / (nb c1 + na c2), the transmission probability T = nb c2 (t_s^2 +
 * t_p^2) / (na c1) (Born & Wolf), so a pure s or p photon crosses with
 * 1 - R_s or 1 - R_p. A reflection's amplitudes are t_s - E_s and (nb/na)
 * t_p - E_p; each polarisation is the amplitudes' combination of A and
 * new dir x A. A reflection of a unified rough surface (`choose`) takes its
 * kind from the lobe constants. Returns 1 when the photon crossed; sets
 * *bits to the reflection's history bits otherwise. */
PRISM_HD int prism_g4_fresnel(prism_ray_state *st, pv3 nn, pv3 f, float na, float nb, int choose,
                              const prism_g4_surface *s, prism_rng *r, uint32_t *bits)
{
    pv3 d = st->dir, e = st->pol;
    float c1 = -pv3_dot(d, f);
    float eta = na / nb;
    float sin2_t = eta * eta * fmaxf(0.0f, 1.0f - c1 * c1);
    int tir = sin2_t >= 1.0f;
    pv3 a = pv3_cross(d, f);
    float al = pv3_length(a);
    int oblique = al > 1e-6f;
    float e_s = 0.0f, e_p = 1.0f, t_s = 0.0f, t_p = 0.0f, c2 = 0.0f;
    if (oblique) {
        a = pv3_scale(a, 1.0f / al);
        e_s = pv3_dot(e, a);
        e_p = pv3_length(pv3_madd(e, a, -e_s));
    } else {
        a = e;
    }
    if (!tir) {
        c2 = sqrtf(1.0f - sin2_t);
        float s1 = na * c1;
        t_s = 2.0f * s1 * e_s / (na * c1 + nb * c2);
        t_p = 2.0f * s1 * e_p / (nb * c1 + na * c2);
        float t2 = t_s * t_s + t_p * t_p;
        float trans = c1 > 0.0f ? nb * c2 * t2 / s1 : 0.0f;
        if (prism_rng_uniform(r) < trans) {
            st->dir = pv3_normalize(pv3_madd(pv3_scale(d, eta), f, eta * c1 - c2));
            if (oblique) {
                pv3 b = pv3_normalize(pv3_cross(st->dir, a));
                st->pol = pv3_madd(pv3_scale(b, t_p), a, t_s);
            }
            st->pol = prism_fix_polarisation(r, st->pol, st->dir);
            return 1;
        }
    }
    int kind = choose ? prism_g4_choose(s, r) : PRISM_G4_LOBE;
    uint32_t tir_bit = tir ? PRISM_TOTAL_INTERNAL : 0u;
    if (kind == PRISM_G4_BACKSCATTER || kind == PRISM_G4_LAMBERT) {
        *bits = prism_g4_reflect(st, kind, nn, f, r) | tir_bit;
        return 0;
    }
    pv3 m = kind == PRISM_G4_SPIKE ? nn : f;
    st->dir = pv3_normalize(prism_reflect(d, m));
    pv3 pol;
    if (tir) {
        pol = prism_g4_mirror_pol(e, f);
    } else if (oblique) {
        float r_s = t_s - e_s, r_p = nb / na * t_p - e_p;
        pv3 b = pv3_normalize(pv3_cross(st->dir, a));
        pol = pv3_madd(pv3_scale(b, r_p), a, r_s);
        if (!(pv3_dot(pol, pol) > 1e-12f)) /* zero amplitude: a Brewster-angle p photon */
            pol = prism_g4_mirror_pol(e, f);
    } else {
        pol = nb > na ? pv3_scale(e, -1.0f) : e;
    }
    st->pol = prism_fix_polarisation(r, pol, st->dir);
    *bits = PRISM_REFLECT_SPECULAR | tir_bit;
    return 0;
}

/* Geant4's DielectricDielectric: Fresnel events at facets until the
 * photon leaves the surface, a reflection that would go into the surface
 * meeting another facet, a crossing that comes back out meeting the
 * surface again from the far side (indices swapped). Returns the history
 * bits; the photon crossed when its direction is against nn. */
PRISM_HD uint32_t prism_g4_dielectric(prism_ray_state *st, pv3 nn, float n1, float n2,
                                      const prism_g4_surface *s, prism_rng *r)
{
    int rough = s->finish != PRISM_FINISH_POLISHED;
    int choose = rough && s->model == PRISM_SURFACE_MODEL_UNIFIED;
    pv3 n = nn;
    float na = n1, nb = n2;
    uint32_t bits = PRISM_REFRACT; /* crossed and came back, never reflected */
    PRISM_G4_LOOP
    for (int k = 0; k < PRISM_G4_MAX_FACETS; k++) {
        pv3 f = rough ? prism_g4_facet(s, st->dir, n, r) : n;
        int through = prism_g4_fresnel(st, n, f, na, nb, choose, s, r, &bits);
        float dn = pv3_dot(st->dir, n);
        if (through ? dn <= 0.0f : dn >= 0.0f)
            break;
        if (through) { /* came back out of the far side: meets it from there */
            n = pv3_scale(n, -1.0f);
            float t = na;
            na = nb;
            nb = t;
        }
    }
    return pv3_dot(st->dir, nn) < 0.0f ? PRISM_REFRACT : bits;
}

/* Geant4's DielectricMetal after the absorption: one reflection, or for a
 * lobe as many facets as it takes to leave the surface. */
PRISM_HD uint32_t prism_g4_metal(prism_ray_state *st, pv3 nn, const prism_g4_surface *s,
                                 prism_rng *r)
{
    int kind;
    if (s->model == PRISM_SURFACE_MODEL_GLISUR)
        kind = s->finish == PRISM_FINISH_GROUND ? PRISM_G4_LOBE : PRISM_G4_SPIKE;
    else
        kind = s->finish == PRISM_FINISH_POLISHED ? PRISM_G4_SPIKE : prism_g4_choose(s, r);
    if (kind != PRISM_G4_LOBE)
        return prism_g4_reflect(st, kind, nn, nn, r);
    PRISM_G4_LOOP
    for (int k = 0; k < PRISM_G4_MAX_FACETS; k++) {
        pv3 f = prism_g4_facet(s, st->dir, nn, r);
        prism_g4_reflect(st, PRISM_G4_LOBE, nn, f, r);
        if (pv3_dot(st->dir, nn) >= 0.0f)
            return PRISM_REFLECT_SPECULAR;
    }
    /* still into the surface: the macroscopic mirror takes it out */
    return prism_g4_reflect(st, PRISM_G4_SPIKE, nn, nn, r);
}

/* A surface of Geant4's glisur or unified model (prism_surface_is_geant4)
 * at unit normal nn against the photon: table t (prism_optics_surface_table)
 * read at grid point l; n1 the index on the photon's side, n2 the far
 * side's (read by the caller for dielectric_dielectric only). Returns the
 * history bit. */
PRISM_HD uint32_t prism_surface_geant4(prism_ray_state *st, pv3 nn, const prism_optics_view *o,
                                       const float *t, prism_optics_lerp l, prism_surface_params sp,
                                       float n1, float n2, prism_rng *r)
{
    prism_g4_surface s;
    s.model = sp.model;
    s.finish = sp.finish;
    s.sigma = sp.sigma_alpha;
    s.spike = s.lobe = s.back = 0.0f;
    if (sp.model == PRISM_SURFACE_MODEL_UNIFIED && sp.finish != PRISM_FINISH_POLISHED) {
        s.spike = prism_optics_surface_row(o, t, PRISM_SURF_SPECULAR_SPIKE, l);
        s.lobe = prism_optics_surface_row(o, t, PRISM_SURF_SPECULAR_LOBE, l);
        s.back = prism_optics_surface_row(o, t, PRISM_SURF_BACKSCATTER, l);
    }
    float detect = prism_optics_surface_row(o, t, PRISM_SURF_DETECT, l);
    float absorb = prism_optics_surface_row(o, t, PRISM_SURF_ABSORB, l);
    int back_painted = sp.type == PRISM_SURFACE_DIELECTRIC_DIELECTRIC &&
                       (sp.finish == PRISM_FINISH_POLISHED_BACKPAINTED ||
                        sp.finish == PRISM_FINISH_GROUND_BACKPAINTED);
    if (!back_painted) {
        float u = prism_rng_uniform(r);
        if (u < detect)
            return PRISM_SURFACE_DETECT;
        if (u < detect + absorb)
            return PRISM_SURFACE_ABSORB;
        if (sp.type == PRISM_SURFACE_DIELECTRIC_METAL)
            return prism_g4_metal(st, nn, &s, r);
        if (sp.finish == PRISM_FINISH_POLISHED_FRONTPAINTED)
            return prism_g4_reflect(st, PRISM_G4_SPIKE, nn, nn, r);
        if (sp.finish == PRISM_FINISH_GROUND_FRONTPAINTED)
            return prism_g4_reflect(st, PRISM_G4_LAMBERT, nn, nn, r);
        return prism_g4_dielectric(st, nn, n1, n2, &s, r);
    }
    /* Back-painted: Fresnel into the layer; what crossed meets the paint,
     * which takes 1-R and reflects the rest back through the layer. */
    float layer = prism_optics_surface_row(o, t, PRISM_SURF_RINDEX, l);
    if (!(layer > 0.0f))
        layer = n2;
    uint32_t bits = prism_g4_dielectric(st, nn, n1, layer, &s, r);
    if (pv3_dot(st->dir, nn) >= 0.0f)
        return bits; /* reflected off the layer's face */
    pv3 back = pv3_scale(nn, -1.0f);
    PRISM_G4_LOOP
    for (int k = 0; k < PRISM_G4_MAX_PAINT; k++) {
        float u = prism_rng_uniform(r);
        if (u < detect)
            return PRISM_SURFACE_DETECT;
        if (u < detect + absorb)
            return PRISM_SURFACE_ABSORB;
        uint32_t paint = prism_g4_reflect(
            st, sp.finish == PRISM_FINISH_GROUND_BACKPAINTED ? PRISM_G4_LAMBERT : PRISM_G4_SPIKE,
            nn, nn, r);
        prism_g4_dielectric(st, back, layer, n1, &s, r);
        if (pv3_dot(st->dir, nn) > 0.0f)
            return paint; /* out through the layer */
    }
    return PRISM_SURFACE_ABSORB; /* trapped between paint and layer */
}

/* prism_surface_geant4 as one call (PRISM_G4_ENTRY says why). The caller
 * hands it copies of the photon's state and stream made for the call (the
 * boundary is a step's last use of its stream, so the copy draws what the
 * original would have): the copies' addresses escape into the call, the
 * originals stay in registers. */
PRISM_G4_ENTRY uint32_t prism_surface_geant4_entry(prism_ray_state *st, pv3 nn,
                                                   const prism_optics_view *o, const float *t,
                                                   prism_optics_lerp l, prism_surface_params sp,
                                                   float n1, float n2, prism_rng *r)
{
    return prism_surface_geant4(st, nn, o, t, l, sp, n1, n2, r);
}

#endif
