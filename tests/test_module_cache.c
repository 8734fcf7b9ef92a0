/* The kernel cache without a GPU (engine/module/cache.c): the key and what
 * changes it, where the cache lives, the entry format and its faults, and
 * files written and read by several processes at once. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "exec_util.h"
#include "engine/module/cache.h"
#include "prism/context.h"

static const char *const two_options[2] = {"-DA", "B"};

static prism__kc_inputs base_inputs(void)
{
    prism__kc_inputs in = {
        .source = "extern \"C\" __global__ void k() {}",
        .name = "k.cu",
        .options = two_options,
        .option_count = 2,
        .arch = "sm_90",
        .nvrtc = "/usr/lib/libnvrtc.so.13.0.88 109338064 1760564160.0 42",
        .driver_version = 13000,
        .prism_version = "0.1.0",
        .headers_digest = "abc",
    };
    return in;
}

static uint64_t key_hash(const prism__kc_inputs *in)
{
    prism__kc_key k;
    assert_int_equal(prism__kc_key_make(in, &k), PRISM_SUCCESS);
    uint64_t h = k.hash;
    assert_int_equal(k.hash, prism__kc_hash(k.text, k.size, PRISM__KC_HASH_SEED));
    prism__kc_key_free(&k);
    return h;
}

/* The same inputs give the same key; each input changes it. */
static void test_key_depends_on_every_input(void **state)
{
    (void)state;
    const prism__kc_inputs base = base_inputs();
    const uint64_t h = key_hash(&base);
    assert_int_equal(key_hash(&base), h);
    const char *const other_options[2] = {"-DA", "C"};
    prism__kc_inputs v[10];
    for (int i = 0; i < 10; i++)
        v[i] = base;
    v[0].source = "extern \"C\" __global__ void k() { }";
    v[1].name = "other.cu";
    v[2].options = other_options;
    v[3].option_count = 1;
    v[4].arch = "sm_80";
    v[5].nvrtc = "/usr/lib/libnvrtc.so.13.0.88 109338064 1760564160.0 43";
    v[6].nvrtc = "/usr/lib/libnvrtc.so.13.1.10 109338064 1760564160.0 42";
    v[7].driver_version = 13010;
    v[8].prism_version = "0.2.0";
    v[9].headers_digest = "abd";
    uint64_t seen[10];
    for (int i = 0; i < 10; i++) {
        seen[i] = key_hash(&v[i]);
        assert_true(seen[i] != h);
        for (int j = 0; j < i; j++)
            assert_true(seen[i] != seen[j]);
    }
}

/* Fields carry their lengths: options cannot run into each other, nor the
 * source into the options. */
static void test_key_is_unambiguous(void **state)
{
    (void)state;
    prism__kc_inputs a = base_inputs(), b = base_inputs(), c = base_inputs();
    const char *const joined[1] = {"-DAB"};
    const char *const spaced[1] = {"-DA B"};
    b.options = joined;
    b.option_count = 1;
    c.options = spaced;
    c.option_count = 1;
    assert_true(key_hash(&a) != key_hash(&b));
    assert_true(key_hash(&b) != key_hash(&c));
    prism__kc_inputs none = base_inputs();
    none.options = NULL;
    none.option_count = 0;
    prism__kc_key k;
    assert_int_equal(prism__kc_key_make(&none, &k), PRISM_SUCCESS);
    assert_non_null(strstr(k.text, "options 1\n0\n"));
    prism__kc_key_free(&k);
    prism__kc_key_free(NULL);
}

