/*
 * The HUD's layout: what goes where, once for every platform, drawn only through the canvas
 * ops (canvas.h). The renderer redraws it a few times a second, so nothing here allocates:
 * every number is formatted with snprintf into a buffer on the stack.
 *
 * Contents, top to bottom:
 *   sizes, colours and text helpers
 *   the header: the FPS block (left) and the hang block (right); the whole compact HUD
 *   the frame-time graph (expanded)
 *   the stats rows and the viewer URL (expanded)
 *   lagscope__hud_bounds, lagscope__hud_draw, lagscope__hud_fps_color
 *
 * Geometry is in points with the origin at the HUD's top left. Nothing is drawn outside
 * lagscope__hud_bounds: strokes are inset by half their width, text is kept inside by the
 * layout, and the graph is clipped to its frame.
 */
#include "hud.h"

#include <stdio.h>
#include <string.h>

/* ---- sizes ------------------------------------------------------------------------------ */
#define COMPACT_WIDTH 150.0f
#define COMPACT_HEIGHT 56.0f
#define EXPANDED_WIDTH 260.0f
#define EXPANDED_HEIGHT 204.0f
#define PANEL_RADIUS 10.0f
#define PAD 10.0f                   /* inner margin, left and right */

#define FPS_SIZE 28.0f              /* the big number */
#define HEADER_BASELINE 33.0f       /* the big numbers' baseline */
#define CAPTION_BASELINE 46.0f      /* the small captions under them */
#define CAPTION_SIZE 8.0f
#define HANG_COUNT_SIZE 20.0f
#define PILL_TOP 9.0f               /* the red "HANG" pill, in the header */
#define PILL_HEIGHT 38.0f

#define GRAPH_TOP 54.0f
#define GRAPH_HEIGHT 58.0f
#define BAR_GAP 0.5f               /* between the bars of two frames */
#define GRAPH_CEILING_MS 100.0      /* the graph's y axis never goes higher */
#define GRAPH_FLOOR_MS 33.4         /* nor lower (when the display rate is unknown) */
#define STATS_BASELINE 130.0f       /* first stats row; the next one ROW_STEP lower */
#define ROW_STEP 17.0f
#define STAT_LABEL_SIZE 7.5f
#define STAT_VALUE_SIZE 11.0f
#define URL_BASELINE 196.0f
#define URL_SIZE 8.5f

/* ---- colours ---------------------------------------------------------------------------- */
static const lagscope__hud_color PANEL = {0.08f, 0.08f, 0.10f, 0.82f};
static const lagscope__hud_color PANEL_EDGE = {1.0f, 1.0f, 1.0f, 0.10f};
static const lagscope__hud_color TEXT = {0.95f, 0.95f, 0.97f, 1.0f};
static const lagscope__hud_color TEXT_DIM = {0.60f, 0.62f, 0.68f, 1.0f};
static const lagscope__hud_color TEXT_FAINT = {0.45f, 0.47f, 0.53f, 1.0f};
static const lagscope__hud_color GOOD = {0.30f, 0.85f, 0.45f, 1.0f};
static const lagscope__hud_color WARN = {1.00f, 0.74f, 0.20f, 1.0f};
static const lagscope__hud_color BAD = {1.00f, 0.29f, 0.26f, 1.0f};
static const lagscope__hud_color PILL_TEXT = {1.0f, 1.0f, 1.0f, 1.0f};
static const lagscope__hud_color GRAPH_BACK = {1.0f, 1.0f, 1.0f, 0.05f};
static const lagscope__hud_color GRAPH_GRID = {1.0f, 1.0f, 1.0f, 0.08f};
static const lagscope__hud_color BUDGET_LINE = {1.0f, 1.0f, 1.0f, 0.55f};
static const lagscope__hud_color LINK = {0.55f, 0.74f, 1.0f, 1.0f};

static lagscope__hud_color with_alpha(lagscope__hud_color c, float a) {
  c.a = a;
  return c;
}

/* ---- text helpers ----------------------------------------------------------------------- */
static float measure(lagscope__hud_canvas *c, const char *s, float size,
                     lagscope__hud_font_weight w) {
  return c->ops->measure_text(c, s, size, w);
}

