/* lagscope's heap (core/base/memory.c): it counts what it holds (a run whole from its first
 * block, a block of its own as its pages), not what was asked for; blocks come zeroed and
 * cache-line aligned, keep what is written into them, and are shared out correctly by four
 * threads at once; and what is freed leaves the process: once the last block of a run or a
 * mapping of its own is freed, its pages are no longer mapped (mincore says so). Under ASan
 * the heap is malloc's, and only the count and the sharing run. */
#define _DEFAULT_SOURCE /* mincore */
#include "check.h"
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define HEAP_IS_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_IS_MALLOC 1
#endif
#endif
#ifndef HEAP_IS_MALLOC
#define HEAP_IS_MALLOC 0
#endif

#define SLOTS 512
#define ROUNDS 20000

typedef struct worker {
  unsigned seed;
  unsigned long checked;
} worker;

static unsigned next_random(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return *seed >> 8;
}

static size_t random_size(unsigned *seed) {
  switch (next_random(seed) % 4) {
    case 0: return next_random(seed) % 64;
    case 1: return next_random(seed) % 2048;
    case 2: return 1900 + next_random(seed) % 300; /* both sides of the runs' largest */
    default: return next_random(seed) % 20000;
  }
}

/* What is counted is what the heap took from the system. First thing in the process, so that
 * no run of the class is mapped yet: one 64-byte block maps a run, and the count grows by the
 * run; a second block of the class comes from that run and costs nothing more. A block of
 * its own counts its pages, the header's line included. What callers asked for is counted
 * apart. All freed, both counts are back where they were. */
static void counts_what_it_holds(void) {
  uint64_t before = lagscope__memory_in_use(), asked_before = lagscope__memory_asked();
  char *small = lagscope__alloc(64);
  CHECK(small != NULL);
  uint64_t one = lagscope__memory_in_use() - before;
  CHECK_EQ_INT(lagscope__memory_asked() - asked_before, 64);
  if (HEAP_IS_MALLOC) {
    CHECK_MSG(one > 64, "under ASan: %llu bytes counted for calloc's block",
              (unsigned long long)one);
  } else {
    CHECK_MSG(one == LAGSCOPE__HEAP_RUN_BYTES, "one 64-byte block counted %llu bytes, not its "
              "run's %d", (unsigned long long)one, LAGSCOPE__HEAP_RUN_BYTES);
    char *second = lagscope__alloc(64);
    CHECK(second != NULL);
    CHECK_EQ_INT(lagscope__memory_in_use() - before, LAGSCOPE__HEAP_RUN_BYTES);
    lagscope__dealloc(second);
    CHECK_EQ_INT(lagscope__memory_in_use() - before, LAGSCOPE__HEAP_RUN_BYTES); /* one still out */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char *big = lagscope__alloc(100000);
    CHECK(big != NULL);
    CHECK_EQ_INT(lagscope__memory_in_use() - before - LAGSCOPE__HEAP_RUN_BYTES,
                 (100000 + LAGSCOPE__CACHE_LINE + page - 1) / page * page);
    CHECK_EQ_INT(lagscope__memory_block_bytes(100000),
                 (100000 + LAGSCOPE__CACHE_LINE + page - 1) / page * page);
    CHECK_EQ_INT(lagscope__memory_block_bytes(64), 128); /* the smallest class: a line and 64 */
    lagscope__dealloc(big);
  }
  lagscope__dealloc(small);
  CHECK_EQ_INT(lagscope__memory_in_use(), before);
  CHECK_EQ_INT(lagscope__memory_asked(), asked_before);
}

/* Each slot holds a block filled with a byte of its own; every block is checked whole when it
 * is freed: a block shared out twice, or written past by a neighbour, shows. */
static void *churn(void *arg) {
  worker *w = arg;
  unsigned char *blocks[SLOTS] = {0};
  size_t sizes[SLOTS] = {0};
  for (int round = 0; round < ROUNDS; round++) {
    size_t i = next_random(&w->seed) % SLOTS;
    if (blocks[i] != NULL) {
      unsigned char fill = (unsigned char)(i * 7 + 1);
      for (size_t k = 0; k < sizes[i]; k++)
        CHECK_MSG(blocks[i][k] == fill, "slot %zu byte %zu of %zu overwritten", i, k, sizes[i]);
      w->checked++;
      lagscope__dealloc(blocks[i]);
      blocks[i] = NULL;
      continue;
    }
    size_t size = random_size(&w->seed);
    unsigned char *b = lagscope__alloc(size);
    CHECK(b != NULL);
    CHECK_MSG(((uintptr_t)b & (LAGSCOPE__CACHE_LINE - 1)) == 0, "%p not aligned", (void *)b);
    for (size_t k = 0; k < size; k++) CHECK_MSG(b[k] == 0, "byte %zu of %zu not zero", k, size);
    memset(b, (int)(i * 7 + 1), size);
    blocks[i] = b, sizes[i] = size;
  }
  for (size_t i = 0; i < SLOTS; i++) lagscope__dealloc(blocks[i]);
  return NULL;
}

static void four_threads_share_it_out(void) {
  uint64_t before = lagscope__memory_in_use(), asked_before = lagscope__memory_asked();
  pthread_t threads[4];
  worker workers[4];
  for (int t = 0; t < 4; t++) {
    workers[t] = (worker){.seed = 17u + (unsigned)t};
    CHECK(pthread_create(&threads[t], NULL, churn, &workers[t]) == 0);
  }
  for (int t = 0; t < 4; t++) {
    CHECK(pthread_join(threads[t], NULL) == 0);
    CHECK(workers[t].checked > ROUNDS / 4);
  }
  CHECK_MSG(lagscope__memory_in_use() == before, "%llu bytes left counted",
            (unsigned long long)(lagscope__memory_in_use() - before));
  CHECK_EQ_INT(lagscope__memory_asked(), asked_before);
}

/* 1 when the page holding p is mapped. */
static int mapped(const void *p) {
  long page = sysconf(_SC_PAGESIZE);
  unsigned char present;
  void *start = (void *)((uintptr_t)p & ~(uintptr_t)(page - 1));
  if (mincore(start, (size_t)page, &present) == 0) return 1;
  CHECK_MSG(errno == ENOMEM, "mincore: %s", strerror(errno));
  return 0;
}

static void freed_memory_leaves(void) {
  /* A block of its own. */
  char *big = lagscope__alloc(100000);
  CHECK(big != NULL && mapped(big));
  lagscope__dealloc(big);
  CHECK_MSG(!mapped(big), "a 100000-byte block stayed mapped once freed");
  /* A run: all its blocks out, then back; the run goes with its last. Sizes of a class no
   * other part of this process uses at this point (every block of 1000 bytes). */
  char *blocks[64];
  for (int i = 0; i < 64; i++) CHECK((blocks[i] = lagscope__alloc(1000)) != NULL);
  for (int i = 1; i < 64; i++) lagscope__dealloc(blocks[i]);
  CHECK_MSG(mapped(blocks[0]), "a run went while a block was still out");
  lagscope__dealloc(blocks[0]);
  for (int i = 0; i < 64; i++)
    CHECK_MSG(!mapped(blocks[i]), "block %d's run stayed mapped once all were freed", i);
}

int main(void) {
  counts_what_it_holds();
  four_threads_share_it_out();
  if (!HEAP_IS_MALLOC) freed_memory_leaves();
  printf("memory: ok%s\n", HEAP_IS_MALLOC ? " (malloc's heap under ASan: not unmapped)" : "");
  return 0;
}
