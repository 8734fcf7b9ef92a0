/* Device choice rules, as PyCUDA's make_default_context: $PRISM_DEVICE,
 * $CUDA_DEVICE, ~/.cuda-device, then every device in turn. */
#include "device_choice.h"

#include <ctype.h>
#include <stdbool.h>
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

/* False when the text does not fit `size` (cut there). */
static bool trimmed(const char *text, char *out, size_t size)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t n = strcspn(text, "\r\n");
    while (n && isspace((unsigned char)text[n - 1]))
        n--;
    const bool fits = n < size;
    if (!fits)
        n = size - 1;
    memcpy(out, text, n);
    out[n] = 0;
    return fits;
}

/* The first source that is set: its trimmed text in `value`, its name in
 * `source`; NULL when none is. *whole: false when the text is longer than
 * `value` holds (it is cut there). */
static const char *pick_source(const prism_device_sources *s, char *value, size_t value_size,
                               char *source, size_t source_size, bool *whole)
{
    const char *text = NULL, *name = NULL;
    if (s->argument) {
        text = s->argument;
        name = "device argument";
    } else if (s->prism_device && *s->prism_device) {
        text = s->prism_device;
        name = "PRISM_DEVICE";
    } else if (s->cuda_device && *s->cuda_device) {
        text = s->cuda_device;
        name = "CUDA_DEVICE";
    } else if (s->file_text) {
        text = s->file_text;
    } else {
        return NULL;
    }
    *whole = trimmed(text, value, value_size);
    if (name == NULL)
        snprintf(source, source_size, "%s contains \"%s\"",
                 s->file_path ? s->file_path : "~/.cuda-device", value);
    else if (s->argument)
        snprintf(source, source_size, "%s \"%s\"", name, value);
    else
        snprintf(source, source_size, "%s=%s", name, value);
    return text;
}

static int is_all(const char *value)
{
    return strcmp(value, "all") == 0;
}

/* A source's text longer than the rules read: refused, never cut. */
static prism_result too_long(const char *source, size_t limit, char *message, size_t message_size)
{
    snprintf(message, message_size, "%s: longer than %zu characters", source, limit);
    return PRISM_ERROR_INVALID_DEVICE;
}

/* "0", "0,1", "cuda:0, cuda:2", "all" into indices: the number of them,
 * or -1 with the message set. */
static int parse_list(const char *value, const char *source, int device_count, int *indices,
                      int capacity, char *message, size_t message_size)
{
    if (is_all(value)) {
        if (device_count <= 0) {
            snprintf(message, message_size, "%s: no CUDA device", source);
            return -1;
        }
        int n = device_count < capacity ? device_count : capacity;
        for (int i = 0; i < n; i++)
            indices[i] = i;
        return n;
    }
    char item[64];
    int n = 0;
    for (const char *at = value;; at++) {
        size_t len = strcspn(at, ",");
        if (len >= sizeof item)
            len = sizeof item - 1;
        memcpy(item, at, len);
        item[len] = 0;
        int index = parse_index(item);
        if (index < 0) {
            snprintf(message, message_size,
                     "%s: not a device index (expected 0, 1, ... or cuda:N; for several "
                     "devices a list such as 0,1, or all)",
                     source);
            return -1;
        }
        if (index >= device_count) {
            if (strchr(value, ',') == NULL)
                snprintf(message, message_size, "%s: out of range (%d CUDA device%s)", source,
                         device_count, device_count == 1 ? "" : "s");
            else
                snprintf(message, message_size, "%s: device %d out of range (%d CUDA device%s)",
                         source, index, device_count, device_count == 1 ? "" : "s");
            return -1;
        }
        if (n == capacity) {
            snprintf(message, message_size, "%s: more than %d devices", source, capacity);
            return -1;
        }
        indices[n++] = index;
        at = strchr(at, ',');
        if (at == NULL)
            return n;
    }
}

prism_result prism__choose_device(const prism_device_sources *s, prism_device_choice *choice,
                                  char *message, size_t message_size)
{
    char value[128];
    choice->index = -1;
    choice->source[0] = 0;
    if (message_size)
        message[0] = 0;
    bool whole = true;
    const char *text = pick_source(s, value, sizeof value, choice->source, sizeof choice->source,
                                   &whole);
    if (text == NULL) {
        snprintf(choice->source, sizeof choice->source, "first usable device");
        return PRISM_SUCCESS;
    }
    if (!whole)
        return too_long(choice->source, sizeof value - 1, message, message_size);
    /* A list names the devices of a multi-device run; one context takes
     * its first ("all": the first usable). */
    if (is_all(value))
        return PRISM_SUCCESS;
    int indices[PRISM_MAX_DEVICES];
    if (parse_list(value, choice->source, s->device_count, indices, PRISM_MAX_DEVICES, message,
                   message_size) < 0)
        return PRISM_ERROR_INVALID_DEVICE;
    choice->index = indices[0];
    return PRISM_SUCCESS;
}

prism_result prism__choose_devices(const prism_device_sources *s, int *indices, int capacity,
                                   int *count, char *message, size_t message_size)
{
    char value[128], source[256];
    *count = 0;
    if (message_size)
        message[0] = 0;
    bool whole = true;
    const char *text = pick_source(s, value, sizeof value, source, sizeof source, &whole);
    if (text == NULL) {
        snprintf(value, sizeof value, "all");
        snprintf(source, sizeof source, "every device");
    }
    if (!whole)
        return too_long(source, sizeof value - 1, message, message_size);
    int n = parse_list(value, source, s->device_count, indices, capacity, message, message_size);
    if (n < 0)
        return s->device_count > 0 ? PRISM_ERROR_INVALID_DEVICE : PRISM_ERROR_NO_DEVICE;
    *count = n;
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
