/* A stripped library: an exported function is named from .dynsym; a static one is module +
 * offset with no function, never the nearest exported name. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

typedef struct find {
  const char *path;
  uintptr_t bias;
  int found;
} find;

static int find_bias(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  find *f = data;
  if (info->dlpi_name == NULL || strcmp(info->dlpi_name, f->path) != 0) return 0;
  f->bias = info->dlpi_addr;
  f->found = 1;
  return 1;
}

/* The load bias as the loader reports it, to compare with ours. */
static uintptr_t bias_of(const char *path) {
  find f = {path, 0, 0};
  dl_iterate_phdr(find_bias, &f);
  CHECK(f.found);
  return f.bias;
}

static void check_module(const lagscope__stack_frame *f, uintptr_t address, uintptr_t bias) {
  CHECK_EQ_INT(f->address, address);
  CHECK_MSG(f->module != NULL && strcmp(f->module, STRIPPED_PATH) == 0, "module %s", f->module);
  CHECK_EQ_INT(f->load_address, bias);
  CHECK_EQ_INT(f->module_offset, address - bias);
  CHECK(f->build_id != NULL && strlen(f->build_id) >= 16);
  for (const char *c = f->build_id; *c; c++) CHECK((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'));
  CHECK(f->file == NULL && f->line == 0); /* no DWARF left */
}

int main(void) {
  lagscope__symbols *s = lagscope__symbols_new();
  CHECK(s != NULL);
  void *lib = dlopen(STRIPPED_PATH, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib != NULL, "%s", dlerror());
  void *exported = dlsym(lib, "stripped_exported"), *p = dlsym(lib, "stripped_hidden_address");
  CHECK(exported != NULL && p != NULL);
  int (*(*hidden_address)(void))(int);
  memcpy(&hidden_address, &p, sizeof(p));
  uintptr_t hidden = (uintptr_t)hidden_address(), bias = bias_of(STRIPPED_PATH);

  lagscope__stack_frame f;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, (uintptr_t)exported + 1, 0, &f), 0);
  check_module(&f, (uintptr_t)exported + 1, bias);
  CHECK_MSG(f.function != NULL && strcmp(f.function, "stripped_exported") == 0, "function %s",
            f.function ? f.function : "(null)");
  CHECK_EQ_INT(f.function_offset, 1);

  for (uintptr_t at = hidden; at < hidden + 8; at++) {
    CHECK_EQ_INT(lagscope__symbols_resolve(s, at, 0, &f), 0);
    check_module(&f, at, bias);
    CHECK_MSG(f.function == NULL, "invented %s for a static function of a stripped object",
              f.function);
    CHECK_EQ_INT(f.function_offset, 0);
  }
  printf("stripped: %s+0x%lx build-id %s\n", f.module, (unsigned long)(hidden - bias), f.build_id);
  dlclose(lib);
  lagscope__symbols_free(s);
  return 0;
}
