/* The .npy reader and writer (tools/npy.c): a round trip in batches; the
 * 2.0 and 3.0 headers and the header spellings Python writes; every bad
 * input refused with a message naming the file, what was found and what
 * was expected; atomic writes (an abort, a write that fails half way, a
 * signal: nothing is left, an old file keeps its bytes).
 *
 * With --numpy (the ctest npy_numpy): files written by NumPy itself are
 * read, and NumPy reads ours. $PRISM_PYTHON3 names the interpreter; the
 * test is skipped (77) when it cannot import numpy. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec_util.h"
#include "npy.h"

static const uint64_t PHOTON[2] = {4, 4};

/* A directory of its own for a test, and how many entries it holds. */
static const char *fresh_dir(const char *name)
{
    const char *d = exec_path(name);
    assert_int_equal(mkdir(d, 0755), 0);
    return d;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* A .npy file by hand: version, header text (padded to 64 bytes with the
 * preamble, as NumPy does), then `data` bytes of a counting pattern. */
static void write_raw(const char *path, int version, const char *dict, size_t data)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    const size_t pre = version == 1 ? 10 : 12, len = strlen(dict);
    const size_t total = (pre + len + 1 + 63) / 64 * 64, hlen = total - pre;
    unsigned char p[12] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           (unsigned char)version,
                           0,
                           (unsigned char)(hlen & 0xFF),
                           (unsigned char)(hlen >> 8),
                           0,
                           0};
    fwrite(p, 1, pre, f);
    fputs(dict, f);
    for (size_t i = len; i + 1 < hlen; i++)
        fputc(' ', f);
    fputc('\n', f);
    for (size_t i = 0; i < data / 4; i++) {
        float v = (float)i;
        fwrite(&v, 4, 1, f);
    }
    for (size_t i = data / 4 * 4; i < data; i++)
        fputc(0, f);
    fclose(f);
}

static void write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(bytes, 1, n, f);
    fclose(f);
}

/* Rows of a counting pattern, with integer fields bit for bit in word 11. */
static float *pattern(size_t rows, size_t first)
{
    float *v = malloc(rows * 16 * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < rows * 16; i++)
        v[i] = (float)(first * 16 + i) * 0.5f;
    for (size_t r = 0; r < rows; r++) {
        uint32_t bits = 0x80000000u | (uint32_t)(first + r); /* NaN-ish words stay bits */
        memcpy(&v[r * 16 + 11], &bits, 4);
    }
    return v;
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *path = exec_path("round.npy");
    npy_writer w;
    assert_int_equal(npy_writer_open(&w, path, PHOTON, 2), 0);
    assert_int_equal(access(path, F_OK), -1); /* nothing there before the commit */
    const size_t sizes[3] = {0, 5, 1000};
    for (size_t i = 0, first = 0; i < 3; first += sizes[i++]) {
        float *rows = pattern(sizes[i], first);
        assert_int_equal(npy_writer_append(&w, rows, sizes[i]), 0);
        free(rows);
    }
    assert_int_equal(npy_writer_commit(&w), 0);
    npy_reader r;
    assert_int_equal(npy_reader_open(&r, path, PHOTON, 2), 0);
    assert_int_equal(r.rows, 1005);
    assert_int_equal(r.version, 1);
    float *got = malloc(1005 * 64), *want = pattern(1005, 0);
    assert_int_equal(npy_reader_read(&r, got, 5), 0);
    assert_int_equal(npy_reader_read(&r, got + 5 * 16, 1000), 0);
    assert_memory_equal(got, want, 1005 * 64);
    assert_int_equal(npy_reader_read(&r, got, 1), -1); /* none left */
    assert_non_null(strstr(r.error, "1 rows asked for, 0 left"));
    npy_reader_close(&r);
    /* NumPy's header: 64-byte aligned, the dict and the final shape */
    FILE *f = fopen(path, "rb");
    char head[129] = "";
    assert_int_equal(fread(head, 1, 128, f), 128);
    fclose(f);
    assert_int_equal(head[127], '\n');
    assert_non_null(strstr(head + 10, "{'descr': '<f4', 'fortran_order': False, "
                                      "'shape': (1005, 4, 4), }"));
    free(got);
    free(want);
    /* records' shape, and an empty array */
    const uint64_t rec[2] = {6, 8};
    assert_int_equal(npy_writer_open(&w, path, rec, 2), 0);
    assert_int_equal(npy_writer_commit(&w), 0);
    assert_int_equal(npy_reader_open(&r, path, rec, 2), 0);
    assert_int_equal(r.rows, 0);
    npy_reader_close(&r);
    assert_int_equal(npy_reader_open(&r, path, PHOTON, 2), -1);
    assert_non_null(strstr(r.error, "shape (0, 6, 8); expected (N, 4, 4)"));
    npy_reader_close(&r);
}

