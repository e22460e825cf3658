/* lagscope's error codes (LAGSCOPE_ERROR_MAP in core/lagscope.h) cannot be mistaken for a
 * -errno: none lies in -4095..-1, where a failed system call's -errno is (Linux's MAX_ERRNO is
 * 4095), so a port call's documented -errno that reached the same int is never read as a code
 * and is named "UNKNOWN". Each code has its own value, name and sentence; and a real -errno
 * from the port (the folder listing of a closed descriptor) is none of them. */
#define _POSIX_C_SOURCE 200809L /* O_DIRECTORY */
#include "check.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_ERRNO 4095

static int never_called(const char *name, void *ctx) {
  (void)name, (void)ctx;
  return 1;
}

int main(void) {
  static const struct {
    int code;
    const char *name;
  } codes[] = {
#define CODE_(name, value, text) {LAGSCOPE_##name, #name},
      LAGSCOPE_ERROR_MAP(CODE_)
#undef CODE_
  };
  size_t n = sizeof(codes) / sizeof(codes[0]);
  for (size_t i = 0; i < n; i++) {
    int code = codes[i].code;
    CHECK_MSG(code < -MAX_ERRNO, "LAGSCOPE_%s = %d is -errno %d's value too", codes[i].name, code,
              -code);
    CHECK_MSG(strcmp(lagscope_error_name(code), codes[i].name) == 0, "%d is named %s, not %s",
              code, lagscope_error_name(code), codes[i].name);
    CHECK_MSG(strcmp(lagscope_strerror(code), "unknown error") != 0, "LAGSCOPE_%s has no sentence",
              codes[i].name);
    for (size_t j = 0; j < i; j++)
      CHECK_MSG(codes[j].code != code, "LAGSCOPE_%s and LAGSCOPE_%s are both %d", codes[j].name,
                codes[i].name, code);
  }
  /* Every -errno a system call can give: no code's, so no name. */
  for (int e = 1; e <= MAX_ERRNO; e++) {
    CHECK_MSG(strcmp(lagscope_error_name(-e), "UNKNOWN") == 0, "-%d (%s) is named %s", e,
              strerror(e), lagscope_error_name(-e));
    CHECK_MSG(strcmp(lagscope_strerror(-e), "unknown error") == 0, "-%d has a sentence", e);
  }
  /* A port call that returns -errno (port.h says which): a closed descriptor's listing. */
  int fd = open(".", O_RDONLY | O_DIRECTORY);
  CHECK(fd >= 0);
  close(fd);
  int rc = lagscope__folder_each_name(fd, never_called, NULL);
  CHECK_EQ_INT(rc, -EBADF);
  CHECK(strcmp(lagscope_error_name(rc), "UNKNOWN") == 0);
  printf("errors: %zu codes, none in -1..-%d; each named and explained\n", n, MAX_ERRNO);
  return 0;
}
