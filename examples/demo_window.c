/*
 * The demo's window: see demo_window.h. The content moves with the clock (squares bouncing, a
 * bar turning, a frame counter) so that a frame the main thread could not present is plain to
 * see: while it stalls, the picture freezes. Over it, in the configured corner, the HUD image
 * lagscope renders off the main thread: on X11, in lagscope's overlay window over this one
 * (lagscope_hud_overlay_x11, given the X11 window and display SDL_GetWindowWMInfo tells), which
 * lagscope's thread keeps redrawing while the main thread stalls; else (--hud-mode frame, or not
 * X11) composited into each frame (lagscope_hud_take), frozen with it.
 *
 * The HUD's pixels are premultiplied ARGB32 in native byte order, which is SDL's packed
 * SDL_PIXELFORMAT_ARGB8888 on any byte order. They are blended with ONE, ONE_MINUS_SRC_ALPHA
 * (SDL_BLENDMODE_BLEND would multiply by alpha twice). A renderer without custom blend modes
 * (SDL's software renderer) gets a straight-alpha copy and SDL_BLENDMODE_BLEND instead.
 */
#include "demo_window.h"

#include "lagscope.h"

#include <SDL.h>
#include <SDL_syswm.h> /* with SDL's X11 driver, <X11/Xlib.h> (DisplayString, a macro) */

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HUD_MARGIN_POINTS 8.0f

/* Colours of the content. None is white nor red: the tests find the HUD's text and its red
 * hang badge by those. */
typedef struct demo_rgb {
  Uint8 r, g, b;
} demo_rgb;

static const demo_rgb demo_background = {70, 96, 132};
static const demo_rgb demo_bar_color = {250, 214, 110};
static const demo_rgb demo_digit_color = {236, 236, 160};

typedef struct demo_square {
  demo_rgb color;
  float x0, y0, vx, vy; /* start position and speed, pixels and pixels per second */
  float size;
} demo_square;

static const demo_square demo_squares[] = {
    {{0, 200, 220}, 40, 300, 230, 170, 56},
    {{240, 190, 30}, 500, 60, -190, 240, 48},
    {{60, 210, 90}, 300, 200, 310, -150, 64},
    {{190, 90, 230}, 650, 350, -260, -200, 40},
    {{240, 140, 40}, 120, 40, 150, 290, 52},
};

struct demo_window {
  SDL_Window *window;
  SDL_Renderer *renderer;
  SDL_Texture *hud; /* the HUD image, NULL before the first */
  int hud_width, hud_height;
  float hud_scale;
  lagscope_hud_corner hud_corner;
  uint64_t hud_sequence;
  int have_hud;
  int straight_alpha; /* the renderer cannot blend premultiplied: convert */
  uint32_t *convert;  /* straight-alpha copy of the HUD, when straight_alpha */
  size_t convert_len;
  int expanded;
  int overlay;        /* lagscope's overlay window shows the HUD: none is drawn in the frames */
  uint64_t start_ns;
  uint64_t frames;
};

/* The wake-up event: registered once; at most one in SDL's queue at a time. */
static atomic_uint demo_wake_type;   /* 0 while no window is open */
static atomic_int demo_wake_pending;

void demo_window_wake(void) {
  unsigned type = atomic_load(&demo_wake_type);
  if (type == 0 || atomic_exchange(&demo_wake_pending, 1)) return;
  SDL_Event e;
  memset(&e, 0, sizeof e);
  e.type = type;
  if (SDL_PushEvent(&e) != 1) atomic_store(&demo_wake_pending, 0); /* full: next frame wakes */
}

/* SDL falls back to drivers that show nothing (offscreen, dummy) when there is no display; the
 * demo then runs headless instead, unless SDL_VIDEODRIVER asked for one of them. */
static int demo_no_display(char *why, size_t why_size) {
  const char *asked = getenv("SDL_VIDEODRIVER");
  if (asked && asked[0]) return 0;
  const char *x11 = getenv("DISPLAY"), *wayland = getenv("WAYLAND_DISPLAY");
  if ((!x11 || !x11[0]) && (!wayland || !wayland[0])) {
    snprintf(why, why_size, "no display: DISPLAY and WAYLAND_DISPLAY are not set");
    return 1;
  }
  return 0;
}

