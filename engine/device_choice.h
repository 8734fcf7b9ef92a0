/* Which CUDA device a context uses when the caller names none: a pure
 * function of the sources (argument, environment, ~/.cuda-device) and the
 * device count, so its rules are tested without a GPU. */
#ifndef PRISM_DEVICE_CHOICE_H
#define PRISM_DEVICE_CHOICE_H

#include <stddef.h>

#include "prism/result.h"

#define PRISM_MAX_DEVICES 64

typedef struct prism_device_sources {
    const char *argument;     /* prism_context_desc.device */
    const char *prism_device; /* $PRISM_DEVICE */
    const char *cuda_device;  /* $CUDA_DEVICE */
    const char *file_path;    /* ~/.cuda-device, for messages */
    const char *file_text;    /* its contents, NULL if absent */
    int device_count;
} prism_device_sources;

typedef struct prism_device_choice {
    int index;        /* chosen device, or -1: try each in turn */
    char source[256]; /* "PRISM_DEVICE=1", "$HOME/.cuda-device contains \"0\"" */
} prism_device_choice;

/* The first source that is set decides. An invalid value from it (not an
 * integer, negative, out of range) gives PRISM_ERROR_INVALID_DEVICE and a
 * message naming the source in `message`; there is no fallback. */
prism_result prism__choose_device(const prism_device_sources *sources, prism_device_choice *choice,
                                  char *message, size_t message_size);

/* The devices of a multi-device run by the same rules: the first source
 * that is set holds one index, a list ("0,1", "cuda:0,cuda:1") or "all";
 * none set means every device. A list given to prism__choose_device gives
 * its first entry ("all": the first usable device). Indices may repeat
 * (two contexts on one device). PRISM_ERROR_INVALID_DEVICE (or NO_DEVICE
 * when there are no devices) with the source named in `message`. */
prism_result prism__choose_devices(const prism_device_sources *sources, int *indices, int capacity,
                                   int *count, char *message, size_t message_size);

/* Fill sources from the process: getenv and $HOME/.cuda-device. `file_buf`
 * holds the file's text. */
void prism__device_sources_from_env(prism_device_sources *sources, const char *argument,
                                    char *path_buf, size_t path_size, char *file_buf,
                                    size_t file_size);

#endif
