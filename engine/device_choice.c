/* Device choice rules, as PyCUDA's make_default_context: $PRISM_DEVICE,
 * $CUDA_DEVICE, ~/.cuda-device, then every device in turn. */
#include "device_choice.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "3", " 3\n", "cuda:3" -> 3; anything else -> -1. */
static int parse_index(const char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    if (strncmp(text, "cuda:", 5) == 0)
        text += 5;
    if (!isdigit((unsigned char)*text))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(text, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (*end || errno || v > 1 << 20)
        return -1;
    return (int)v;
}

static void trimmed(const char *text, char *out, size_t size)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t n = strcspn(text, "\r\n");
    while (n && isspace((unsigned char)text[n - 1]))
        n--;
    if (n >= size)
        n = size - 1;
    memcpy(out, text, n);
    out[n] = 0;
}

prism_result prism__choose_device(const prism_device_sources *s, prism_device_choice *choice,
                                  char *message, size_t message_size)
{
    char value[128];
    const char *text = NULL;
    choice->index = -1;
    choice->source[0] = 0;
    if (message_size)
        message[0] = 0;

    if (s->argument) {
        text = s->argument;
        trimmed(text, value, sizeof value);
        snprintf(choice->source, sizeof choice->source, "device argument \"%s\"", value);
    } else if (s->prism_device && *s->prism_device) {
        text = s->prism_device;
        trimmed(text, value, sizeof value);
        snprintf(choice->source, sizeof choice->source, "PRISM_DEVICE=%s", value);
    } else if (s->cuda_device && *s->cuda_device) {
        text = s->cuda_device;
        trimmed(text, value, sizeof value);
        snprintf(choice->source, sizeof choice->source, "CUDA_DEVICE=%s", value);
    } else if (s->file_text) {
        text = s->file_text;
        trimmed(text, value, sizeof value);
        snprintf(choice->source, sizeof choice->source, "%s contains \"%s\"",
                 s->file_path ? s->file_path : "~/.cuda-device", value);
    } else {
        snprintf(choice->source, sizeof choice->source, "first usable device");
        return PRISM_SUCCESS;
    }

    int index = parse_index(text);
    if (index < 0) {
        snprintf(message, message_size, "%s: not a device index (expected 0, 1, ... or cuda:N)",
                 choice->source);
        return PRISM_ERROR_INVALID_DEVICE;
    }
    if (index >= s->device_count) {
        snprintf(message, message_size, "%s: out of range (%d CUDA device%s)", choice->source,
                 s->device_count, s->device_count == 1 ? "" : "s");
        return PRISM_ERROR_INVALID_DEVICE;
    }
    choice->index = index;
    return PRISM_SUCCESS;
}

void prism__device_sources_from_env(prism_device_sources *s, const char *argument, char *path_buf,
                                    size_t path_size, char *file_buf, size_t file_size)
{
    s->argument = argument;
    s->prism_device = getenv("PRISM_DEVICE");
    s->cuda_device = getenv("CUDA_DEVICE");
    s->file_path = NULL;
    s->file_text = NULL;
    const char *home = getenv("HOME");
    if (!home || !*home || path_size == 0 || file_size == 0)
        return;
    snprintf(path_buf, path_size, "%s/.cuda-device", home);
    s->file_path = path_buf;
    FILE *f = fopen(path_buf, "r");
    if (!f)
        return;
    size_t n = fread(file_buf, 1, file_size - 1, f);
    fclose(f);
    file_buf[n] = 0;
    s->file_text = file_buf;
}
