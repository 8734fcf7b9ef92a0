/* A monotonic clock in seconds, for frame times and the benchmark. */
#ifndef VIEWER_CLOCK_H
#define VIEWER_CLOCK_H

double viewer_clock(void);

#endif
