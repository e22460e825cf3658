/*
 * The HUD's renderer: keeps a lagscope__hud_state from the events and redraws it on the
 * dispatcher thread, at most 4 times a second and at once when a hang begins, into one of
 * three buffers. The main thread only swaps buffer indexes to take the newest (a triple buffer:
 * the renderer owns "back", the main thread "front", and "middle" changes hands atomically).
 */
#include "hud.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REDRAW_MIN_NS (250u * 1000u * 1000u) /* at most 4 redraws a second */
#define FRESH 4u                            /* in `middle`: the renderer put a new image there */
#define BUFFERS 3
#define LAGSCOPE__HUD_SIGNATURES 64 /* signatures whose repeats the HUD counts */

struct lagscope__hud {
  float scale;
  lagscope_hud_corner corner;
  lagscope__hud_state state;
  lagscope__hud_canvas *canvases[BUFFERS];
  lagscope__hud_rect sizes[BUFFERS]; /* each canvas's size: the layout it last drew */
  lagscope_hud_image images[BUFFERS];
  uint32_t back;            /* the renderer's */
  uint32_t front;           /* the main thread's */
  _Atomic uint32_t middle;  /* index | FRESH */
  uint64_t sequence;
  uint64_t last_render_ns;
  uint64_t hang_start_ns;
  /* How many hangs of each signature so far (the last LAGSCOPE__HUD_SIGNATURES signatures
   * seen; an older one, forgotten, counts again from 1). */
  struct {
    char id[17];
    uint32_t count;
  } seen[LAGSCOPE__HUD_SIGNATURES];
  uint32_t seen_count, seen_next;
  int dirty, urgent;
  _Atomic int expanded;     /* asked for by lagscope_hud_set_expanded, any thread */
  _Atomic int wanted;       /* the host has asked for an image: until then nothing is drawn */
};

lagscope__hud *lagscope__hud_new(const lagscope_config *config) {
  lagscope__hud *h = lagscope__alloc(sizeof(*h));
  if (h == NULL) return NULL;
  h->scale = config->hud_scale;
  h->corner = config->hud_corner;
  atomic_init(&h->expanded, config->hud_expanded ? 1 : 0);
  h->state.refresh_hz = config->refresh_hz;
  h->state.expanded = config->hud_expanded ? 1 : 0;
  h->back = 0;
  h->front = 1;
  atomic_init(&h->middle, 2u);
  h->dirty = h->urgent = 1; /* a first image at once */
  return h;
}

void lagscope__hud_free(lagscope__hud *h) {
  if (h == NULL) return;
  for (int i = 0; i < BUFFERS; i++) lagscope__hud_canvas_free(h->canvases[i]);
  lagscope__dealloc(h);
}

/* ---- the state, from events (dispatcher thread) ---- */

static void take_metrics(lagscope__hud_state *s, const lagscope_metrics *m) {
  s->refresh_hz = m->frames.refresh_hz;
  s->cadence_hz = m->frames.cadence_hz;
  s->fps = m->frames.fps;
  s->frames_idle = m->frames.idle;
  memcpy(s->recent_ms, m->frames.recent_ms, sizeof(s->recent_ms));
  s->recent_count = m->frames.recent_count;
  s->cpu_percent = m->cpu_percent;
  s->memory_bytes = m->rss_bytes;
  s->hangs = m->hangs;
  s->thread_count = m->thread_count;
}

/* Copies text cut to size at a character's start: a cut UTF-8 sequence would stop cairo's
 * drawing of the whole string. F */
static void copy_text(char *out, size_t size, const char *text) {
  size_t n = strlen(text);
  if (n >= size) {
    n = size - 1;
    while (n > 0 && ((unsigned char)text[n] & 0xC0u) == 0x80u) n--; /* a continuation byte */
  }
  memcpy(out, text, n);
  out[n] = '\0';
}

/* The hangs so far with this report's signature, this one counted. F */
static uint32_t count_signature(lagscope__hud *h, const lagscope_hang_report *report) {
  lagscope__signature s; /* 1.3 KiB on the dispatcher's stack, no allocation */
  lagscope__signature_of(lagscope__hang_report_kind(report),
                         lagscope__hang_report_heaviest_stack(report), &s);
  for (uint32_t i = 0; i < h->seen_count; i++)
    if (strcmp(h->seen[i].id, s.id) == 0) return ++h->seen[i].count;
  uint32_t at = h->seen_count < LAGSCOPE__HUD_SIGNATURES ? h->seen_count++ : h->seen_next;
  h->seen_next = (at + 1) % LAGSCOPE__HUD_SIGNATURES;
  memcpy(h->seen[at].id, s.id, sizeof(s.id));
  h->seen[at].count = 1;
  return 1;
}

void lagscope__hud_on_event(lagscope__hud *h, const lagscope_event *e) {
  switch (e->type) {
    case LAGSCOPE_EVENT_METRICS:
      take_metrics(&h->state, e->payload.metrics);
      h->dirty = 1;
      break;
    case LAGSCOPE_EVENT_HANG_BEGAN:
      h->state.hang_in_progress = 1;
      h->state.hangs++; /* until the metrics say (an idle one is taken back at its end) */
      h->hang_start_ns = e->as.hang_began.start_ns;
      h->dirty = h->urgent = 1; /* the one moment that cannot wait */
      break;
    case LAGSCOPE_EVENT_HANG_ENDED:
      h->state.hang_in_progress = 0;
      if (!e->as.hang_ended.counted && h->state.hangs > 0) h->state.hangs--;
      h->state.last_hang_ms = (double)e->as.hang_ended.duration_ns / 1e6;
      h->state.last_hang_startup = e->as.hang_ended.startup;
      copy_text(h->state.last_hang_label, sizeof(h->state.last_hang_label),
                e->payload.report != NULL ? lagscope__hang_report_label(e->payload.report) : "");
      h->state.last_hang_repeats = e->as.hang_ended.counted && e->payload.report != NULL
                                       ? count_signature(h, e->payload.report)
                                       : 0;
      h->dirty = h->urgent = 1;
      break;
    case LAGSCOPE_EVENT_HITCH:
      h->state.last_hitch_ms = (double)e->as.hitch.duration_ns / 1e6;
      copy_text(h->state.last_hitch_function, sizeof(h->state.last_hitch_function),
                e->as.hitch.function != NULL ? e->as.hitch.function : "");
      h->dirty = 1;
      break;
    default:
      break;
  }
}

