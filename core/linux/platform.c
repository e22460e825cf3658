/*
 * The platform's part of the lifecycle, on Linux: nothing. The host supplies post_main and calls
 * lagscope_frame() itself; there is no display link to measure the rate, and no background
 * state to excuse a stall (see core/darwin/platform.c for what Darwin does).
 */
#include "../internal.h"

void lagscope__platform_defaults(lagscope_config *config) { (void)config; }
void lagscope__platform_prepare(void) {}
int lagscope__platform_start(const lagscope_config *config) {
  (void)config;
  return LAGSCOPE_OK;
}
void lagscope__platform_stop(void) {}
int lagscope__platform_in_background(void) { return 0; }
uint32_t lagscope__platform_refresh_hz(void) { return 0; }
