/* The fold of one summary into another (see summary.h). */
#include "summary.h"

void prism__summary_merge(prism_propagate_summary *into, const prism_propagate_summary *add)
{
    into->photons += add->photons;
    into->steps += add->steps;
    for (int b = 0; b < 32; b++) {
        into->flagged[b] += add->flagged[b];
        into->ended[b] += add->ended[b];
    }
    if (into->detected_by_solid != NULL && add->detected_by_solid != NULL)
        for (size_t i = 0; i <= into->solids && i <= add->solids; i++)
            into->detected_by_solid[i] += add->detected_by_solid[i];
    if (add->timed > 0) {
        if (into->timed == 0 || add->time_min < into->time_min)
            into->time_min = add->time_min;
        if (into->timed == 0 || add->time_max > into->time_max)
            into->time_max = add->time_max;
        into->timed += add->timed;
    }
}
