/* The muon source's host code over views (engine/launch/gensteps_muon.c):
 * prism_gensteps_muon reads an uploaded geometry back into host views and
 * calls these; tests call them with views built by hand (a scintillator's
 * constants set directly in the tables). */
#ifndef PRISM_GENSTEPS_MUON_H
#define PRISM_GENSTEPS_MUON_H

#include "engine/context_internal.h"
#include "prism/device/geometry_view.h"
#include "prism/device/optics_view.h"
#include "prism/gensteps.h"

/* g, o: host memory (o may be NULL: no materials). */
prism_result prism__gensteps_muon_view(prism_context *ctx, const prism_geometry_view *g,
                                       const prism_optics_view *o, const prism_muon_desc *desc,
                                       prism_gensteps *out);
/* Frank-Tamm photons per metre (prism_cerenkov_photons_per_metre) on a
 * host optics view. */
double prism__cerenkov_per_metre(const prism_optics_view *o, uint32_t material, double charge,
                                 double beta, double wavelength_min, double wavelength_max);

#endif
