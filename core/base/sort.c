/* Sorting without allocating. glibc's qsort is a merge sort that mallocs a copy of the array
 * (measured 2026-11: 154 KiB for a large library's symbols): a block that size is mapped by
 * malloc, and freeing it raises glibc's mmap and trim thresholds for the whole process, the
 * app's allocations too. A heapsort sorts in place: O(n log n), no memory, not stable (nor is
 * qsort). */
#include "internal.h"

#include <string.h>

/* By memcpy through a small buffer, not byte by byte: each byte access is a call under
 * ThreadSanitizer (measured 2026-11: 0.7 s to sort a large library's symbols byte by byte). */
static void swap_items(unsigned char *a, unsigned char *b, size_t size) {
  unsigned char t[64];
  while (size > 0) {
    size_t n = size < sizeof(t) ? size : sizeof(t);
    memcpy(t, a, n);
    memcpy(a, b, n);
    memcpy(b, t, n);
    a += n, b += n, size -= n;
  }
}

/* Moves item `at` down the heap of count items until both its children are not greater. */
static void sift_down(unsigned char *items, size_t at, size_t count, size_t size,
                      int (*compare)(const void *, const void *)) {
  for (;;) {
    size_t largest = at, left = 2 * at + 1, right = left + 1;
    if (left < count && compare(items + left * size, items + largest * size) > 0) largest = left;
    if (right < count && compare(items + right * size, items + largest * size) > 0)
      largest = right;
    if (largest == at) return;
    swap_items(items + at * size, items + largest * size, size);
    at = largest;
  }
}

void lagscope__sort(void *items, size_t count, size_t size,
                    int (*compare)(const void *, const void *)) {
  unsigned char *base = items;
  if (count < 2 || size == 0) return;
  for (size_t i = count / 2; i-- > 0;) sift_down(base, i, count, size, compare);
  for (size_t end = count - 1; end > 0; end--) {
    swap_items(base, base + end * size, size);
    sift_down(base, 0, end, size, compare);
  }
}