static void test_directory_rules(void **state)
{
    (void)state;
    char d[64];
    assert_true(prism__kc_directory("/given", "/p", "/x", "/h", d, sizeof d));
    assert_string_equal(d, "/given");
    assert_true(prism__kc_directory(NULL, "/p", "/x", "/h", d, sizeof d));
    assert_string_equal(d, "/p");
    assert_true(prism__kc_directory("", "", "/x", "/h", d, sizeof d));
    assert_string_equal(d, "/x/prism/kernels");
    /* a relative XDG_CACHE_HOME is invalid (XDG spec): HOME's default */
    assert_true(prism__kc_directory(NULL, NULL, "rel", "/h", d, sizeof d));
    assert_string_equal(d, "/h/.cache/prism/kernels");
    assert_true(prism__kc_directory(NULL, NULL, NULL, "/h", d, sizeof d));
    assert_string_equal(d, "/h/.cache/prism/kernels");
    assert_false(prism__kc_directory(NULL, NULL, NULL, NULL, d, sizeof d));
    assert_false(prism__kc_directory(NULL, "", "", "", d, sizeof d));
    char small[8];
    assert_false(prism__kc_directory(NULL, NULL, NULL, "/home/someone", small, sizeof small));
    assert_true(prism__kc_path("/c", 0x1234, d, sizeof d));
    assert_string_equal(d, "/c/0000000000001234.prismkc");
    assert_false(prism__kc_path("/a/long/directory", 1, small, sizeof small));
}

static void make_key(prism__kc_key *k, const char *source)
{
    prism__kc_inputs in = base_inputs();
    in.source = source;
    assert_int_equal(prism__kc_key_make(&in, k), PRISM_SUCCESS);
}

static void test_entry_roundtrip_and_faults(void **state)
{
    (void)state;
    prism__kc_key key, other;
    make_key(&key, "a");
    make_key(&other, "b");
    const char payload[] = "\x7f"
                           "ELF and some code";
    void *e;
    size_t n;
    assert_int_equal(prism__kc_encode(&key, payload, sizeof payload, PRISM__KC_CUBIN, &e, &n),
                     PRISM_SUCCESS);
    assert_int_equal(n, 40 + key.size + sizeof payload);
    const void *p;
    size_t ps;
    uint32_t flags;
    char why[256];
    assert_int_equal(prism__kc_decode(e, n, &key, &p, &ps, &flags, why, sizeof why),
                     PRISM__KC_VALID);
    assert_int_equal(ps, sizeof payload);
    assert_memory_equal(p, payload, sizeof payload);
    assert_int_equal(flags, PRISM__KC_CUBIN);
    assert_string_equal(why, "");
    /* the right entry for other inputs: foreign */
    assert_int_equal(prism__kc_decode(e, n, &other, &p, &ps, &flags, why, sizeof why),
                     PRISM__KC_FOREIGN);
    assert_null(p);
    assert_non_null(strstr(why, "other inputs"));
    /* every cut: corrupt */
    for (size_t cut = 0; cut < n; cut++)
        assert_int_equal(prism__kc_decode(e, cut, &key, &p, &ps, &flags, NULL, 0),
                         PRISM__KC_CORRUPT);
    /* every flipped byte: never valid */
    unsigned char *b = e;
    for (size_t i = 0; i < n; i++) {
        b[i] ^= 0x20;
        assert_int_not_equal(prism__kc_decode(e, n, &key, &p, &ps, &flags, NULL, 0),
                             PRISM__KC_VALID);
        b[i] ^= 0x20;
    }
    /* a grown file: corrupt */
    unsigned char *grown = malloc(n + 1);
    memcpy(grown, e, n);
    grown[n] = 0;
    assert_int_equal(prism__kc_decode(grown, n + 1, &key, &p, &ps, &flags, why, sizeof why),
                     PRISM__KC_CORRUPT);
    assert_non_null(strstr(why, "header promises"));
    free(grown);
    /* another format version: foreign, whatever follows */
    b[8] = 2;
    assert_int_equal(prism__kc_decode(e, n, &key, &p, &ps, &flags, why, sizeof why),
                     PRISM__KC_FOREIGN);
    assert_non_null(strstr(why, "format 2"));
    b[8] = 1;
    b[0] = 'X';
    assert_int_equal(prism__kc_decode(e, n, &key, &p, &ps, &flags, why, sizeof why),
                     PRISM__KC_CORRUPT);
    assert_non_null(strstr(why, "not a Prism"));
    free(e);
    prism__kc_key_free(&key);
    prism__kc_key_free(&other);
}

