/* Runtime compilation's CUDA side (engine/module/internal.h): NVRTC and the
 * runtime API's libraries.
 *
 * NVRTC is opened with dlopen rather than linked: libnvrtc.so belongs to
 * the CUDA toolkit, not the driver, so linking it would stop libprism from
 * loading on a machine with a driver only (DESIGN: one binary runs
 * everywhere), and it is a 100 MB library most programs never call. Its
 * functions are taken with the types nvrtc.h declares (__typeof__), so a
 * mismatch is a compile error here.
 *
 * Compiled code goes through cudaLibraryLoadData and cudaKernel_t, which
 * the runtime's launch and attribute calls accept, so Prism stays on the
 * statically linked runtime API with no driver API to link. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/module/headers.h"
#include "engine/module/internal.h"

#ifndef PRISM_NVRTC_SONAME
#define PRISM_NVRTC_SONAME "libnvrtc.so"
#endif

#define NVRTC_FUNCTIONS(X)                                                                         \
    X(nvrtcVersion)                                                                                \
    X(nvrtcGetNumSupportedArchs)                                                                   \
    X(nvrtcGetSupportedArchs)                                                                      \
    X(nvrtcGetErrorString)                                                                         \
    X(nvrtcCreateProgram)                                                                          \
    X(nvrtcDestroyProgram)                                                                         \
    X(nvrtcCompileProgram)                                                                         \
    X(nvrtcGetProgramLogSize)                                                                      \
    X(nvrtcGetProgramLog)                                                                          \
    X(nvrtcGetPTXSize)                                                                             \
    X(nvrtcGetPTX)                                                                                 \
    X(nvrtcGetCUBINSize)                                                                           \
    X(nvrtcGetCUBIN)

struct prism__nvrtc {
    void *library;
    char identity[4096 + 128];
    int major, minor;
    int *archs; /* ascending, as NVRTC lists them: 75 = sm_75 */
    int arch_count;
#define FIELD(f) __typeof__(&f) f;
    NVRTC_FUNCTIONS(FIELD)
#undef FIELD
};

static bool regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The NVRTC file to load, where it is found by path (engine/module/internal.h
 * gives the order); false when only the loader's search can find it. */
static bool locate(char *path, size_t size)
{
    const char *env = getenv("PRISM_NVRTC_LIBRARY");
    if (env != NULL && env[0] != 0) {
        if (strchr(env, '/') == NULL || !regular_file(env))
            return false;
        snprintf(path, size, "%s", env);
        return true;
    }
    const char *dirs = getenv("LD_LIBRARY_PATH");
    for (const char *d = dirs; d != NULL && *d != 0;) {
        const char *end = strchr(d, ':');
        const int n = end != NULL ? (int)(end - d) : (int)strlen(d);
        if (n > 0 && snprintf(path, size, "%.*s/%s", n, d, PRISM_NVRTC_SONAME) < (int)size &&
            regular_file(path))
            return true;
        d += n + (end != NULL);
    }
#ifdef PRISM_NVRTC_DIR
    if (snprintf(path, size, "%s/%s", PRISM_NVRTC_DIR, PRISM_NVRTC_SONAME) < (int)size &&
        regular_file(path))
        return true;
#endif
    return false;
}

