/* The scene side of start-up on its own thread: load the file, find the
 * world volume, and build the BVH on the host when the main thread says
 * so (once the engine is open: with CUDA the upload builds it on the
 * device instead), while the main thread opens the display and the engine
 * (GL and CUDA start-up mostly wait on drivers, so the two overlap). The
 * main thread may take the scene as soon as it is loaded (the raster view
 * needs no BVH) and the BVH once it is built. */
#ifndef VIEWER_SCENE_JOB_H
#define VIEWER_SCENE_JOB_H

#include <pthread.h>
#include <stdbool.h>

struct viewer_app;

typedef struct viewer_scene_job {
    struct viewer_app *app; /* the job writes scene, world, bvh, startup.load/bvh */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int loaded;    /* 0 pending, 1 scene ready, -1 failed */
    int result;    /* the whole job: 0, or -1 (said on stderr) */
    bool running;  /* a thread to join */
    bool threaded; /* the work runs on a thread of its own */
    int host_bvh;  /* -1 undecided, 0 no host build, 1 build on the host */
} viewer_scene_job;

/* Start the job (or, if no thread can be made, run it here). Returns 0,
 * or -1 when it could not run at all. */
int viewer_scene_job_start(viewer_scene_job *job, struct viewer_app *app);
/* Say whether the job builds the BVH on the host (the job waits for this
 * after loading). Call exactly once after start, on every path. */
void viewer_scene_job_decide(viewer_scene_job *job, bool host_bvh);
/* Wait until the scene is loaded (and the world found). Returns 0, or -1
 * when loading failed. */
int viewer_scene_job_wait_loaded(viewer_scene_job *job);
/* Without waiting: 1 when the scene is loaded (and the world found), 0
 * while it loads, -1 when loading failed. */
int viewer_scene_job_poll_loaded(viewer_scene_job *job);
/* Wait for the end (the BVH built, if on the host). Returns the job's result. Safe to call
 * once after start, whatever happened. */
int viewer_scene_job_join(viewer_scene_job *job);

#endif
