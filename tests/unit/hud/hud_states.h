/*
 * Fixed HUD states for the HUD's tests and its benchmark: the same numbers every run (frame
 * times come from a small fixed-seed generator), so that renders can be compared to reference
 * images.
 */
#ifndef LAGSCOPE_TEST_HUD_STATES_H
#define LAGSCOPE_TEST_HUD_STATES_H

#include "../../../hud/hud.h" /* by path: the benchmarks include this too */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define HUD_TEST_MIB (1024ull * 1024ull)
#define HUD_TEST_URL "http://192.168.1.20:8080/?t=ab12cd34ef56ab78cd90"

/* A tiny LCG: uniform in [0, 1), the same sequence for the same seed everywhere. */
static inline double hud_test_random(uint32_t *seed) {
  *seed = *seed * 1664525u + 1013904223u;
  return (double)(*seed >> 8) / 16777216.0;
}

static inline void hud_test_frames(lagscope__hud_state *s, double base_ms, double jitter_ms,
                                   uint32_t seed) {
  s->recent_count = LAGSCOPE_RECENT_FRAMES;
  for (uint32_t i = 0; i < LAGSCOPE_RECENT_FRAMES; i++) {
    s->recent_ms[i] = (float)(base_ms + (hud_test_random(&seed) - 0.5) * 2.0 * jitter_ms);
  }
}

static inline lagscope__hud_state hud_test_base(double refresh_hz, double fps) {
  lagscope__hud_state s;
  memset(&s, 0, sizeof s);
  s.refresh_hz = refresh_hz;
  s.fps = fps;
  s.thread_count = 12;
  snprintf(s.viewer_url, sizeof s.viewer_url, "%s", HUD_TEST_URL);
  return s;
}

/* 60 Hz, 60 fps, steady 16.7 ms frames, no hang yet. */
static inline lagscope__hud_state hud_test_idle(void) {
  lagscope__hud_state s = hud_test_base(60.0, 60.0);
  hud_test_frames(&s, 16.7, 0.35, 1);
  s.cpu_percent = 18.4;
  s.memory_bytes = 142 * HUD_TEST_MIB + 300 * 1024;
  return s;
}

/* An event-driven app with nothing to draw: a few frames a while ago, its main thread
 * answering in time. */
static inline lagscope__hud_state hud_test_frames_idle(void) {
  lagscope__hud_state s = hud_test_base(60.0, 0.0);
  hud_test_frames(&s, 16.7, 0.35, 5);
  s.frames_idle = 1;
  s.cpu_percent = 0.4;
  s.memory_bytes = 96 * HUD_TEST_MIB;
  return s;
}

/* A 120 Hz display at 119 fps, 8.3 ms frames and one late frame. */
static inline lagscope__hud_state hud_test_120hz(void) {
  lagscope__hud_state s = hud_test_base(120.0, 119.0);
  hud_test_frames(&s, 8.3, 0.25, 2);
  s.recent_ms[97] = 16.9f;
  s.cpu_percent = 34.0;
  s.memory_bytes = 210 * HUD_TEST_MIB;
  return s;
}

/* 24 of 60 fps: frames of 30-60 ms with spikes, one past the graph's ceiling. */
static inline lagscope__hud_state hud_test_low_fps(void) {
  lagscope__hud_state s = hud_test_base(60.0, 24.0);
  hud_test_frames(&s, 45.0, 15.0, 3);
  s.recent_ms[30] = 85.0f;
  s.recent_ms[31] = 72.0f;
  s.recent_ms[88] = 140.0f;
  s.recent_ms[110] = 16.8f;
  s.cpu_percent = 97.2;
  s.memory_bytes = 388 * HUD_TEST_MIB;
  s.hangs = 1;
  s.last_hang_ms = 410.0; /* a label too long for the row: cut at the margin */
  snprintf(s.last_hang_label, sizeof s.last_hang_label,
           "io \xC2\xB7 read /home/user/.local/share/app/thumbnails/cache.db");
  s.thread_count = 9;
  return s;
}

/* 1.4 s into the second hang: the frames stopped coming. */
static inline lagscope__hud_state hud_test_hang(void) {
  lagscope__hud_state s = hud_test_base(60.0, 7.0);
  hud_test_frames(&s, 16.7, 0.4, 4);
  s.recent_ms[LAGSCOPE_RECENT_FRAMES - 1] = 33.4f;
  s.cpu_percent = 100.3;
  s.memory_bytes = 163 * HUD_TEST_MIB;
  s.hangs = 2;
  s.hang_in_progress = 1;
  s.hang_elapsed_ms = 1400.0;
  s.last_hang_ms = 620.0;
  return s;
}

/* After three hangs, the last of 820 ms: back at 58 fps, the hangs' long frames in the graph. */
static inline lagscope__hud_state hud_test_three_hangs(void) {
  lagscope__hud_state s = hud_test_base(60.0, 58.0);
  hud_test_frames(&s, 16.7, 0.5, 5);
  s.recent_ms[20] = 612.0f;
  s.recent_ms[62] = 27.5f;
  s.recent_ms[63] = 41.0f;
  s.recent_ms[101] = 820.0f;
  s.cpu_percent = 42.0;
  s.memory_bytes = 1536 * HUD_TEST_MIB;
  s.hangs = 3;
  s.last_hang_ms = 820.0; /* why, in a few words: the report's label */
  snprintf(s.last_hang_label, sizeof s.last_hang_label, "lock \xC2\xB7 image-loader");
  s.thread_count = 27;
  s.last_hitch_ms = 103.0; /* and a hitch, with where the app was */
  snprintf(s.last_hitch_function, sizeof s.last_hitch_function, "image_cache_decode_thumbnail");
  return s;
}

#endif
