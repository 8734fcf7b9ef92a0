/* prism-gen-detector: writes a deterministic G4DAE-style detector (COLLADA
 * with Geant4 material and optical-surface extras, lengths in mm) for tests
 * and load benchmarks: a cylindrical tank of mineral oil holding an acrylic
 * vessel of liquid scintillator, with N photomultipliers on the tank's wall
 * and caps facing the centre. The PMT is one <library_nodes> node placed N
 * times through <instance_node>, so the file stays small while the world
 * grows to 768 + N * 128 triangles (--pmts 20000: about 2.56M). With
 * --unique every PMT gets its own geometry, logical volume and skin surface
 * instead (the same world, as an exporter that does not instance would
 * write it): a large file whose load is bound by parsing, not placing.
 *
 * Dimensions (mm), all derived from N so that PMTs never overlap:
 *   tank radius R = 10 * ceil(35 * sqrt(N / (6 pi))), at least 1000, and
 *   half height H = R (about 350 mm of wall or cap per PMT);
 *   acrylic vessel R-300, H-300; scintillator R-325, H-325;
 *   world box +-(R+1000) in x and y, +-(H+1000) in z;
 *   PMT bulb: ellipsoid 100 x 100 x 70 (16 segments x 4 rings, 96
 *   triangles) around a vacuum ellipsoid 80 x 80 x 55 (8 x 3, 32
 *   triangles), centred 150 mm inside the wall or cap.
 * --offset X,Y,Z (metres) moves the whole detector by a <translate> on the
 * top node, for the precision tests: far from the origin, float32 world
 * coordinates lose what the rays must keep. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_PI 3.14159265358979323846
#define GEN_MAX_PMTS 1000000L
#define GEN_MAX_VERTS 256
#define GEN_MAX_FACES 256
#define GEN_MAX_FACE_VERTS 64
#define GEN_CYL_SEGMENTS 64
#define GEN_HC_MEV_NM 1.23984198e-3 /* h c in MeV nm: E = hc / lambda */

typedef struct gen_mesh {
    double v[GEN_MAX_VERTS][3];
    int nv;
    int face[GEN_MAX_FACES][GEN_MAX_FACE_VERTS];
    int face_n[GEN_MAX_FACES];
    int nf;
} gen_mesh;

typedef struct gen_dims {
    long pmts;
    double offset[3];       /* metres; written in mm on the top node */
    int unique;             /* every PMT its own geometry and logical volume */
    double R, H;            /* tank */
    long wall, top, bottom; /* PMTs on each part */
    long rows;              /* rings of PMTs on the wall */
} gen_dims;

/* ---- meshes: closed, faces counter-clockwise seen from outside ---- */

static int mesh_vertex(gen_mesh *m, double x, double y, double z)
{
    m->v[m->nv][0] = x;
    m->v[m->nv][1] = y;
    m->v[m->nv][2] = z;
    return m->nv++;
}

static void mesh_face(gen_mesh *m, const int *idx, int n)
{
    memcpy(m->face[m->nf], idx, (size_t)n * sizeof *idx);
    m->face_n[m->nf++] = n;
}