/* Draws text at x and returns where it ends. */
static float text_at(lagscope__hud_canvas *c, float x, float y, const char *s, float size,
                     lagscope__hud_font_weight w, lagscope__hud_color color) {
  c->ops->text(c, x, y, s, size, w, color);
  return x + measure(c, s, size, w);
}

/* Draws text ending at right and returns where it starts. */
static float text_right(lagscope__hud_canvas *c, float right, float y, const char *s, float size,
                        lagscope__hud_font_weight w, lagscope__hud_color color) {
  float x = right - measure(c, s, size, w);
  c->ops->text(c, x, y, s, size, w, color);
  return x;
}

static void text_centered(lagscope__hud_canvas *c, float center, float y, const char *s, float size,
                          lagscope__hud_font_weight w, lagscope__hud_color color) {
  c->ops->text(c, center - measure(c, s, size, w) / 2.0f, y, s, size, w, color);
}

/* A filled circle, as a fully rounded square. */
static void dot(lagscope__hud_canvas *c, float cx, float cy, float radius,
                lagscope__hud_color color) {
  lagscope__hud_rect r = {cx - radius, cy - radius, 2.0f * radius, 2.0f * radius};
  c->ops->fill_round_rect(c, r, radius, color);
}

/* ---- number formatting ------------------------------------------------------------------ */
static double clamp(double v, double lo, double hi) {
  return v != v || v < lo ? lo : v > hi ? hi : v; /* NaN → lo */
}

/* "820 ms" below a second, "1.4 s" below a minute, "75 s" above. */
static void format_duration(char *out, size_t size, double ms) {
  ms = clamp(ms, 0.0, 1e9);
  if (ms < 999.5) {
    snprintf(out, size, "%.0f ms", ms);
  } else if (ms < 59950.0) {
    snprintf(out, size, "%.1f s", ms / 1000.0);
  } else {
    snprintf(out, size, "%.0f s", ms / 1000.0);
  }
}

/* A hang in progress always counts in seconds with a tenth: "0.3 s", "1.4 s", "12.0 s". */
static void format_hang_elapsed(char *out, size_t size, double ms) {
  ms = clamp(ms, 0.0, 1e9);
  if (ms < 99950.0) {
    snprintf(out, size, "%.1f s", ms / 1000.0);
  } else {
    snprintf(out, size, "%.0f s", ms / 1000.0);
  }
}

static void format_memory(char *out, size_t size, uint64_t bytes) {
  double mib = (double)bytes / (1024.0 * 1024.0);
  if (mib < 99.95) {
    snprintf(out, size, "%.1f MiB", mib);
  } else if (mib < 1023.5) {
    snprintf(out, size, "%.0f MiB", mib);
  } else {
    snprintf(out, size, "%.2f GiB", mib / 1024.0);
  }
}

/* The viewer's URL, short: everything up to the token and its first 4 characters, then "…".
 * A URL without a token is kept whole. out must hold the URL plus 4 bytes. */
static void shorten_url(char *out, size_t size, const char *url) {
  static const char *const names[] = {"?token=", "&token=", "?t=", "&t="};
  const char *token = NULL;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && token == NULL; i++)
    if ((token = strstr(url, names[i])) != NULL) token += strlen(names[i]);
  if (token == NULL || strlen(token) <= 4) {
    snprintf(out, size, "%s", url);
    return;
  }
  int keep = (int)(token + 4 - url);
  snprintf(out, size, "%.*s\xE2\x80\xA6", keep, url); /* U+2026 … */
}

/* ---- the header: FPS on the left ---------------------------------------------------------- */

/* The rate frames are judged against: the app's own steady pace when it has one (a game at
 * 35 fps by design), else the display's. */
static double pace_hz(const lagscope__hud_state *s) {
  return s->cadence_hz > 0.0 ? s->cadence_hz : s->refresh_hz;
}