/* What Python writes besides np.save's usual header: versions 2.0 and 3.0,
 * other key orders, double quotes, no trailing comma, Python 2's 10L. */
static void test_header_spellings(void **state)
{
    (void)state;
    const struct {
        int version;
        const char *dict;
    } good[] = {
        {2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 4), }"},
        {3, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4, 4), }"},
        {1, "{'shape': (3, 4, 4), 'fortran_order': False, 'descr': '<f4'}"},
        {1, "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3L, 4L, 4L)}"},
        {1, "{ 'descr' : '<f4' ,\n 'fortran_order' : False , 'shape' : ( 3 , 4 , 4 , ) , }"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *path = exec_path("spelling.npy");
        write_raw(path, good[i].version, good[i].dict, 3 * 64);
        npy_reader r;
        if (npy_reader_open(&r, path, PHOTON, 2) != 0)
            fail_msg("case %zu: %s", i, r.error);
        assert_int_equal(r.rows, 3);
        float v[48];
        assert_int_equal(npy_reader_read(&r, v, 3), 0);
        assert_float_equal(v[47], 47.0f, 0);
        npy_reader_close(&r);
    }
}

/* Every bad input: refused, the message naming the file and saying what
 * was found and what was expected. */
static void test_bad_inputs(void **state)
{
    (void)state;
    const struct {
        int version;
        const char *dict;
        size_t data;
        const char *message;
    } bad[] = {
        {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 4, 4), }", 256,
         "dtype '<f8' (little-endian float64); expected '<f4' (little-endian float32)"},
        {1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 4, 4), }", 128,
         "dtype '>f4' (big-endian float32)"},
        {1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 4, 4), }", 128,
         "dtype '<i4' (little-endian int32)"},
        {1, "{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (2,), }", 16,
         "structured type; expected '<f4'"},
        {1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 4, 4), }", 128,
         "Fortran order; expected C order"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", 32,
         "shape (2, 4); expected (N, 4, 4)"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 5), }", 160,
         "shape (2, 4, 5); expected (N, 4, 4)"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (32,), }", 128,
         "shape (32,); expected (N, 4, 4)"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4,
         "shape (); expected (N, 4, 4)"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 4), }", 100,
         "truncated: 2 rows need 128 bytes of data, the file holds 100"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 4), }", 0,
         "truncated: 2 rows need 128 bytes of data, the file holds 0"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 4), }", 192,
         "192 bytes of data, 64 more than its 2 rows need"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 4, 4), }", 0,
         "malformed header"},
        {1, "{'descr': '<f4' 'fortran_order': False, 'shape': (2, 4, 4), }", 128,
         "malformed header at byte 16"},
        {1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 4), 'extra': 1}", 128,
         "malformed header"},
        {1, "{'descr': '<f4', 'fortran_order': False}", 128, "malformed header"},
        {1, "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 4, 4)}", 128,
         "malformed header"},
        {4, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 4), }", 128,
         "format version 4.0; expected 1.0, 2.0 or 3.0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = exec_path("bad.npy");
        write_raw(path, bad[i].version == 4 ? 1 : bad[i].version, bad[i].dict, bad[i].data);
        if (bad[i].version == 4) { /* patch the version byte */
            FILE *f = fopen(path, "r+b");
            fseek(f, 6, SEEK_SET);
            fputc(4, f);
            fclose(f);
        }
        npy_reader r;
        assert_int_equal(npy_reader_open(&r, path, PHOTON, 2), -1);
        npy_reader_close(&r);
        if (strstr(r.error, bad[i].message) == NULL || strstr(r.error, path) == NULL)
            fail_msg("case %zu: \"%s\" not in: %s", i, bad[i].message, r.error);
    }
    /* what is not built like a .npy */
    const char *path = exec_path("raw.npy");
    const unsigned char big[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0x70, 0x11, 0x01, 0};
    const unsigned char cut[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
    static const char zip[] = "PK\3\4 a zip file, perhaps an .npz";
    const struct {
        const void *bytes;
        size_t n;
        const char *message;
    } raw[] = {
        {big, sizeof big, "header of 70000 bytes is over 64 KiB"},
        {cut, sizeof cut, "truncated in its header (118 bytes announced)"},
        {zip, sizeof zip - 1, "not a .npy file"},
        {"", 0, "not a .npy file"},
    };
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        write_bytes(path, raw[i].bytes, raw[i].n);
        npy_reader r;
        assert_int_equal(npy_reader_open(&r, path, PHOTON, 2), -1);
        npy_reader_close(&r);
        if (strstr(r.error, raw[i].message) == NULL || strstr(r.error, path) == NULL)
            fail_msg("raw case %zu: \"%s\" not in: %s", i, raw[i].message, r.error);
    }
    npy_reader r;
    assert_int_equal(npy_reader_open(&r, exec_path("missing.npy"), PHOTON, 2), -1);
    assert_non_null(strstr(r.error, "missing.npy: No such file or directory"));
    npy_reader_close(&r);
    assert_int_equal(npy_reader_open(&r, exec_tmpdir(), PHOTON, 2), -1);
    assert_non_null(strstr(r.error, "not a regular file"));
    npy_reader_close(&r);
}

