/* prism-bench: headless benchmarks, one subcommand per stage. Each stage's
 * subcommand lives in its own file (bench_<stage>.c), registered by its
 * CMake fragment; a build without one says so. */
#include <stdio.h>
#include <string.h>

typedef int (*bench_fn)(int argc, char **argv);

int prism_bench_load(int argc, char **argv);
int prism_bench_bvh(int argc, char **argv);
int prism_bench_bvh_gpu(int argc, char **argv);
int prism_bench_upload(int argc, char **argv);
int prism_bench_render(int argc, char **argv);
int prism_bench_propagate(int argc, char **argv);
int prism_bench_run(int argc, char **argv);

static const struct {
    const char *name;
    bench_fn fn;
    const char *what;
} stages[] = {
#ifdef PRISM_BENCH_LOAD
    {"load", prism_bench_load, "COLLADA load: MB/s and triangles/s, Prism vs assimp"},
#endif
#ifdef PRISM_BENCH_BVH
    {"bvh", prism_bench_bvh, "BVH build and CPU rays/s, Prism vs Embree"},
#endif
#ifdef PRISM_BENCH_BVH_GPU
    {"bvh-gpu", prism_bench_bvh_gpu,
     "BVH built by CUDA vs the host: phases, SAH, rays/s, photons/s"},
#endif
#ifdef PRISM_BENCH_UPLOAD
    {"upload", prism_bench_upload, "geometry upload: GB/s per path and per placement policy"},
#endif
#ifdef PRISM_BENCH_RENDER
    {"render", prism_bench_render, "primary rays/s at 1920x1080, per placement and backend"},
#endif
#ifdef PRISM_BENCH_PROPAGATE
    {"propagate", prism_bench_propagate, "photons/s and steps/s, per placement and backend"},
#endif
#ifdef PRISM_BENCH_RUN
    {"run", prism_bench_run, "prism-propagate timed whole: one process, one a device, mpirun"},
#endif
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: prism-bench STAGE FILE.dae [options]   (prism-bench STAGE --help for options)\n"
            "stages:\n");
    for (size_t i = 0; stages[i].name; i++)
        fprintf(out, "  %-10s %s\n", stages[i].name, stages[i].what);
    fprintf(out, "Every stage prints a table; --json prints one JSON object instead.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; stages[i].name; i++)
        if (strcmp(argv[1], stages[i].name) == 0)
            return stages[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "prism-bench: unknown stage \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
