/* prism-view's command line: every option, its checks and the --help text.
 * A mistake gives one line naming the option and what was expected. */
#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void viewer_options_usage(FILE *out)
{
    fputs("usage: prism-view [options] FILE.dae\n"
          "\n"
          "Shows a COLLADA (G4DAE) detector and the optical photons propagated\n"
          "through it: a raster or ray-traced view in a window, or headless.\n"
          "\n"
          "options:\n"
          "  --headless              no window: an EGL context rendering into an\n"
          "                          offscreen framebuffer (the default when there is\n"
          "                          no display)\n"
          "  --size WxH              image size in pixels (default 1024x768)\n"
          "  --frames N              stop after N frames (headless default 1)\n"
          "  --screenshot out.png    write the last frame to a PNG file\n"
          "  --photons N             photons to propagate (default 10000, 0 = none)\n"
          "  --source point:x,y,z    isotropic point source (metres)\n"
          "  --source beam:x,y,z,dx,dy,dz[,radius[,divergence]]\n"
          "                          a disc of radius (m) at x,y,z shining along\n"
          "                          dx,dy,dz with a half-angle divergence (degrees)\n"
          "                          (default: a point at the scene's centre)\n"
          "  --mode vbo|copy         photons written straight into the GL vertex\n"
          "                          buffer (vbo, needs interop) or copied through\n"
          "                          host memory (copy); default vbo when interop\n"
          "                          works, else copy\n"
          "  --view raster|raytrace  start in this view (default raster)\n"
          "  --camera ex,ey,ez,tx,ty,tz,ux,uy,uz,fov\n"
          "                          eye, target, up and vertical field of view\n"
          "                          (degrees); default: framed on the scene\n"
          "  --backend auto|cuda|host  engine backend (default auto)\n"
          "  --placement auto|device|mapped|chroma\n"
          "                          where the geometry arrays go (default auto)\n"
          "  --reserve MB            device memory left free by placement\n"
          "                          (default: the engine's, 300 MB)\n"
          "  --bvh auto|host|cuda    who builds the BVH: auto (default) builds it on\n"
          "                          the CUDA device from the uploaded triangles, or\n"
          "                          on the host (all cores) with the host backend or\n"
          "                          too little device memory\n"
          "  --unit m|cm|mm|auto     the unit of the file's lengths (default auto:\n"
          "                          its <unit>; without one, mm for a Geant4\n"
          "                          export, else m); the rule that decided is\n"
          "                          printed at load\n"
          "  --show-world            draw the world volume too: the outermost solid\n"
          "                          that encloses the others (a closed box around\n"
          "                          the detector), hidden by default in both views\n"
          "  --bench                 headless benchmark: median time of each stage\n"
          "  --json                  with --bench: one JSON object on stdout\n"
          "  --help                  this text\n"
          "\n"
          "keys (window):\n"
          "  left drag orbit, right/middle drag pan, wheel zoom, W A S D fly,\n"
          "  R raster / ray-traced / ray-traced x-ray, V VBO/copy photons,\n"
          "  P propagate again,\n"
          "  space pause, [ ] scrub time, F filter photons by history flag,\n"
          "  G show / hide the world volume,\n"
          "  H help overlay, S screenshot (tap; held, S flies back), Esc quit\n"
          "\n"
          "environment:\n"
          "  PRISM_VIEW_HUD=0        no HUD text (pictures to compare)\n"
          "  PRISM_VIEW_KEYS=RF      press these keys, one a frame from the second\n"
          "                          frame on (scripted runs, tests)\n"
          "  PRISM_VIEW_VERBOSE=1    say which GL context and interop are in use\n"
          "  PRISM_VIEW_SHARE_GEOMETRY=0  keep the engine's own copy of the vertices\n"
          "  PRISM_VIEW_PREWARM=0    do not start CUDA on its own thread at start-up\n"
          "  PRISM_VIEW_PBO_COPY=1   copy the ray-traced image into a texture before drawing\n"
          "                          instead of reading the raster view's GL buffer\n"
          "                          (faster launches, 12 bytes a vertex more)\n"
          "  PRISM_VIEW_BVH_THREADS=N  threads of the load and BVH build (default:\n"
          "                          from 4 cores, all but one, left to GL and CUDA)\n"
          "  PRISM_EGL_PLATFORM=device|surfaceless  force the headless EGL platform\n"
          "  PRISM_TRAVERSAL=wide|binary  the tree the kernels walk (default: wide where\n"
          "                          faster); PRISM_WIDE_COLLAPSE=host, PRISM_BVH_VALIDATE=1,\n"
          "                          PRISM_BVH_RADIUS=8, PRISM_BVH_TAIL=N: the engine's\n"
          "                          debugging and tuning settings (README)\n"
          "  PRISM_LOAD_TRACE=1, PRISM_UPLOAD_TRACE=1, PRISM_BVH_TRACE=1  each stage's\n"
          "                          time of the load, the upload, the GPU BVH build\n"
          "\n"
          "exit status: 0 success, 1 failure (file, GL, engine), 2 bad command line\n",
          out);
}

