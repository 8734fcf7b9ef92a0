/* prism-propagate's command line: every option, its checks and the --help
 * text. A mistake gives one line naming the option and what was expected. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "propagate_tool.h"

void propagate_options_usage(FILE *out)
{
    fputs("usage: prism-propagate DETECTOR.dae [options]\n"
          "\n"
          "Propagates optical photons through a COLLADA (G4DAE) detector and keeps\n"
          "the result as NumPy .npy files: the photons that were detected (hits),\n"
          "every final photon, and step records. Prints a summary: photons per\n"
          "history flag, how they ended, detections per detecting solid, photons/s.\n"
          "\n"
          "photons in (one of):\n"
          "  --photons in.npy        photons from a file: float32, shape (N,4,4), the\n"
          "                          layout below (pos, time, dir, wavelength, pol are\n"
          "                          read; dir is normalised, pol made perpendicular)\n"
          "  --source point:x,y,z    isotropic point (metres); the default is a point\n"
          "                          at the detector's centre\n"
          "  --source beam:x,y,z,dx,dy,dz[,radius[,divergence]]\n"
          "                          a disc of radius (m) at x,y,z shining along\n"
          "                          dx,dy,dz, divergence a half-angle in degrees\n"
          "  --wavelength NM|MIN:MAX the point or beam source's wavelength, or a\n"
          "                          uniform spectrum between MIN and MAX (nm;\n"
          "                          default 420)\n"
          "  --gensteps in.npy       Cerenkov and scintillation photons made on the\n"
          "                          device from gensteps: float32, shape (N,6,4),\n"
          "                          Opticks's layout in metres and ns (below)\n"
          "  --source muon:x,y,z,dx,dy,dz,energy\n"
          "                          a muon's gensteps: a straight track from x,y,z\n"
          "                          (m) along dx,dy,dz of total energy (GeV) through\n"
          "                          the detector, Cerenkov light in 200-800 nm where\n"
          "                          beta n > 1, scintillation (2 MeV/cm) where a\n"
          "                          material has a yield; energy loss not followed\n"
          "  --save-gensteps g.npy   write the gensteps of the run, (N,6,4)\n"
          "  --count N               photons (default 1000000; with --photons the\n"
          "                          file's first N, default all; with gensteps their\n"
          "                          first N, default all of theirs; 1e9 is fine)\n"
          "\n"
          "outputs (written atomically: nothing appears unless the run succeeds;\n"
          "checked before the detector is loaded: each can be created where it is\n"
          "named, and the disk has room for --out and --records):\n"
          "  --hits hits.npy         photons that ended with SURFACE_DETECT, (H,4,4)\n"
          "  --out photons.npy       every final photon, (N,4,4)\n"
          "  --records rec.npy       step records, (N,K,8) float32 (prism_step_record:\n"
          "                          x, y, z, t, history, wavelength, photon, step)\n"
          "  --record-steps K        records per photon (default 16, at most 1024)\n"
          "  --json                  the summary as one JSON object on stdout\n"
          "\n"
          "propagation:\n"
          "  --seed S                random seed (default 0); the same seed and input\n"
          "                          give the same files, byte for byte, whatever the\n"
          "                          batch size and (with --math exact) the backend\n"
          "  --max-steps N           interactions per photon (default 100)\n"
          "  --backend auto|cuda|host  engine backend (default auto: CUDA if a device)\n"
          "  --placement auto|device|mapped|chroma\n"
          "                          where the geometry arrays go (default auto)\n"
          "  --bvh auto|host|cuda    who builds the BVH (default auto: the device)\n"
          "  --unit m|cm|mm|auto     the unit of the file's lengths (default auto: its\n"
          "                          <unit>; without one, mm for a Geant4 export, else m)\n"
          "  --math exact|fast       CUDA arithmetic: exact (default) is the host's,\n"
          "                          bit for bit; fast uses the GPU's approximate\n"
          "                          functions and agrees only statistically\n"
          "  --batch N               photons a batch (default: what the device memory\n"
          "                          left by the geometry holds, at most 33554432 on\n"
          "                          CUDA and 1048576 on the host); host memory grows\n"
          "                          with the batch, not with the run\n"
          "  --devices all|0,1       spread the batches over several CUDA devices, a\n"
          "                          process each (a device may repeat: two contexts\n"
          "                          on one, in one process); the same files as one\n"
          "                          device, byte for byte.\n"
          "                          Default: $PRISM_DEVICE when it holds a list,\n"
          "                          else one device. With --backend host, as many\n"
          "                          host contexts as the list names (for tests).\n"
          "                          CUDA starts only the devices a run names (an MPI\n"
          "                          rank: its own), through CUDA_VISIBLE_DEVICES,\n"
          "                          unless that is set already; and 4 work queues\n"
          "                          a context (CUDA_DEVICE_MAX_CONNECTIONS, unless\n"
          "                          set), which start sooner than CUDA's 8\n"
          "  --processes N           run as N processes (1 to 64) that share the run\n"
          "                          as mpirun's ranks do: process k takes entry k of\n"
          "                          the device list (mod its length), claims batches\n"
          "                          from a cursor the processes share and writes its\n"
          "                          own rows into the one file of each output; the\n"
          "                          same files as one process. Default: a process a\n"
          "                          device where the device list names two or more\n"
          "                          CUDA devices, none twice (each process's CUDA\n"
          "                          start then brings up its own device only), else\n"
          "                          1; --processes 1 keeps a list's devices in one\n"
          "                          process, a context each. With --backend host the\n"
          "                          processes share the cores\n"
          "  --lanes N               contexts a CUDA device (1 to 4, default 1): a\n"
          "                          device then runs N batches at once, so one\n"
          "                          batch's last long-lived photons overlap the\n"
          "                          next one's start (under mpirun too: each rank's\n"
          "                          device)\n"
          "  --quiet                 no progress and no notes; errors and warnings\n"
          "                          stay. Progress is a bar on stderr when it is a\n"
          "                          terminal, else a line every 5 s of a long run\n"
          "                          (PRISM_PROGRESS_INTERVAL=S: every S seconds); after\n"
          "                          the first batch of a long run, the time left and\n"
          "                          the hits file's size, extrapolated\n"
          "  --validate              run --count photons (default 100000) on the host\n"
          "                          backend and on CUDA and compare them photon by\n"
          "                          photon; exit 3 when under 99.9% end alike (same\n"
          "                          history, solid and steps) or the detected\n"
          "                          fractions are more than 5 sigma apart, 4 without\n"
          "                          a CUDA device\n"
          "  --help                  this text\n"
          "\n"
          "photon layout (prism_photon, 16 float32 per photon, 64 bytes):\n"
          "  [0:3] pos (m)  [3] time (ns)  [4:7] dir  [7] wavelength (nm)\n"
          "  [8:11] pol  [11] history  [12] solid  [13] triangle  [14] steps  [15] -\n"
          "The integer fields (history bits, solid, triangle, steps) are stored bit\n"
          "for bit in their float32 words, as Opticks does. In NumPy:\n"
          "  h = np.load('hits.npy'); u = h.view(np.uint32)\n"
          "  t = h[:, 0, 3]; solid = u[:, 3, 0]; history = u[:, 2, 3]\n"
          "Records: u = r.view(np.uint32); history = u[:, :, 4]; photon = u[:, :, 6].\n"
          "\n"
          "genstep layout (prism/device/genstep.h, 24 float32, int words bit for bit):\n"
          "  [0] gentype (15 Cerenkov, 16 scintillation), track id, material (the\n"
          "      scene's index), photons   [1] x, y, z (m), t (ns)\n"
          "  [2] dx, dy, dz (m), step length (m)   [3] code, charge, weight, velocity\n"
          "      (m/ns)   Cerenkov: [4] BetaInverse, Wmin, Wmax (nm), maxCos\n"
          "  [5] maxSin2, mean photons/m at start and end, end velocity (m/ns)\n"
          "  scintillation: [4] component, wavelength without a spectrum (nm), 0, 0\n"
          "  [5] decay time (ns; 0: the material's two components), 0, 0, 0\n"
          "\n"
          "exit status: 0 success, 1 failure (file, engine, output), 2 bad command\n"
          "line, 3 --validate found the backends apart, 4 --validate without CUDA\n",
          out);
}

static const char *const VALUED[] = {
    "--photons",      "--source",     "--count",     "--hits",    "--out",       "--records",
    "--record-steps", "--seed",       "--max-steps", "--backend", "--placement", "--bvh",
    "--math",         "--batch",      "--unit",      "--devices", "--gensteps",  "--save-gensteps",
    "--lanes",        "--wavelength", "--processes", NULL};

/* --source muon:x,y,z,dx,dy,dz,energy (GeV, the total energy). */
static int parse_muon(propagate_options *o, const char *val, char *err, size_t size)
{
    float v[7];
    if (tool_parse_floats(val + 5, v, 7, 7) != 7 || (v[3] == 0 && v[4] == 0 && v[5] == 0) ||
        !(v[6] > PRISM_MUON_MASS_GEV))
        return tool_fail(err, size,
                         "--source: expected muon:x,y,z,dx,dy,dz,energy (m, a nonzero "
                         "direction, the total energy in GeV above the muon's %.4f), got '%s'",
                         PRISM_MUON_MASS_GEV, val);
    memset(&o->muon_desc, 0, sizeof o->muon_desc);
    memcpy(o->muon_desc.position, v, sizeof o->muon_desc.position);
    memcpy(o->muon_desc.direction, v + 3, sizeof o->muon_desc.direction);
    o->muon_desc.energy_gev = v[6];
    o->muon = true;
    o->engine.source_given = true;
    return 0;
}
static const char *const MATH_NAMES[] = {"default", "exact", "fast", NULL};

