/* Progress (progress.h): on a terminal one carriage-returned line,
 * redrawn when its permille changes, at most ten times a second; elsewhere
 * a plain line every `interval` seconds. */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BAR 12
#define LINE 79 /* the bar's line at its longest: it must not wrap on 80 columns */

double tool_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tool_duration_text(char *out, size_t size, double seconds)
{
    const long s = seconds > 0 && seconds < 1e9 ? lround(seconds) : 0;
    if (s >= 3600)
        snprintf(out, size, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, size, "%ld:%02ld", s / 60, s % 60);
}

void tool_bytes_text(char *out, size_t size, uint64_t bytes)
{
    static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
    double v = (double)bytes;
    int u = 0;
    for (; v >= 1000.0 && u < 6; u++)
        v /= 1000.0;
    snprintf(out, size, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
}

/* $PRISM_PROGRESS_INTERVAL: seconds >= 0, else the default. */
static double interval(void)
{
    const char *s = getenv("PRISM_PROGRESS_INTERVAL");
    char *end;
    errno = 0;
    const double v = s != NULL ? strtod(s, &end) : -1;
    return s != NULL && end != s && *end == 0 && errno == 0 && v >= 0 && v < 1e6
               ? v
               : TOOL_PROGRESS_INTERVAL;
}

void tool_progress_begin(tool_progress *p, const char *program, const char *label, const char *unit,
                         bool want)
{
    p->program = program;
    p->label = label;
    p->unit = unit;
    p->enabled = want;
    p->terminal = isatty(STDERR_FILENO);
    p->printed = false;
    p->last_permille = -1;
    p->start = tool_now();
    p->last_draw = p->terminal ? 0 : p->start;
    p->interval = interval();
    if (p->enabled && p->terminal && unit == NULL) /* a count's total comes with its update */
        tool_progress_update(p, 0, 1);
}

/* A count in the scale of `scale` ("1.05" of millions), with that scale's
 * letter in *letter. */
static double scaled(double total, const char **letter)
{
    *letter = total >= 1e9 ? " G" : total >= 1e6 ? " M" : total >= 1e3 ? " k" : "";
    return total >= 1e9 ? 1e9 : total >= 1e6 ? 1e6 : total >= 1e3 ? 1e3 : 1;
}

/* "1.2/3 M photons, 2.1 M/s, 0:01 left" */
static void counts(const tool_progress *p, size_t done, size_t total, double t, char *out,
                   size_t size)
{
    const char *letter, *rate_letter;
    const double scale = scaled((double)total, &letter);
    const double rate = t > 0 ? (double)done / t : 0;
    const double rate_scale = scaled(rate, &rate_letter);
    int n = snprintf(out, size, "%.4g/%.4g%s %s, %.3g%s/s", (double)done / scale,
                     (double)total / scale, letter, p->unit, rate / rate_scale, rate_letter);
    if (done > 0 && done < total && n > 0 && (size_t)n < size) {
        char left[32];
        tool_duration_text(left, sizeof left, (double)(total - done) / rate);
        snprintf(out + n, size - (size_t)n, ", %s left", left);
    }
}

static void draw_bar(tool_progress *p, int permille, size_t done, size_t total, double t)
{
    char bar[BAR + 1], text[160] = "";
    int filled = permille * BAR / 1000;
    for (int i = 0; i < BAR; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[BAR] = 0;
    if (p->unit != NULL)
        counts(p, done, total, t - p->start, text, sizeof text);
    /* "propagating  [####........]  37.5%  1.5/4 M photons, 1.26 M/s, 0:02 left" */
    fprintf(stderr, "\r%-12s [%s] %5.1f%%%s%-*s", p->label, bar, permille / 10.0,
            text[0] ? "  " : "", text[0] ? (int)(LINE - BAR - 25) : 0, text);
    fflush(stderr);
}

static void plain_line(tool_progress *p, int permille, size_t done, size_t total, double t)
{
    char text[160] = "";
    if (p->unit != NULL)
        counts(p, done, total, t - p->start, text, sizeof text);
    fprintf(stderr, "%s: %s %.1f%%%s%s\n", p->program, p->label, permille / 10.0,
            text[0] ? ": " : "", text);
    fflush(stderr);
    p->printed = true;
}

bool tool_progress_update(void *user, size_t done, size_t total)
{
    tool_progress *p = user;
    if (!p->enabled || total == 0)
        return true;
    if (done > total)
        done = total;
    const int permille = (int)((double)done / (double)total * 1000.0);
    const double t = tool_now();
    if (!p->terminal) {
        if (done < total && t - p->last_draw >= p->interval) {
            p->last_draw = t;
            plain_line(p, permille, done, total, t);
        }
        return true;
    }
    if (permille == p->last_permille || (permille < 1000 && t - p->last_draw < 0.1))
        return true;
    p->last_permille = permille;
    p->last_draw = t;
    draw_bar(p, permille, done, total, t);
    return true;
}

void tool_progress_note(tool_progress *p, const char *fmt, ...)
{
    if (!p->enabled)
        return;
    if (p->terminal && p->last_permille >= 0)
        fprintf(stderr, "\r%*s\r", LINE, ""); /* the bar comes back at its next update */
    p->last_permille = -1;
    if (p->terminal)
        p->last_draw = 0;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", p->program);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
}

void tool_progress_end(tool_progress *p, const char *note)
{
    if (!p->enabled)
        return;
    const bool has_note = note != NULL && note[0] != 0;
    if (!p->terminal) {
        if (p->printed && has_note)
            fprintf(stderr, "%s: %s: %s\n", p->program, p->label, note);
        else if (p->printed)
            fprintf(stderr, "%s: %s: done in %.1f s\n", p->program, p->label,
                    tool_now() - p->start);
        return;
    }
    if (p->unit == NULL) /* the caller's counts stay as last drawn */
        tool_progress_update(p, 1, 1);
    if (p->last_permille >= 0) /* else no bar is on the line */
        fprintf(stderr, "%s%s\n", has_note ? "  " : "", has_note ? note : "");
}
