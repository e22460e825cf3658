/*
 * window_hud: the demo's real window under Xvfb, seen through screenshots of the X screen, with
 * the HUD drawn into its frames (--hud-mode frame; the overlay window: window_overlay.c).
 *
 *   1. Running: the window shows its moving content (the squares' colours, and two shots differ)
 *      and the HUD in its corner (top left): a dark panel with bright text.
 *   2. Stalled: after demo_stall and hang_began, the screen still shows the frame from before
 *      the stall: a shot taken just after the stall began and one after hang_began are equal
 *      (the main thread cannot present).
 *   3. Right after: the HUD shows the hang, its red "HANG" badge (a horizontal run of red
 *      pixels, R>180, G<90, B<90, wider than any bar of the graph or stroke of a red number),
 *      at the latest 2 s after hang_ended, and the content moves again.
 *
 * The shots are kept in out/ (window_1_running.png, window_2_stalled.png, window_3_resumed.png,
 * and window_4_hang_badge.png: the HUD's area when the badge was seen). Usage: window_hud path/to/lagscope-demo path/to/Xvfb out-folder.
 * WINDOW_HUD_SAVE_ALL=1 also keeps every shot of step 3 (poll_NNN.png, slower).
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "demo_env.h"
#include "screen.h"
#include "spawn.h"
#include "xvfb.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TITLE "lagscope-demo"
#define STALL_MS 800
#define LINE_TIMEOUT_MS 10000
#define HANG_SHOWN_WAIT_MS 2000 /* after hang_ended */
#define MOVED_PIXELS 1000       /* a frame that moved changes more pixels than this */
#define BADGE_RUN 24            /* px: wider than a graph bar, narrower than the badge */

static spawn_proc xvfb, demo;
static const char *out_dir;

/* ---- pixels --------------------------------------------------------------------------------- */

/* The HUD's panel is dark; nothing the demo draws is. */
static int is_dark(uint32_t p) { return px_r(p) < 60 && px_g(p) < 60 && px_b(p) < 70; }
/* The HUD's text is near white; nothing the demo draws is. */
static int is_bright(uint32_t p) { return px_r(p) > 200 && px_g(p) > 200 && px_b(p) > 200; }
static int is_red(uint32_t p) { return px_r(p) > 180 && px_g(p) < 90 && px_b(p) < 90; }

/* The demo's background and squares (examples/demo_window.c). */
static const uint32_t content_colors[] = {0x466084, 0x00c8dc, 0xf0be1e, 0x3cd25a, 0xbe5ae6,
                                          0xf08c28};

typedef struct hud_look {
  box panel;   /* bounding box of the dark pixels near the corner */
  long dark, bright_inside;
} hud_look;

/* The HUD in the top-left corner: where the dark panel is and how much text it has. */
static hud_look look_for_hud(const shot *s) {
  hud_look h;
  box corner = {0, 0, s->width / 2, s->height * 2 / 3};
  h.panel = shot_bounds(s, corner, is_dark);
  h.dark = shot_count(s, corner, is_dark);
  h.bright_inside = h.panel.x1 > h.panel.x0 ? shot_count(s, h.panel, is_bright) : 0;
  return h;
}

static int hud_visible(const hud_look *h) {
  return h->dark > 5000 && h->bright_inside > 60 && h->panel.x0 <= 24 && h->panel.y0 <= 24 &&
         h->panel.x0 >= 2 && h->panel.y0 >= 2; /* a margin from the window's edge */
}

/* How many of the content's colours show outside the HUD, with at least min pixels each. */
static int content_colors_seen(const shot *s, box hud, long min) {
  int seen = 0;
  for (size_t i = 0; i < sizeof content_colors / sizeof content_colors[0]; i++)
    seen += shot_count_color(s, content_colors[i], 6, hud) >= min;
  return seen;
}

/* ---- the processes -------------------------------------------------------------------------- */

static void save(const shot *s, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", out_dir, name);
  CHECK_MSG(shot_save_png(s, path) == 0, "could not write %s", path);
  printf("saved %s\n", path);
}