/* The options that name a file or a count. Returns 1 for none of them. */
static int parse_io(propagate_options *o, const char *opt, const char *val, char *err, size_t size)
{
    uint64_t v;
    if (!strcmp(opt, "--photons"))
        o->photons = val;
    else if (!strcmp(opt, "--gensteps"))
        o->gensteps = val;
    else if (!strcmp(opt, "--save-gensteps"))
        o->save_gensteps = val;
    else if (!strcmp(opt, "--source") && !strncmp(val, "muon:", 5))
        return parse_muon(o, val, err, size) ? -1 : 0;
    else if (!strcmp(opt, "--hits"))
        o->hits = val;
    else if (!strcmp(opt, "--out"))
        o->out = val;
    else if (!strcmp(opt, "--records"))
        o->records = val;
    else if (!strcmp(opt, "--devices"))
        o->devices = val;
    else if (!strcmp(opt, "--count")) {
        if (tool_parse_count(val, 1, PRISM_PROPAGATE_MAX_PHOTON_INDEX, &o->count))
            return tool_fail(err, size,
                             "--count: expected a number of photons (1 to 2^56), "
                             "got '%s'",
                             val);
    } else if (!strcmp(opt, "--wavelength")) {
        float w[2] = {0, 0};
        const char *colon = strchr(val, ':');
        char *end = NULL;
        w[0] = strtof(val, &end);
        if (colon != NULL && end == colon)
            w[1] = strtof(colon + 1, &end);
        if (end == NULL || *end != 0 || !(w[0] > 0.0f && w[0] < 1e5f) ||
            (colon != NULL && !(w[1] > w[0] && w[1] < 1e5f)))
            return tool_fail(err, size,
                             "--wavelength: expected NM or MIN:MAX in nm (MAX above MIN), got "
                             "'%s'",
                             val);
        o->wavelength_nm[0] = w[0];
        o->wavelength_nm[1] = colon != NULL ? w[1] : 0.0f;
        o->wavelength = true;
    } else if (!strcmp(opt, "--processes")) {
        if (tool_parse_count(val, 1, PROPAGATE_MAX_RANKS, &v))
            return tool_fail(err, size, "--processes: expected 1 to %d processes, got '%s'",
                             PROPAGATE_MAX_RANKS, val);
        o->processes = (int)v;
    } else if (!strcmp(opt, "--lanes")) {
        if (tool_parse_count(val, 1, 4, &v))
            return tool_fail(err, size, "--lanes: expected 1 to 4 contexts a device, got '%s'",
                             val);
        o->lanes = (uint32_t)v;
    } else if (!strcmp(opt, "--batch")) {
        if (tool_parse_count(val, 1, UINT32_MAX, &o->batch))
            return tool_fail(err, size, "--batch: expected photons a batch (1 to 2^32-1), got '%s'",
                             val);
    } else if (!strcmp(opt, "--record-steps")) {
        if (tool_parse_count(val, 1, 1024, &v))
            return tool_fail(err, size, "--record-steps: expected 1 to 1024, got '%s'", val);
        o->record_steps = (uint32_t)v;
    } else {
        return 1;
    }
    return 0;
}

