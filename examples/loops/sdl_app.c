/* SDL2: lagscope hooked into an SDL event loop (docs/guide.md "SDL2").
 *
 * The ping waits in one slot that the loop empties on each pass; posting it also pushes an
 * SDL user event, only to wake a loop that waits. The trap this avoids: SDL has one event
 * queue for the whole program, and any `while (SDL_PollEvent(&e));` elsewhere (a menu, a
 * loading screen, a library) drains and drops events it does not know, ping included. The wait
 * for input is marked idle: a loop asleep in SDL_WaitEventTimeout is not hung. Frames: each
 * SDL_RenderPresent. */
#include "example.h"

#include <SDL.h>
#include <stdatomic.h>

static _Atomic(lagscope_main_fn) ping_fn;
static _Atomic(void *) ping_arg;
static atomic_int ping_waiting;
static Uint32 wake_event;

/* lagscope's post_main: on the monitor thread; SDL_PushEvent is thread-safe. */
static int post_to_slot(lagscope_main_fn fn, void *arg, void *user) {
  (void)user;
  atomic_store(&ping_fn, fn);
  atomic_store(&ping_arg, arg);
  atomic_store(&ping_waiting, 1);
  SDL_Event wake;
  SDL_zero(wake);
  wake.type = wake_event;
  return SDL_PushEvent(&wake) >= 0 ? 0 : -1;
}

static void answer_ping(void) {
  if (atomic_exchange(&ping_waiting, 0)) atomic_load(&ping_fn)(atomic_load(&ping_arg));
}

int main(int argc, char **argv) {
  example_options o = example_parse(argc, argv);
  if (SDL_Init(SDL_INIT_VIDEO) != 0) {
    fprintf(stderr, "SDL_Init: %s\n", SDL_GetError());
    return 1;
  }
  SDL_Window *window = SDL_CreateWindow("lagscope: SDL2 example", SDL_WINDOWPOS_UNDEFINED,
                                        SDL_WINDOWPOS_UNDEFINED, 320, 200, 0);
  SDL_Renderer *renderer = window ? SDL_CreateRenderer(window, -1, 0) : NULL;
  if (renderer == NULL) {
    fprintf(stderr, "SDL: %s\n", SDL_GetError());
    return 1;
  }
  wake_event = SDL_RegisterEvents(1);
  lagscope_config config = lagscope_config_default();
  config.post_main = post_to_slot; /* lagscope_start on this, the main, thread */
  if (example_start(&o, &config) != LAGSCOPE_OK) return 1;

  Uint64 start = SDL_GetTicks64();
  int stalled = 0, running = 1;
  while (running) {
    SDL_Event e;
    lagscope_idle_begin();
    int got = SDL_WaitEventTimeout(&e, 16);
    lagscope_idle_end();
    for (; got; got = SDL_PollEvent(&e))
      if (e.type == SDL_QUIT) running = 0;
    answer_ping();
    Uint64 now = SDL_GetTicks64() - start;
    if (o.stall_ms && !stalled && now >= 1000) {
      stalled = 1;
      example_stall(o.stall_ms);
    }
    if (o.seconds && now >= o.seconds * 1000ull) running = 0;
    SDL_SetRenderDrawColor(renderer, (Uint8)(now / 8), 40, 80, 255);
    SDL_RenderClear(renderer);
    SDL_RenderPresent(renderer);
    lagscope_frame();
  }
  lagscope_stop();
  SDL_DestroyRenderer(renderer);
  SDL_DestroyWindow(window);
  SDL_Quit();
  return 0;
}