/* An abort leaves nothing, and an old file at the path keeps its bytes;
 * a directory that is not there is an error naming the file. */
static void test_abort_leaves_nothing(void **state)
{
    (void)state;
    const char *dir = fresh_dir("abort");
    char path[600], old[600];
    snprintf(path, sizeof path, "%s/new.npy", dir);
    snprintf(old, sizeof old, "%s/old.npy", dir);
    write_bytes(old, "old bytes", 9);
    float *rows = pattern(100, 0);
    npy_writer w;
    assert_int_equal(npy_writer_open(&w, path, PHOTON, 2), 0);
    assert_int_equal(npy_writer_append(&w, rows, 100), 0);
    assert_int_equal(entries(dir), 2); /* old.npy and the temporary */
    npy_writer_abort(&w);
    npy_writer_abort(&w); /* twice is harmless */
    assert_int_equal(entries(dir), 1);
    assert_int_equal(npy_writer_open(&w, old, PHOTON, 2), 0);
    assert_int_equal(npy_writer_append(&w, rows, 100), 0);
    assert_int_equal(npy_writer_finish(&w), 0);
    npy_writer_abort(&w); /* finished but not renamed */
    assert_int_equal(entries(dir), 1);
    FILE *f = fopen(old, "rb");
    char got[16] = "";
    assert_int_equal(fread(got, 1, sizeof got, f), 9);
    fclose(f);
    assert_memory_equal(got, "old bytes", 9);
    snprintf(path, sizeof path, "%s/no/such/dir/x.npy", dir);
    assert_int_equal(npy_writer_open(&w, path, PHOTON, 2), -1);
    assert_non_null(strstr(w.error, "no/such/dir/x.npy: cannot create a file in its directory"));
    npy_writer_abort(&w);
    free(rows);
}

/* A write that fails half way (the file size limit: EFBIG, as a full disk
 * gives ENOSPC): the error says so and no temporary is left. */
static void test_failed_write_leaves_nothing(void **state)
{
    (void)state;
    const char *dir = fresh_dir("efbig");
    char path[600];
    snprintf(path, sizeof path, "%s/big.npy", dir);
    struct rlimit saved, small;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    small = saved;
    small.rlim_cur = 65536;
    void (*old)(int) = signal(SIGXFSZ, SIG_IGN);
    float *rows = pattern(4096, 0); /* 256 KiB */
    npy_writer w;
    assert_int_equal(npy_writer_open(&w, path, PHOTON, 2), 0);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = npy_writer_append(&w, rows, 4096);
    if (rc == 0)
        rc = npy_writer_commit(&w);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, old);
    assert_int_equal(rc, -1);
    printf("# %s\n", w.error);
    assert_non_null(strstr(w.error, "big.npy: write failed"));
    assert_non_null(strstr(w.error, "File too large"));
    npy_writer_abort(&w);
    assert_int_equal(entries(dir), 0);
    free(rows);
}

/* A signal in the middle of a run removes the temporaries of open writers. */
static void test_signal_removes_temporaries(void **state)
{
    (void)state;
    const char *dir = fresh_dir("signal");
    char path[600];
    snprintf(path, sizeof path, "%s/killed.npy", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        npy_remove_temporaries_on_signals(NULL);
        npy_writer w1, w2;
        float *rows = pattern(10, 0);
        if (npy_writer_open(&w1, path, PHOTON, 2) == 0 &&
            npy_writer_open(&w2, path, PHOTON, 2) == 0 && npy_writer_append(&w1, rows, 10) == 0 &&
            entries(dir) == 2)
            raise(SIGTERM);
        _exit(3);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGTERM);
    assert_int_equal(entries(dir), 0);
}

/* ---- NumPy itself (--numpy) ----------------------------------------- */

static const char *python(void)
{
    const char *p = getenv("PRISM_PYTHON3");
    return p != NULL && p[0] ? p : "/usr/bin/python3";
}

static void run_python(const char *script, const char *arg, exec_run *run)
{
    const char *argv[] = {python(), "-c", script, arg, NULL};
    exec_program(run, argv, true);
}

