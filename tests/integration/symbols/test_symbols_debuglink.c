/* A stripped library whose debug info is in a separate file its .gnu_debuglink names (issue 32,
 * section 4: distributions ship programs stripped, their debug info apart): its static function,
 * which has no name left in the library, is named from the debug file, with its file and line;
 * and the debug file is taken only when it is of the library's build. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void resolve_hidden(uintptr_t hidden, const char *want, int want_line) {
  lagscope__symbols *s = lagscope__symbols_new();
  CHECK(s != NULL);
  lagscope__stack_frame f;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, hidden + 2, 0, &f), 0);
  printf("%s+0x%lx: %s %s:%u\n", f.module, (unsigned long)f.module_offset,
         f.function ? f.function : "(none)", f.file ? f.file : "?", f.line);
  CHECK_MSG(f.module != NULL && strcmp(f.module, LINKED_PATH) == 0, "module %s", f.module);
  if (want == NULL) {
    CHECK_MSG(f.function == NULL, "named %s from a debug file of another build", f.function);
  } else {
    CHECK_MSG(f.function != NULL && strcmp(f.function, want) == 0, "function %s",
              f.function ? f.function : "(none)");
    CHECK_MSG(f.file != NULL && strstr(f.file, "stripped.c") != NULL && (int)f.line >= want_line,
              "line %s:%u", f.file ? f.file : "?", f.line);
  }
  lagscope__symbols_free(s);
}

int main(void) {
  void *lib = dlopen(LINKED_PATH, RTLD_NOW | RTLD_LOCAL);
  CHECK_MSG(lib != NULL, "%s", dlerror());
  void *p = dlsym(lib, "stripped_hidden_address");
  CHECK(p != NULL);
  int (*(*hidden_address)(void))(int);
  memcpy(&hidden_address, &p, sizeof(p));
  uintptr_t hidden = (uintptr_t)hidden_address();
  resolve_hidden(hidden, "stripped_hidden", 1);

  /* The debug file swapped for one of another build (the test's own executable's): not used. */
  char debug[4096], saved[4200], command[9000];
  snprintf(debug, sizeof debug, "%s.debug", LINKED_PATH);
  snprintf(saved, sizeof saved, "%s.saved", debug);
  CHECK(rename(debug, saved) == 0);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  CHECK(n > 0);
  self[n] = '\0';
  snprintf(command, sizeof command, "cp '%s' '%s'", self, debug);
  CHECK(system(command) == 0);
  resolve_hidden(hidden, NULL, 0);
  CHECK(rename(saved, debug) == 0);
  dlclose(lib);
  printf("debuglink: ok\n");
  return 0;
}
