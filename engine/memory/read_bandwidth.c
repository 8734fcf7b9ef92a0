/* How fast the backend's "kernels" read a buffer: a read-only CUDA kernel
 * on the CUDA backend, OpenMP threads on the host backend (each backend's
 * read_bandwidth). Used by prism-bench upload to compare mapped with
 * device memory. */
#include "internal.h"

prism_result prism__memory_read_bandwidth(prism_context *ctx, const prism_buffer *b, int repeat,
                                          double *gbps)
{
    *gbps = 0;
    const void *p = prism_buffer_device_pointer(b);
    size_t bytes = prism_buffer_size(b) / 16 * 16;
    if (!p || bytes == 0 || repeat < 1)
        return prism__error(ctx, PRISM_ERROR_INVALID_ARGUMENT,
                            "read bandwidth: the buffer has no kernel pointer or is empty");
    double seconds = 0;
    prism_result r = ctx->be->read_bandwidth(ctx, p, bytes, repeat, &seconds);
    if (r == PRISM_SUCCESS)
        *gbps = seconds > 0 ? (double)bytes / seconds / 1e9 : 0;
    return r;
}
