/* Prism's whole core API in one include. Each object kind also has its own
 * header (context, scene, bvh, memory, placement, geometry, render,
 * propagate, kernels, module); GL and CUDA types stay out of all of them.
 * Renderers' own CUDA kernels include prism/device.cuh (its C side:
 * prism/device_view.h), which this header leaves out. */
#ifndef PRISM_PRISM_H
#define PRISM_PRISM_H

#include "result.h"
#include "context.h"
#include "scene.h"
#include "bvh.h"
#include "memory.h"
#include "placement.h"
#include "geometry.h"
#include "render.h"
#include "propagate.h"
#include "kernels.h"
#include "module.h"
#include "gensteps.h"

#endif
