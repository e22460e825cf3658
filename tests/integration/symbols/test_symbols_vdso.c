/* The vDSO's functions have names: its symbol table is read from its image in memory (it has
 * no file, and its section headers lie past its loaded segment). A function the loader finds
 * in it (dlvsym) resolves to that name, as a PC and as a return address; and a thread spinning
 * in clock_gettime is captured with the vDSO frame named (or unnamed, in the vDSO's local
 * functions, which have no symbol: never named wrongly). */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

/* clock_gettime and __vdso_clock_gettime are one function under two names. */
static int is_clock_gettime(const char *name) {
  return name != NULL &&
         (strcmp(name, "clock_gettime") == 0 || strcmp(name, "__vdso_clock_gettime") == 0);
}

static _Atomic int32_t spinner_tid;
static _Atomic int stop;

static void *spin(void *arg) {
  (void)arg;
  atomic_store(&spinner_tid, lagscope__thread_id());
  struct timespec ts;
  while (!atomic_load(&stop)) clock_gettime(CLOCK_MONOTONIC, &ts);
  return NULL;
}

int main(void) {
  void *vdso = dlopen("linux-vdso.so.1", RTLD_NOLOAD | RTLD_LAZY);
  if (vdso == NULL) {
    printf("no vDSO in this process\n");
    return 77;
  }
  void *f = dlsym(vdso, "__vdso_clock_gettime");
  CHECK(f != NULL);
  lagscope__symbols *s = lagscope__symbols_new();
  CHECK(s != NULL);
  lagscope__stack_frame info;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, (uintptr_t)f + 4, 0, &info), 0);
  printf("%p + 4: %s in %s\n", f, info.function ? info.function : "(null)", info.module);
  CHECK_MSG(is_clock_gettime(info.function), "named %s", info.function ? info.function : "(null)");
  CHECK(strncmp(info.module, "linux-vdso", 10) == 0);
  CHECK_EQ_INT(info.function_offset, 4);
  CHECK_EQ_INT(lagscope__symbols_resolve(s, (uintptr_t)f + 5, 1, &info), 0);
  CHECK(is_clock_gettime(info.function));

  /* End to end: a capture that lands in the vDSO names its frame. TSan delivers signals only
   * in its interceptors (clock_gettime is one): the PC is never in the vDSO there. */
#ifdef LAGSCOPE_TEST_UNDER_TSAN
  const int under_tsan = 1;
#else
  const int under_tsan = 0;
#endif
  if (under_tsan) {
    printf("the capture part is skipped under TSan\n");
    lagscope__symbols_free(s);
    return 0;
  }
  CHECK_EQ_INT(lagscope__capture_init(0), 0);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, spin, NULL) == 0);
  while (atomic_load(&spinner_tid) == 0) {}
  static lagscope__stack stack;
  /* The vDSO's local functions (the kernel's clock helpers, static there) have no symbol: a
   * capture that lands in one has a frame without a name, which is right; one with a name
   * must name clock_gettime, never a neighbour. */
  int named = 0, unnamed = 0, tries = 0;
  for (; tries < 20000 && !named; tries++) {
    if (lagscope__capture_stack(atomic_load(&spinner_tid), &stack, 100000000u) != 0) continue;
    CHECK_EQ_INT(lagscope__symbols_resolve(s, stack.frames[0], 0, &info), 0);
    if (info.module == NULL || strncmp(info.module, "linux-vdso", 10) != 0) continue;
    if (info.function == NULL) {
      unnamed++;
      continue;
    }
    CHECK_MSG(is_clock_gettime(info.function), "a vDSO frame named %s", info.function);
    named = 1;
  }
  atomic_store(&stop, 1);
  pthread_join(t, NULL);
  CHECK_MSG(named, "no capture in %d landed in the vDSO's clock_gettime (%d in its local "
            "functions)", tries, unnamed);
  printf("a capture in the vDSO's clock_gettime after %d tries (%d in its local functions): "
         "%s\n", tries, unnamed, info.function);
  lagscope__symbols_free(s);
  return 0;
}
