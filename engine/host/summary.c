/* The run's summary on the host backend (engine/launch/summary.h): the
 * threads count their share of the photons, then fold it in. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "engine/launch/summary.h"
#include "prism/device/photon.h"

prism_result prism__host_summary(prism_context *ctx, const prism_photon *photons, size_t count,
                                 prism_propagate_summary *s)
{
    const int threads = ctx != NULL && ctx->host_threads > 0 ? ctx->host_threads
                                                             : omp_get_max_threads();
    const size_t solids = s->solids;
#pragma omp parallel num_threads(threads)
    {
        prism_propagate_summary part;
        memset(&part, 0, sizeof part);
#pragma omp for schedule(static) nowait
        for (long long i = 0; i < (long long)count; i++) {
            const prism_photon *p = &photons[i];
            const uint32_t h = p->history;
            part.steps += p->steps;
            for (uint32_t rest = h; rest != 0; rest &= rest - 1) /* the set bits only */
                part.flagged[__builtin_ctz(rest)]++;
            const int e = prism_photon_ended(h);
            if (e >= 0)
                part.ended[e]++;
            if (isfinite(p->time)) {
                if (part.timed == 0 || p->time < part.time_min)
                    part.time_min = p->time;
                if (part.timed == 0 || p->time > part.time_max)
                    part.time_max = p->time;
                part.timed++;
            }
            if ((h & PRISM_SURFACE_DETECT) && s->detected_by_solid != NULL) {
                const size_t solid = p->solid < solids ? p->solid : solids;
#pragma omp atomic
                s->detected_by_solid[solid]++;
            }
        }
        /* named: an unnamed critical shares its lock with every other one
         * in the process, the embedder's included */
#pragma omp critical(prism_summary_merge)
        prism__summary_merge(s, &part);
    }
    s->photons += count;
    return PRISM_SUCCESS;
}
