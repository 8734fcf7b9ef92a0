/* What happens to a photon at one interaction, in the spirit of Chroma's
 * photon.h: Fresnel reflection or refraction with polarisation (total
 * internal reflection included), optical surfaces, Rayleigh scattering.
 * Each function takes the photon's direction and polarisation and a
 * random stream, and returns the new ones plus history bits. */
#ifndef PRISM_KERNELS_PHYSICS_H
#define PRISM_KERNELS_PHYSICS_H

#include "optics_view.h"
#include "source.h"

typedef struct prism_ray_state {
    pv3 dir, pol;
} prism_ray_state;

/* Specular reflection of unit d about unit n. */
PRISM_HD pv3 prism_reflect(pv3 d, pv3 n)
{
    return pv3_madd(d, n, -2.0f * pv3_dot(d, n));
}

/* A boundary without a surface between indices n1 (photon's side) and n2.
 * `nn` is the unit normal pointing back into the photon's side. Chroma's
 * scheme: the photon is s- or p-polarised with probability |pol.s|^2, then
 * reflects with that polarisation's Fresnel coefficient. At normal
 * incidence the plane of incidence is undefined: s is taken as pol, so no
 * 0/0 (both coefficients are then ((n1-n2)/(n1+n2))^2). */
PRISM_HD uint32_t prism_fresnel(prism_ray_state *st, pv3 nn, float n1, float n2, prism_rng *r)
{
    float cos1 = -pv3_dot(st->dir, nn);
    float eta = n1 / n2;
    float sin2_t = eta * eta * fmaxf(0.0f, 1.0f - cos1 * cos1);
    if (sin2_t >= 1.0f) {
        st->dir = pv3_normalize(prism_reflect(st->dir, nn));
        st->pol = prism_fix_polarisation(r, prism_reflect(st->pol, nn), st->dir);
        return PRISM_REFLECT_SPECULAR | PRISM_TOTAL_INTERNAL;
    }
    float cos2 = sqrtf(1.0f - sin2_t);
    pv3 s = pv3_cross(st->dir, nn);
    float sl = pv3_length(s);
    s = sl > 1e-6f ? pv3_scale(s, 1.0f / sl) : st->pol;
    float es = pv3_dot(st->pol, s);
    int s_polarised = prism_rng_uniform(r) <= es * es;
    float rc = s_polarised ? (n1 * cos1 - n2 * cos2) / (n1 * cos1 + n2 * cos2)
                           : (n2 * cos1 - n1 * cos2) / (n2 * cos1 + n1 * cos2);
    uint32_t flag;
    if (prism_rng_uniform(r) < rc * rc) {
        st->dir = pv3_normalize(prism_reflect(st->dir, nn));
        flag = PRISM_REFLECT_SPECULAR;
    } else {
        st->dir = pv3_normalize(pv3_madd(pv3_scale(st->dir, eta), nn, eta * cos1 - cos2));
        flag = PRISM_REFRACT;
    }
    st->pol = s_polarised ? s : prism_fix_polarisation(r, pv3_cross(s, st->dir), st->dir);
    return flag;
}

/* Lambertian direction about unit n. */
PRISM_HD pv3 prism_sample_lambert(prism_rng *r, pv3 n)
{
    float u = prism_rng_uniform(r), sin_phi, cos_phi;
    prism_sincos_turn(prism_rng_uniform(r), &sin_phi, &cos_phi);
    float c = sqrtf(u), s = sqrtf(fmaxf(0.0f, 1.0f - u));
    pv3 a = pv3_perpendicular(n), b = pv3_cross(n, a);
    return pv3_normalize(pv3_madd(pv3_madd(pv3_scale(n, c), a, s * cos_phi), b, s * sin_phi));
}

/* An optical surface with probabilities p[PRISM_SURF_*]; the remainder
 * transmits straight through. Returns the history bit of what happened. */
PRISM_HD uint32_t prism_surface_interact(prism_ray_state *st, pv3 nn, const float *p, prism_rng *r)
{
    float u = prism_rng_uniform(r);
    if ((u -= p[PRISM_SURF_DETECT]) < 0.0f)
        return PRISM_SURFACE_DETECT;
    if ((u -= p[PRISM_SURF_ABSORB]) < 0.0f)
        return PRISM_SURFACE_ABSORB;
    if ((u -= p[PRISM_SURF_REFLECT_SPECULAR]) < 0.0f) {
        st->dir = pv3_normalize(prism_reflect(st->dir, nn));
        st->pol = prism_fix_polarisation(r, prism_reflect(st->pol, nn), st->dir);
        return PRISM_REFLECT_SPECULAR;
    }
    if ((u -= p[PRISM_SURF_REFLECT_DIFFUSE]) < 0.0f) {
        st->dir = prism_sample_lambert(r, nn);
        st->pol = prism_sample_polarisation(r, st->dir);
        return PRISM_REFLECT_DIFFUSE;
    }
    return PRISM_SURFACE_TRANSMIT;
}

/* Rayleigh scattering of a polarised photon: new direction d' with density
 * proportional to 1 - (pol.d')^2 (a dipole along pol), by rejection from
 * isotropic directions (about 1.5 tries; bounded), new pol the old one
 * projected perpendicular to d'. */
PRISM_HD void prism_rayleigh(prism_ray_state *st, prism_rng *r)
{
    pv3 d = st->dir;
    for (int tries = 0; tries < 64; tries++) {
        d = prism_sample_cone(r, st->dir, -1.0f);
        float c = pv3_dot(st->pol, d);
        if (prism_rng_uniform(r) <= 1.0f - c * c)
            break;
    }
    st->dir = d;
    st->pol = prism_fix_polarisation(r, st->pol, d);
}

#endif
