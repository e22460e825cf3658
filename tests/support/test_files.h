/* Files for tests: a path under a folder, and a file written whole (mode 0600); any failure
 * fails the test. */
#ifndef LAGSCOPE_TEST_FILES_H
#define LAGSCOPE_TEST_FILES_H

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline void test_path_in(char *out, size_t size, const char *dir, const char *name) {
  int n = snprintf(out, size, "%s/%s", dir, name);
  CHECK(n > 0 && (size_t)n < size);
}

static inline void test_write_bytes(const char *path, const void *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK_MSG(fd >= 0, "open %s: %s", path, strerror(errno));
  CHECK(write(fd, data, len) == (ssize_t)len);
  close(fd);
}

static inline void test_write_text(const char *path, const char *text) {
  test_write_bytes(path, text, strlen(text));
}

#endif
