/* lagscope_stop from a background thread while the HUD's reader (on Darwin the overlay's
 * main-queue timer) copies an image: stop must wait for the copy, never free the pixels under
 * it (issue 16). A reader thread holds each image (lagscope__hud_hold), lingers a millisecond
 * inside, reads every pixel and releases it; another thread starts and stops lagscope over and
 * over. No stop may return while an image is held (plain builds see that), and no pixel is read
 * after it is freed (ASan sees that). */
#define _GNU_SOURCE
#include "check.h"
#include "host_loop.h" /* test_now_ns */
#include "hud.h" /* lagscope__hud_hold */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define CYCLES 30

static _Atomic int done;
static _Atomic unsigned stops_returned;  /* grows each time lagscope_stop returns */
static _Atomic unsigned images_read;
static _Atomic unsigned stops_during_hold; /* must stay 0 */

static void *reader(void *arg) {
  (void)arg;
  struct timespec linger = {0, 1000 * 1000}, pause = {0, 200 * 1000};
  volatile uint32_t sum = 0;
  while (!atomic_load(&done)) {
    lagscope_hud_image image;
    if (lagscope__hud_hold(&image) != LAGSCOPE_OK) {
      nanosleep(&pause, NULL);
      continue;
    }
    unsigned before = atomic_load(&stops_returned);
    nanosleep(&linger, NULL); /* a main thread preempted in the middle of its copy */
    for (int y = 0; y < image.height; y++)
      for (int x = 0; x < image.width; x++)
        sum += image.pixels[(size_t)y * (size_t)image.stride / 4 + (size_t)x];
    if (atomic_load(&stops_returned) != before) atomic_fetch_add(&stops_during_hold, 1);
    lagscope__hud_release();
    atomic_fetch_add(&images_read, 1);
  }
  return NULL;
}

int main(void) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
  for (int i = 0; i < CYCLES; i++) {
    lagscope_config c = lagscope_config_default();
    c.server = 0;
    CHECK_EQ_INT(lagscope_start(&c), 0);
    /* Stop while the reader is at work: after it read an image of this run (bounded wait). */
    unsigned seen = atomic_load(&images_read);
    uint64_t deadline = test_now_ns() + 5000000000ull;
    struct timespec pause = {0, 100 * 1000};
    while (atomic_load(&images_read) == seen && test_now_ns() < deadline) nanosleep(&pause, NULL);
    CHECK(atomic_load(&images_read) != seen);
    CHECK_EQ_INT(lagscope_stop(), 0);
    atomic_fetch_add(&stops_returned, 1);
  }
  atomic_store(&done, 1);
  pthread_join(t, NULL);
  CHECK_EQ_INT((int)atomic_load(&stops_during_hold), 0);
  printf("hud_stop_race: %d stops, %u images read, none freed under its reader\n", CYCLES,
         atomic_load(&images_read));
  return 0;
}
