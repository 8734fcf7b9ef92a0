/* The DLPack exchange ABI (github.com/dmlc/dlpack, versions 0.x and 1.x),
 * written out here from its specification rather than vendored: it is a
 * handful of C structs that every array library lays out alike, and these
 * are the only ones the extension needs. Field order and widths are the
 * ABI; names are ours. */
#ifndef PYPRISM_DLPACK_ABI_H
#define PYPRISM_DLPACK_ABI_H

#include <stdint.h>

/* Device types (DLDeviceType) we produce or accept. */
enum {
    PYPRISM_DL_CPU = 1,
    PYPRISM_DL_CUDA = 2,
    PYPRISM_DL_CUDA_HOST = 3, /* pinned host memory */
    PYPRISM_DL_CUDA_MANAGED = 13
};

/* Type codes (DLDataTypeCode). */
enum { PYPRISM_DL_INT = 0, PYPRISM_DL_UINT = 1, PYPRISM_DL_FLOAT = 2 };

typedef struct pyprism_dl_device {
    int32_t device_type;
    int32_t device_id;
} pyprism_dl_device;

typedef struct pyprism_dl_dtype {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} pyprism_dl_dtype;

typedef struct pyprism_dl_tensor {
    void *data;
    pyprism_dl_device device;
    int32_t ndim;
    pyprism_dl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL = C-contiguous */
    uint64_t byte_offset;
} pyprism_dl_tensor;

/* The unversioned managed tensor: capsule name "dltensor". */
typedef struct pyprism_dl_managed {
    pyprism_dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct pyprism_dl_managed *self);
} pyprism_dl_managed;

typedef struct pyprism_dl_version {
    uint32_t major;
    uint32_t minor;
} pyprism_dl_version;

/* The versioned managed tensor (DLPack >= 1.0): capsule name
 * "dltensor_versioned". */
typedef struct pyprism_dl_managed_versioned {
    pyprism_dl_version version;
    void *manager_ctx;
    void (*deleter)(struct pyprism_dl_managed_versioned *self);
    uint64_t flags;
    pyprism_dl_tensor dl_tensor;
} pyprism_dl_managed_versioned;

#define PYPRISM_DL_FLAG_READ_ONLY (1ull << 0)
#define PYPRISM_DL_FLAG_IS_COPIED (1ull << 1)

/* Capsule names: a consumer renames the capsule to the "used_" name when
 * it takes the tensor, and then owns calling the deleter. */
#define PYPRISM_DL_CAPSULE "dltensor"
#define PYPRISM_DL_CAPSULE_USED "used_dltensor"
#define PYPRISM_DL_CAPSULE_VERSIONED "dltensor_versioned"
#define PYPRISM_DL_CAPSULE_VERSIONED_USED "used_dltensor_versioned"

#endif
