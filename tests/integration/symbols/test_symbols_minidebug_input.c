/* MiniDebugInfo's decompression against hostile or corrupt sections (core/linux/
 * symbols_minidebug.c): a stream cut short, a bomb that decompresses past the bound, garbage,
 * a flipped byte, a section over the compressed bound: each an error, no crash, nothing kept
 * (the counted heap is back where it was), and quick. The streams are made here with liblzma's
 * encoder (the test links liblzma; lagscope loads it only when it meets a section). */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "internal.h"
#include "linux/symbols.h"

#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* data compressed at preset, into a malloc'ed buffer. */
static unsigned char *xz(const unsigned char *data, size_t size, uint32_t preset, size_t *packed) {
  size_t room = lzma_stream_buffer_bound(size);
  unsigned char *out = malloc(room);
  CHECK(out != NULL);
  *packed = 0;
  CHECK_EQ_INT(lzma_easy_buffer_encode(preset, LZMA_CHECK_CRC64, NULL, data, size, out, packed,
                                       room), LZMA_OK);
  return out;
}

/* Text that compresses but not to nothing. */
static unsigned char *sample(size_t size) {
  unsigned char *data = malloc(size);
  CHECK(data != NULL);
  srand(32);
  for (size_t i = 0; i < size; i++) data[i] = (unsigned char)("symtab_names\0"[rand() % 13]);
  return data;
}

/* lagscope__elf_unxz fails with want, holds nothing after, and takes under 5 s. */
static void refuses(const void *in, size_t size, size_t max, int want, const char *what) {
  uint64_t asked = lagscope__memory_asked();
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  unsigned char *out = (unsigned char *)1;
  size_t out_size = 1;
  int rc = lagscope__elf_unxz(in, size, max, &out, &out_size);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("%s: %s in %.3f s\n", what, lagscope_error_name(rc), seconds);
  CHECK_MSG(rc == want, "%s: %s, not %s", what, lagscope_error_name(rc), lagscope_error_name(want));
  CHECK(out == NULL && out_size == 0);
  CHECK_EQ_INT(lagscope__memory_asked(), asked);
  CHECK_MSG(seconds < 5, "%s took %.1f s", what, seconds);
}

static void test_round_trip(void) {
  size_t size = 300000, packed;
  unsigned char *data = sample(size), *stream = xz(data, size, 6, &packed);
  unsigned char *out;
  size_t out_size;
  CHECK_EQ_INT(lagscope__elf_unxz(stream, packed, size, &out, &out_size), 0);
  CHECK(out_size == size && memcmp(out, data, size) == 0);
  lagscope__dealloc(out);
  refuses(stream, packed, size - 1, LAGSCOPE_ELIMIT, "one byte past the bound");
  free(stream);
  free(data);
}

static void test_truncated(void) {
  size_t size = 300000, packed;
  unsigned char *data = sample(size), *stream = xz(data, size, 6, &packed);
  size_t cuts[] = {0, 1, 12, packed / 4, packed / 2, packed - 13, packed - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    char what[64];
    snprintf(what, sizeof what, "cut at %zu of %zu", cuts[i], packed);
    refuses(stream, cuts[i], LAGSCOPE__MINIDEBUG_MAX_BYTES, LAGSCOPE_EPARSE, what);
  }
  free(stream);
  free(data);
}

/* Zeros a megabyte past the bound: some kilobytes of stream. Refused without a buffer of the
 * bound's size (the first pass counts into scratch), and a small bound refuses it too. */
static void test_bomb(void) {
  size_t size = LAGSCOPE__MINIDEBUG_MAX_BYTES + (1u << 20), packed;
  unsigned char *zeros = calloc(size, 1), *stream = xz(zeros, size, 0, &packed);
  printf("bomb: %zu bytes of stream for %zu\n", packed, size);
  refuses(stream, packed, LAGSCOPE__MINIDEBUG_MAX_BYTES, LAGSCOPE_ELIMIT, "bomb");
  refuses(stream, packed, 4096, LAGSCOPE_ELIMIT, "bomb, 4 KiB bound");
  free(stream);
  free(zeros);
}

static void test_garbage(void) {
  unsigned char junk[65536];
  srand(7);
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rand();
  refuses(junk, sizeof junk, LAGSCOPE__MINIDEBUG_MAX_BYTES, LAGSCOPE_EPARSE, "random bytes");
  static const unsigned char magic[6] = {0xfd, '7', 'z', 'X', 'Z', 0};
  memcpy(junk, magic, sizeof magic);
  refuses(junk, sizeof junk, LAGSCOPE__MINIDEBUG_MAX_BYTES, LAGSCOPE_EPARSE, "xz magic, then junk");

  size_t size = 300000, packed;
  unsigned char *data = sample(size), *stream = xz(data, size, 6, &packed);
  stream[packed / 2] ^= 0x55; /* the block's check (CRC64) no longer holds, if nothing else */
  refuses(stream, packed, LAGSCOPE__MINIDEBUG_MAX_BYTES, LAGSCOPE_EPARSE, "a flipped byte");
  free(stream);
  free(data);
}

/* Past the compressed bound: refused before a byte is read. */
static void test_too_packed(void) {
  size_t size = (size_t)LAGSCOPE__MINIDEBUG_MAX_PACKED + 1;
  unsigned char *big = calloc(size, 1);
  CHECK(big != NULL);
  refuses(big, size, LAGSCOPE__MINIDEBUG_MAX_BYTES, LAGSCOPE_ELIMIT, "over the compressed bound");
  free(big);
}

static const test_case cases[] = {
  TEST_CASE(round_trip),
  TEST_CASE(truncated),
  TEST_CASE(bomb),
  TEST_CASE(garbage),
  TEST_CASE(too_packed),
};
int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