static void mesh_box(gen_mesh *m, double hx, double hy, double hz)
{
    static const int f[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4},
                                {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
    memset(m, 0, sizeof *m);
    for (int z = 0; z < 2; z++) {
        double zz = z ? hz : -hz;
        mesh_vertex(m, -hx, -hy, zz);
        mesh_vertex(m, hx, -hy, zz);
        mesh_vertex(m, hx, hy, zz);
        mesh_vertex(m, -hx, hy, zz);
    }
    for (int i = 0; i < 6; i++)
        mesh_face(m, f[i], 4);
}

/* An n-sided prism along z (vertices on the circle of radius r, the first
 * at angle 0): caps are n-gons, the wall n quads. */
static void mesh_cylinder(gen_mesh *m, int n, double r, double hh)
{
    int cap[GEN_MAX_FACE_VERTS];
    memset(m, 0, sizeof *m);
    for (int z = 0; z < 2; z++)
        for (int k = 0; k < n; k++) {
            double a = 2.0 * GEN_PI * k / n;
            mesh_vertex(m, r * cos(a), r * sin(a), z ? hh : -hh);
        }
    for (int k = 0; k < n; k++)
        cap[k] = n + k;
    mesh_face(m, cap, n);
    for (int k = 0; k < n; k++)
        cap[k] = n - 1 - k;
    mesh_face(m, cap, n);
    for (int k = 0; k < n; k++) {
        int k1 = (k + 1) % n;
        int q[4] = {k, k1, k1 + n, k + n};
        mesh_face(m, q, 4);
    }
}

/* A UV ellipsoid with semi-axes (a, a, c): poles on z, `rings` bands,
 * triangles at the poles and quads between. */
static void mesh_ellipsoid(gen_mesh *m, int seg, int rings, double a, double c)
{
    memset(m, 0, sizeof *m);
    int north = mesh_vertex(m, 0, 0, c);
    for (int i = 1; i < rings; i++) {
        double t = GEN_PI * i / rings;
        for (int j = 0; j < seg; j++) {
            double f = 2.0 * GEN_PI * j / seg;
            mesh_vertex(m, a * sin(t) * cos(f), a * sin(t) * sin(f), c * cos(t));
        }
    }
    int south = mesh_vertex(m, 0, 0, -c);
#define RING(i, j) (1 + ((i)-1) * seg + ((j) % seg))
    for (int j = 0; j < seg; j++) {
        int t0[3] = {north, RING(1, j), RING(1, j + 1)};
        int t1[3] = {south, RING(rings - 1, j + 1), RING(rings - 1, j)};
        mesh_face(m, t0, 3);
        mesh_face(m, t1, 3);
    }
    for (int i = 1; i < rings - 1; i++)
        for (int j = 0; j < seg; j++) {
            int q[4] = {RING(i, j), RING(i + 1, j), RING(i + 1, j + 1), RING(i, j + 1)};
            mesh_face(m, q, 4);
        }
#undef RING
}

/* Newell's normal of a planar polygon, for the NORMAL source G4DAE writes. */
static void face_normal(const gen_mesh *m, int f, double n[3])
{
    n[0] = n[1] = n[2] = 0.0;
    for (int i = 0; i < m->face_n[f]; i++) {
        const double *a = m->v[m->face[f][i]];
        const double *b = m->v[m->face[f][(i + 1) % m->face_n[f]]];
        n[0] += (a[1] - b[1]) * (a[2] + b[2]);
        n[1] += (a[2] - b[2]) * (a[0] + b[0]);
        n[2] += (a[0] - b[0]) * (a[1] + b[1]);
    }
    double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; k++)
        n[k] = l > 0 ? n[k] / l : 0.0;
}

/* ---- the file, written in G4DAE's order and naming ---- */

#define G "__dd__Geometry__"
#define M "__dd__Materials__"

static void write_geometry(FILE *f, const char *id, const gen_mesh *m)
{
    fprintf(f, "    <geometry id=\"%s\" name=\"%s\">\n      <mesh>\n", id, id);
    fprintf(f,
            "        <source id=\"%s-Pos\">\n"
            "          <float_array count=\"%d\" id=\"%s-Pos-array\">",
            id, 3 * m->nv, id);
    for (int i = 0; i < m->nv; i++)
        fprintf(f, "%s%.7g %.7g %.7g", i ? " " : "", m->v[i][0], m->v[i][1], m->v[i][2]);
    fprintf(f,
            "</float_array>\n          <technique_common>\n"
            "            <accessor count=\"%d\" source=\"#%s-Pos-array\" stride=\"3\">\n"
            "              <param name=\"X\" type=\"float\"/>\n"
            "              <param name=\"Y\" type=\"float\"/>\n"
            "              <param name=\"Z\" type=\"float\"/>\n"
            "            </accessor>\n          </technique_common>\n        </source>\n",
            m->nv, id);
    fprintf(f,
            "        <source id=\"%s-Norm\">\n"
            "          <float_array count=\"%d\" id=\"%s-Norm-array\">",
            id, 3 * m->nf, id);
    for (int i = 0; i < m->nf; i++) {
        double n[3];
        face_normal(m, i, n);
        fprintf(f, "%s%.6g %.6g %.6g", i ? " " : "", n[0], n[1], n[2]);
    }
    fprintf(f,
            "</float_array>\n          <technique_common>\n"
            "            <accessor count=\"%d\" source=\"#%s-Norm-array\" stride=\"3\">\n"
            "              <param name=\"X\" type=\"float\"/>\n"
            "              <param name=\"Y\" type=\"float\"/>\n"
            "              <param name=\"Z\" type=\"float\"/>\n"
            "            </accessor>\n          </technique_common>\n        </source>\n",
            m->nf, id);
    fprintf(f,
            "        <vertices id=\"%s-Vtx\">\n"
            "          <input semantic=\"POSITION\" source=\"#%s-Pos\"/>\n        </vertices>\n",
            id, id);
    fprintf(f,
            "        <polylist count=\"%d\" material=\"WHITE\">\n"
            "          <input offset=\"0\" semantic=\"VERTEX\" source=\"#%s-Vtx\"/>\n"
            "          <input offset=\"1\" semantic=\"NORMAL\" source=\"#%s-Norm\"/>\n"
            "          <vcount>",
            m->nf, id, id);
    for (int i = 0; i < m->nf; i++)
        fprintf(f, "%s%d", i ? " " : "", m->face_n[i]);
    fprintf(f, "</vcount>\n          <p>");
    for (int i = 0; i < m->nf; i++)
        for (int k = 0; k < m->face_n[i]; k++)
            fprintf(f, "%s%d %d", i || k ? " " : "", m->face[i][k], i);
    fprintf(f, "</p>\n        </polylist>\n      </mesh>\n    </geometry>\n");
}