/* ---- files */

static char warnings[4096];

static void capture(void *user, prism_log_level level, const char *message)
{
    (void)user;
    if (level >= PRISM_LOG_WARNING) {
        strncat(warnings, message, sizeof warnings - strlen(warnings) - 2);
        strcat(warnings, "\n");
    }
}

static prism_context *logging_context(void)
{
    prism_context_desc d = {.backend = PRISM_BACKEND_HOST, .log = capture};
    prism_context *ctx = NULL;
    assert_int_equal(prism_context_create(&d, &ctx), PRISM_SUCCESS);
    warnings[0] = 0;
    return ctx;
}

static void temp_dir(char *out, size_t size)
{
    snprintf(out, size, "/tmp/prism-kc-XXXXXX");
    assert_non_null(mkdtemp(out));
}

static void remove_tree(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void test_store_then_load(void **state)
{
    (void)state;
    prism_context *ctx = logging_context();
    char root[64], dir[128], path[256];
    temp_dir(root, sizeof root);
    snprintf(dir, sizeof dir, "%s/made/by/store", root);
    prism__kc_key key;
    make_key(&key, "a");
    const char payload[] = ".version 9.0\n.entry k\n";
    void *got = NULL;
    size_t n = 0;
    uint32_t flags = 7;
    assert_int_equal(prism__kc_load(ctx, dir, &key, &got, &n, &flags), PRISM__KC_MISS);
    char why[256];
    assert_int_equal(prism__kc_store(dir, &key, payload, sizeof payload, 0, why, sizeof why),
                     PRISM_SUCCESS);
    assert_int_equal(exec_count_entries(dir, false), 1);
    assert_int_equal(exec_count_entries(dir, true), 0); /* no temporary left */
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(prism__kc_load(ctx, dir, &key, &got, &n, &flags), PRISM__KC_HIT);
    assert_int_equal(n, sizeof payload);
    assert_memory_equal(got, payload, n);
    assert_int_equal(flags, 0);
    free(got);
    assert_string_equal(warnings, "");

    /* Damaged on disk: removed with a warning naming it, then a miss. */
    assert_true(prism__kc_path(dir, key.hash, path, sizeof path));
    assert_int_equal(truncate(path, 45), 0);
    assert_int_equal(prism__kc_load(ctx, dir, &key, &got, &n, &flags), PRISM__KC_REJECTED);
    assert_null(got);
    assert_non_null(strstr(warnings, path));
    assert_non_null(strstr(warnings, "removed"));
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(prism__kc_load(ctx, dir, &key, &got, &n, &flags), PRISM__KC_MISS);

    /* Another key's entry under this key's name: foreign, removed. */
    prism__kc_key other;
    make_key(&other, "b");
    void *e;
    size_t es;
    assert_int_equal(prism__kc_encode(&other, payload, sizeof payload, 0, &e, &es), PRISM_SUCCESS);
    write_bytes(path, e, es);
    free(e);
    warnings[0] = 0;
    assert_int_equal(prism__kc_load(ctx, dir, &key, &got, &n, &flags), PRISM__KC_REJECTED);
    assert_non_null(strstr(warnings, "other inputs"));
    assert_int_not_equal(access(path, F_OK), 0);

    /* Garbage, and an empty file. */
    write_bytes(path, "garbage", 7);
    assert_int_equal(prism__kc_load(ctx, dir, &key, &got, &n, &flags), PRISM__KC_REJECTED);
    write_bytes(path, "", 0);
    assert_int_equal(prism__kc_load(ctx, dir, &key, &got, &n, &flags), PRISM__KC_REJECTED);
    assert_int_not_equal(access(path, F_OK), 0);

    /* prism__kc_remove: a binary the driver refused. */
    assert_int_equal(prism__kc_store(dir, &key, payload, sizeof payload, 0, why, sizeof why),
                     PRISM_SUCCESS);
    warnings[0] = 0;
    prism__kc_remove(ctx, dir, &key, "the driver refused its binary");
    assert_non_null(strstr(warnings, "the driver refused"));
    assert_int_not_equal(access(path, F_OK), 0);

    prism__kc_key_free(&other);
    prism__kc_key_free(&key);
    remove_tree(root);
    assert_int_equal(prism_context_destroy(ctx), PRISM_SUCCESS);
}

/* A directory that cannot be made: PRISM_ERROR_IO with the reason, nothing
 * written anywhere. */
static void test_store_failures(void **state)
{
    (void)state;
    char root[64], dir[128], file[128];
    temp_dir(root, sizeof root);
    snprintf(file, sizeof file, "%s/file", root);
    write_bytes(file, "x", 1);
    snprintf(dir, sizeof dir, "%s/file/sub", root);
    prism__kc_key key;
    make_key(&key, "a");
    char why[512] = "";
    assert_int_equal(prism__kc_store(dir, &key, "p", 1, 0, why, sizeof why), PRISM_ERROR_IO);
    assert_non_null(strstr(why, "cannot create"));
    assert_int_equal(prism__kc_store(file, &key, "p", 1, 0, why, sizeof why), PRISM_ERROR_IO);
    assert_non_null(strstr(why, "not a directory"));
    assert_int_equal(exec_count_entries(root, false), 1);
    prism__kc_key_free(&key);
    remove_tree(root);
}

/* Writers replace one entry over and over while readers read it: every
 * read is the whole entry or none, never a damaged one (which the readers
 * would reject and remove). */
static void test_concurrent_processes(void **state)
{
    (void)state;
    enum { WRITERS = 3, READERS = 3, ROUNDS = 40, BYTES = 1 << 20 };
    char dir[64];
    temp_dir(dir, sizeof dir);
    prism__kc_key key;
    make_key(&key, "concurrent");
    unsigned char *payload = malloc(BYTES);
    for (size_t i = 0; i < BYTES; i++)
        payload[i] = (unsigned char)(i * 2654435761u >> 13);
    pid_t pids[WRITERS + READERS];
    for (int w = 0; w < WRITERS + READERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] != 0)
            continue;
        int bad = 0;
        for (int i = 0; i < ROUNDS; i++) {
            if (w < WRITERS) {
                char why[256];
                bad += prism__kc_store(dir, &key, payload, BYTES, PRISM__KC_CUBIN, why,
                                       sizeof why) != PRISM_SUCCESS;
            } else {
                void *got;
                size_t n;
                uint32_t flags;
                prism__kc_lookup l = prism__kc_load(NULL, dir, &key, &got, &n, &flags);
                if (l == PRISM__KC_HIT)
                    bad += n != BYTES || memcmp(got, payload, BYTES) != 0 ||
                           flags != PRISM__KC_CUBIN;
                bad += l == PRISM__KC_REJECTED;
                free(got);
            }
        }
        _exit(bad > 0 ? 1 : 0);
    }
    for (int w = 0; w < WRITERS + READERS; w++) {
        int status = 0;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(exec_count_entries(dir, false), 1);
    assert_int_equal(exec_count_entries(dir, true), 0);
    free(payload);
    prism__kc_key_free(&key);
    remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_depends_on_every_input),
        cmocka_unit_test(test_key_is_unambiguous),
        cmocka_unit_test(test_directory_rules),
        cmocka_unit_test(test_entry_roundtrip_and_faults),
        cmocka_unit_test(test_store_then_load),
        cmocka_unit_test(test_store_failures),
        cmocka_unit_test(test_concurrent_processes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
