/* Under AddressSanitizer, Mesa's GL driver must stay loaded until the
 * process ends: eglTerminate and glfwTerminate unload it, and the blocks
 * Mesa leaks then show up with "<unknown module>" stacks that no
 * suppression can name. Kept loaded, they are attributed to Mesa's
 * libraries and tests/lsan.supp suppresses them. Everything else is
 * released as usual. */
#ifndef VIEWER_SANITIZER_H
#define VIEWER_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define VIEWER_KEEP_GL_DRIVER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VIEWER_KEEP_GL_DRIVER 1
#endif
#endif
#ifndef VIEWER_KEEP_GL_DRIVER
#define VIEWER_KEEP_GL_DRIVER 0
#endif

#endif