demo_window *demo_window_open(const char *title, int expanded, char *why, size_t why_size) {
  if (demo_no_display(why, why_size)) return NULL;
  /* The demo handles SIGINT/SIGTERM itself; the loop paces frames, not vsync. */
  SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
  SDL_SetHint(SDL_HINT_RENDER_VSYNC, "0");
  if (SDL_Init(SDL_INIT_VIDEO) != 0) {
    snprintf(why, why_size, "SDL_Init: %s", SDL_GetError());
    return NULL;
  }
  const char *driver = SDL_GetCurrentVideoDriver(), *asked = getenv("SDL_VIDEODRIVER");
  if (driver && (!strcmp(driver, "offscreen") || !strcmp(driver, "dummy")) &&
      !(asked && strstr(asked, driver))) {
    snprintf(why, why_size, "no display: SDL found only its %s video driver", driver);
    SDL_Quit();
    return NULL;
  }
  demo_window *w = calloc(1, sizeof *w);
  Uint32 type = SDL_RegisterEvents(1);
  if (!w || type == (Uint32)-1) {
    snprintf(why, why_size, "out of memory or SDL events");
    goto fail;
  }
  w->window = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                               DEMO_WINDOW_WIDTH, DEMO_WINDOW_HEIGHT, SDL_WINDOW_SHOWN);
  if (w->window) w->renderer = SDL_CreateRenderer(w->window, -1, 0);
  if (!w->renderer) {
    snprintf(why, why_size, "SDL window: %s", SDL_GetError());
    goto fail;
  }
  SDL_RendererInfo info;
  if (SDL_GetRendererInfo(w->renderer, &info) == 0)
    fprintf(stderr, "lagscope-demo: window %dx%d, SDL %s video, %s renderer\n",
            DEMO_WINDOW_WIDTH, DEMO_WINDOW_HEIGHT, driver ? driver : "?", info.name);
  w->expanded = expanded;
  atomic_store(&demo_wake_pending, 0);
  atomic_store(&demo_wake_type, type);
  return w;
fail:
  if (w && w->window) SDL_DestroyWindow(w->window);
  free(w);
  SDL_Quit();
  return NULL;
}

void demo_window_close(demo_window *w) {
  if (!w) return;
  atomic_store(&demo_wake_type, 0);
  if (w->hud) SDL_DestroyTexture(w->hud);
  SDL_DestroyRenderer(w->renderer);
  SDL_DestroyWindow(w->window);
  free(w->convert);
  free(w);
  SDL_Quit();
}

/* ---- where the HUD goes ------------------------------------------------------------------- */

/* lagscope's overlay over SDL's X11 window, on lagscope's own connection to the display SDL
 * opened (its name, not SDL's Display). 0, or why not (NULL: not an X11 window). */
static const char *demo_overlay_x11(demo_window *w, char *why, size_t why_size) {
#if defined(SDL_VIDEO_DRIVER_X11)
  SDL_SysWMinfo info;
  SDL_VERSION(&info.version);
  if (!SDL_GetWindowWMInfo(w->window, &info)) {
    snprintf(why, why_size, "SDL_GetWindowWMInfo: %s", SDL_GetError());
    return why;
  }
  if (info.subsystem != SDL_SYSWM_X11) return NULL;
  int rc = lagscope_hud_overlay_x11(DisplayString(info.info.x11.display),
                                    (unsigned long)info.info.x11.window);
  if (rc == 0) return "";
  snprintf(why, why_size, "lagscope_hud_overlay_x11: %s (%s)", lagscope_strerror(rc),
           lagscope_error_name(rc));
  return why;
#else
  (void)w, (void)why, (void)why_size;
  return NULL; /* an SDL without X11 */
#endif
}

int demo_window_show_hud(demo_window *w, int overlay) {
  w->overlay = 0;
  if (overlay == 0) return 0;
  char text[256];
  const char *why = demo_overlay_x11(w, text, sizeof text);
  if (why != NULL && why[0] == '\0') {
    w->overlay = 1;
    fprintf(stderr, "lagscope-demo: the HUD is in lagscope's overlay window over this one, live "
                    "during a stall (--hud-mode frame draws it in the frames)\n");
    return 1;
  }
  if (why != NULL || overlay > 0)
    fprintf(stderr, "lagscope-demo: no HUD overlay (%s): the HUD is drawn in the frames\n",
            why != NULL ? why : "SDL's window is not an X11 one");
  return 0;
}

/* ---- events ------------------------------------------------------------------------------- */