/* Optical properties as smooth functions of wavelength, tabulated at 61
 * photon energies (800 nm down to 200 nm in 10 nm steps), written as G4DAE
 * does: (energy in MeV, value) pairs in increasing energy. */
typedef double (*gen_curve)(double nm, double a, double b);

static double curve_const(double nm, double a, double b)
{
    (void)nm, (void)b;
    return a;
}
/* Cauchy's dispersion, n = a + b / lambda^2 with lambda in micrometres. */
static double curve_cauchy(double nm, double a, double b)
{
    return a + b / (nm * nm * 1e-6);
}
/* Absorption length (mm) a, falling off below b nm like a Fermi edge. */
static double curve_edge(double nm, double a, double b)
{
    return a / (1.0 + exp((b - nm) / 10.0));
}
/* Rayleigh scattering length (mm) a at 430 nm, going as lambda^4. */
static double curve_rayleigh(double nm, double a, double b)
{
    (void)b;
    return a * pow(nm / 430.0, 4.0);
}
/* A liquid scintillator's emission (LAB with PPO and bis-MSB): peak a at b
 * nm, rising steeply on the blue side and tailing off on the red, 0 below
 * 360 nm. Geant4 reads it as a density per unit photon energy. */
static double curve_emission(double nm, double a, double b)
{
    double s = nm < b ? 12.0 : 30.0;
    return nm < 360.0 ? 0.0 : a * exp(-0.5 * ((nm - b) / s) * ((nm - b) / s));
}
/* Reemission probability: a below the edge at b nm, falling to 0 above
 * it, where the scintillator no longer absorbs its own light. */
static double curve_reemission(double nm, double a, double b)
{
    return a / (1.0 + exp((nm - b) / 8.0));
}
/* A photocathode's quantum efficiency: peak a at b nm. */
static double curve_qe(double nm, double a, double b)
{
    return a * exp(-0.5 * ((nm - b) / 80.0) * ((nm - b) / 80.0));
}

static void write_table(FILE *f, const char *indent, const char *prop, unsigned addr,
                        gen_curve curve, double a, double b)
{
    fprintf(f, "%s<matrix coldim=\"2\" name=\"%s0x%x\">", indent, prop, addr);
    for (int nm = 800; nm >= 200; nm -= 10)
        fprintf(f, "%s%.6g %.6g", nm == 800 ? "" : " ", GEN_HC_MEV_NM / nm, curve(nm, a, b));
    fprintf(f, "</matrix>\n%s<property name=\"%s\" ref=\"%s0x%x\"/>\n", indent, prop, prop, addr);
}

/* A Geant4 constant property as G4DAE writes one: a table over the
 * made-up energies -1 and 1 holding the value twice. */
static void write_constant(FILE *f, const char *indent, const char *prop, unsigned addr, double v)
{
    fprintf(f, "%s<matrix coldim=\"2\" name=\"%s0x%x\">-1 %.6g 1 %.6g</matrix>\n", indent, prop,
            addr, v, v);
    fprintf(f, "%s<property name=\"%s\" ref=\"%s0x%x\"/>\n", indent, prop, prop, addr);
}

typedef struct gen_material {
    const char *name;
    unsigned addr;
    double rindex_a, rindex_b; /* Cauchy */
    double abslength, edge_nm; /* mm; 0: no ABSLENGTH table */
    double rayleigh;           /* mm at 430 nm; 0: no RAYLEIGH table */
    int scintillator;          /* emission, reemission and scintillation constants */
} gen_material;

