/* prism-propagate's summary: photons per history bit and per way of
 * ending, detections per detecting solid (the top ones named), rates and
 * memory; as text or as one JSON object. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"
#include "propagate_ranks.h"
#include "propagate_tool.h"

#define TOP_SOLIDS 10
#define DETECT_BIT 2
_Static_assert(PRISM_SURFACE_DETECT == 1u << DETECT_BIT, "the detection bit");

int propagate_summary_init(propagate_summary *s, const prism_scene *scene)
{
    memset(s, 0, sizeof *s);
    s->solids = scene->solids_count;
    s->detected_by_solid = calloc(s->solids + 1, sizeof *s->detected_by_solid);
    return s->detected_by_solid != NULL ? 0 : -1;
}

void propagate_summary_free(propagate_summary *s)
{
    free(s->detected_by_solid);
    s->detected_by_solid = NULL;
    free(s->rank_io);
    free(s->rank_setup);
    s->rank_io = NULL;
    s->rank_setup = NULL;
}

/* The solids with the most detections, best first (ties: lower index). */
static size_t top_solids(const propagate_summary *s, size_t top[TOP_SOLIDS], size_t *detecting)
{
    size_t n = 0;
    *detecting = 0;
    for (size_t i = 0; i <= s->solids; i++) {
        const uint64_t c = s->detected_by_solid[i];
        if (c == 0)
            continue;
        (*detecting)++;
        size_t at = n < TOP_SOLIDS ? n++ : TOP_SOLIDS;
        while (at > 0 && s->detected_by_solid[top[at - 1]] < c) {
            if (at < TOP_SOLIDS)
                top[at] = top[at - 1];
            at--;
        }
        if (at < TOP_SOLIDS)
            top[at] = i;
    }
    return n;
}

static double fraction(uint64_t k, uint64_t n)
{
    return n > 0 ? (double)k / (double)n : 0.0;
}

static const char *solid_name(const prism_scene *scene, size_t i)
{
    return i < scene->solids_count && scene->solids[i].name ? scene->solids[i].name : "(unknown)";
}

static void source_words(const propagate_run_info *run, char *out, size_t size)
{
    const prism_photon_source *src = run->source;
    const propagate_options *o = run->opt;
    const prism_muon_desc *m = &o->muon_desc;
    if (src->kind == PRISM_SOURCE_GENSTEPS && o->muon)
        snprintf(out, size,
                 "muon at %g,%g,%g along %g,%g,%g, %g GeV: %zu gensteps, %llu Cerenkov and %llu "
                 "scintillation photons",
                 m->position[0], m->position[1], m->position[2], m->direction[0], m->direction[1],
                 m->direction[2], m->energy_gev, run->genstep_count,
                 (unsigned long long)run->cerenkov_photons,
                 (unsigned long long)run->scintillation_photons);
    else if (src->kind == PRISM_SOURCE_GENSTEPS)
        snprintf(out, size, "gensteps from %s: %zu gensteps of %llu photons", o->gensteps,
                 run->genstep_count, (unsigned long long)run->genstep_photons);
    else if (src->kind == PRISM_SOURCE_PHOTONS)
        snprintf(out, size, "photons from %s", o->photons);
    else if (src->kind == PRISM_SOURCE_BEAM)
        snprintf(out, size, "beam at %g,%g,%g along %g,%g,%g", src->position[0], src->position[1],
                 src->position[2], src->direction[0], src->direction[1], src->direction[2]);
    else
        snprintf(out, size, "point at %g,%g,%g", src->position[0], src->position[1],
                 src->position[2]);
    const size_t used = strlen(out);
    if ((src->kind == PRISM_SOURCE_POINT || src->kind == PRISM_SOURCE_BEAM) && used < size) {
        if (src->wavelength_max_nm > src->wavelength_nm)
            snprintf(out + used, size - used, ", %g to %g nm", src->wavelength_nm,
                     src->wavelength_max_nm);
        else
            snprintf(out + used, size - used, ", %g nm",
                     src->wavelength_nm > 0 ? src->wavelength_nm : 420.0);
    }
}

static double rate(const propagate_summary *s, double seconds)
{
    return seconds > 0 ? (double)s->photons / seconds : 0.0;
}

/* The ranks claimed batches from a shared cursor (rather than in turn). */
static bool claimed(const propagate_run_info *run)
{
    return run->ranked != NULL && propagate_ranks_claiming(run->ranked);
}