/* One option that takes a value. Returns 0, 1 for an unknown option, or
 * -1 with the message set. */
static int parse_valued(void *user, const char *opt, const char *val, char *err, size_t size)
{
    propagate_options *o = user;
    uint64_t v;
    int c = parse_io(o, opt, val, err, size);
    if (c != 1)
        return c;
    c = tool_parse_engine_option(&o->engine, opt, val, err, size);
    if (c != 1)
        return c;
    if (!strcmp(opt, "--seed")) {
        if (tool_parse_count(val, 0, UINT64_MAX, &o->seed))
            return tool_fail(err, size, "--seed: expected an integer >= 0, got '%s'", val);
    } else if (!strcmp(opt, "--max-steps")) {
        if (tool_parse_count(val, 1, UINT32_MAX, &v))
            return tool_fail(err, size, "--max-steps: expected a positive integer, got '%s'", val);
        o->max_steps = (uint32_t)v;
    } else if (!strcmp(opt, "--math")) {
        if ((c = tool_parse_choice(val, MATH_NAMES)) < 1)
            return tool_fail(err, size, "--math: expected exact or fast, got '%s'", val);
        o->math = (prism_propagate_math)c;
    } else {
        return 1;
    }
    return 0;
}

static bool is_flag(void *user, const char *a)
{
    propagate_options *o = user;
    if (!strcmp(a, "--json"))
        o->json = true;
    else if (!strcmp(a, "--quiet"))
        o->quiet = true;
    else if (!strcmp(a, "--validate"))
        o->validate = true;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
        o->help = true;
    else
        return false;
    return true;
}