static const gen_material gen_materials[] = {
    {"Air", 0xc0d4c80, 1.000293, 0.0, 0, 0, 0, 0},
    {"MineralOil", 0xc2ab6e8, 1.46, 0.0040, 30000, 300, 40000, 0},
    {"Acrylic", 0xc2a4b38, 1.48, 0.0045, 5000, 320, 50000, 0},
    {"LiquidScintillator", 0xc2308d0, 1.47, 0.0045, 20000, 400, 25000, 1},
    {"Pyrex", 0xc1f2d40, 1.458, 0.0035, 1000, 300, 0, 0},
    {"Vacuum", 0xc0bf8b8, 1.0, 0.0, 0, 0, 0, 0},
};

/* A liquid scintillator of the LAB kind (Daya Bay's and JUNO's figures,
 * rounded): reemission 0.8 below 430 nm; the same emission spectrum for
 * both components, peaking at 430 nm; 10000 photons per MeV, 80% in the
 * 4.9 ns component, the rest in the 20.6 ns one. */
static void write_scintillator(FILE *f, const char *in, unsigned addr)
{
    write_table(f, in, "REEMISSIONPROB", addr + 0x400, curve_reemission, 0.8, 430);
    write_table(f, in, "FASTCOMPONENT", addr + 0x500, curve_emission, 1.0, 430);
    write_table(f, in, "SLOWCOMPONENT", addr + 0x600, curve_emission, 1.0, 430);
    write_constant(f, in, "SCINTILLATIONYIELD", addr + 0x700, 10000);
    write_constant(f, in, "RESOLUTIONSCALE", addr + 0x800, 1);
    write_constant(f, in, "FASTTIMECONSTANT", addr + 0x900, 4.9);
    write_constant(f, in, "SLOWTIMECONSTANT", addr + 0xa00, 20.6);
    write_constant(f, in, "YIELDRATIO", addr + 0xb00, 0.8);
}
#define GEN_MATERIALS (sizeof gen_materials / sizeof gen_materials[0])

static void write_effects(FILE *f)
{
    fprintf(f, "  <library_effects>\n");
    for (size_t i = 0; i < GEN_MATERIALS; i++)
        fprintf(f,
                "    <effect id=\"" M "%s_fx_0x%x\">\n      <profile_COMMON>\n"
                "        <technique sid=\"common\">\n          <phong>\n"
                "            <diffuse><color>0.5 0.5 0.5 1</color></diffuse>\n"
                "          </phong>\n        </technique>\n      </profile_COMMON>\n"
                "    </effect>\n",
                gen_materials[i].name, gen_materials[i].addr);
    fprintf(f, "  </library_effects>\n");
}

static void write_materials(FILE *f)
{
    const char *in = "        ";
    fprintf(f, "  <library_materials>\n");
    for (size_t i = 0; i < GEN_MATERIALS; i++) {
        const gen_material *m = &gen_materials[i];
        fprintf(f,
                "    <material id=\"" M "%s0x%x\" name=\"" M "%s0x%x\">\n"
                "      <instance_effect url=\"#" M "%s_fx_0x%x\"/>\n      <extra>\n",
                m->name, m->addr, m->name, m->addr, m->name, m->addr);
        gen_curve rindex = m->rindex_b != 0.0 ? curve_cauchy : curve_const;
        write_table(f, in, "RINDEX", m->addr + 0x100, rindex, m->rindex_a, m->rindex_b);
        if (m->abslength > 0)
            write_table(f, in, "ABSLENGTH", m->addr + 0x200, curve_edge, m->abslength, m->edge_nm);
        if (m->rayleigh > 0)
            write_table(f, in, "RAYLEIGH", m->addr + 0x300, curve_rayleigh, m->rayleigh, 0);
        if (m->scintillator)
            write_scintillator(f, in, m->addr);
        fprintf(f, "      </extra>\n    </material>\n");
    }
    fprintf(f, "  </library_materials>\n");
}

#define LV_VACUUM G "PMT__lvPmtVacuum0xc2c7cc8"
#define LV_PMT G "PMT__lvPmt0xc133740"

/* Names of PMT k's pieces: shared by all PMTs, or with --unique its own
 * (distinct "addresses", as Geant4 objects would have). */
typedef struct pmt_names {
    char lv[64], vacuum_lv[64], bulb[32], vacuum[32];
} pmt_names;

