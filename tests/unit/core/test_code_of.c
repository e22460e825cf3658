/* Whose code a frame is (lagscope__code_of, core/stack/symbols.c): one rule for every place a
 * hang names "your code" (issue 32, section 4). The program and the libraries it ships are the
 * app's; the system's libraries and the vDSO are not; lagscope's own (its library, the
 * preload's hooks, its functions linked into the program) never are. */
#include "check.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

static lagscope__code code(const char *function, const char *module, const char *program,
                           const char *own) {
  lagscope__stack_frame f;
  memset(&f, 0, sizeof(f));
  f.function = function;
  f.module = module;
  return lagscope__code_of(&f, program, own);
}

int main(void) {
  const char *mousepad = "/usr/bin/mousepad";
  const char *preload = "/usr/lib/x86_64-linux-gnu/lagscope/liblagscope-preload.so";
  /* The program itself, named or stripped. */
  CHECK_EQ_INT(code("mousepad_file_open", mousepad, mousepad, preload), LAGSCOPE__CODE_APP);
  CHECK_EQ_INT(code(NULL, mousepad, mousepad, preload), LAGSCOPE__CODE_APP);
  /* Its private library, in a system folder named as the program. */
  CHECK_EQ_INT(code("mousepad_file_open",
                    "/usr/lib/x86_64-linux-gnu/mousepad/libmousepad.so.0", mousepad, preload),
               LAGSCOPE__CODE_APP);
  /* A folder that only begins with the program's name is not its own. */
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/mousepad-extras/libx.so", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  /* Libraries outside the system's folders: shipped with the app (an rpath, /opt). */
  CHECK_EQ_INT(code("load_level", "/opt/game/lib/libengine.so", "/opt/game/bin/game", NULL),
               LAGSCOPE__CODE_APP);
  /* The system's. */
  CHECK_EQ_INT(code("g_main_loop_run", "/lib/x86_64-linux-gnu/libglib-2.0.so.0", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("clock_gettime", "linux-vdso.so.1", mousepad, preload), LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code(NULL, NULL, mousepad, preload), LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("objc_msgSend", "/usr/lib/libobjc.A.dylib", "/Applications/A.app/A", NULL),
               LAGSCOPE__CODE_SYSTEM);
  /* lagscope's: the preload's hook of the same name as GLib's, and lagscope's own functions
   * linked into the program (own is then the program: its other frames stay the app's). */
  CHECK_EQ_INT(code("g_main_loop_run", preload, mousepad, preload), LAGSCOPE__CODE_LAGSCOPE);
  CHECK_EQ_INT(code("lagscope__capture_handler", "/usr/bin/app", "/usr/bin/app", "/usr/bin/app"),
               LAGSCOPE__CODE_LAGSCOPE);
  CHECK_EQ_INT(code("app_work", "/usr/bin/app", "/usr/bin/app", "/usr/bin/app"),
               LAGSCOPE__CODE_APP);
  /* Nothing known of the program: a library outside the system's folders is still the app's. */
  CHECK_EQ_INT(code("f", "/home/u/build/libapp.so", NULL, NULL), LAGSCOPE__CODE_APP);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/mousepad/libmousepad.so.0", NULL, NULL),
               LAGSCOPE__CODE_SYSTEM);
  printf("code of: ok\n");
  return 0;
}
