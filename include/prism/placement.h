/* Placement: which array of the geometry lives in device memory and which in
 * mapped write-combined host memory, and why. A pure function of the arrays,
 * the memory figures and a policy, so every rule is unit-tested with made-up
 * figures; the upload (prism/geometry.h) only carries the plan out.
 *
 * Functions: prism_placement_plan, prism_placement_policy_name,
 *            prism_placement_policy_parse. */
#ifndef PRISM_PLACEMENT_H
#define PRISM_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum prism_placement_policy {
    /* Hottest arrays (most reads per byte) to the device first; a splittable
     * array that does not fit keeps its head on the device and its tail mapped;
     * what does not fit is mapped. "Fits": in free memory above the reserve,
     * and within device_budget where one is given. */
    PRISM_PLACEMENT_AUTO = 0,
    /* Everything on the device, or PRISM_ERROR_PLACEMENT saying how much is
     * missing (free memory or device_budget). */
    PRISM_PLACEMENT_DEVICE,
    /* Everything in mapped write-combined host memory. */
    PRISM_PLACEMENT_MAPPED,
    /* Chroma's GPUGeometry rule, exactly: other arrays (per-triangle codes) go
     * to the device as Chroma's ga.to_gpu did; the nodes are split at
     * max((free - reserve) / node_size, 100) nodes (at most all of them);
     * then triangles, then vertices, are promoted when
     * bytes < free - reserve, free being lowered after each promotion as
     * Chroma's fresh cuda.mem_get_info() saw it. */
    PRISM_PLACEMENT_CHROMA,
    PRISM_PLACEMENT_POLICY_COUNT_
} prism_placement_policy;

/* What an array is, for the rules that name arrays (chroma). */
typedef enum prism_array_role {
    PRISM_ARRAY_OTHER = 0,
    PRISM_ARRAY_NODES,
    PRISM_ARRAY_VERTICES,
    PRISM_ARRAY_TRIANGLES
} prism_array_role;

/* One array to place. A split lands on a multiple of element_size bytes from
 * the start: for BVH nodes in breadth-first order (prism/bvh.h) every prefix
 * is the top of the tree, so the device keeps the hottest nodes. */
typedef struct prism_placement_array {
    const char *name; /* "bvh.nodes"; kept by pointer in the plan */
    size_t bytes;
    double heat; /* expected reads per byte during traversal */
    bool splittable;
    size_t element_size; /* split granularity in bytes; 0 = 1 */
    prism_array_role role;
} prism_placement_array;

/* Reserve value meaning "leave nothing free" (0 means the default). */
#define PRISM_PLACEMENT_NO_RESERVE SIZE_MAX
/* Chroma's min_free_gpu_mem. */
#define PRISM_PLACEMENT_DEFAULT_RESERVE ((size_t)300000000)

/* Defaults (all-zero): policy AUTO, reserve 300 MB, mapped memory allowed,
 * no device budget.
 * free_bytes/total_bytes are the device's figures (cudaMemGetInfo, or the
 * host backend's made-up ones); free_bytes = 0 means no device memory free.
 *
 * device_budget: at most this many bytes of the arrays together on the
 * device (0 = no cap), on top of what free memory and the reserve allow.
 * AUTO fills it hottest first and splits a splittable array at the last
 * whole element that fits, so a budget smaller than the BVH nodes puts the
 * top levels of the tree on the device and maps the rest; DEVICE fails
 * when the arrays exceed it; MAPPED places nothing on the device anyway;
 * CHROMA refuses one (PRISM_ERROR_INVALID_ARGUMENT), its rule keeping at
 * least 100 nodes on the device whatever is free. */
typedef struct prism_placement_desc {
    const prism_placement_array *arrays;
    size_t array_count;
    size_t free_bytes;
    size_t total_bytes;
    size_t reserve; /* 0 = 300 MB; PRISM_PLACEMENT_NO_RESERVE = 0 bytes */
    prism_placement_policy policy;
    bool deny_mapped;     /* the context refuses mapped memory: nothing may be mapped */
    size_t device_budget; /* 0 = no cap; see above */
} prism_placement_desc;

/* Where one array goes. device_bytes + mapped_bytes == bytes. A split array
 * has its first device_bytes on the device and the rest mapped. */
typedef struct prism_placement {
    const char *name;
    size_t bytes;
    size_t device_bytes;
    size_t mapped_bytes;
    char reason[200]; /* in words, with the figures that decided it */
} prism_placement;

/** Plan the placement: plan[i] is for desc->arrays[i]. Pure: no allocation,
 * no device call. On failure every plan entry is still filled (all mapped or
 * all device as far as decided) and `message` says why.
 * @errors PRISM_ERROR_INVALID_ARGUMENT (NULL desc/plan, arrays NULL with a
 *   count, unknown policy, a device budget with policy chroma),
 *   PRISM_ERROR_PLACEMENT (device policy that does not fit in free memory or
 *   the device budget; anything that must be mapped while deny_mapped),
 *   PRISM_ERROR_MAPPED_NOT_ALLOWED (mapped policy with deny_mapped).
 * @thread_safety Any thread; reads desc and its arrays only. */
PRISM_API prism_result prism_placement_plan(const prism_placement_desc *desc, prism_placement *plan,
                                            char *message, size_t message_size);

/** "auto", "device", "mapped", "chroma" ("?" for anything else).
 * @errors None.
 * @thread_safety Any thread. */
PRISM_API const char *prism_placement_policy_name(prism_placement_policy policy);
/** The inverse of prism_placement_policy_name; false for an unknown name.
 * @errors None (false for NULL or an unknown name: *policy is left alone).
 * @thread_safety Any thread. */
PRISM_API bool prism_placement_policy_parse(const char *name, prism_placement_policy *policy);

#ifdef __cplusplus
}
#endif

#endif