typedef struct run_state {
  int hang_began, hang_ended;
  uint64_t hang_ended_ns; /* when the test read it */
} run_state;

/* Reads one line within timeout_ms; NULL on timeout. Notes hangs in st. */
static cJSON *read_event(run_state *st, int timeout_ms) {
  int result;
  char line[SPAWN_BUFFER];
  cJSON *json = spawn_read_json(&demo, timeout_ms, &result, line, sizeof line);
  if (result == SPAWN_TIMEOUT) return NULL;
  CHECK_MSG(result == SPAWN_LINE, "demo's stdout ended early (result %d)", result);
  CHECK_MSG(json != NULL, "not a JSON object: %s", line);
  const char *type = spawn_json_type(json);
  CHECK_MSG(type != NULL, "no type: %s", line);
  if (strcmp(type, "metrics") != 0) printf("demo: %.200s\n", line);
  if (strcmp(type, "hang_began") == 0) st->hang_began++;
  if (strcmp(type, "hang_ended") == 0) {
    st->hang_ended++;
    st->hang_ended_ns = spawn_now_ns();
  }
  return json;
}

/* Reads the lines the demo has written so far, without waiting for more. */
static void read_pending(run_state *st) {
  for (;;) {
    struct pollfd pfd = {.fd = demo.out_fd, .events = POLLIN};
    if (demo.len == 0 && poll(&pfd, 1, 0) <= 0) return;
    cJSON *json = read_event(st, 1);
    if (!json) return;
    cJSON_Delete(json);
  }
}

/* Reads until an event of type; returns it (cJSON_Delete it). */
static cJSON *wait_for(run_state *st, const char *type, int timeout_ms) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    uint64_t now = spawn_now_ns();
    CHECK_MSG(now < deadline, "no %s line within %d ms", type, timeout_ms);
    cJSON *json = read_event(st, (int)((deadline - now) / 1000000u) + 1);
    if (!json) continue;
    if (strcmp(spawn_json_type(json), type) == 0) return json;
    cJSON_Delete(json);
  }
}

/* Starts Xvfb and returns ":N". */
static void start_xvfb(const char *path, char *display, size_t size) {
  char why[4096];
  CHECK_MSG(xvfb_start(&xvfb, path, display, size, LINE_TIMEOUT_MS, why, sizeof why) == 0, "%s", why);
  printf("Xvfb on display %s\n", display);
}

/* ---- the steps ------------------------------------------------------------------------------ */

/* Step 1: the window, its content moving, the HUD in its corner. */
static Window check_running(Display *d, run_state *st) {
  /* The HUD redraws at most 4 times a second: after the second metrics line it shows the
   * first one's numbers. */
  for (int i = 0; i < 2; i++) cJSON_Delete(wait_for(st, "metrics", LINE_TIMEOUT_MS));
  Window w = 0;
  uint64_t deadline = spawn_now_ns() + 5000u * 1000000u;
  while (!(w = screen_find_window(d, TITLE)) && spawn_now_ns() < deadline) spawn_sleep_ms(20);
  CHECK_MSG(w != 0, "no window titled " TITLE " on the screen");

  /* The first HUD image comes with the first metrics; give it a few frames to be presented. */
  shot s = {0};
  hud_look h = {{0, 0, 0, 0}, 0, 0};
  deadline = spawn_now_ns() + 1500u * 1000000u;
  for (;;) {
    CHECK(screen_shot(d, w, &s) == 0);
    h = look_for_hud(&s);
    if (hud_visible(&h) || spawn_now_ns() >= deadline) break;
    shot_free(&s);
    spawn_sleep_ms(30);
  }
  save(&s, "window_1_running.png");
  printf("shot 1: %dx%d, HUD panel %d,%d-%d,%d: %ld dark px, %ld bright px inside\n", s.width,
         s.height, h.panel.x0, h.panel.y0, h.panel.x1, h.panel.y1, h.dark, h.bright_inside);
  CHECK_MSG(s.width == 800 && s.height == 480, "window is %dx%d, expected 800x480", s.width,
            s.height);
  CHECK_MSG(hud_visible(&h), "no HUD (dark panel with bright text) in the top-left corner");
  int colors = content_colors_seen(&s, h.panel, 300);
  CHECK_MSG(colors >= 4, "only %d of the content's colours on screen", colors);

  spawn_sleep_ms(100);
  shot later;
  CHECK(screen_shot(d, w, &later) == 0);
  long moved = shot_diff(&s, &later, h.panel, 1);
  printf("content: %d colours; %ld px changed in 100 ms\n", colors, moved);
  CHECK_MSG(moved > MOVED_PIXELS, "the content did not move: %ld px changed", moved);
  shot_free(&later);
  shot_free(&s);
  return w;
}