static void pmt_names_of(const gen_dims *d, long k, pmt_names *n)
{
    unsigned a = 0x40u * (unsigned)k;
    if (!d->unique) {
        snprintf(n->lv, sizeof n->lv, "%s", LV_PMT);
        snprintf(n->vacuum_lv, sizeof n->vacuum_lv, "%s", LV_VACUUM);
        snprintf(n->bulb, sizeof n->bulb, "pmt-bulb0xc0fed90");
        snprintf(n->vacuum, sizeof n->vacuum, "pmt-vacuum0xc21e248");
        return;
    }
    snprintf(n->lv, sizeof n->lv, G "PMT__lvPmt0x%x", 0xe000000u + a);
    snprintf(n->vacuum_lv, sizeof n->vacuum_lv, G "PMT__lvPmtVacuum0x%x", 0xe800000u + a);
    snprintf(n->bulb, sizeof n->bulb, "pmt-bulb0x%x", 0xf000000u + a);
    snprintf(n->vacuum, sizeof n->vacuum, "pmt-vacuum0x%x", 0xf800000u + a);
}

/* How many PMT logical volumes (and geometries) the file holds. */
static long pmt_kinds(const gen_dims *d)
{
    return d->unique ? d->pmts : 1;
}

static void write_geometries(FILE *f, const gen_dims *d)
{
    static gen_mesh m; /* 70 KB: static, not on the stack */
    pmt_names n;
    fprintf(f, "  <library_geometries>\n");
    mesh_ellipsoid(&m, 8, 3, 80, 55);
    for (long k = 0; k < pmt_kinds(d); k++) {
        pmt_names_of(d, k, &n);
        write_geometry(f, n.vacuum, &m);
    }
    mesh_ellipsoid(&m, 16, 4, 100, 70);
    for (long k = 0; k < pmt_kinds(d); k++) {
        pmt_names_of(d, k, &n);
        write_geometry(f, n.bulb, &m);
    }
    mesh_cylinder(&m, GEN_CYL_SEGMENTS, d->R - 325, d->H - 325);
    write_geometry(f, "ls0xc2a09e0", &m);
    mesh_cylinder(&m, GEN_CYL_SEGMENTS, d->R - 300, d->H - 300);
    write_geometry(f, "acrylic0xc2a1b48", &m);
    mesh_cylinder(&m, GEN_CYL_SEGMENTS, d->R, d->H);
    write_geometry(f, "tank0xc2a2a10", &m);
    mesh_box(&m, d->R + 1000, d->R + 1000, d->H + 1000);
    write_geometry(f, "world0xc0f1f80", &m);
    fprintf(f, "  </library_geometries>\n");
}

static void lv_open(FILE *f, const char *lv, const char *geometry, const char *material,
                    unsigned addr)
{
    fprintf(f,
            "    <node id=\"%s\" name=\"%s\">\n      <instance_geometry url=\"#%s\">\n"
            "        <bind_material>\n          <technique_common>\n"
            "            <instance_material symbol=\"WHITE\" target=\"#" M "%s0x%x\"/>\n"
            "          </technique_common>\n        </bind_material>\n"
            "      </instance_geometry>\n",
            lv, lv, geometry, material, addr);
}

/* A placed volume: m holds the top three rows of the 4x4 matrix. */
static void pv(FILE *f, const char *lv, const char *pvname, unsigned addr, const double m[12],
               const char *target, long copy)
{
    fprintf(f, "      <node id=\"%s--%s0x%x\" name=\"%s--%s0x%x\">\n        <matrix>\n", lv, pvname,
            addr, lv, pvname, addr);
    for (int r = 0; r < 3; r++)
        fprintf(f, "%.9g %.9g %.9g %.9g\n", m[4 * r] + 0.0, m[4 * r + 1] + 0.0, m[4 * r + 2] + 0.0,
                m[4 * r + 3] + 0.0);
    fprintf(f,
            "0.0 0.0 0.0 1.0\n</matrix>\n        <instance_node url=\"#%s\"/>\n"
            "        <extra>\n          <meta id=\"%s#%s0x%x\">\n"
            "            <copyNo>%ld</copyNo>\n            <ModuleName></ModuleName>\n"
            "          </meta>\n        </extra>\n      </node>\n",
            target, lv, pvname, addr, copy);
}

static const double gen_identity[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};

#define LV_LS G "Tank__lvLS0xc2a0a38"
#define LV_ACRYLIC G "Tank__lvAcrylic0xc2a1c30"
#define LV_TANK G "Tank__lvTank0xc2a2c00"
#define LV_WORLD G "Sites__lvWorld0xc0f2a10"

/* Wall PMTs: `rows` rings, every other ring turned by half a step. The
 * PMT's local +z (its face) points at the axis: columns x, y, z of the
 * rotation are the tangent, -z and the inward radius (right-handed). */