static void draw_fps_block(lagscope__hud_canvas *c, const lagscope__hud_state *s) {
  char fps[16], rate[32];
  /* An event-driven app with nothing to draw is idle, neither 0 FPS in red nor good. */
  if (s->frames_idle) {
    text_at(c, PAD, HEADER_BASELINE, "idle", FPS_SIZE, LAGSCOPE__HUD_FONT_BOLD, TEXT_DIM);
  } else {
    snprintf(fps, sizeof fps, "%.0f", clamp(s->fps, 0.0, 9999.0));
    lagscope__hud_color color = lagscope__hud_fps_color(s->fps, pace_hz(s));
    text_at(c, PAD, HEADER_BASELINE, fps, FPS_SIZE, LAGSCOPE__HUD_FONT_BOLD, color);
  }
  float x =
      text_at(c, PAD, CAPTION_BASELINE, "FPS", CAPTION_SIZE, LAGSCOPE__HUD_FONT_BOLD, TEXT_DIM);
  if (s->cadence_hz > 0.0) { /* the app's own steady pace, slower than the display's */
    snprintf(rate, sizeof rate, "own %.0f Hz", clamp(s->cadence_hz, 0.0, 9999.0));
    text_at(c, x + 4.0f, CAPTION_BASELINE, rate, CAPTION_SIZE, LAGSCOPE__HUD_FONT_REGULAR,
            TEXT_FAINT);
  } else if (s->refresh_hz > 0.0) {
    snprintf(rate, sizeof rate, "of %.0f Hz", clamp(s->refresh_hz, 0.0, 9999.0));
    text_at(c, x + 4.0f, CAPTION_BASELINE, rate, CAPTION_SIZE, LAGSCOPE__HUD_FONT_REGULAR,
            TEXT_FAINT);
  }
}

/* ---- the header: hangs on the right ------------------------------------------------------- */

/* While a hang lasts: a red pill, "HANG #n" (the how manieth) over the seconds counting up. */
static void draw_hang_pill(lagscope__hud_canvas *c, const lagscope__hud_state *s, float right) {
  char elapsed[32], caption[32];
  format_hang_elapsed(elapsed, sizeof elapsed, s->hang_elapsed_ms);
  if (s->hangs > 0) {
    snprintf(caption, sizeof caption, "HANG #%llu", (unsigned long long)s->hangs);
  } else {
    snprintf(caption, sizeof caption, "HANG");
  }
  float text_width = measure(c, elapsed, 15.0f, LAGSCOPE__HUD_FONT_BOLD);
  float caption_width = measure(c, caption, CAPTION_SIZE, LAGSCOPE__HUD_FONT_BOLD);
  if (caption_width > text_width) text_width = caption_width;
  float width = text_width + 16.0f < 52.0f ? 52.0f : text_width + 16.0f;
  lagscope__hud_rect pill = {right - width, PILL_TOP, width, PILL_HEIGHT};
  c->ops->fill_round_rect(c, pill, 8.0f, BAD);
  float center = pill.x + width / 2.0f;
  text_centered(c, center, PILL_TOP + 13.0f, caption, CAPTION_SIZE, LAGSCOPE__HUD_FONT_BOLD,
                with_alpha(PILL_TEXT, 0.85f));
  text_centered(c, center, PILL_TOP + 31.0f, elapsed, 15.0f, LAGSCOPE__HUD_FONT_BOLD, PILL_TEXT);
}

/* Otherwise: the count of hangs so far, with a green dot while there has been none. */
static void draw_hang_count(lagscope__hud_canvas *c, const lagscope__hud_state *s, float right) {
  char count[24];
  snprintf(count, sizeof count, "%llu", (unsigned long long)s->hangs);
  text_right(c, right, HEADER_BASELINE, count, HANG_COUNT_SIZE, LAGSCOPE__HUD_FONT_BOLD,
             s->hangs == 0 ? TEXT_DIM : TEXT);
  const char *caption = s->hangs == 1 ? "hang" : "hangs";
  float x = text_right(c, right, CAPTION_BASELINE, caption, CAPTION_SIZE, LAGSCOPE__HUD_FONT_BOLD,
                       TEXT_DIM);
  dot(c, x - 6.0f, CAPTION_BASELINE - 3.0f, 2.75f, s->hangs == 0 ? GOOD : WARN);
}

static void draw_hang_block(lagscope__hud_canvas *c, const lagscope__hud_state *s, float right) {
  if (s->hang_in_progress) {
    draw_hang_pill(c, s, right);
  } else {
    draw_hang_count(c, s, right);
  }
}

