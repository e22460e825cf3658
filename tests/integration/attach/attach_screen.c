/* test_attach's shared helpers on the screen: shots of the HUD in a program's frame compared
 * with the reference, and lagscope's overlay window awaited over a program's. Declared in
 * attach_support.h. */
#define _GNU_SOURCE
#include "attach_support.h"

/* The FPS figure changes; it is left out of the comparison (in HUD coordinates). */
static const box fps_figure = {4, 2, 96, 38};

const char *shot_title;   /* the window to shoot */
box shot_area;            /* where, in the window */
shot area_shot;

int is_lit(uint32_t p) { return px_r(p) + px_g(p) + px_b(p) > 24; }
int inside(box b, int x, int y) { return x >= b.x0 && x < b.x1 && y >= b.y0 && y < b.y1; }

void take_area_shot(void) {
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(d != NULL);
  Window w = 0;
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  while ((w = screen_find_window(d, shot_title)) == 0 && spawn_now_ns() < deadline) spawn_sleep_ms(20);
  CHECK_MSG(w != 0, "no window titled %s", shot_title);
  CHECK(screen_shot_area(d, w, shot_area, &area_shot) == 0);
  XCloseDisplay(d);
}

/* s's pixels at hud beside the reference's (the HUD over black), the FPS figure left out:
 * summed by each(a, b) into *sum; returns how many were compared. */
static long against_reference(const shot *s, box hud, long (*each)(uint32_t a, uint32_t b, int arg),
                              int arg, long *sum) {
  cairo_surface_t *ref = cairo_image_surface_create_from_png(REFERENCE);
  CHECK_MSG(cairo_surface_status(ref) == CAIRO_STATUS_SUCCESS, "cannot read %s", REFERENCE);
  CHECK(cairo_image_surface_get_width(ref) >= 8 + HUD_W && cairo_image_surface_get_height(ref) >= 8 + HUD_H);
  const unsigned char *data = cairo_image_surface_get_data(ref);
  int stride = cairo_image_surface_get_stride(ref);
  long compared = 0;
  *sum = 0;
  for (int y = 0; y < HUD_H; y++) {
    for (int x = 0; x < HUD_W; x++) {
      if (inside(fps_figure, x, y)) continue;
      compared++;
      uint32_t a = s->pixels[(hud.y0 + y) * s->width + hud.x0 + x];
      uint32_t b = ((const uint32_t *)(data + (8 + y) * stride))[8 + x];
      *sum += each(a, b, arg);
    }
  }
  cairo_surface_destroy(ref);
  return compared;
}

static long same_within(uint32_t a, uint32_t b, int tolerance) {
  return abs(px_r(a) - px_r(b)) <= tolerance && abs(px_g(a) - px_g(b)) <= tolerance &&
         abs(px_b(a) - px_b(b)) <= tolerance;
}

static long lift_of(uint32_t a, uint32_t b, int unused) {
  (void)unused;
  return px_r(a) - px_r(b) + px_g(a) - px_g(b) + px_b(a) - px_b(b);
}

/* The share of the HUD's pixels (at hud in s), its FPS figure left out, within tolerance per
 * channel of the reference's. */
double reference_match(const shot *s, box hud, int tolerance) {
  long same, compared = against_reference(s, hud, same_within, tolerance, &same);
  return (double)same / (double)compared;
}

/* The mean of s's channels over the reference's at hud: how much of the frame under the HUD
 * shows through it (a blended HUD: a share of the frame's level; a HUD copied in, not
 * blended: about 0). */
static double reference_lift(const shot *s, box hud) {
  long lift, compared = against_reference(s, hud, lift_of, 0, &lift);
  return (double)lift / (3.0 * (double)compared);
}

static int channels_apart(uint32_t a, uint32_t b) {
  return abs(px_r(a) - px_r(b)) + abs(px_g(a) - px_g(b)) + abs(px_b(a) - px_b(b));
}

