/*===- rapid.h - rapid as a library: a C interface --------------*- C -*-===*\
 *
 * What `rapidc FILE --format=json` does, for programs and other languages
 * (python/rapid wraps it with ctypes): analyze a file, or source text, with
 * `--set` overrides, run every point and get one JSON object per point, the
 * same bytes rapidc prints. Diagnostics come back as text, as rapidc writes
 * them. Strings returned are the caller's to free with rapid_free.
\*===----------------------------------------------------------------------===*/
#ifndef RAPID_API_RAPID_H
#define RAPID_API_RAPID_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The rapid version, "0.1.0". */
const char *rapid_version(void);

/* Runs every point of `file`, or of `source` when it is not NULL (then
 * `file` names it in diagnostics and `import "x.rapid"` resolves from its
 * folder; NULL: "<source>.rapid" in the working directory). `overrides` are
 * `--set` arguments (NAME=VALUE), `stdlib` the folder of std.* (NULL: the
 * build's), `jobs` the points run at once (0: one per core). Returns the
 * JSON lines, or NULL when the input has errors; `*diagnostics` (when not
 * NULL) receives everything reported, and `*status` rapidc's exit status
 * (0: every point ran and fits). */
char *rapid_run(const char *file, const char *source, const char *const *overrides, size_t n_overrides,
                const char *stdlib, unsigned jobs, char **diagnostics, int *status);

void rapid_free(char *text);

#ifdef __cplusplus
}
#endif

#endif