/* Step 2: stalled, the screen keeps the frame from before the stall. Returns the frozen shot
 * and when the stall ends. */
static uint64_t check_stalled(Display *d, Window w, run_state *st, shot *frozen) {
  cJSON *json = wait_for(st, "demo_stall", LINE_TIMEOUT_MS);
  uint64_t started = (uint64_t)spawn_json_number(json, "started_ns", 0);
  uint64_t stall_end = started + (uint64_t)spawn_json_number(json, "ms", 0) * 1000000u;
  cJSON_Delete(json);
  CHECK(started > 0 && stall_end > started);
  /* Let what the X server was still drawing from before the stall land. */
  uint64_t at = started + 100u * 1000000u;
  uint64_t now = spawn_now_ns();
  if (now < at) spawn_sleep_ms((int)((at - now) / 1000000u));
  shot first;
  CHECK(screen_shot(d, w, &first) == 0);
  json = wait_for(st, "hang_began", LINE_TIMEOUT_MS);
  cJSON_Delete(json);
  CHECK(screen_shot(d, w, frozen) == 0);
  save(frozen, "window_2_stalled.png");
  CHECK_MSG(frozen->taken_ns + 20u * 1000000u < stall_end,
            "hang_began came too late to look at the stall (%.0f ms before its end)",
            ((double)stall_end - (double)frozen->taken_ns) / 1e6);
  long changed = shot_diff(&first, frozen, (box){0, 0, 0, 0}, 1);
  printf("stalled: %ld px changed between %.0f ms and %.0f ms into the stall\n", changed,
         ((double)first.taken_ns - (double)started) / 1e6,
         ((double)frozen->taken_ns - (double)started) / 1e6);
  CHECK_MSG(changed == 0, "the screen changed while the main thread stalled (%ld px)", changed);
  shot_free(&first);
  return stall_end;
}

/* Step 3: right after the stall, the HUD shows the hang and the content moves again.
 *
 * The frame drawn right after the stall carries the HUD image rendered during the hang, with
 * its badge; it can be the only one: once the main thread answers lagscope's ping the hang
 * ends, and the HUD's next redraw (at most 250 ms later, or at once) drops the badge. So until
 * the badge is seen the test grabs only the HUD's area, as fast as it can (a few ms apart,
 * well under a frame), then the whole window. */
