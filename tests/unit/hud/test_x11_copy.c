/*
 * The X11 overlay's copy of the HUD's image (hud/linux/x11_overlay.c,
 * lagscope__hud_x11_copy_image): its rows packed, and its size the image's, remade when the
 * image's changes: an expanded HUD's copy leaves the app's memory when the HUD is compact again.
 */
#include "cases.h"
#include "check.h"
#include "internal.h"
#include "x11_private.h"

#include <stdlib.h>
#include <string.h>

static lagscope__hud_x11_overlay overlay; /* 40 KiB: not on the stack */

/* An image of width x height whose rows lie stride bytes apart, each pixel its index. */
static lagscope_hud_image image_of(int width, int height, int stride, uint32_t **pixels) {
  *pixels = calloc((size_t)height, (size_t)stride);
  CHECK(*pixels != NULL);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      (*pixels)[(size_t)y * (size_t)stride / 4 + (size_t)x] = (uint32_t)(y * width + x);
  return (lagscope_hud_image){.pixels = *pixels, .width = width, .height = height,
                              .stride = stride, .scale = 1.0f, .sequence = 1};
}

static void check_copy(const lagscope_hud_image *held) {
  size_t need = (size_t)held->width * 4 * (size_t)held->height;
  CHECK_MSG(overlay.pixels_size == need, "the copy holds %zu bytes for an image of %zu",
            overlay.pixels_size, need);
  CHECK(overlay.image.stride == held->width * 4 && overlay.image.pixels == overlay.pixels);
  for (int y = 0; y < held->height; y++)
    for (int x = 0; x < held->width; x++)
      CHECK(overlay.pixels[(size_t)y * (size_t)held->width + (size_t)x] ==
            (uint32_t)(y * held->width + x));
}

/* The expanded HUD at scale 2, then the compact one at scale 1 (their strides padded, as
 * cairo's may be): the copy follows, and lagscope's heap holds only the compact one's. */
static void test_copy_follows_the_size(void) {
  uint64_t before = lagscope__memory_asked();
  uint32_t *big_pixels, *small_pixels;
  lagscope_hud_image big = image_of(520, 408, 520 * 4 + 64, &big_pixels);
  lagscope_hud_image small = image_of(150, 56, 150 * 4 + 32, &small_pixels);
  CHECK(lagscope__hud_x11_copy_image(&overlay, &big));
  check_copy(&big);
  CHECK(lagscope__hud_x11_copy_image(&overlay, &small));
  check_copy(&small);
  CHECK(lagscope__memory_asked() - before == 150u * 4u * 56u);
  lagscope__dealloc(overlay.pixels);
  free(big_pixels);
  free(small_pixels);
}

static const test_case cases[] = {
    TEST_CASE(copy_follows_the_size),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
