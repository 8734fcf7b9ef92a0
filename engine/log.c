/* Logging and error recording through a context's callback. */
#include <stdio.h>
#include <string.h>

#include "context_internal.h"

void prism__vlog(const prism_context *ctx, prism_log_level level, const char *fmt, va_list ap)
{
    if (!ctx || !ctx->log)
        return;
    prism_log_level threshold = ctx->log_level ? ctx->log_level : PRISM_LOG_INFO;
    if (level < threshold)
        return;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    ctx->log(ctx->log_user, level, line);
}

void prism__log(const prism_context *ctx, prism_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    prism__vlog(ctx, level, fmt, ap);
    va_end(ap);
}

prism_result prism__error(prism_context *ctx, prism_result result, const char *fmt, ...)
{
    if (!ctx)
        return result;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->last_error, sizeof ctx->last_error, fmt, ap);
    va_end(ap);
    prism__log(ctx, PRISM_LOG_ERROR, "%s", ctx->last_error);
    return result;
}

const char *prism_context_last_error(const prism_context *ctx)
{
    return ctx ? ctx->last_error : "";
}

void prism__appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *at = buf && *len < size ? buf + *len : NULL;
    int n = vsnprintf(at, at ? size - *len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len += (size_t)n;
}