static const char NUMPY_WRITES[] = "import sys, numpy as np\n"
                                   "d = sys.argv[1]\n"
                                   "a = np.arange(5 * 16, dtype=np.float32).reshape(5, 4, 4)\n"
                                   "np.save(d + '/np_v1.npy', a)\n"
                                   "for v in (2, 3):\n"
                                   "    with open(d + '/np_v%d.npy' % v, 'wb') as f:\n"
                                   "        np.lib.format.write_array(f, a, version=(v, 0))\n"
                                   "np.save(d + '/np_f8.npy', a.astype(np.float64))\n"
                                   "np.save(d + '/np_fortran.npy', np.asfortranarray(a))\n"
                                   "np.save(d + '/np_shape.npy', a.reshape(5, 16))\n"
                                   "np.save(d + '/np_big.npy', a.astype('>f4'))\n";

static void test_numpy_writes(void **state)
{
    (void)state;
    exec_run run;
    run_python(NUMPY_WRITES, exec_tmpdir(), &run);
    assert_int_equal(run.exit_code, 0);
    const char *good[3] = {"np_v1.npy", "np_v2.npy", "np_v3.npy"};
    for (int i = 0; i < 3; i++) {
        npy_reader r;
        if (npy_reader_open(&r, exec_path(good[i]), PHOTON, 2))
            fail_msg("%s", r.error);
        assert_int_equal(r.version, i + 1);
        assert_int_equal(r.rows, 5);
        float v[80];
        assert_int_equal(npy_reader_read(&r, v, 5), 0);
        for (int k = 0; k < 80; k++)
            assert_float_equal(v[k], (float)k, 0);
        npy_reader_close(&r);
    }
    const char *bad[4][2] = {{"np_f8.npy", "dtype '<f8'"},
                             {"np_fortran.npy", "Fortran order"},
                             {"np_shape.npy", "shape (5, 16); expected (N, 4, 4)"},
                             {"np_big.npy", "dtype '>f4' (big-endian float32)"}};
    for (int i = 0; i < 4; i++) {
        npy_reader r;
        assert_int_equal(npy_reader_open(&r, exec_path(bad[i][0]), PHOTON, 2), -1);
        npy_reader_close(&r);
        if (strstr(r.error, bad[i][1]) == NULL)
            fail_msg("%s: \"%s\" not in: %s", bad[i][0], bad[i][1], r.error);
    }
}

static const char NUMPY_READS[] =
    "import sys, numpy as np\n"
    "d = sys.argv[1]\n"
    "h = np.load(d + '/ours.npy')\n"
    "assert h.dtype == np.float32 and h.shape == (7, 4, 4), (h.dtype, h.shape)\n"
    "u = h.view(np.uint32)\n"
    "want = (np.arange(7 * 16, dtype=np.float32) * 0.5).reshape(7, 4, 4)\n"
    "assert (h[:, :2] == want[:, :2]).all() and (h[:, 3] == want[:, 3]).all()\n"
    "assert (u[:, 2, 3] == 0x80000000 + np.arange(7)).all(), u[:, 2, 3]\n"
    "m = np.load(d + '/ours.npy', mmap_mode='r')\n"
    "assert (np.asarray(m).view(np.uint32) == u).all()\n"
    "r = np.load(d + '/ours_records.npy')\n"
    "assert r.dtype == np.float32 and r.shape == (3, 6, 8), r.shape\n"
    "print('numpy read them')\n";

static void test_numpy_reads(void **state)
{
    (void)state;
    npy_writer w;
    float *a = pattern(3, 0), *b = pattern(4, 3);
    assert_int_equal(npy_writer_open(&w, exec_path("ours.npy"), PHOTON, 2), 0);
    assert_int_equal(npy_writer_append(&w, a, 3), 0);
    assert_int_equal(npy_writer_append(&w, b, 4), 0);
    assert_int_equal(npy_writer_commit(&w), 0);
    const uint64_t rec[2] = {6, 8};
    float zeros[3 * 48] = {0};
    assert_int_equal(npy_writer_open(&w, exec_path("ours_records.npy"), rec, 2), 0);
    assert_int_equal(npy_writer_append(&w, zeros, 3), 0);
    assert_int_equal(npy_writer_commit(&w), 0);
    exec_run run;
    run_python(NUMPY_READS, exec_tmpdir(), &run);
    assert_int_equal(run.exit_code, 0);
    assert_non_null(strstr(run.out, "numpy read them"));
    free(a);
    free(b);
}

static int numpy_main(void)
{
    static exec_run run;
    const char *argv[] = {python(), "-c", "import numpy", NULL};
    exec_program(&run, argv, true);
    if (run.exit_code != 0) {
        printf("%s cannot import numpy: skipped (Debian: apt-get install python3-numpy)\n",
               python());
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numpy_writes),
        cmocka_unit_test(test_numpy_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--numpy") == 0)
        return numpy_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_header_spellings),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_abort_leaves_nothing),
        cmocka_unit_test(test_failed_write_leaves_nothing),
        cmocka_unit_test(test_signal_removes_temporaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