/* The panel: dark and translucent; its edge turns red while a hang lasts. */
static void draw_panel(lagscope__hud_canvas *c, lagscope__hud_rect bounds, int hung) {
  c->ops->fill_round_rect(c, bounds, PANEL_RADIUS, PANEL);
  float line = hung ? 1.5f : 1.0f;
  lagscope__hud_rect edge = {bounds.x + line / 2.0f, bounds.y + line / 2.0f, bounds.width - line,
                             bounds.height - line};
  c->ops->stroke_round_rect(c, edge, PANEL_RADIUS - line / 2.0f, line,
                            hung ? BAD : PANEL_EDGE);
}

/* ---- the frame-time graph ------------------------------------------------------------------ */

/* The frame budget in ms (the app's own pace's, else the display's), 0 when unknown. */
static double frame_budget_ms(const lagscope__hud_state *s) {
  return pace_hz(s) > 0.0 ? 1000.0 / pace_hz(s) : 0.0;
}

static uint32_t recent_count(const lagscope__hud_state *s) {
  return s->recent_count > LAGSCOPE_RECENT_FRAMES ? LAGSCOPE_RECENT_FRAMES : s->recent_count;
}

static double longest_frame(const lagscope__hud_state *s) {
  double longest = 0.0;
  for (uint32_t i = 0; i < recent_count(s); i++) {
    if (s->recent_ms[i] > longest) longest = s->recent_ms[i];
  }
  return longest;
}

/* The y axis: twice the budget or the longest frame, whichever is more, up to the ceiling. */
static double graph_top_ms(const lagscope__hud_state *s) {
  double top = 2.0 * frame_budget_ms(s);
  if (top <= 0.0) top = GRAPH_FLOOR_MS;
  if (longest_frame(s) > top) top = longest_frame(s);
  return top > GRAPH_CEILING_MS ? GRAPH_CEILING_MS : top;
}

/* Within budget green, up to twice it amber, beyond red. */
static lagscope__hud_color bar_color(double ms, double budget) {
  if (budget <= 0.0 || ms <= budget * 1.05) return with_alpha(GOOD, 0.85f);
  return ms <= 2.0 * budget ? WARN : BAD;
}

static float graph_y(lagscope__hud_rect g, double ms, double top_ms) {
  return g.y + g.height - (float)(clamp(ms, 0.0, top_ms) / top_ms) * g.height;
}

/* One bar per frame, newest at the right; the slots of missing frames stay empty. */
static void draw_bars(lagscope__hud_canvas *c, const lagscope__hud_state *s, lagscope__hud_rect g,
                      double top_ms) {
  float slot = g.width / (float)LAGSCOPE_RECENT_FRAMES;
  uint32_t n = recent_count(s);
  double budget = frame_budget_ms(s);
  for (uint32_t i = 0; i < n; i++) {
    float x = g.x + g.width - (float)(n - i) * slot;
    float y = graph_y(g, s->recent_ms[i], top_ms);
    lagscope__hud_rect bar = {x, y, slot - BAR_GAP, g.y + g.height - y};
    c->ops->fill_rect(c, bar, bar_color(s->recent_ms[i], budget));
    if (s->recent_ms[i] > top_ms) { /* off the scale: a bright cap says so */
      c->ops->fill_rect(c, (lagscope__hud_rect){x, g.y, slot - BAR_GAP, 2.0f}, TEXT);
    }
  }
}

/* A dashed horizontal line at ms, from dashes of fill_rect (the canvas has no dash op). */
static void draw_dashed_line(lagscope__hud_canvas *c, lagscope__hud_rect g, float y,
                             lagscope__hud_color color) {
  for (float x = g.x; x < g.x + g.width; x += 6.0f) {
    float len = g.x + g.width - x < 3.5f ? g.x + g.width - x : 3.5f;
    c->ops->fill_rect(c, (lagscope__hud_rect){x, y - 0.5f, len, 1.0f}, color);
  }
}

