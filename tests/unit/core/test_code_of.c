/* Whose code a frame is (lagscope__code_of, core/stack/symbols.c): one rule for every place a
 * hang names "your code" (issue 32, section 4). The program and what it brought (its private
 * libraries, in whatever folder: issue 45, item 1) are the app's; the platform's libraries
 * (by name) and the vDSO are not; lagscope's own (its library, the preload's hooks, its
 * functions linked into the program) never are. */
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
  /* Its private libraries, wherever installed: Debian's mousepad keeps its code in
   * libmousepad.so.0 beside GTK (issue 45, item 1), and its plugins in a folder of its own. */
  CHECK_EQ_INT(code("mousepad_file_open", "/usr/lib/x86_64-linux-gnu/libmousepad.so.0", mousepad,
                    preload),
               LAGSCOPE__CODE_APP);
  CHECK_EQ_INT(code(NULL, "/lib/x86_64-linux-gnu/libmousepad.so.0", mousepad, preload),
               LAGSCOPE__CODE_APP);
  CHECK_EQ_INT(code("mousepad_file_open",
                    "/usr/lib/x86_64-linux-gnu/mousepad/libmousepad.so.0", mousepad, preload),
               LAGSCOPE__CODE_APP);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/mousepad/plugins/libmousepad-plugin-gspell.so",
                    mousepad, preload),
               LAGSCOPE__CODE_APP);
  CHECK_EQ_INT(code("f", "/usr/lib64/libtotem.so.0", "/usr/bin/totem", NULL), LAGSCOPE__CODE_APP);
  /* Libraries outside the system's folders: shipped with the app (an rpath, /opt). */
  CHECK_EQ_INT(code("load_level", "/opt/game/lib/libengine.so", "/opt/game/bin/game", NULL),
               LAGSCOPE__CODE_APP);
  /* The platform's, by name, from any folder; not a library whose name only begins alike. */
  CHECK_EQ_INT(code("g_main_loop_run", "/lib/x86_64-linux-gnu/libglib-2.0.so.0", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("gtk_main", "/usr/lib/x86_64-linux-gnu/libgtk-3.so.0", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libgtksourceview-4.so.0", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("poll", "/lib/x86_64-linux-gnu/libc.so.6", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/lib64/ld-linux-x86-64.so.2", mousepad, preload), LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libQt5Widgets.so.5", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libX11.so.6", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libxcb-randr.so.0", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libasan.so.8", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/dri/swrast_dri.so", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/gtk-3.0/3.0.0/immodules/im-ibus.so", mousepad,
                    preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/qt5/plugins/platforms/libqxcb.so", mousepad,
                    preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("SDL_Delay", "/opt/game/lib/libSDL2-2.0.so.0", "/opt/game/bin/game", NULL),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libcairo.so.2", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libcalc.so.2", "/usr/bin/calc", NULL),
               LAGSCOPE__CODE_APP); /* libc + "alc": not libc */
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libzoo.so.1", "/usr/bin/zoo", NULL),
               LAGSCOPE__CODE_APP); /* libz + "oo": not zlib */
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/gtk-3.0-extras/libx.so", mousepad, preload),
               LAGSCOPE__CODE_APP); /* a folder that only begins as GTK's */
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/security/pam_unix.so", mousepad, preload),
               LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "/home/u/security/build/libaudit_app.so", "/home/u/security/build/app",
                    NULL),
               LAGSCOPE__CODE_APP); /* a plugin folder's name, but not below a library folder */
  CHECK_EQ_INT(code("f", "/home/u/dri/libdri_tool.so", "/home/u/dri/tool", NULL),
               LAGSCOPE__CODE_APP);
  CHECK_EQ_INT(code("f", "/opt/app/lib/libutil.so", "/opt/app/bin/app", NULL),
               LAGSCOPE__CODE_APP); /* a private library of a common name */
  CHECK_EQ_INT(code("clock_gettime", "linux-vdso.so.1", mousepad, preload), LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code(NULL, NULL, mousepad, preload), LAGSCOPE__CODE_SYSTEM);
  CHECK_EQ_INT(code("f", "", mousepad, preload), LAGSCOPE__CODE_SYSTEM);
  /* Apple's: by name here, and by its sealed folders on Darwin (lagscope__os_folder). */
  CHECK_EQ_INT(code("objc_msgSend", "/usr/lib/libobjc.A.dylib", "/Applications/A.app/A", NULL),
               LAGSCOPE__CODE_SYSTEM);
  /* lagscope's: the preload's hook of the same name as GLib's, and lagscope's own functions
   * linked into the program (own is then the program: its other frames stay the app's). */
  CHECK_EQ_INT(code("g_main_loop_run", preload, mousepad, preload), LAGSCOPE__CODE_LAGSCOPE);
  CHECK_EQ_INT(code("lagscope__capture_handler", "/usr/bin/app", "/usr/bin/app", "/usr/bin/app"),
               LAGSCOPE__CODE_LAGSCOPE);
  CHECK_EQ_INT(code("app_work", "/usr/bin/app", "/usr/bin/app", "/usr/bin/app"),
               LAGSCOPE__CODE_APP);
  /* Nothing known of the program: the rule stands without it. */
  CHECK_EQ_INT(code("f", "/home/u/build/libapp.so", NULL, NULL), LAGSCOPE__CODE_APP);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libmousepad.so.0", NULL, NULL),
               LAGSCOPE__CODE_APP);
  CHECK_EQ_INT(code("f", "/usr/lib/x86_64-linux-gnu/libgtk-3.so.0", NULL, NULL),
               LAGSCOPE__CODE_SYSTEM);
  printf("code of: ok\n");
  return 0;
}