static void demo_window_handle(demo_window *w, const SDL_Event *e, demo_window_input *in) {
  if (e->type == atomic_load(&demo_wake_type)) {
    atomic_store(&demo_wake_pending, 0); /* the caller drains the queue next */
  } else if (e->type == SDL_QUIT) {
    in->quit = 1;
  } else if (e->type == SDL_WINDOWEVENT && e->window.event == SDL_WINDOWEVENT_CLOSE) {
    in->quit = 1;
  } else if (e->type == SDL_KEYDOWN && !e->key.repeat) {
    switch (e->key.keysym.sym) {
    case SDLK_q:
    case SDLK_ESCAPE: in->quit = 1; break;
    case SDLK_s: in->stall = 1; break;
    case SDLK_h:
      w->expanded = !w->expanded;
      lagscope_hud_set_expanded(w->expanded);
      break;
    default: break;
    }
  }
}

void demo_window_wait(demo_window *w, uint64_t wait_ns, demo_window_input *in) {
  /* SDL waits in whole milliseconds: round up, so a frame is at most 1 ms late rather than
   * the loop spinning through the last millisecond. */
  uint64_t ms = (wait_ns + 999999u) / 1000000u;
  if (ms > 50) ms = 50; /* look at the signal flags now and then */
  SDL_Event e;
  if (!SDL_WaitEventTimeout(&e, (int)ms)) return;
  demo_window_handle(w, &e, in);
  while (SDL_PollEvent(&e)) demo_window_handle(w, &e, in);
}

/* ---- drawing ------------------------------------------------------------------------------ */

static void demo_set_color(SDL_Renderer *r, demo_rgb c) {
  SDL_SetRenderDrawColor(r, c.r, c.g, c.b, 255);
}

/* Position along a segment of length span, bouncing between its ends. */
static float demo_bounce(float p, float span) {
  if (span <= 0) return 0;
  float m = fmodf(p, 2 * span);
  if (m < 0) m += 2 * span;
  return m < span ? m : 2 * span - m;
}

static void demo_draw_squares(SDL_Renderer *r, int width, int height, float t) {
  for (size_t i = 0; i < sizeof demo_squares / sizeof demo_squares[0]; i++) {
    const demo_square *s = &demo_squares[i];
    SDL_FRect rect = {demo_bounce(s->x0 + s->vx * t, (float)width - s->size),
                      demo_bounce(s->y0 + s->vy * t, (float)height - s->size), s->size, s->size};
    demo_set_color(r, s->color);
    SDL_RenderFillRectF(r, &rect);
  }
}

/* A bar turning about the window's centre, half a turn every ~2 s. */
static void demo_draw_bar(SDL_Renderer *r, int width, int height, float t) {
  float cx = (float)width / 2, cy = (float)height / 2, half_len = 150, half_w = 9;
  float a = t * 1.5f, c = cosf(a), s = sinf(a);
  SDL_Color color = {demo_bar_color.r, demo_bar_color.g, demo_bar_color.b, 255};
  SDL_Vertex v[4];
  const float corners[4][2] = {{-half_len, -half_w}, {half_len, -half_w}, {half_len, half_w},
                               {-half_len, half_w}};
  for (int i = 0; i < 4; i++) {
    v[i].position.x = cx + corners[i][0] * c - corners[i][1] * s;
    v[i].position.y = cy + corners[i][0] * s + corners[i][1] * c;
    v[i].color = color;
    v[i].tex_coord.x = v[i].tex_coord.y = 0;
  }
  const int indices[6] = {0, 1, 2, 0, 2, 3};
  SDL_RenderGeometry(r, NULL, v, 4, indices, 6);
}

/* Digits 0-9 as 3x5 bitmaps, one row per 3 bits (top row first, high bit left). */
static const unsigned short demo_digit_rows[10] = {
    075557, 026227, 071747, 071717, 055711, 074717, 074757, 071111, 075757, 075717};

/* n in blocky digits centred on centre_x, below top. */
static void demo_draw_number(SDL_Renderer *r, uint64_t n, int centre_x, int top, int cell) {
  char text[24];
  int len = snprintf(text, sizeof text, "%llu", (unsigned long long)n);
  demo_set_color(r, demo_digit_color);
  int x = centre_x - (len * 4 - 1) * cell / 2;
  for (int i = 0; i < len; i++, x += 4 * cell) {
    unsigned bits = demo_digit_rows[text[i] - '0'];
    for (int row = 0; row < 5; row++) {
      for (int col = 0; col < 3; col++) {
        if (!(bits >> ((4 - row) * 3 + (2 - col)) & 1)) continue;
        SDL_Rect px = {x + col * cell, top + row * cell, cell, cell};
        SDL_RenderFillRect(r, &px);
      }
    }
  }
}