/* The axis' top value (top left) and the budget, labelled at its line (right). */
static void draw_graph_labels(lagscope__hud_canvas *c, const lagscope__hud_state *s,
                              lagscope__hud_rect g, double top_ms) {
  char label[32];
  snprintf(label, sizeof label, "%.0f ms", top_ms);
  text_at(c, g.x + 3.0f, g.y + 8.5f, label, 7.0f, LAGSCOPE__HUD_FONT_REGULAR, TEXT_DIM);
  double budget = frame_budget_ms(s);
  if (budget <= 0.0) return;
  float y = graph_y(g, budget, top_ms);
  snprintf(label, sizeof label, "%.1f ms", budget);
  float width = measure(c, label, 7.0f, LAGSCOPE__HUD_FONT_REGULAR);
  float label_y = y - 2.5f < g.y + 16.0f ? y + 8.5f : y - 2.5f; /* clear of the top label */
  c->ops->fill_rect(c, (lagscope__hud_rect){g.x + g.width - width - 5.0f, label_y - 7.0f,
                                            width + 4.0f, 9.0f}, with_alpha(PANEL, 0.7f));
  text_right(c, g.x + g.width - 3.0f, label_y, label, 7.0f, LAGSCOPE__HUD_FONT_REGULAR, TEXT);
}

static void draw_graph(lagscope__hud_canvas *c, const lagscope__hud_state *s,
                       lagscope__hud_rect g) {
  double top_ms = graph_top_ms(s);
  c->ops->fill_round_rect(c, g, 4.0f, GRAPH_BACK);
  c->ops->clip(c, g);
  draw_dashed_line(c, g, graph_y(g, top_ms / 2.0, top_ms), GRAPH_GRID);
  draw_bars(c, s, g, top_ms);
  if (frame_budget_ms(s) > 0.0) {
    draw_dashed_line(c, g, graph_y(g, frame_budget_ms(s), top_ms), BUDGET_LINE);
  }
  draw_graph_labels(c, s, g, top_ms);
  c->ops->reset_clip(c);
}

/* ---- the stats rows and the viewer URL ----------------------------------------------------- */

/* "LABEL value": a small caps caption, then the value. */
static void draw_stat(lagscope__hud_canvas *c, float x, float y, const char *label,
                      const char *value, lagscope__hud_color color) {
  float end = text_at(c, x, y, label, STAT_LABEL_SIZE, LAGSCOPE__HUD_FONT_BOLD, TEXT_FAINT);
  text_at(c, end + 5.0f, y, value, STAT_VALUE_SIZE, LAGSCOPE__HUD_FONT_BOLD, color);
}

/* "LAST HANG 820 ms lock · keeper", "LAST HITCH 103 ms demo_parse": a duration, and after it
 * in a few words why or where (cut at the panel's margin); "–" before the first. */
static void draw_last(lagscope__hud_canvas *c, float y, const char *caption, double ms,
                      const char *words) {
  char value[48];
  if (ms > 0.0) {
    format_duration(value, sizeof value, ms);
  } else {
    snprintf(value, sizeof value, "\xE2\x80\x93"); /* – */
  }
  draw_stat(c, PAD, y, caption, value, ms > 0.0 ? WARN : TEXT_DIM);
  if (ms <= 0.0 || words[0] == '\0') return;
  float x = PAD + c->ops->measure_text(c, caption, STAT_LABEL_SIZE, LAGSCOPE__HUD_FONT_BOLD) +
            5.0f + c->ops->measure_text(c, value, STAT_VALUE_SIZE, LAGSCOPE__HUD_FONT_BOLD) + 8.0f;
  lagscope__hud_rect room = {x, y - 11.0f, EXPANDED_WIDTH - PAD - x, 15.0f};
  c->ops->clip(c, room);
  text_at(c, x, y, words, URL_SIZE, LAGSCOPE__HUD_FONT_REGULAR, TEXT_DIM);
  c->ops->reset_clip(c);
}