/* What the options say together. */
static int check(const propagate_options *o, char *err, size_t size)
{
    if (o->photons && o->engine.source_given)
        return tool_fail(err, size, "--photons and --source: one source of photons only");
    if (o->wavelength && (o->photons || o->gensteps || o->muon))
        return tool_fail(err, size,
                         "--wavelength goes with a point or beam source: --photons, --gensteps "
                         "and muons carry their own");
    if (o->gensteps && (o->photons || o->engine.source_given))
        return tool_fail(err, size,
                         "--gensteps with --photons or --source: one source of photons only");
    if (o->save_gensteps && !o->gensteps && !o->muon)
        return tool_fail(err, size, "--save-gensteps goes with --source muon:... (or --gensteps)");
    if (o->validate && (o->gensteps || o->muon))
        return tool_fail(err, size,
                         "--validate compares point, beam or --photons sources: not gensteps");
    if (o->record_steps && !o->records)
        return tool_fail(err, size, "--record-steps goes with --records");
    if (o->validate && (o->hits || o->out || o->records))
        return tool_fail(err, size,
                         "--validate writes no files: leave out --hits, --out and "
                         "--records");
    if (o->validate && o->processes > 1)
        return tool_fail(err, size, "--validate runs in one process: leave out --processes");
    if (o->validate && o->devices)
        return tool_fail(err, size, "--validate runs on one device: leave out --devices");
    if (o->validate && o->engine.backend == PRISM_BACKEND_HOST)
        return tool_fail(err, size,
                         "--validate compares CUDA with the host backend: leave out "
                         "--backend host");
    const char *paths[5] = {o->hits, o->out, o->records, o->save_gensteps, o->gensteps};
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 5; j++)
            if (paths[i] && paths[j] && strcmp(paths[i], paths[j]) == 0)
                return tool_fail(err, size, "'%s' named for two outputs", paths[i]);
    return 0;
}

int propagate_options_parse(int argc, char **argv, propagate_options *o, char *err, size_t size)
{
    memset(o, 0, sizeof *o);
    o->local_rank = -1;
    const tool_args args = {VALUED, is_flag, parse_valued, o, &o->file, "detector"};
    if (tool_args_parse(argc, argv, &args, err, size))
        return -1;
    if (o->help)
        return 0;
    if (!o->file)
        return tool_fail(err, size, "no DETECTOR.dae given (see --help)");
    return check(o, err, size);
}