void propagate_summary_print(const propagate_summary *s, const propagate_run_info *run)
{
    const propagate_options *o = run->opt;
    char src[256];
    source_words(run, src, sizeof src);
    printf("prism-propagate %s: %llu photons (%s), seed %llu, %s backend, %u batch%s of up to "
           "%llu\n",
           o->file, (unsigned long long)s->photons, src, (unsigned long long)o->seed,
           prism_backend_name(prism_context_backend(run->ctx)), s->batches,
           s->batches == 1 ? "" : "es", (unsigned long long)s->batch);
    if (run->contexts_n > 1 || run->ranks > 1) {
        printf("  %zu context%s", run->contexts_n, run->contexts_n == 1 ? "" : "s");
        if (run->ranks > 1) /* which processes, and how they shared the batches */
            printf(" in each of %d %s (rank 0's shown), %s", run->ranks,
                   run->launcher == NULL || strcmp(run->launcher, "fork") != 0 ? "MPI ranks"
                   : o->processes_auto ? "processes (a device each)"
                                       : "processes (--processes)",
                   claimed(run) ? "each batch claimed by the first rank free"
                                : "batches taken in turn");
        printf(", geometry upload:");
        for (size_t i = 0; i < run->contexts_n; i++)
            printf(" %.3f s (%s)", run->upload_each[i],
                   prism_context_device(run->contexts[i])->name);
        printf("\n");
    }
    printf("  lengths: %s\n", run->scene->unit_rule);
    printf("  %-18s %12s %9s   %-14s %12s %9s\n", "history bit", "photons", "fraction", "ended by",
           "photons", "fraction");
    int rows[32], ends[32], nr = 0, ne = 0;
    for (int b = 0; b < 32; b++) {
        if (s->flagged[b])
            rows[nr++] = b;
        if (s->ended[b])
            ends[ne++] = b;
    }
    for (int i = 0; i < nr || i < ne; i++) {
        if (i < nr)
            printf("  %-18s %12llu %9.5f", prism_history_flag_name(1u << rows[i]),
                   (unsigned long long)s->flagged[rows[i]],
                   fraction(s->flagged[rows[i]], s->photons));
        else
            printf("  %-18s %12s %9s", "", "", "");
        if (i < ne)
            printf("   %-14s %12llu %9.5f", prism_history_flag_name(1u << ends[i]),
                   (unsigned long long)s->ended[ends[i]], fraction(s->ended[ends[i]], s->photons));
        printf("\n");
    }
    size_t top[TOP_SOLIDS], detecting = 0, n = top_solids(s, top, &detecting);
    const uint64_t detected = s->flagged[DETECT_BIT];
    printf("  detected %llu (%.5f) on %zu solid%s%s\n", (unsigned long long)detected,
           fraction(detected, s->photons), detecting, detecting == 1 ? "" : "s",
           n > 0 ? "; the most:" : "");
    for (size_t i = 0; i < n; i++) {
        printf("    %12llu  ", (unsigned long long)s->detected_by_solid[top[i]]);
        if (top[i] < s->solids)
            printf("solid %zu: %s, copy %d\n", top[i], solid_name(run->scene, top[i]),
                   run->scene->solids[top[i]].copy_number);
        else
            printf("a solid outside the scene's list\n");
    }
    printf("  %.3f s propagating: %.3f M photons/s, %.3f M steps/s; %.3f s in all with reading "
           "and writing (%.3f M photons/s)\n",
           s->propagate_seconds, rate(s, s->propagate_seconds) / 1e6,
           s->propagate_seconds > 0 ? (double)s->steps / s->propagate_seconds / 1e6 : 0.0,
           s->seconds, rate(s, s->seconds) / 1e6);
    const prism_propagate_stats *in = &s->inside;
    printf("  inside the calls (summed over the devices): %.3f s generating photons, %.3f s in "
           "the tail's %u of %u launches, %.3f s tallying; then %.3f s selecting and copying the "
           "hits\n",
           in->generate_seconds, in->tail_seconds, in->tail_launches, in->launches,
           in->tally_seconds, in->hits_seconds);
    printf("  between the calls: %.3f s to the first, %.3f s after the last (the last batch "
           "written, the files completed, buffers freed), %.3f s page-locking hits memory (the "
           "first while the first batch runs), %.3f s of the writer waiting for hits still "
           "crossing\n",
           s->stream_start_seconds, s->stream_finish_seconds, s->pin_seconds, s->hits_wait_seconds);
    printf("  %.3f s writing (overlapped with the devices), %.3f s of device time waiting for "
           "it, %.3f s closing the files; %.3f s before the run (start, load, upload)",
           s->write_seconds, s->wait_seconds, s->commit_seconds, run->setup_seconds);
    if (s->ranks > 0 && s->rank_setup[3] >= 0 && run->launcher != NULL &&
        strcmp(run->launcher, "mpirun") == 0) /* rank 0's launch */
        printf(", after mpirun's own %.2f s", s->rank_setup[3]);
    printf("\n");
    if (prism_context_backend(run->ctx) == PRISM_BACKEND_HOST) /* its "device" is the heap */
        printf("  memory: a batch %.1f MB for the kernels and %.1f MB of outputs, in host "
               "memory; the process's resident peak %.1f MB\n",
               s->device_batch_bytes / 1e6, s->host_batch_bytes / 1e6, s->host_peak_bytes / 1e6);
    else
        printf("  memory: a batch %.1f MB on the device, %.1f MB on the host; the engine's peak "
               "%.1f MB, the process's resident peak %.1f MB\n",
               s->device_batch_bytes / 1e6, s->host_batch_bytes / 1e6, s->engine_peak_bytes / 1e6,
               s->host_peak_bytes / 1e6);
    const char *paths[3] = {o->hits, o->out, o->records};
    const uint64_t counts[3] = {s->hits, s->out_rows, s->record_rows};
    const char *what[3] = {"hits", "final photons", "photons' step records"};
    for (int i = 0; i < 3; i++)
        if (paths[i])
            printf("  %s: %llu %s\n", paths[i], (unsigned long long)counts[i], what[i]);
}