/* The HUD at hud in s, blended over a frame of one colour (the shot's bottom-right pixel,
 * outside the HUD): its transparent corner (hud's top-left pixel, outside its rounded corner)
 * is that colour, and its translucent panel lets it through. Over a dark frame, which shows
 * through as little as the reference's black, the HUD must match the reference; over a light
 * one, most of its pixels must differ from the frame, and the frame show through. */
void check_hud_blended(const shot *s, box hud) {
  uint32_t under = s->pixels[s->width * s->height - 1], corner = s->pixels[hud.y0 * s->width + hud.x0];
  double level = (px_r(under) + px_g(under) + px_b(under)) / 3.0;
  long differ = 0;
  for (int y = hud.y0; y < hud.y1; y++)
    for (int x = hud.x0; x < hud.x1; x++) differ += channels_apart(s->pixels[y * s->width + x], under) > 48;
  double lift = reference_lift(s, hud), share = (double)differ / (HUD_W * HUD_H);
  printf("under the HUD #%06x (level %.0f); its corner #%06x; %.1f %% of its pixels differ; "
         "the frame shows through by %.1f levels\n",
         under & 0xffffffu, level, corner & 0xffffffu, share * 100, lift);
  CHECK_MSG(channels_apart(corner, under) <= 24,
            "the HUD's transparent corner is #%06x, not the frame's #%06x: copied, not blended",
            corner & 0xffffffu, under & 0xffffffu);
  if (level < 48) {
    check_hud_shown(s, hud);
    return;
  }
  CHECK_MSG(share >= 0.7, "no HUD: %.1f %% of its pixels differ from the frame", share * 100);
  CHECK_MSG(lift >= level * 0.05, "the frame (level %.0f) shows through the HUD's panel by %.1f "
            "levels only", level, lift);
}

void save_artifact(const shot *s, const char *name) {
  char path[512];
  mkdir(LAGSCOPE_ATTACH_OUT, 0755);
  snprintf(path, sizeof path, "%s/%s", LAGSCOPE_ATTACH_OUT, name);
  CHECK(shot_save_png(s, path) == 0);
  printf("saved %s\n", path);
}

/* The HUD is at hud in the shot (shot coordinates), showing what the reference shows. */
void check_hud_shown(const shot *s, box hud) {
  box panel = shot_bounds(s, (box){0, 0, s->width, s->height}, is_lit);
  printf("HUD expected at %d,%d-%d,%d; lit pixels' bounds %d,%d-%d,%d\n", hud.x0, hud.y0, hud.x1,
         hud.y1, panel.x0, panel.y0, panel.x1, panel.y1);
  double match = reference_match(s, hud, 16);
  printf("the HUD matches the reference at %.1f %% of its pixels\n", match * 100);
  CHECK_MSG(match >= HUD_MATCH, "the HUD differs from the reference: %.1f %% alike", match * 100);
}

/* The whole screen, saved as name: what the program showed when it did not do as awaited. */
void save_screen(const char *name) {
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  shot s;
  if (d != NULL && screen_shot(d, DefaultRootWindow(d), &s) == 0) {
    save_artifact(&s, name);
    shot_free(&s);
  }
  if (d != NULL) XCloseDisplay(d);
}

Window await_window(Display *d, const char *title) {
  Window w = screen_await_window(d, title, WAIT_MS);
  CHECK_MSG(w != 0, "no window '%s' in %d ms", title, WAIT_MS);
  return w;
}

void await_type(const char *type) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    int got = count_type(all, type);
    cJSON_Delete(all);
    if (got > 0) return;
    CHECK_MSG(spawn_now_ns() < deadline, "no %s in %d ms", type, WAIT_MS);
    spawn_sleep_ms(20);
  }
}

/* The overlay over the app's corner (1) or hidden (0), and shots of that corner until pred
 * holds (tests/support/overlay_look.h), bounded; a shot that never did is saved. */
void await_overlay(Display *d, Window app, int shown) { overlay_await(d, app, shown, WAIT_MS); }

