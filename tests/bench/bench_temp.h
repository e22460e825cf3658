/* A benchmark's own folder (its report folder): made fresh, so that what earlier runs left
 * there (reports lagscope reads at start) cannot change the figures, and removed at the end.
 * Needs _XOPEN_SOURCE >= 500 (nftw) or _GNU_SOURCE before the first include. */
#ifndef LAGSCOPE_BENCH_TEMP_H
#define LAGSCOPE_BENCH_TEMP_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

/* A new empty folder $TMPDIR/NAME.XXXXXX (or under /tmp) in path; 0, or -1 with errno. */
static inline int bench_temp_folder(char *path, size_t size, const char *name) {
  const char *tmp = getenv("TMPDIR");
  int n = snprintf(path, size, "%s/%s.XXXXXX", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", name);
  if (n <= 0 || (size_t)n >= size) return -1;
  return mkdtemp(path) != NULL ? 0 : -1;
}

static inline int bench_remove_entry(const char *path, const struct stat *sb, int flag,
                                     struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* The folder and everything in it (links are removed, not followed). */
static inline void bench_remove_folder(const char *path) {
  nftw(path, bench_remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

#endif
