/*
 * The platform's part of the lifecycle, on Linux: next to nothing. The host supplies post_main
 * and calls lagscope_frame() itself; there is no background state to excuse a stall (see
 * core/darwin/platform.c for what Darwin does). The display's rate is what a measurer of the
 * host's side told (lagscope__linux_set_refresh_hz: lagscope-run's preload reads it from the
 * X server's RandR), else not measured.
 */
#include "../internal.h"
#include "linux.h"

#include <stdatomic.h>

static _Atomic uint32_t refresh_hz; /* 0: not measured */

void lagscope__platform_defaults(lagscope_config *config) { (void)config; }
void lagscope__platform_prepare(void) {}
int lagscope__platform_start(const lagscope_config *config) {
  (void)config;
  return LAGSCOPE_OK;
}
void lagscope__platform_stop(void) { atomic_store(&refresh_hz, 0); }
int lagscope__platform_in_background(void) { return 0; }
uint32_t lagscope__platform_refresh_hz(void) { return atomic_load(&refresh_hz); }

void lagscope__linux_set_refresh_hz(uint32_t hz) {
  lagscope__config_bounds b = lagscope__config_bounds_of(LAGSCOPE__FIELD_refresh_hz);
  atomic_store(&refresh_hz, hz >= b.min && hz <= b.max ? hz : 0);
}
