/* A library loaded after the symbolicator was created is found (the address is in no known
 * object, so the list is read again); after dlclose its addresses name nothing of it. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <dlfcn.h>
#include <string.h>

static int ends_with(const char *text, const char *suffix) {
  size_t a = strlen(text), b = strlen(suffix);
  return a >= b && strcmp(text + a - b, suffix) == 0;
}

static void check_plugin(lagscope__symbols *s, void *lib) {
  void *add = dlsym(lib, "plugin_add");
  int (*(*hidden_address)(void))(int);
  int (*first_line)(void);
  void *p = dlsym(lib, "plugin_hidden_address"), *q = dlsym(lib, "plugin_hidden_first_line");
  CHECK(add != NULL && p != NULL && q != NULL);
  memcpy(&hidden_address, &p, sizeof(p));
  memcpy(&first_line, &q, sizeof(q));

  lagscope__stack_frame f;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, (uintptr_t)add + 2, 0, &f), 0);
  CHECK_MSG(f.function != NULL && strcmp(f.function, "plugin_add") == 0, "function %s",
            f.function ? f.function : "(null)");
  CHECK_EQ_INT(f.function_offset, 2);
  CHECK_MSG(f.module != NULL && strcmp(f.module, PLUGIN_PATH) == 0, "module %s", f.module);
  CHECK(f.file != NULL && ends_with(f.file, "plugin.c"));
  CHECK(f.build_id[0] != '\0');

  uintptr_t hidden = (uintptr_t)hidden_address();
  CHECK_EQ_INT(lagscope__symbols_resolve(s, hidden, 0, &f), 0);
  CHECK_MSG(f.function != NULL && strcmp(f.function, "plugin_hidden") == 0, "function %s",
            f.function ? f.function : "(null)");
  CHECK(f.file != NULL && ends_with(f.file, "plugin.c"));
  /* The entry is the signature's line, or the body's first when optimised. */
  CHECK_MSG(f.line >= (uint32_t)first_line() && f.line <= (uint32_t)first_line() + 2, "line %u",
            f.line);
  CHECK_EQ_INT(f.module_offset, hidden - f.load_address);
}

int main(void) {
  lagscope__symbols *s = lagscope__symbols_new();
  CHECK(s != NULL);
  lagscope__stack_frame f;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, (uintptr_t)main, 0, &f), 0); /* the list, read */

  void *lib = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib != NULL, "%s", dlerror());
  check_plugin(s, lib);
  uintptr_t add = (uintptr_t)dlsym(lib, "plugin_add");
  CHECK_EQ_INT(dlclose(lib), 0);

  /* Unloaded: the address is in no object, or in another one mapped there since. */
  int rc = lagscope__symbols_resolve(s, add, 0, &f);
  CHECK(rc == LAGSCOPE_ENOENT || f.module == NULL || strcmp(f.module, PLUGIN_PATH) != 0);
  CHECK(rc != LAGSCOPE_ENOENT || f.module == NULL);

  lib = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL); /* again: found again */
  CHECK(lib != NULL);
  check_plugin(s, lib);
  CHECK_EQ_INT(dlclose(lib), 0);
  lagscope__symbols_free(s);
  return 0;
}