/* Premultiplied to straight alpha, for renderers that only blend straight alpha. */
static const uint32_t *demo_unpremultiply(demo_window *w, const lagscope_hud_image *img) {
  size_t need = (size_t)img->width * (size_t)img->height;
  if (need > w->convert_len) {
    uint32_t *p = realloc(w->convert, need * sizeof *p);
    if (!p) return NULL;
    w->convert = p;
    w->convert_len = need;
  }
  for (int y = 0; y < img->height; y++) {
    const uint32_t *src = (const uint32_t *)((const char *)img->pixels + (size_t)y * img->stride);
    uint32_t *dst = w->convert + (size_t)y * img->width;
    for (int x = 0; x < img->width; x++) {
      uint32_t p = src[x], a = p >> 24;
      if (a == 0 || a == 255) {
        dst[x] = a == 0 ? 0 : p;
        continue;
      }
      uint32_t rgb = 0;
      for (int shift = 0; shift <= 16; shift += 8) {
        uint32_t c = ((p >> shift & 0xff) * 255 + a / 2) / a;
        rgb |= (c > 255 ? 255 : c) << shift;
      }
      dst[x] = a << 24 | rgb;
    }
  }
  return w->convert;
}

static int demo_hud_texture(demo_window *w, int width, int height) {
  if (w->hud && w->hud_width == width && w->hud_height == height) return 0;
  if (w->hud) SDL_DestroyTexture(w->hud);
  w->hud = SDL_CreateTexture(w->renderer, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STREAMING,
                             width, height);
  if (!w->hud) return -1;
  w->hud_width = width;
  w->hud_height = height;
  SDL_BlendMode premultiplied = SDL_ComposeCustomBlendMode(
      SDL_BLENDFACTOR_ONE, SDL_BLENDFACTOR_ONE_MINUS_SRC_ALPHA, SDL_BLENDOPERATION_ADD,
      SDL_BLENDFACTOR_ONE, SDL_BLENDFACTOR_ONE_MINUS_SRC_ALPHA, SDL_BLENDOPERATION_ADD);
  w->straight_alpha = SDL_SetTextureBlendMode(w->hud, premultiplied) != 0;
  if (w->straight_alpha) SDL_SetTextureBlendMode(w->hud, SDL_BLENDMODE_BLEND);
  return 0;
}

/* Uploads the latest HUD image when lagscope has a new one. */
static void demo_update_hud(demo_window *w) {
  lagscope_hud_image img;
  if (lagscope_hud_take(&img) != 0 || !img.pixels || img.width <= 0 || img.height <= 0) return;
  if (w->have_hud && img.sequence == w->hud_sequence) return;
  if (demo_hud_texture(w, img.width, img.height) != 0) return;
  const void *pixels = img.pixels;
  int pitch = img.stride;
  if (w->straight_alpha) {
    pixels = demo_unpremultiply(w, &img);
    pitch = img.width * 4;
    if (!pixels) return;
  }
  if (SDL_UpdateTexture(w->hud, NULL, pixels, pitch) != 0) return;
  w->have_hud = 1;
  w->hud_sequence = img.sequence;
  w->hud_scale = img.scale > 0 ? img.scale : 1;
  w->hud_corner = img.corner;
}

static void demo_draw_hud(demo_window *w, int width, int height) {
  if (!w->have_hud) return;
  int m = (int)lroundf(HUD_MARGIN_POINTS * w->hud_scale);
  int right = w->hud_corner == LAGSCOPE_HUD_TOP_RIGHT || w->hud_corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int bottom =
      w->hud_corner == LAGSCOPE_HUD_BOTTOM_LEFT || w->hud_corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  SDL_Rect dst = {right ? width - w->hud_width - m : m, bottom ? height - w->hud_height - m : m,
                  w->hud_width, w->hud_height};
  SDL_RenderCopy(w->renderer, w->hud, NULL, &dst); /* at its pixel size */
}

void demo_window_draw(demo_window *w, uint64_t now_ns) {
  if (w->start_ns == 0) w->start_ns = now_ns;
  float t = (float)((double)(now_ns - w->start_ns) / 1e9);
  int width = DEMO_WINDOW_WIDTH, height = DEMO_WINDOW_HEIGHT;
  SDL_GetRendererOutputSize(w->renderer, &width, &height);
  SDL_Renderer *r = w->renderer;
  SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
  demo_set_color(r, demo_background);
  SDL_RenderClear(r);
  demo_draw_squares(r, width, height, t);
  demo_draw_bar(r, width, height, t);
  demo_draw_number(r, ++w->frames, width / 2, height - 16 - 5 * 6, 6); /* frames drawn */
  if (!w->overlay) {
    demo_update_hud(w);
    demo_draw_hud(w, width, height);
  }
  SDL_RenderPresent(r);
}
