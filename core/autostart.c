/* Whether lagscope starts itself (docs/apple.md step 3, docs/guide.md "lagscope-run"): a Debug build that
 * links lagscope on Apple, and a program lagscope-run preloads it into on Linux, start it
 * without a line of the app's code, unless told not to. Portable: the port reads the settings
 * (the environment; Info.plist on Apple) and calls this. */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int lagscope__autostart_setting(const char *text) {
  static const char *const no[] = {"0", "no", "false", "off"};
  static const char *const yes[] = {"1", "yes", "true", "on"};
  if (text == NULL) return -1;
  for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
    if (strcasecmp(text, no[i]) == 0) return 0;
    if (strcasecmp(text, yes[i]) == 0) return 1;
  }
  return -1;
}

int lagscope__autostart_wanted(const char *environment, int app_setting, char *why,
                               size_t why_size) {
  int from_environment = lagscope__autostart_setting(environment);
  if (environment != NULL && from_environment < 0) {
    lagscope__explain(why, why_size,
                      "LAGSCOPE_AUTOSTART=%s is not 0/no/false/off or 1/yes/true/on: ignored",
                      environment);
  } else if (from_environment >= 0) {
    lagscope__explain(why, why_size, "LAGSCOPE_AUTOSTART=%s", environment);
    return from_environment;
  } else if (why != NULL && why_size > 0) {
    why[0] = '\0';
  }
  if (app_setting == 0 || app_setting == 1) {
    if (why != NULL && why[0] == '\0')
      lagscope__explain(why, why_size, "the app's LagscopeAutoStart is %s",
                        app_setting ? "YES" : "NO");
    return app_setting;
  }
  return 1;
}