static void draw_stats(lagscope__hud_canvas *c, const lagscope__hud_state *s) {
  char value[48];
  float column = EXPANDED_WIDTH / 2.0f + 4.0f;
  snprintf(value, sizeof value, "%.0f %%", clamp(s->cpu_percent, 0.0, 99999.0));
  draw_stat(c, PAD, STATS_BASELINE, "CPU", value, TEXT);
  format_memory(value, sizeof value, s->memory_bytes);
  draw_stat(c, column, STATS_BASELINE, "MEM", value, TEXT);
  double worst = longest_frame(s);
  format_duration(value, sizeof value, worst);
  draw_stat(c, PAD, STATS_BASELINE + ROW_STEP, "WORST", value,
            recent_count(s) == 0 ? TEXT_DIM : bar_color(worst, frame_budget_ms(s)));
  if (s->thread_count > 0)
    snprintf(value, sizeof value, "%u", (unsigned)s->thread_count);
  else
    snprintf(value, sizeof value, "\xE2\x80\x93"); /* – before the first sample */
  draw_stat(c, column, STATS_BASELINE + ROW_STEP, "THREADS", value,
            s->thread_count > 0 ? TEXT : TEXT_DIM);
  char hang_words[sizeof s->last_hang_label + 32];
  /* In the program's start-up (before its first frame): said, as the reports and budgets do. */
  const char *phase = !s->last_hang_startup ? ""
                      : s->last_hang_label[0] != '\0' ? "start-up \xC2\xB7 " : "start-up";
  if (s->last_hang_repeats >= 2 && s->last_hang_label[0] != '\0') /* the same hang again */
    snprintf(hang_words, sizeof hang_words, "%s%s \xC3\x97%u", phase, s->last_hang_label,
             (unsigned)s->last_hang_repeats);
  else
    snprintf(hang_words, sizeof hang_words, "%s%s", phase, s->last_hang_label);
  draw_last(c, STATS_BASELINE + 2.0f * ROW_STEP, "LAST HANG", s->last_hang_ms, hang_words);
  draw_last(c, STATS_BASELINE + 3.0f * ROW_STEP, "LAST HITCH", s->last_hitch_ms,
            s->last_hitch_function);
}

static void draw_url(lagscope__hud_canvas *c, const lagscope__hud_state *s) {
  if (s->viewer_url[0] == '\0') return;
  char url[sizeof s->viewer_url + 4];
  shorten_url(url, sizeof url, s->viewer_url);
  float x = text_at(c, PAD, URL_BASELINE, "VIEWER", STAT_LABEL_SIZE, LAGSCOPE__HUD_FONT_BOLD,
                    TEXT_FAINT);
  lagscope__hud_rect room = {x, URL_BASELINE - 10.0f, EXPANDED_WIDTH - PAD - x, 14.0f};
  c->ops->clip(c, room); /* a very long URL is cut at the panel's margin */
  text_at(c, x + 5.0f, URL_BASELINE, url, URL_SIZE, LAGSCOPE__HUD_FONT_REGULAR, LINK);
  c->ops->reset_clip(c);
}

/* ---- the entry points ---------------------------------------------------------------------- */
lagscope__hud_rect lagscope__hud_bounds(const lagscope__hud_state *state) {
  if (state != NULL && state->expanded) {
    return (lagscope__hud_rect){0, 0, EXPANDED_WIDTH, EXPANDED_HEIGHT};
  }
  return (lagscope__hud_rect){0, 0, COMPACT_WIDTH, COMPACT_HEIGHT};
}

void lagscope__hud_draw(lagscope__hud_canvas *canvas, const lagscope__hud_state *state) {
  if (canvas == NULL || state == NULL) return;
  lagscope__hud_rect bounds = lagscope__hud_bounds(state);
  draw_panel(canvas, bounds, state->hang_in_progress);
  draw_fps_block(canvas, state);
  draw_hang_block(canvas, state, bounds.width - PAD);
  if (!state->expanded) return;
  lagscope__hud_rect graph = {PAD, GRAPH_TOP, bounds.width - 2.0f * PAD, GRAPH_HEIGHT};
  draw_graph(canvas, state, graph);
  draw_stats(canvas, state);
  draw_url(canvas, state);
}

lagscope__hud_color lagscope__hud_fps_color(double fps, double refresh_hz) {
  if (!(refresh_hz > 0.0)) refresh_hz = 60.0; /* unknown: judge against the common rate */
  if (!(fps > 0.0)) return BAD;
  if (fps * 10.0 >= refresh_hz * 9.0) return GOOD; /* ≥ 90 % */
  if (fps * 10.0 >= refresh_hz * 6.0) return WARN; /* ≥ 60 % */
  return BAD;
}
