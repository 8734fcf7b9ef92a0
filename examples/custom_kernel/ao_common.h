/* The host side both forms of the example share: the scene loaded and
 * uploaded by Prism, its device view, a camera framing it, the image
 * buffer, and the PNG at the end. Nothing here is CUDA: the forms differ
 * only in how the kernel is built and launched. */
#ifndef AO_COMMON_H
#define AO_COMMON_H

#include <stdint.h>

#include <prism/device_view.h>
#include <prism/memory.h>
#include <prism/prism.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ao_frame {
    prism_context *ctx;
    prism_scene *scene;
    prism_geometry *geometry;
    prism_device_view view;
    prism_buffer *image; /* width x height RGBA8, device memory */
    const char *output;  /* the PNG's path */
    unsigned width, height, peel, samples;
    float radius;
    float eye[3], forward[3], right[3], up[3]; /* right and up scaled by the field of view */
} ao_frame;

/* Parse `program scene.dae [out.png [width height [samples [peel]]]]`, make
 * a CUDA context, load and upload the scene. Returns 0, 77 when there is no
 * CUDA device (nothing to render), or 1 with the reason on stderr. */
int ao_open(int argc, char **argv, const char *default_output, ao_frame *f);
/* Read the image back and write the PNG. Returns 0 or 1. */
int ao_finish(ao_frame *f);
/* Release everything; returns 1 if the context reported a leak. */
int ao_close(ao_frame *f);
double ao_now(void);

#ifdef __cplusplus
}
#endif

#endif
