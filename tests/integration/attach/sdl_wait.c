/* An SDL2 program that knows nothing of lagscope, for lagscope-run's tests: a window, a loop
 * that blocks in SDL_WaitEvent with nothing to do (idle: never a hang), then, on a timer's
 * event after --wait-ms (default 1500), one stall of --stall-ms (default 600; 0: none) on the
 * CPU in attach_sdl_stall, a frame, and the end after another idle --wait-ms. */
#include <SDL.h>
#include <stdlib.h>
#include <string.h>

static Uint32 wake_type;

static Uint32 push_wake(Uint32 interval, void *unused) {
  (void)interval;
  (void)unused;
  SDL_Event e;
  memset(&e, 0, sizeof e);
  e.type = wake_type;
  SDL_PushEvent(&e);
  return 0;
}

__attribute__((noinline)) static void attach_sdl_stall(unsigned ms) {
  Uint64 end = SDL_GetTicks64() + ms;
  volatile unsigned long spins = 0;
  while (SDL_GetTicks64() < end) spins++;
}

int main(int argc, char **argv) {
  unsigned wait_ms = 1500, stall_ms = 600;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--wait-ms") == 0)
      wait_ms = (unsigned)strtoul(argv[i + 1], NULL, 10);
    else if (strcmp(argv[i], "--stall-ms") == 0)
      stall_ms = (unsigned)strtoul(argv[i + 1], NULL, 10);
  }
  if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_TIMER) != 0) {
    fprintf(stderr, "sdl_wait: %s\n", SDL_GetError());
    return 1;
  }
  SDL_Window *window = SDL_CreateWindow("sdl_wait", 0, 0, 320, 120, 0);
  SDL_Renderer *renderer = window ? SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE) : NULL;
  if (renderer == NULL) {
    fprintf(stderr, "sdl_wait: %s\n", SDL_GetError());
    return 1;
  }
  wake_type = SDL_RegisterEvents(1);
  SDL_RenderClear(renderer);
  SDL_RenderPresent(renderer);
  SDL_AddTimer(wait_ms, push_wake, NULL);
  int wakes = 0;
  SDL_Event e;
  while (wakes < 2 && SDL_WaitEvent(&e)) {
    if (e.type == SDL_QUIT) break;
    if (e.type != wake_type) continue;
    if (++wakes == 1) {
      attach_sdl_stall(stall_ms);
      SDL_RenderClear(renderer);
      SDL_RenderPresent(renderer);
      SDL_AddTimer(wait_ms, push_wake, NULL);
    }
  }
  SDL_DestroyRenderer(renderer);
  SDL_DestroyWindow(window);
  SDL_Quit();
  return 0;
}