void lagscope__hud_set_viewer_url(lagscope__hud *h, const char *url) {
  snprintf(h->state.viewer_url, sizeof(h->state.viewer_url), "%s", url != NULL ? url : "");
  h->dirty = 1;
}

/* ---- drawing (dispatcher thread) ---- */

/* The back buffer, sized to the layout it is about to draw (the compact one while idle: 33 KiB
 * at scale 1, where the expanded one's 212 KiB a buffer would sit unused). Only the back buffer
 * is remade: the renderer alone owns it, while the front may be in a reader's hands. The
 * buffers, and with them the canvas library and its fonts, exist only once a host has asked to
 * show the HUD: an app without a screen never pays for them. A */
static lagscope__hud_canvas *back_canvas(lagscope__hud *h, lagscope__hud_rect bounds) {
  uint32_t i = h->back;
  if (h->canvases[i] != NULL &&
      (h->sizes[i].width != bounds.width || h->sizes[i].height != bounds.height)) {
    lagscope__hud_canvas_free(h->canvases[i]);
    h->canvases[i] = NULL;
    h->images[i].pixels = NULL;
  }
  if (h->canvases[i] == NULL) {
    h->canvases[i] = lagscope__hud_canvas_new(bounds.width, bounds.height, h->scale);
    h->sizes[i] = bounds;
  }
  return h->canvases[i];
}

static void render(lagscope__hud *h, uint64_t now) {
  lagscope__hud_rect bounds = lagscope__hud_bounds(&h->state);
  lagscope__hud_canvas *canvas = back_canvas(h, bounds);
  if (canvas == NULL) return; /* out of memory: no image, lagscope runs on */
  if (h->state.hang_in_progress)
    h->state.hang_elapsed_ms = now > h->hang_start_ns ? (double)(now - h->hang_start_ns) / 1e6 : 0;
  lagscope__hud_canvas_clear(canvas);
  lagscope__hud_draw(canvas, &h->state);
  lagscope_hud_image *image = &h->images[h->back];
  int width, height, stride;
  image->pixels = lagscope__hud_canvas_pixels(canvas, &width, &height, &stride);
  image->width = (int)ceilf(bounds.width * h->scale);
  image->height = (int)ceilf(bounds.height * h->scale);
  if (image->width > width) image->width = width;
  if (image->height > height) image->height = height;
  image->stride = stride;
  image->scale = h->scale;
  image->corner = h->corner;
  image->sequence = ++h->sequence;
  /* Publish: hand the finished buffer over and take back whichever was in the middle. */
  uint32_t old = atomic_exchange_explicit(&h->middle, h->back | FRESH, memory_order_acq_rel);
  h->back = old & ~FRESH;
  h->last_render_ns = now;
  h->dirty = h->urgent = 0;
}

uint64_t lagscope__hud_tick(lagscope__hud *h, uint64_t now) {
  if (!atomic_load_explicit(&h->wanted, memory_order_acquire)) return UINT64_MAX;
  int expanded = atomic_load_explicit(&h->expanded, memory_order_relaxed);
  if (expanded != h->state.expanded) {
    h->state.expanded = expanded;
    h->dirty = h->urgent = 1;
  }
  int hang = h->state.hang_in_progress;
  if (hang) h->dirty = 1; /* the badge counts up */
  if (!h->dirty) return UINT64_MAX;
  /* The host takes an image when it shows one; a newer one waits until it took the last, but
   * during a hang it cannot take any, yet the image it takes the moment the stall ends must
   * say how long it lasted. */
  int taken = !(atomic_load_explicit(&h->middle, memory_order_acquire) & FRESH);
  uint64_t due = h->last_render_ns + REDRAW_MIN_NS;
  if (h->urgent || ((taken || hang) && now >= due)) {
    render(h, now);
    due = now + REDRAW_MIN_NS;
  }
  if (hang || (h->dirty && taken)) return due; /* the next redraw's turn */
  return UINT64_MAX; /* drawn, or waiting for a take: the next event wakes the dispatcher */
}

int lagscope__hud_want(lagscope__hud *h) {
  if (atomic_load_explicit(&h->wanted, memory_order_relaxed)) return 0;
  return !atomic_exchange_explicit(&h->wanted, 1, memory_order_acq_rel);
}

void lagscope__hud_request_expanded(lagscope__hud *h, int expanded) {
  atomic_store_explicit(&h->expanded, expanded ? 1 : 0, memory_order_relaxed);
}

/* ---- the main thread ---- */

int lagscope__hud_take(lagscope__hud *h, lagscope_hud_image *out) {
  if (atomic_load_explicit(&h->middle, memory_order_acquire) & FRESH) {
    uint32_t old = atomic_exchange_explicit(&h->middle, h->front, memory_order_acq_rel);
    h->front = old & ~FRESH;
  }
  if (h->images[h->front].pixels == NULL) return LAGSCOPE_ENODATA;
  *out = h->images[h->front];
  return LAGSCOPE_OK;
}