static void write_wall_pmts(FILE *f, const gen_dims *d, long *copy)
{
    double rp = d->R - 150, zw = d->H - 300;
    for (long i = 0; i < d->rows; i++) {
        long n = d->wall / d->rows + (i < d->wall % d->rows);
        double z = -zw + (i + 0.5) * 2.0 * zw / (double)d->rows;
        for (long j = 0; j < n; j++) {
            double p = 2.0 * GEN_PI * (j + 0.5 * (double)(i & 1)) / (double)n;
            double c = cos(p), s = sin(p);
            double m[12] = {-s, 0, -c, rp * c, c, 0, -s, rp * s, 0, -1, 0, z};
            pmt_names pn;
            pmt_names_of(d, *copy, &pn);
            pv(f, LV_TANK, "pvPmt", 0xd000000u + 0x40u * (unsigned)*copy, m, pn.lv, *copy);
            (*copy)++;
        }
    }
}

/* Cap PMTs on a sunflower (Vogel) spiral, which spaces n points evenly in
 * a disk; on the top cap the PMT is turned over (x, -y, -z). */
static void write_cap_pmts(FILE *f, const gen_dims *d, long n, int top, long *copy)
{
    const double golden = 2.39996322972865332;
    double rc = d->R - 350, z = top ? d->H - 150 : -(d->H - 150);
    double sy = top ? -1.0 : 1.0;
    for (long k = 0; k < n; k++) {
        double r = rc * sqrt((k + 0.5) / (double)n), a = golden * (double)k;
        double m[12] = {1, 0, 0, r * cos(a), 0, sy, 0, r * sin(a), 0, 0, sy, z};
        pmt_names pn;
        pmt_names_of(d, *copy, &pn);
        pv(f, LV_TANK, "pvPmt", 0xd000000u + 0x40u * (unsigned)*copy, m, pn.lv, *copy);
        (*copy)++;
    }
}

static void write_surfaces(FILE *f, const gen_dims *d)
{
    const char *in = "        ";
    fprintf(f, "    <extra>\n      <opticalsurface finish=\"0\" model=\"1\" name=\"" G
               "PMT__PmtCathodeSurface\" type=\"0\" value=\"1\">\n");
    write_table(f, in, "EFFICIENCY", 0xc3a1f00, curve_qe, 0.25, 400);
    write_table(f, in, "REFLECTIVITY", 0xc3a2068, curve_const, 0.0, 0);
    /* The tank's wall: a white reflector, unified ground dielectric_metal
     * (sigma_alpha 0.2 rad) reflecting 90%: 10% in the specular spike, 20%
     * in the specular lobe, the rest Lambertian. */
    fprintf(f, "      </opticalsurface>\n      <opticalsurface finish=\"3\" model=\"1\" name=\"" G
               "Tank__TankWallSurface\" type=\"0\" value=\"0.2\">\n");
    write_table(f, in, "REFLECTIVITY", 0xc3a21d0, curve_const, 0.9, 0);
    write_table(f, in, "SPECULARSPIKECONSTANT", 0xc3a2338, curve_const, 0.1, 0);
    write_table(f, in, "SPECULARLOBECONSTANT", 0xc3a24a0, curve_const, 0.2, 0);
    write_table(f, in, "BACKSCATTERCONSTANT", 0xc3a2608, curve_const, 0.0, 0);
    fprintf(f, "      </opticalsurface>\n");
    for (long k = 0; k < pmt_kinds(d); k++) {
        pmt_names n;
        pmt_names_of(d, k, &n);
        fprintf(f,
                "      <skinsurface name=\"" G "PMT__PmtCathodeSurface\" surfaceproperty=\"" G
                "PMT__PmtCathodeSurface\">\n        <volumeref ref=\"%s\"/>\n"
                "      </skinsurface>\n",
                n.lv);
    }
    fprintf(f, "      <skinsurface name=\"" G "Tank__TankWallSurface\" surfaceproperty=\"" G
               "Tank__TankWallSurface\">\n        <volumeref ref=\"" LV_TANK "\"/>\n"
               "      </skinsurface>\n    </extra>\n");
}