static void check_hang_shown(Display *d, Window w, run_state *st, const shot *frozen,
                             uint64_t stall_end) {
  int save_all = getenv("WINDOW_HUD_SAVE_ALL") != NULL;
  int badge = 0, polls = 0;
  uint64_t badge_ns = 0, last_ns = 0, max_gap_ns = 0;
  uint64_t deadline = stall_end + 6000u * 1000000u;
  box panel = look_for_hud(frozen).panel;
  CHECK(shot_longest_run(frozen, panel, is_red, NULL) < BADGE_RUN); /* no badge before */
  while (!badge) {
    read_pending(st);
    uint64_t now = spawn_now_ns();
    if (now > deadline) break;
    if (st->hang_ended && now > st->hang_ended_ns + HANG_SHOWN_WAIT_MS * 1000000u) break;
    shot hud;
    CHECK(screen_shot_area(d, w, panel, &hud) == 0);
    polls++;
    if (last_ns && hud.taken_ns - last_ns > max_gap_ns) max_gap_ns = hud.taken_ns - last_ns;
    last_ns = hud.taken_ns;
    if (save_all && polls <= 300) {
      char name[32];
      snprintf(name, sizeof name, "poll_%03d.png", polls);
      save(&hud, name);
    }
    int row;
    int run = shot_longest_run(&hud, (box){0, 0, hud.width, hud.height}, is_red, &row);
    if (run >= BADGE_RUN) {
      badge = 1;
      badge_ns = hud.taken_ns;
      printf("hang badge: a red run of %d px in row %d of the HUD\n", run, panel.y0 + row);
      save(&hud, "window_4_hang_badge.png");
    }
    shot_free(&hud);
    spawn_sleep_ms(1); /* leave the X server and the demo the CPU to draw */
  }
  printf("after the stall: %d shots of the HUD, at most %.1f ms apart; badge seen %.0f ms after "
         "the stall's end\n", polls, (double)max_gap_ns / 1e6,
         badge ? ((double)badge_ns - (double)stall_end) / 1e6 : -1.0);
  CHECK_MSG(badge, "the HUD never showed the hang's red badge after the stall");

  /* The content moves again (each frame is drawn at the time it is drawn). */
  shot s;
  CHECK(screen_shot(d, w, &s) == 0);
  save(&s, "window_3_resumed.png");
  long changed = shot_diff(frozen, &s, panel, 1);
  printf("resumed: %ld px of the content changed since the stall\n", changed);
  CHECK_MSG(changed > MOVED_PIXELS, "the content did not move again after the stall");
  shot_free(&s);
  while (!st->hang_ended) {
    cJSON *json = wait_for(st, "hang_ended", LINE_TIMEOUT_MS);
    cJSON_Delete(json);
  }
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 4, "usage: %s path/to/lagscope-demo path/to/Xvfb out-folder", argv[0]);
  const char *demo_path = argv[1];
  out_dir = argv[3];
  CHECK_MSG(mkdir(out_dir, 0755) == 0 || errno == EEXIST, "cannot make %s", out_dir);

  char display[32];
  start_xvfb(argv[2], display, sizeof display);
  Display *d = screen_open(display, LINE_TIMEOUT_MS);
  CHECK_MSG(d != NULL, "cannot open display %s", display);
  setenv("DISPLAY", display, 1);
  demo_env_for_window();

  /* --hud-mode frame: the HUD drawn into the demo's frames (on X11 its default is lagscope's
   * overlay window, which window_overlay looks at), frozen with them during a stall. */
  char *args[] = {(char *)demo_path, "--port", "0", "--bind", "127.0.0.1", "--events", "jsonl",
                  "--stall-every", "2", "--stall-ms", "800", "--duration", "6", "--hud-expanded",
                  "--hud-mode", "frame", "--hud-corner", "tl", NULL}; /* where the shots look */
  CHECK(spawn_start(&demo, demo_path, args, SPAWN_INHERIT_STDERR) == 0);
  run_state st = {0, 0, 0};
  cJSON *started = wait_for(&st, "demo_started", LINE_TIMEOUT_MS);
  const cJSON *headless = cJSON_GetObjectItemCaseSensitive(started, "headless");
  CHECK_MSG(cJSON_IsFalse(headless), "the demo runs headless: no window under Xvfb");
  cJSON_Delete(started);

  Window w = check_running(d, &st);
  shot frozen;
  uint64_t stall_end = check_stalled(d, w, &st, &frozen);
  check_hang_shown(d, w, &st, &frozen, stall_end);
  shot_free(&frozen);

  /* The demo finishes its run (a second stall at 4 s) and exits cleanly. */
  cJSON *json;
  int result = SPAWN_TIMEOUT;
  char line[SPAWN_BUFFER];
  while ((json = spawn_read_json(&demo, LINE_TIMEOUT_MS, &result, line, sizeof line)) != NULL ||
         result == SPAWN_LINE)
    cJSON_Delete(json);
  CHECK_MSG(result == SPAWN_EOF, "reading the demo's stdout: result %d", result);
  int code = spawn_wait(&demo, LINE_TIMEOUT_MS);
  CHECK_MSG(code == 0, "the demo exited with %d", code);
  spawn_close(&demo);
  XCloseDisplay(d);
  xvfb_stop(&xvfb);
  printf("ok\n");
  return 0;
}