/* A file's identity: real path, size, modification time, inode. */
static bool identify(const char *path, char *identity, size_t size)
{
    char real[4096];
    struct stat st;
    if (realpath(path, real) == NULL || stat(real, &st) != 0)
        return false;
    int n = snprintf(identity, size, "%s %lld %lld.%09ld %llu", real, (long long)st.st_size,
                     (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec,
                     (unsigned long long)st.st_ino);
    return n > 0 && (size_t)n < size;
}

bool prism__nvrtc_identify(char *identity, size_t size)
{
    char path[4096];
    return locate(path, sizeof path) && identify(path, identity, size);
}

const char *prism__nvrtc_identity(const prism__nvrtc *n)
{
    return n->identity;
}

static void *open_nvrtc(char *path, size_t path_size, char *tried, size_t tried_size)
{
    if (locate(path, path_size)) {
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h != NULL)
            return h;
        size_t len = 0;
        prism__appendf(tried, tried_size, &len, "%s (%s)", path, dlerror());
        return NULL;
    }
    path[0] = 0;
    const char *env = getenv("PRISM_NVRTC_LIBRARY");
    const char *names[3] = {env, PRISM_NVRTC_SONAME, "libnvrtc.so"};
    size_t len = 0;
    for (int i = env != NULL && env[0] != 0 ? 0 : 1; i < 3; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h != NULL)
            return h;
        prism__appendf(tried, tried_size, &len, "%s%s", len ? ", " : "", names[i]);
        if (i == 0)
            break; /* a name given is the only one tried */
    }
    return NULL;
}

prism_result prism__nvrtc_load(prism_context *ctx, prism__nvrtc **out)
{
    *out = NULL;
    char tried[1024] = "", path[4096];
    void *h = open_nvrtc(path, sizeof path, tried, sizeof tried);
    if (h == NULL)
        return prism__error(ctx, PRISM_ERROR_UNSUPPORTED,
                            "runtime compilation needs NVRTC (the CUDA toolkit's libnvrtc.so): "
                            "none loaded (tried %s; set PRISM_NVRTC_LIBRARY to its path)",
                            tried);
    prism__nvrtc *n = calloc(1, sizeof *n);
    if (n == NULL) {
        dlclose(h);
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "NVRTC: no memory");
    }
    n->library = h;
    const char *missing = NULL;