/* Logical volumes children first, as G4DAE writes them. */
static void write_nodes(FILE *f, const gen_dims *d)
{
    long copy = 0;
    fprintf(f, "  <library_nodes>\n");
    for (long k = 0; k < pmt_kinds(d); k++) {
        pmt_names n;
        pmt_names_of(d, k, &n);
        lv_open(f, n.vacuum_lv, n.vacuum, "Vacuum", 0xc0bf8b8);
        fprintf(f, "    </node>\n");
        lv_open(f, n.lv, n.bulb, "Pyrex", 0xc1f2d40);
        pv(f, n.lv, "pvPmtVacuum", 0xc1340e8u + 0x40u * (unsigned)k, gen_identity, n.vacuum_lv, 0);
        fprintf(f, "    </node>\n");
    }
    lv_open(f, LV_LS, "ls0xc2a09e0", "LiquidScintillator", 0xc2308d0);
    fprintf(f, "    </node>\n");
    lv_open(f, LV_ACRYLIC, "acrylic0xc2a1b48", "Acrylic", 0xc2a4b38);
    pv(f, LV_ACRYLIC, "pvLS", 0xc2a1d18, gen_identity, LV_LS, 0);
    fprintf(f, "    </node>\n");
    lv_open(f, LV_TANK, "tank0xc2a2a10", "MineralOil", 0xc2ab6e8);
    pv(f, LV_TANK, "pvAcrylic", 0xc2a2d88, gen_identity, LV_ACRYLIC, 0);
    write_wall_pmts(f, d, &copy);
    write_cap_pmts(f, d, d->top, 1, &copy);
    write_cap_pmts(f, d, d->bottom, 0, &copy);
    fprintf(f, "    </node>\n");
    lv_open(f, LV_WORLD, "world0xc0f1f80", "Air", 0xc0d4c80);
    pv(f, LV_WORLD, "pvTank", 0xc0f2b30, gen_identity, LV_TANK, 0);
    fprintf(f, "    </node>\n");
    write_surfaces(f, d);
    fprintf(f, "  </library_nodes>\n");
}

static void gen_dims_for(long pmts, int unique, gen_dims *d)
{
    memset(d, 0, sizeof *d);
    d->pmts = pmts;
    d->unique = unique;
    d->R = 10.0 * ceil(35.0 * sqrt((double)pmts / (6.0 * GEN_PI)));
    if (d->R < 1000.0)
        d->R = 1000.0;
    d->H = d->R;
    double rp = d->R - 150, zw = d->H - 300, rc = d->R - 350;
    double wall_area = 2.0 * GEN_PI * rp * 2.0 * zw, cap_area = GEN_PI * rc * rc;
    d->wall = lround((double)pmts * wall_area / (wall_area + 2.0 * cap_area));
    d->top = (pmts - d->wall + 1) / 2;
    d->bottom = pmts - d->wall - d->top;
    if (d->wall > 0) {
        d->rows = lround(sqrt((double)d->wall * 2.0 * zw / (2.0 * GEN_PI * rp)));
        d->rows = d->rows < 1 ? 1 : d->rows > d->wall ? d->wall : d->rows;
    }
}

static void write_detector(FILE *f, const gen_dims *d)
{
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
            "<!-- written by prism-gen-detector, %ld PMTs: tank R=%g H=%g mm, PMTs wall %ld "
            "in %ld rings, top %ld, bottom %ld; world triangles %ld -->\n"
            "<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" "
            "version=\"1.4.1\">\n"
            "  <asset>\n    <contributor>\n      <author>prism-gen-detector</author>\n"
            "      <authoring_tool>prism-gen-detector in the manner of G4DAE 0.1"
            "</authoring_tool>\n"
            "    </contributor>\n    <created>2026-11-22T00:00:00Z</created>\n"
            "    <modified>2026-11-22T00:00:00Z</modified>\n  </asset>\n",
            d->pmts, d->R, d->H, d->wall, d->rows, d->top, d->bottom,
            12L + 3L * 4L * GEN_CYL_SEGMENTS - 3L * 4L + 128L * d->pmts);
    write_effects(f);
    write_geometries(f, d);
    write_materials(f);
    write_nodes(f, d);
    fprintf(f, "  <library_visual_scenes>\n    <visual_scene id=\"DefaultScene\">\n"
               "      <node id=\"top.0\" name=\"top.0\">\n");
    if (d->offset[0] != 0 || d->offset[1] != 0 || d->offset[2] != 0)
        fprintf(f, "        <translate>%.17g %.17g %.17g</translate>\n", d->offset[0] * 1e3,
                d->offset[1] * 1e3, d->offset[2] * 1e3);
    fprintf(f, "        <instance_node url=\"#" LV_WORLD "\"/>\n      </node>\n"
               "    </visual_scene>\n  </library_visual_scenes>\n"
               "  <scene>\n    <instance_visual_scene url=\"#DefaultScene\"/>\n  </scene>\n"
               "</COLLADA>\n");
}