static int parse_size(const char *s, int *w, int *h)
{
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X') || errno)
        return -1;
    const char *rest = end + 1;
    long b = strtol(rest, &end, 10);
    if (end == rest || *end || errno || a < 1 || b < 1 || a > 16384 || b > 16384)
        return -1;
    *w = (int)a;
    *h = (int)b;
    return 0;
}

static int parse_camera(const char *s, viewer_options *o)
{
    float v[10];
    if (tool_parse_floats(s, v, 10, 10) != 10 || v[9] <= 0 || v[9] >= 180)
        return -1;
    memcpy(o->eye, v, sizeof o->eye);
    memcpy(o->target, v + 3, sizeof o->target);
    memcpy(o->up, v + 6, sizeof o->up);
    o->fov = v[9];
    o->camera_given = true;
    return 0;
}

static const char *const VIEW_NAMES[] = {"raster", "raytrace", NULL};
static const char *const MODE_NAMES[] = {"vbo", "copy", NULL};
static const char *const VALUED[] = {"--size",    "--frames",    "--screenshot", "--photons",
                                     "--source",  "--mode",      "--view",       "--camera",
                                     "--backend", "--placement", "--reserve",    "--bvh",
                                     "--unit",    NULL};

/* One option that takes a value. Returns 0, or -1 with the message set. */
static int parse_valued(void *user, const char *opt, const char *val, char *err, size_t size)
{
    viewer_options *o = user;
    int c = tool_parse_engine_option(&o->engine, opt, val, err, size);
    if (c != 1)
        return c;
    if (!strcmp(opt, "--size")) {
        if (parse_size(val, &o->width, &o->height))
            return tool_fail(err, size, "--size: expected WxH (1..16384), got '%s'", val);
    } else if (!strcmp(opt, "--frames")) {
        if (tool_parse_long(val, 1, &o->frames))
            return tool_fail(err, size, "--frames: expected a positive integer, got '%s'", val);
    } else if (!strcmp(opt, "--screenshot")) {
        o->screenshot = val;
    } else if (!strcmp(opt, "--photons")) {
        if (tool_parse_long(val, 0, &o->photons))
            return tool_fail(err, size, "--photons: expected an integer >= 0, got '%s'", val);
    } else if (!strcmp(opt, "--mode")) {
        if ((c = tool_parse_choice(val, MODE_NAMES)) < 0)
            return tool_fail(err, size, "--mode: expected vbo or copy, got '%s'", val);
        o->mode = (viewer_photon_mode)c;
        o->mode_given = true;
    } else if (!strcmp(opt, "--view")) {
        if ((c = tool_parse_choice(val, VIEW_NAMES)) < 0)
            return tool_fail(err, size, "--view: expected raster or raytrace, got '%s'", val);
        o->view = (viewer_view)c;
    } else if (!strcmp(opt, "--camera")) {
        if (parse_camera(val, o))
            return tool_fail(err, size,
                             "--camera: expected ten numbers "
                             "eye(3),target(3),up(3),fov(0..180), got '%s'",
                             val);
    } else if (!strcmp(opt, "--reserve")) {
        char *end;
        errno = 0;
        o->reserve_mb = strtod(val, &end);
        if (end == val || *end || errno || !(o->reserve_mb >= 0) || o->reserve_mb > 1e9)
            return tool_fail(err, size, "--reserve: expected megabytes >= 0, got '%s'", val);
    } else {
        return 1; /* not a valued option */
    }
    return 0;
}

static void set_defaults(viewer_options *o)
{
    memset(o, 0, sizeof *o);
    o->width = 1024;
    o->height = 768;
    o->photons = 10000;
    o->reserve_mb = -1;
}

static bool is_flag(void *user, const char *a)
{
    viewer_options *o = user;
    if (!strcmp(a, "--headless"))
        o->headless = o->headless_forced = true;
    else if (!strcmp(a, "--show-world"))
        o->show_world = true;
    else if (!strcmp(a, "--bench"))
        o->bench = true;
    else if (!strcmp(a, "--json"))
        o->json = true;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
        o->help = true;
    else
        return false;
    return true;
}

int viewer_options_parse(int argc, char **argv, viewer_options *o, char *err, size_t size)
{
    set_defaults(o);
    const tool_args args = {VALUED, is_flag, parse_valued, o, &o->file, "file"};
    if (tool_args_parse(argc, argv, &args, err, size))
        return -1;
    if (o->help)
        return 0;
    if (!o->file)
        return tool_fail(err, size, "no FILE.dae given (see --help)");
    if (o->json && !o->bench)
        return tool_fail(err, size, "--json goes with --bench");
    if (o->bench)
        o->headless = true;
    return 0;
}