static void json_counts(const char *key, const uint64_t *counts, uint64_t photons)
{
    printf(",\"%s\":{", key);
    for (int b = 0, first = 1; b < 32; b++)
        if (counts[b]) {
            printf("%s\"%s\":{\"photons\":%llu,\"fraction\":%.6g}", first ? "" : ",",
                   prism_history_flag_name(1u << b), (unsigned long long)counts[b],
                   fraction(counts[b], photons));
            first = 0;
        }
    printf("}");
}

static void json_outputs(const propagate_summary *s, const propagate_options *o)
{
    const char *keys[3] = {"hits", "out", "records"}, *paths[3] = {o->hits, o->out, o->records};
    const uint64_t rows[3] = {s->hits, s->out_rows, s->record_rows};
    printf(",\"outputs\":{");
    for (int i = 0, first = 1; i < 3; i++)
        if (paths[i]) {
            printf("%s\"%s\":{\"path\":", first ? "" : ",", keys[i]);
            tool_json_string(paths[i]);
            printf(",\"rows\":%llu}", (unsigned long long)rows[i]);
            first = 0;
        }
    printf("}");
}

void propagate_summary_json(const propagate_summary *s, const propagate_run_info *run)
{
    const propagate_options *o = run->opt;
    char src[256];
    source_words(run, src, sizeof src);
    printf("{\"file\":");
    tool_json_string(o->file);
    printf(",\"source\":");
    tool_json_string(src);
    if (run->source->kind == PRISM_SOURCE_GENSTEPS)
        printf(",\"gensteps\":{\"count\":%zu,\"photons\":%llu,\"cerenkov_photons\":%llu,"
               "\"scintillation_photons\":%llu}",
               run->genstep_count, (unsigned long long)run->genstep_photons,
               (unsigned long long)run->cerenkov_photons,
               (unsigned long long)run->scintillation_photons);
    printf(",\"photons\":%llu,\"seed\":%llu,\"backend\":\"%s\",\"device\":",
           (unsigned long long)s->photons, (unsigned long long)o->seed,
           prism_backend_name(prism_context_backend(run->ctx)));
    tool_json_string(prism_context_device(run->ctx)->name);
    if (run->opt->visible != NULL) /* what the run set, before CUDA started */
        printf(",\"cuda_visible_devices\":\"%s\"", run->opt->visible);
    if (run->opt->connections != NULL) /* likewise */
        printf(",\"cuda_device_max_connections\":\"%s\"", run->opt->connections);
    printf(",\"contexts\":%zu,\"ranks\":%d", run->contexts_n, run->ranks > 1 ? run->ranks : 1);
    if (run->ranks > 1 && run->launcher != NULL)
        printf(",\"launcher\":\"%s\",\"ranks_batches\":\"%s\"", run->launcher,
               claimed(run) ? "claimed" : "in turn");
    if (run->ranks > 1 && run->opt->processes_auto) /* not --processes: a device each */
        printf(",\"processes\":\"a device each\"");
    printf(",\"upload_seconds_each\":[");
    for (size_t i = 0; i < run->contexts_n; i++)
        printf("%s%.6g", i ? "," : "", run->upload_each[i]);
    printf("]");
    if (s->ranks > 0) { /* what each rank read and wrote to put the outputs together */
        const char *keys[8] = {"read_bytes",     "written_bytes", "photons",
                               "cpus",           "setup_seconds", "init_seconds",
                               "finish_seconds", "launch_seconds"};
        printf(",\"per_rank\":{");
        for (int k = 0; k < 8; k++) {
            printf("%s\"%s\":[", k ? "," : "", keys[k]);
            for (size_t r = 0; r < s->ranks; r++)
                if (k < 4)
                    printf("%s%llu", r ? "," : "", (unsigned long long)s->rank_io[4 * r + k]);
                else
                    printf("%s%.6g", r ? "," : "", s->rank_setup[4 * r + (size_t)(k - 4)]);
            printf("]");
        }
        printf("}");
    }
    printf(",\"unit_meter\":%.9g,\"unit_rule\":", run->scene->unit_meter);
    tool_json_string(run->scene->unit_rule);
    printf(",\"math\":\"%s\",\"no_rindex\":%s,\"batches\":%u,\"batch\":%llu,\"steps\":%llu",
           o->math == PRISM_PROPAGATE_MATH_FAST ? "fast" : "exact",
           run->no_rindex ? "true" : "false", s->batches, (unsigned long long)s->batch,
           (unsigned long long)s->steps);
    json_counts("history", s->flagged, s->photons);
    json_counts("ended", s->ended, s->photons);
    size_t top[TOP_SOLIDS], detecting = 0, n = top_solids(s, top, &detecting);
    printf(",\"detected\":{\"photons\":%llu,\"fraction\":%.6g,\"solids\":%zu,\"top\":[",
           (unsigned long long)s->flagged[DETECT_BIT], fraction(s->flagged[DETECT_BIT], s->photons),
           detecting);
    for (size_t i = 0; i < n; i++) {
        const prism_solid *solid = top[i] < s->solids ? &run->scene->solids[top[i]] : NULL;
        printf("%s{\"solid\":", i ? "," : "");
        if (solid != NULL) {
            printf("%zu,\"name\":", top[i]);
            tool_json_string(solid_name(run->scene, top[i]));
            printf(",\"path\":");
            tool_json_string(solid->path != NULL ? solid->path : "");
            printf(",\"copy\":%d", solid->copy_number);
        } else {
            printf("null");
        }
        printf(",\"photons\":%llu}", (unsigned long long)s->detected_by_solid[top[i]]);
    }
    printf("]},\"seconds\":{\"load\":%.6g,\"context\":%.6g,\"upload\":%.6g,\"setup\":%.6g,"
           "\"propagate\":%.6g,\"write\":%.6g,\"wait\":%.6g,\"commit\":%.6g,\"run\":%.6g,"
           "\"wall\":%.6g}",
           run->load_seconds, run->context_seconds, run->upload_seconds, run->setup_seconds,
           s->propagate_seconds, s->write_seconds, s->wait_seconds, s->commit_seconds, s->seconds,
           tool_now() - run->started);
    const prism_propagate_stats *in = &s->inside;
    printf(",\"inside\":{\"generate\":%.6g,\"tail\":%.6g,\"tally\":%.6g,\"hits\":%.6g,"
           "\"launches\":%u,\"tail_launches\":%u}",
           in->generate_seconds, in->tail_seconds, in->tally_seconds, in->hits_seconds,
           in->launches, in->tail_launches);
    printf(",\"stream\":{\"start\":%.6g,\"finish\":%.6g,\"pin\":%.6g,\"hits_wait\":%.6g}",
           s->stream_start_seconds, s->stream_finish_seconds, s->pin_seconds, s->hits_wait_seconds);
    printf(",\"photons_per_second\":%.6g,\"photons_per_second_overall\":%.6g",
           rate(s, s->propagate_seconds), rate(s, s->seconds));
    printf(",\"memory\":{\"device_batch_bytes\":%zu,\"host_batch_bytes\":%zu,"
           "\"engine_peak_bytes\":%zu,\"host_peak_bytes\":%zu}",
           s->device_batch_bytes, s->host_batch_bytes, s->engine_peak_bytes, s->host_peak_bytes);
    json_outputs(s, o);
    printf("}\n");
}
