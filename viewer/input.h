/* What the user did since the last frame: mouse motion by button, wheel,
 * keys pressed (as characters) and keys held for flying. Filled by the
 * window's callbacks, read and cleared by the frame loop. */
#ifndef VIEWER_INPUT_H
#define VIEWER_INPUT_H

#include <stdbool.h>

#define VIEWER_KEY_ESCAPE 27
#define VIEWER_MAX_KEYS 32

typedef struct viewer_input {
    double orbit_dx, orbit_dy; /* left drag, pixels */
    double pan_dx, pan_dy;     /* right or middle drag, pixels */
    double scroll;             /* wheel steps, positive = in */
    int keys[VIEWER_MAX_KEYS]; /* pressed this frame: 'R', 'V', ' ', '[', ... */
    int key_count;
    bool fly_forward, fly_back, fly_left, fly_right; /* W S A D held */
    bool shift;                                      /* held: fly faster */
} viewer_input;

/* Forget this frame's events (held keys stay). */
void viewer_input_clear(viewer_input *in);
void viewer_input_push_key(viewer_input *in, int key);

#endif
