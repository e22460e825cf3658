/* lagscope__sort against qsort, the oracle: random arrays of every length up to 300 and a
 * large one, with many equal keys; and items of 24 bytes (a struct) ordered with none lost or
 * doubled. That it allocates nothing is its code: no call that could. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct wide {
  uint32_t key;
  uint32_t tag; /* not compared: equal keys may come in any order */
  uint64_t pad[2];
} wide;

static int by_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static int by_key(const void *a, const void *b) {
  return by_u32(&((const wide *)a)->key, &((const wide *)b)->key);
}

static uint32_t next_random(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*state >> 33);
}

static void check_u32(size_t n, uint32_t range, uint64_t *state) {
  uint32_t *a = malloc(n * sizeof(uint32_t) + 1), *b = malloc(n * sizeof(uint32_t) + 1);
  CHECK(a != NULL && b != NULL);
  for (size_t i = 0; i < n; i++) a[i] = b[i] = next_random(state) % range;
  lagscope__sort(a, n, sizeof(uint32_t), by_u32);
  qsort(b, n, sizeof(uint32_t), by_u32);
  CHECK_MSG(memcmp(a, b, n * sizeof(uint32_t)) == 0, "%zu items in 0..%u sort differently", n,
            range);
  free(a);
  free(b);
}

static void check_wide(size_t n, uint64_t *state) {
  wide *a = calloc(n + 1, sizeof(wide));
  CHECK(a != NULL);
  uint64_t key_sum = 0, tag_sum = 0;
  for (size_t i = 0; i < n; i++) {
    a[i].key = next_random(state) % 50;
    a[i].tag = (uint32_t)i;
    key_sum += a[i].key, tag_sum += a[i].tag;
  }
  lagscope__sort(a, n, sizeof(wide), by_key);
  for (size_t i = 0; i < n; i++) {
    if (i > 0) CHECK(a[i - 1].key <= a[i].key);
    key_sum -= a[i].key, tag_sum -= a[i].tag;
  }
  CHECK_MSG(key_sum == 0 && tag_sum == 0, "items were lost or doubled");
  free(a);
}

int main(void) {
  uint64_t state = 42;
  for (size_t n = 0; n <= 300; n++) {
    check_u32(n, 1000000, &state);
    check_u32(n, 3, &state); /* mostly equal keys */
    check_wide(n, &state);
  }
  check_u32(100000, 1u << 31, &state);

  check_wide(20000, &state); /* a large library's symbol table */
  printf("lagscope__sort: as qsort on 904 arrays and one of 100000 items; 20000 wide items "
         "ordered, none lost\n");
  return 0;
}