#define LOAD(f)                                                                                    \
    if ((n->f = (__typeof__(&f))dlsym(h, #f)) == NULL && missing == NULL)                          \
        missing = #f;
    NVRTC_FUNCTIONS(LOAD)
#undef LOAD
    /* found by the loader: its file is where the loader put it */
    Dl_info info;
    if (path[0] == 0 && missing == NULL && dladdr((void *)n->nvrtcVersion, &info) != 0 &&
        info.dli_fname != NULL)
        snprintf(path, sizeof path, "%s", info.dli_fname);
    if (!identify(path, n->identity, sizeof n->identity))
        snprintf(n->identity, sizeof n->identity, "%s (no file)", path);
    if (missing == NULL && n->nvrtcVersion(&n->major, &n->minor) == NVRTC_SUCCESS &&
        n->nvrtcGetNumSupportedArchs(&n->arch_count) == NVRTC_SUCCESS && n->arch_count > 0 &&
        (n->archs = calloc((size_t)n->arch_count, sizeof *n->archs)) != NULL &&
        n->nvrtcGetSupportedArchs(n->archs) == NVRTC_SUCCESS) {
        *out = n;
        return PRISM_SUCCESS;
    }
    prism__nvrtc_unload(n);
    return prism__error(ctx, PRISM_ERROR_UNSUPPORTED, "NVRTC loaded but unusable (%s)",
                        missing != NULL ? missing : "no versions or architectures");
}

void prism__nvrtc_unload(prism__nvrtc *n)
{
    if (n == NULL)
        return;
    free(n->archs);
    dlclose(n->library);
    free(n);
}

void prism__nvrtc_version(const prism__nvrtc *n, int *major, int *minor)
{
    *major = n->major;
    *minor = n->minor;
}

prism_result prism__nvrtc_target(prism_context *ctx, const prism__nvrtc *n, int major, int minor,
                                 char *arch, size_t arch_size, bool *cubin)
{
    const int want = major * 10 + minor;
    int best = 0;
    for (int i = 0; i < n->arch_count; i++) {
        if (n->archs[i] == want) {
            snprintf(arch, arch_size, "--gpu-architecture=sm_%d", want);
            *cubin = true;
            return PRISM_SUCCESS;
        }
        if (n->archs[i] < want && n->archs[i] > best)
            best = n->archs[i];
    }
    if (best == 0)
        return prism__error(ctx, PRISM_ERROR_UNSUPPORTED,
                            "NVRTC %d.%d compiles for sm_%d and newer; the device is sm_%d",
                            n->major, n->minor, n->archs[0], want);
    snprintf(arch, arch_size, "--gpu-architecture=compute_%d", best);
    *cubin = false;
    return PRISM_SUCCESS;
}

static char *program_log(const prism__nvrtc *n, nvrtcProgram p)
{
    size_t size = 0;
    if (n->nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS)
        size = 0;
    char *log = malloc(size + 1);
    if (log == NULL)
        return NULL;
    log[0] = 0;
    if (size > 0 && n->nvrtcGetProgramLog(p, log) != NVRTC_SUCCESS)
        log[0] = 0;
    log[size] = 0;
    return log;
}

static prism_result get_binary(const prism__nvrtc *n, nvrtcProgram p, bool cubin, void **binary,
                               size_t *size)
{
    size_t bytes = 0;
    nvrtcResult e = cubin ? n->nvrtcGetCUBINSize(p, &bytes) : n->nvrtcGetPTXSize(p, &bytes);
    if (e != NVRTC_SUCCESS || bytes == 0)
        return PRISM_ERROR_CUDA;
    char *b = malloc(bytes);
    if (b == NULL)
        return PRISM_ERROR_OUT_OF_MEMORY;
    e = cubin ? n->nvrtcGetCUBIN(p, b) : n->nvrtcGetPTX(p, b);
    if (e != NVRTC_SUCCESS) {
        free(b);
        return PRISM_ERROR_CUDA;
    }
    *binary = b;
    *size = bytes; /* PTX: its NUL included */
    return PRISM_SUCCESS;
}

prism_result prism__nvrtc_compile(prism_context *ctx, const prism__nvrtc *n, const char *source,
                                  const char *name, const char *arch, bool cubin,
                                  const char *const *options, size_t option_count, void **binary,
                                  size_t *size, char **log)
{
    *binary = NULL;
    *size = 0;
    *log = NULL;
    const size_t hc = prism__device_header_count;
    const char **texts = malloc(hc * sizeof *texts);
    const char **names = malloc(hc * sizeof *names);
    const char **opts = malloc((option_count + 1) * sizeof *opts);
    if (texts == NULL || names == NULL || opts == NULL) {
        free(texts);
        free(names);
        free(opts);
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "NVRTC: no memory");
    }
    for (size_t i = 0; i < hc; i++) {
        texts[i] = prism__device_headers[i].text;
        names[i] = prism__device_headers[i].name;
    }
    opts[0] = arch;
    for (size_t i = 0; i < option_count; i++)
        opts[i + 1] = options[i];
    nvrtcProgram p = NULL;
    nvrtcResult e = n->nvrtcCreateProgram(&p, source, name, (int)hc, texts, names);
    prism_result r = PRISM_SUCCESS;
    if (e != NVRTC_SUCCESS) {
        r = prism__error(ctx,
                         e == NVRTC_ERROR_OUT_OF_MEMORY ? PRISM_ERROR_OUT_OF_MEMORY
                                                        : PRISM_ERROR_CUDA,
                         "module \"%s\": nvrtcCreateProgram: %s", name, n->nvrtcGetErrorString(e));
    } else {
        e = n->nvrtcCompileProgram(p, (int)(option_count + 1), opts);
        *log = program_log(n, p);
        if (e == NVRTC_ERROR_COMPILATION || e == NVRTC_ERROR_INVALID_OPTION)
            r = PRISM_ERROR_COMPILE;
        else if (e != NVRTC_SUCCESS)
            r = prism__error(ctx, PRISM_ERROR_CUDA, "module \"%s\": nvrtcCompileProgram: %s", name,
                             n->nvrtcGetErrorString(e));
        else if ((r = get_binary(n, p, cubin, binary, size)) != PRISM_SUCCESS)
            r = prism__error(ctx, r, "module \"%s\": NVRTC gave no %s", name,
                             cubin ? "cubin" : "PTX");
        if (r == PRISM_ERROR_COMPILE && *log != NULL && (*log)[0] == 0 &&
            e == NVRTC_ERROR_INVALID_OPTION) {
            free(*log);
            *log = strdup("invalid compiler option\n");
        }
        n->nvrtcDestroyProgram(&p);
    }
    free(texts);
    free(names);
    free(opts);
    return r;
}

static prism_result cuda_error(prism_context *ctx, cudaError_t err, const char *what)
{
    cudaGetLastError();
    return prism__error(ctx, PRISM_ERROR_CUDA, "%s: %s", what, cudaGetErrorString(err));
}

prism_result prism__cuda_library_load(prism_context *ctx, const void *image, void **library)
{
    *library = NULL;
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    cudaLibrary_t lib = NULL;
    cudaError_t err = cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
    if (err != cudaSuccess)
        return cuda_error(ctx, err, "module: cudaLibraryLoadData");
    *library = lib;
    return PRISM_SUCCESS;
}

void prism__cuda_library_unload(prism_context *ctx, void *library)
{
    if (library == NULL || prism__cuda_bind(ctx) != PRISM_SUCCESS)
        return;
    /* no kernel of the library may still run when its code goes */
    cudaDeviceSynchronize();
    cudaLibraryUnload((cudaLibrary_t)library);
    cudaGetLastError();
}

prism_result prism__cuda_library_kernel(prism_context *ctx, void *library, const char *name,
                                        void **kernel, char *names, size_t names_size)
{
    *kernel = NULL;
    if (names_size > 0)
        names[0] = 0;
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    /* Looked up among the library's kernels by name rather than asked for,
     * so that a wrong name is an answer, not a CUDA error, and the message
     * can list the names there are. */
    unsigned count = 0;
    cudaError_t err = cudaLibraryGetKernelCount(&count, (cudaLibrary_t)library);
    cudaKernel_t *all = count > 0 && err == cudaSuccess ? calloc(count, sizeof *all) : NULL;
    if (err == cudaSuccess && count > 0 && all == NULL)
        return prism__error(ctx, PRISM_ERROR_OUT_OF_MEMORY, "module: no memory");
    if (err == cudaSuccess && count > 0)
        err = cudaLibraryEnumerateKernels(all, count, (cudaLibrary_t)library);
    size_t len = 0;
    for (unsigned i = 0; err == cudaSuccess && i < count && *kernel == NULL; i++) {
        const char *n = NULL;
        err = cudaFuncGetName(&n, (const void *)all[i]);
        if (err == cudaSuccess && n != NULL && strcmp(n, name) == 0)
            *kernel = all[i];
        else if (err == cudaSuccess && n != NULL)
            prism__appendf(names, names_size, &len, "%s%s", len ? ", " : "", n);
    }
    free(all);
    if (err != cudaSuccess)
        return cuda_error(ctx, err, "module: listing the kernels");
    return *kernel != NULL ? PRISM_SUCCESS : PRISM_ERROR_INVALID_ARGUMENT;
}

static unsigned or_one(unsigned v)
{
    return v != 0 ? v : 1u;
}

prism_result prism__cuda_kernel_launch(prism_context *ctx, void *kernel, const prism_launch *launch,
                                       void *stream, void **args, const char *what)
{
    prism_result r = prism__cuda_bind(ctx);
    if (r != PRISM_SUCCESS)
        return r;
    dim3 grid = {or_one(launch->grid[0]), or_one(launch->grid[1]), or_one(launch->grid[2])};
    dim3 block = {or_one(launch->block[0]), or_one(launch->block[1]), or_one(launch->block[2])};
    cudaError_t err = cudaLaunchKernel((const void *)kernel, grid, block, args,
                                       launch->shared_bytes, (cudaStream_t)stream);
    if (err == cudaSuccess && !launch->async)
        err = cudaStreamSynchronize((cudaStream_t)stream);
    if (err != cudaSuccess)
        return cuda_error(ctx, err, what);
    return PRISM_SUCCESS;
}