/* ---- command line ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: prism-gen-detector [--pmts N] [--unique] [--offset X,Y,Z] [--output FILE]\n"
            "Writes a deterministic G4DAE-style COLLADA detector (lengths in mm): a\n"
            "cylindrical tank of mineral oil holding an acrylic vessel of liquid\n"
            "scintillator, with N photomultipliers on the tank's wall and caps facing\n"
            "the centre. Each PMT is a Pyrex bulb around a vacuum, placed through\n"
            "<library_nodes>/<instance_node>, with a detecting photocathode skin surface\n"
            "(EFFICIENCY) and a white tank wall (unified, ground, lobe constants);\n"
            "materials carry RINDEX, ABSLENGTH and RAYLEIGH tables, the scintillator\n"
            "also reemission, an emission spectrum peaking at 430 nm and scintillation\n"
            "constants (10000 photons/MeV, 4.9 and 20.6 ns, yield ratio 0.8).\n"
            "World triangles: 768 + 128 N (N = 20000 gives 2,560,768).\n"
            "\n"
            "  --pmts N         number of photomultipliers, 0 to %ld (default 192)\n"
            "  --unique         give every PMT its own geometry and logical volume (and skin\n"
            "                   surface), as an exporter without instancing would: the same\n"
            "                   world in a file some 20 times larger, for parse-bound benchmarks\n"
            "  --offset X,Y,Z   move the whole detector by (X, Y, Z) metres, each within\n"
            "                   +-1e6 (default 0,0,0: centred on the origin)\n"
            "  -o, --output F   write to file F instead of standard output\n"
            "  -h, --help       print this help and exit\n"
            "\n"
            "Exit status: 0 on success, 1 if the file cannot be written, 2 on a bad option.\n",
            GEN_MAX_PMTS);
}

static int bad_option(const char *what, const char *arg)
{
    fprintf(stderr, "prism-gen-detector: %s '%s' (see --help)\n", what, arg);
    return 2;
}

/* "X,Y,Z": three finite numbers within +-1e6 m. */
static int parse_offset(const char *s, double out[3])
{
    for (int k = 0; k < 3; k++) {
        char *end;
        errno = 0;
        out[k] = strtod(s, &end);
        if (errno || end == s || !(fabs(out[k]) <= 1e6) || *end != (k < 2 ? ',' : '\0'))
            return -1;
        s = end + 1;
    }
    return 0;
}

/* Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, long *pmts, int *unique, double offset[3],
                      const char **output)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--unique")) {
            *unique = 1;
            continue;
        }
        int is_pmts = !strcmp(a, "--pmts") || !strncmp(a, "--pmts=", 7);
        int is_out = !strcmp(a, "-o") || !strcmp(a, "--output") || !strncmp(a, "--output=", 9);
        int is_offset = !strcmp(a, "--offset") || !strncmp(a, "--offset=", 9);
        if (!is_pmts && !is_out && !is_offset)
            return bad_option(a[0] == '-' ? "unknown option" : "unexpected argument", a);
        if (strchr(a, '='))
            val = strchr(a, '=') + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return bad_option("missing value after", a);
        if (is_out) {
            if (!*val)
                return bad_option("empty file name after", a);
            *output = val;
            continue;
        }
        if (is_offset) {
            if (parse_offset(val, offset))
                return bad_option("--offset needs X,Y,Z in metres, each within +-1e6, not", val);
            continue;
        }
        char *end;
        errno = 0;
        long n = strtol(val, &end, 10);
        if (errno || end == val || *end || n < 0 || n > GEN_MAX_PMTS)
            return bad_option("--pmts needs a whole number from 0 to 1000000, not", val);
        *pmts = n;
    }
    return -1;
}

int main(int argc, char **argv)
{
    long pmts = 192;
    int unique = 0;
    double offset[3] = {0, 0, 0};
    const char *output = NULL;
    int status = parse_args(argc, argv, &pmts, &unique, offset, &output);
    if (status >= 0)
        return status;

    FILE *f = output ? fopen(output, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "prism-gen-detector: cannot open '%s': %s\n", output, strerror(errno));
        return 1;
    }
    static char buffer[1 << 20];
    setvbuf(f, buffer, _IOFBF, sizeof buffer);
    gen_dims d;
    gen_dims_for(pmts, unique, &d);
    memcpy(d.offset, offset, sizeof d.offset);
    write_detector(f, &d);
    int failed = ferror(f) != 0;
    if (fflush(f) != 0)
        failed = 1;
    if (output && fclose(f) != 0)
        failed = 1;
    if (failed) {
        fprintf(stderr, "prism-gen-detector: writing '%s' failed: %s\n",
                output ? output : "standard output", strerror(errno));
        return 1;
    }
    return 0;
}
