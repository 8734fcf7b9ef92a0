/* Ambient occlusion, runtime-compiled: ao_kernel.cuh read at run time and
 * compiled by prism_module_compile for the context's device (NVRTC, with
 * prism/device.cuh inside the library), then launched with
 * prism_function_launch. A second run finds the module in the disk cache
 * ($PRISM_CACHE_DIR, else ~/.cache/prism/kernels) and compiles nothing;
 * edit the kernel and the next run compiles again.
 *
 *   ao_nvrtc scene.dae [out.png [width height [samples [peel]]]]
 *
 * $AO_KERNEL names another kernel file (default: the one built with it). */
#include <stdio.h>
#include <stdlib.h>

#include <prism/module.h>

#include "ao_common.h"

#ifndef AO_KERNEL_FILE
#define AO_KERNEL_FILE "ao_kernel.cuh"
#endif

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *text = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)n + 1)) != NULL) {
        text[fread(text, 1, (size_t)n, f)] = 0;
    }
    fclose(f);
    return text;
}

int main(int argc, char **argv)
{
    ao_frame f;
    int r = ao_open(argc, argv, "ao_nvrtc.png", &f);
    if (r != 0 || f.ctx == NULL)
        return r;
    const char *path = getenv("AO_KERNEL") != NULL ? getenv("AO_KERNEL") : AO_KERNEL_FILE;
    char *source = read_text(path);
    if (source == NULL) {
        fprintf(stderr, "%s: cannot read the kernel %s\n", argv[0], path);
        ao_close(&f);
        return 1;
    }
    /* the kernel's source is compiled (or found in a cache) here */
    prism_module_options options = {.name = "ao_kernel.cuh"};
    prism_module *module = NULL;
    prism_function *kernel = NULL;
    const double t0 = ao_now();
    prism_result pr = prism_module_compile(f.ctx, source, &options, &module);
    const double compile_seconds = ao_now() - t0;
    free(source);
    if (pr == PRISM_SUCCESS)
        pr = prism_module_function(module, "ambient_occlusion", &kernel);
    if (pr != PRISM_SUCCESS) {
        fprintf(stderr, "%s: %s\n", argv[0], prism_context_last_error(f.ctx));
        prism_module_release(module);
        ao_close(&f);
        return 1;
    }
    prism_module_stats st;
    prism_module_cache_stats(f.ctx, &st);

    /* the arguments in the kernel's order, each by its address; a float3
     * is three floats */
    void *image = prism_buffer_device_pointer(f.image);
    unsigned long long seed = 1;
    void *args[] = {&f.view,   f.eye,   f.forward,  f.right,   f.up,  &f.width,
                    &f.height, &f.peel, &f.samples, &f.radius, &seed, &image};
    prism_launch launch = {.grid = {(f.width + 15) / 16, (f.height + 15) / 16}, .block = {16, 16}};
    const double t1 = ao_now();
    pr = prism_function_launch(kernel, &launch, args);
    const double render_seconds = ao_now() - t1;
    if (pr != PRISM_SUCCESS)
        fprintf(stderr, "%s: %s\n", argv[0], prism_context_last_error(f.ctx));
    printf("ao_nvrtc: %ux%u, %u samples, compile call %.4f s (%s), render %.1f ms, %s\n", f.width,
           f.height, f.samples, compile_seconds,
           st.disk_hits  ? "from the disk cache"
           : st.compiles ? "compiled by NVRTC"
                         : "from memory",
           1e3 * render_seconds, f.output);
    r = pr != PRISM_SUCCESS || ao_finish(&f);
    prism_module_release(module);
    return ao_close(&f) || r;
}
