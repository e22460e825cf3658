/* lagscope-run's refresh rate from a RandR mode (attach/x11_refresh.h): the rate xrandr shows,
 * rounded, for real monitors' modes, double-scan and interlaced ones; none for a mode without
 * timings (Xvfb's own) or with impossible ones. The reading from a server: integration/attach
 * (attach_refresh_from_randr). */
#include "cases.h"
#include "check.h"
#include "x11_refresh.h"

#define MHZ 1000000u

static void test_rates_as_xrandr_shows(void) {
  /* VESA CVT 1024x768 at 75 Hz: 82 MHz over 1360 x 805, 74.90 Hz. */
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(82 * MHZ, 1024, 768, 1360, 805, 0), 75);
  /* CEA 1080p at 59.94 Hz (148.35 MHz, 2200 x 1125) and at 60. */
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(148350000, 1920, 1080, 2200, 1125, 0), 60);
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(148500000, 1920, 1080, 2200, 1125, 0), 60);
  /* CVT reduced blanking 1920x1080 at 144 Hz: 325.08 MHz over 2000 x 1130, 143.84 Hz. */
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(325080000, 1920, 1080, 2000, 1130, 0), 144);
  /* 1080i: 74.25 MHz over 2200 x 1125 is 30 frames, 60 fields a second; the fields are shown. */
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(74250000, 1920, 1080, 2200, 1125, 0), 30);
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(74250000, 1920, 1080, 2200, 1125,
                                                 LAGSCOPE__HUD_RANDR_INTERLACE), 60);
  /* X.Org's 320x240 double-scan mode: 12.588 MHz over 400 x 262, each line twice: 60.06 Hz. */
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(12588000, 320, 240, 400, 262,
                                                 LAGSCOPE__HUD_RANDR_DOUBLE_SCAN), 60);
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(12588000, 320, 240, 400, 262, 0), 120);
}

static void test_no_rate_without_timings(void) {
  /* Xvfb's own mode: the screen's size, a clock and totals of 0. */
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(0, 1024, 768, 0, 0, 0), 0);
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(82 * MHZ, 1024, 768, 0, 805, 0), 0);
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(82 * MHZ, 1024, 768, 1360, 0, 0), 0);
  /* Totals smaller than what is shown: no real timing. */
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(82 * MHZ, 1024, 768, 1000, 805, 0), 0);
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(82 * MHZ, 1024, 768, 1360, 700, 0), 0);
  /* Outside config.refresh_hz's 1..1000 Hz: 5086 Hz, and 0.3 Hz. */
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(4000 * MHZ, 1024, 768, 1024, 768, 0), 0);
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(250000, 1024, 768, 1024, 768, 0), 0);
  /* The largest values the protocol carries do not overflow: 4295 MHz over 65535 x 65535. */
  CHECK_EQ_INT(lagscope__hud_x11_refresh_mode_hz(4294967295u, 1, 1, 65535, 65535,
                                                 LAGSCOPE__HUD_RANDR_INTERLACE), 2);
}

static const test_case cases[] = {
    TEST_CASE(rates_as_xrandr_shows),
    TEST_CASE(no_rate_without_timings),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
