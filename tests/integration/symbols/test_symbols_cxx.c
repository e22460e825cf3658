/* C++ names come out demangled (libstdc++'s __cxa_demangle, found at run time). */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <string.h>

int (*demo_frobnicate_address(void))(int);
void *demo_poke_address(void);
int demo_uses_libstdcxx(void);

static void check_name(lagscope__symbols *s, uintptr_t address, const char *expected) {
  lagscope__stack_frame f;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, address, 0, &f), 0);
  CHECK_MSG(f.function != NULL && strcmp(f.function, expected) == 0, "function %s, expected %s",
            f.function ? f.function : "(null)", expected);
  CHECK(f.file != NULL && strstr(f.file, "widget.cpp") != NULL);
  CHECK(f.line > 0);
  printf("%s at %s:%u\n", f.function, f.file, f.line);
}

int main(void) {
  lagscope__symbols *s = lagscope__symbols_new();
  CHECK(s != NULL);
  uintptr_t frobnicate = (uintptr_t)demo_frobnicate_address();
  uintptr_t poke = (uintptr_t)demo_poke_address();
  CHECK(demo_frobnicate_address()(4) == 9);
  CHECK(demo_uses_libstdcxx() == 3);
  for (int round = 0; round < 2; round++) { /* the second from the cache */
    check_name(s, frobnicate, "demo::widget::frobnicate(int)");
    check_name(s, frobnicate + 3, "demo::widget::frobnicate(int)");
    check_name(s, poke, "demo::widget::poke(long) const");
  }
  lagscope__stack_frame a, b;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, frobnicate, 0, &a), 0);
  CHECK_EQ_INT(lagscope__symbols_resolve(s, frobnicate + 1, 0, &b), 0);
  CHECK(a.function == b.function); /* demangled once, then the cached copy */
  lagscope__symbols_free(s);
  return 0;
}
