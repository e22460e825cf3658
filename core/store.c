/* The report store (stub: filled in by the store work of issue 4). */
#include "internal.h"

int lagscope__store_open(const char *dir, uint32_t max_reports, uint64_t max_bytes,
                         lagscope__store **out, char *why, size_t why_size) {
  (void)dir, (void)max_reports, (void)max_bytes, (void)why, (void)why_size;
  *out = NULL;
  return LAGSCOPE_ESYS;
}

void lagscope__store_close(lagscope__store *s) { (void)s; }

int lagscope__store_write(lagscope__store *s, const char *id, const char *json, char *path_out,
                          size_t path_size, char *why, size_t why_size) {
  (void)s, (void)id, (void)json, (void)path_out, (void)path_size, (void)why, (void)why_size;
  return LAGSCOPE_ESYS;
}

int lagscope__store_recover(lagscope__store *s,
                            void (*found)(void *ctx, const char *id, const char *path,
                                          const char *json),
                            void (*corrupt)(void *ctx, const char *path, const char *why),
                            void *ctx) {
  (void)s, (void)found, (void)corrupt, (void)ctx;
  return 0;
}
