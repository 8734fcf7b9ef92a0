/* The optics tables on a CUDA device: one device buffer (in the ledger as
 * "optics.tables") that the optics view points into. */
#include "engine/upload/optics_tables.h"
#include "prism/memory.h"

prism_result prism__cuda_optics_upload(prism_context *ctx, prism_optics *optics)
{
    size_t bytes = (optics->host_floats > 0 ? optics->host_floats : 1) * sizeof(float);
    prism_buffer *b = NULL;
    prism_result r = prism_buffer_create_device(ctx, bytes, "optics.tables", &b);
    if (r == PRISM_SUCCESS && optics->host_floats > 0)
        r = prism_buffer_write(b, 0, optics->host, optics->host_floats * sizeof(float));
    if (r != PRISM_SUCCESS) {
        prism_buffer_release(b);
        return r;
    }
    prism__optics_layout(&optics->view, prism_buffer_device_pointer(b));
    optics->device_buffer = b;
    return PRISM_SUCCESS;
}

void prism__cuda_optics_release(prism_optics *optics)
{
    prism_buffer_release(optics->device_buffer);
    optics->device_buffer = NULL;
}