/* lagscope-run starts program (extra: its options, NULL-ended, or NULL), and the test waits
 * until the program's window, found by title, has lagscope's overlay over it. */
Window start_under_overlay(spawn_proc *p, char **extra, char **program, const char *title,
                           Display **d) {
  CHECK(spawn_start(p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(*d != NULL);
  Window app = await_window(*d, title);
  await_overlay(*d, app, 1);
  return app;
}

void await_shot(Display *d, Window app, int (*pred)(const shot *, const shot *),
                const shot *arg, shot *out, const char *what) {
  mkdir(LAGSCOPE_ATTACH_OUT, 0755);
  overlay_await_shot(d, app, pred, arg, out, what, OVERLAY_WAIT_MS,
                     LAGSCOPE_ATTACH_OUT "/overlay-gtk-not-as-awaited.png");
}

/* Waits (bounded) until there are more than n events of type. */
void await_more(const char *type, int n) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  for (;;) {
    cJSON *all = read_events();
    int got = count_type(all, type);
    cJSON_Delete(all);
    if (got > n) return;
    CHECK_MSG(spawn_now_ns() < deadline, "no new %s in %d ms", type, WAIT_MS);
    spawn_sleep_ms(20);
  }
}

/* During a hang of the program's, after `ended` hangs ended: two shots of the overlay's badge
 * with two different counts, both before that hang ended, saved as overlay-NAME-hang-1.png
 * and -2.png. */
void await_live_badge_after(Display *d, Window app, const char *name, int ended) {
  shot during1, during2;
  await_more("hang_began", ended);
  await_shot(d, app, overlay_badge_shown, NULL, &during1, "the hang badge");
  await_shot(d, app, overlay_badge_counted_on, &during1, &during2, "the badge counting on");
  cJSON *all = read_events();
  CHECK_MSG(count_type(all, "hang_ended") == ended, "the second shot came after the hang");
  cJSON_Delete(all);
  char file[64];
  snprintf(file, sizeof file, "overlay-%s-hang-1.png", name);
  save_artifact(&during1, file);
  snprintf(file, sizeof file, "overlay-%s-hang-2.png", name);
  save_artifact(&during2, file);
  shot_free(&during1);
  shot_free(&during2);
}

void await_live_badge(Display *d, Window app, const char *name) {
  await_live_badge_after(d, app, name, 0);
}

/* qt_stall (the build at `path`: Qt 5's or Qt 6's) under lagscope-run, a 2.5 s stall 3 s in:
 * the overlay's badge counts up over its window (await_live_badge, shots named by name), and
 * lagscope-run exits 0. */
void qt_stall_live_badge(const char *path, const char *name) {
  char *program[] = {(char *)path, "3000", "2500", NULL};
  spawn_proc p;
  Display *d = NULL;
  Window app = start_under_overlay(&p, NULL, program, "qt_stall", &d);
  await_live_badge(d, app, name);
  XCloseDisplay(d);
  char err[16384];
  CHECK_EQ_INT(wait_run(&p, err, sizeof err), 0);
}

/* The expanded HUD's "LAST HANG" row (hud/layout.c: baseline 164, 8 from the corner). */
static const box last_hang_row = {18, 156, 258, 178};

/* The layout's warning colour, in which a last hang's duration is written. */
static int is_warn(uint32_t p) { return px_r(p) > 200 && px_g(p) > 120 && px_b(p) < 110; }

/* No badge, and the last-hang line says a duration (none before the hang). */
int last_hang_shown(const shot *s, const shot *before) {
  return !overlay_badge_shown(s, NULL) && shot_count(s, last_hang_row, is_warn) > 20 &&
         shot_count(before, last_hang_row, is_warn) == 0;
}

/* No badge, and the last-hang line says a duration, not the one it said before (a hang of the
 * program's start-up, if it had one). */
int last_hang_changed(const shot *s, const shot *before) {
  return !overlay_badge_shown(s, NULL) && shot_count(s, last_hang_row, is_warn) > 20 &&
         shot_diff(s, before, last_hang_row, 0) > 20;
}
