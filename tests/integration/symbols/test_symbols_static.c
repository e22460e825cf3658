/* A static function of the test executable resolves by name from .symtab (dladdr could not
 * name it), with file and line from DWARF, the module, its build-id and load address. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

static const int target_line = __LINE__ + 1;
__attribute__((noinline)) static int target_function(int x) {
  volatile int y = x * 3;
  y += 7;
  y ^= 0x55;
  return y;
}

static int ends_with(const char *text, const char *suffix) {
  size_t a = strlen(text), b = strlen(suffix);
  return a >= b && strcmp(text + a - b, suffix) == 0;
}

static void check_is_target(const lagscope__stack_frame *f, uintptr_t start, uintptr_t address) {
  CHECK_EQ_INT(f->address, address);
  CHECK_MSG(f->function != NULL && strcmp(f->function, "target_function") == 0, "function %s",
            f->function ? f->function : "(null)");
  CHECK_EQ_INT(f->function_offset, address - start);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  CHECK(n > 0);
  exe[n] = '\0';
  CHECK_MSG(f->module != NULL && strcmp(f->module, exe) == 0, "module %s", f->module);
  CHECK(f->build_id != NULL && strlen(f->build_id) >= 16);
  CHECK_EQ_INT(f->module_offset, address - f->load_address);
  CHECK_MSG(f->file != NULL && ends_with(f->file, "test_symbols_static.c"), "file %s",
            f->file ? f->file : "(null)");
  CHECK_MSG(f->line >= (uint32_t)target_line && f->line <= (uint32_t)target_line + 5,
            "line %u, the function starts at %d", f->line, target_line);
}

int main(void) {
  CHECK_EQ_INT(target_function(1), ((3 + 7) ^ 0x55));
  lagscope__symbols *s = lagscope__symbols_new();
  CHECK(s != NULL);
  uintptr_t start = (uintptr_t)target_function;
  lagscope__stack_frame f;

  CHECK_EQ_INT(lagscope__symbols_resolve(s, start, 0, &f), 0);
  check_is_target(&f, start, start);

  CHECK_EQ_INT(lagscope__symbols_resolve(s, start + 4, 0, &f), 0);
  check_is_target(&f, start, start + 4);

  /* A return address one past the start is looked up at the start, reported as captured. */
  CHECK_EQ_INT(lagscope__symbols_resolve(s, start + 1, 1, &f), 0);
  check_is_target(&f, start, start + 1);
  CHECK_EQ_INT(f.function_offset, 1);

  /* A global of the static library linked into the executable. */
  uintptr_t resolve = (uintptr_t)lagscope__symbols_resolve;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, resolve + 2, 0, &f), 0);
  CHECK_MSG(f.function != NULL && strcmp(f.function, "lagscope__symbols_resolve") == 0,
            "function %s", f.function ? f.function : "(null)");
  /* Its file:line exists only when the library itself was built with -g (Debug). */
  CHECK(f.file == NULL || ends_with(f.file, "symbols.c"));
  printf("lagscope__symbols_resolve+2 at %s:%u, module %s, build-id %s, load 0x%lx\n", f.file, f.line,
         f.module, f.build_id, (unsigned long)f.load_address);

  lagscope__symbols_free(s);
  return 0;
}
