/* An address in no object: ENOENT, module NULL. Returned strings stay valid across further
 * resolves until _free; every loaded object resolves; _free gives back every counted byte. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <link.h>
#include <stdlib.h>
#include <string.h>

#define KEPT 64

typedef struct kept {
  lagscope__stack_frame info;
  char *function, *module, *build_id, *file; /* copies, to compare with later */
} kept;

static char *copy(const char *text) { return text != NULL ? strdup(text) : NULL; }

static int same(const char *a, const char *b) {
  return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

typedef struct walk {
  lagscope__symbols *s;
  int objects, named;
} walk;

/* Resolves the first executable byte of each loaded object, the vDSO too. */
static int resolve_each(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  walk *w = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t address = info->dlpi_addr + ph->p_vaddr + ph->p_memsz / 2;
    lagscope__stack_frame f;
    CHECK_EQ_INT(lagscope__symbols_resolve(w->s, address, 0, &f), 0);
    CHECK(f.module != NULL && f.build_id != NULL);
    CHECK_EQ_INT(f.load_address, info->dlpi_addr);
    w->objects++;
    w->named += f.function != NULL;
    printf("  %-50s %-28s %s\n", f.module, f.function ? f.function : "-", f.build_id);
    break;
  }
  return 0;
}

int main(void) {
  uint64_t before = lagscope__memory_in_use(), asked_before = lagscope__memory_asked();
  lagscope__symbols *s = lagscope__symbols_new();
  CHECK(s != NULL);

  lagscope__stack_frame f;
  CHECK_EQ_INT(lagscope__symbols_resolve(s, 0x10, 0, &f), LAGSCOPE_ENOENT);
  CHECK(f.module == NULL && f.function == NULL && f.file == NULL);
  CHECK_EQ_INT(f.address, 0x10);
  CHECK(f.build_id != NULL && f.build_id[0] == '\0');
  CHECK_EQ_INT(lagscope__symbols_resolve(s, 0x10, 1, &f), LAGSCOPE_ENOENT);

  /* Resolve a spread of addresses, keep what came back, resolve more, compare. */
  uintptr_t addresses[KEPT] = {(uintptr_t)main, (uintptr_t)resolve_each, (uintptr_t)strlen,
                               (uintptr_t)printf, (uintptr_t)qsort, (uintptr_t)dl_iterate_phdr,
                               (uintptr_t)lagscope__symbols_new};
  for (int i = 7; i < KEPT; i++) addresses[i] = (uintptr_t)strlen + (uintptr_t)i * 4099u;
  kept k[KEPT];
  for (int i = 0; i < KEPT; i++) {
    /* The first ones as PCs: as a return address, printf - 1 is the padding before it. */
    lagscope__symbols_resolve(s, addresses[i], i >= 8 ? i % 2 : 0, &k[i].info);
    k[i].function = copy(k[i].info.function), k[i].module = copy(k[i].info.module);
    k[i].build_id = copy(k[i].info.build_id), k[i].file = copy(k[i].info.file);
  }
  CHECK(k[0].info.function != NULL && strcmp(k[0].info.function, "main") == 0);
  /* (under ASan, printf is its interceptor's, which has a name of its own) */
  CHECK(k[3].info.function != NULL && strstr(k[3].info.function, "printf") != NULL);
  CHECK(k[4].info.function != NULL && k[5].info.function != NULL);
  printf("every loaded object:\n");
  walk w = {s, 0, 0};
  dl_iterate_phdr(resolve_each, &w);
  CHECK(w.objects >= 3 && w.named >= 1);
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < KEPT; i++) lagscope__symbols_resolve(s, addresses[KEPT - 1 - i] + 1, 1, &f);
  for (int i = 0; i < KEPT; i++) {
    CHECK(same(k[i].function, k[i].info.function) && same(k[i].module, k[i].info.module));
    CHECK(same(k[i].build_id, k[i].info.build_id) && same(k[i].file, k[i].info.file));
    free(k[i].function), free(k[i].module), free(k[i].build_id), free(k[i].file);
  }

  /* Every byte the symbols asked lagscope's heap for is in _memory, and _free gives back all
   * that the heap took for them. */
  CHECK_EQ_INT(lagscope__memory_asked() - asked_before, lagscope__symbols_memory(s));
  printf("symbols memory: %zu bytes for %d objects\n", lagscope__symbols_memory(s), w.objects);
  lagscope__symbols_free(s);
  CHECK_EQ_INT(lagscope__memory_in_use(), before);
  CHECK_EQ_INT(lagscope__memory_asked(), asked_before);
  return 0;
}
