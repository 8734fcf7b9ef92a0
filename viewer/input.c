/* The per-frame input record. */
#include "input.h"

void viewer_input_clear(viewer_input *in)
{
    in->orbit_dx = in->orbit_dy = in->pan_dx = in->pan_dy = in->scroll = 0;
    in->key_count = 0;
}

void viewer_input_push_key(viewer_input *in, int key)
{
    if (in->key_count < VIEWER_MAX_KEYS)
        in->keys[in->key_count++] = key;
}
