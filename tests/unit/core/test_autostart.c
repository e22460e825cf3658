/* Whether lagscope starts itself: the environment over the app's Info.plist over the default,
 * and settings that are not ones said and ignored. */
#include "check.h"
#include "internal.h"

#include <string.h>

static int wanted(const char *environment, int app_setting, const char *says) {
  char why[256];
  int rc = lagscope__autostart_wanted(environment, app_setting, why, sizeof why);
  CHECK_MSG(strstr(why, says) != NULL, "said \"%s\", not \"%s\"", why, says);
  return rc;
}

int main(void) {
  CHECK_EQ_INT(lagscope__autostart_setting("0"), 0);
  CHECK_EQ_INT(lagscope__autostart_setting("No"), 0);
  CHECK_EQ_INT(lagscope__autostart_setting("FALSE"), 0);
  CHECK_EQ_INT(lagscope__autostart_setting("off"), 0);
  CHECK_EQ_INT(lagscope__autostart_setting("1"), 1);
  CHECK_EQ_INT(lagscope__autostart_setting("YES"), 1);
  CHECK_EQ_INT(lagscope__autostart_setting("true"), 1);
  CHECK_EQ_INT(lagscope__autostart_setting("On"), 1);
  CHECK_EQ_INT(lagscope__autostart_setting(NULL), -1);
  CHECK_EQ_INT(lagscope__autostart_setting(""), -1);
  CHECK_EQ_INT(lagscope__autostart_setting("nope"), -1);
  CHECK_EQ_INT(lagscope__autostart_setting("0 "), -1);

  /* Nothing set: it starts. */
  CHECK_EQ_INT(wanted(NULL, -1, ""), 1);
  /* The app's Info.plist. */
  CHECK_EQ_INT(wanted(NULL, 0, "the app's LagscopeAutoStart is NO"), 0);
  CHECK_EQ_INT(wanted(NULL, 1, "the app's LagscopeAutoStart is YES"), 1);
  /* The environment (a run's scheme in Xcode, a shell) over the app's setting. */
  CHECK_EQ_INT(wanted("0", 1, "LAGSCOPE_AUTOSTART=0"), 0);
  CHECK_EQ_INT(wanted("yes", 0, "LAGSCOPE_AUTOSTART=yes"), 1);
  CHECK_EQ_INT(wanted("off", -1, "LAGSCOPE_AUTOSTART=off"), 0);
  /* A value that is no setting is said and ignored: the app's setting, else the default. */
  CHECK_EQ_INT(wanted("maybe", 0, "LAGSCOPE_AUTOSTART=maybe is not"), 0);
  CHECK_EQ_INT(wanted("maybe", -1, "ignored"), 1);
  /* No room for the reason: still decided. */
  CHECK_EQ_INT(lagscope__autostart_wanted("0", -1, NULL, 0), 0);
  printf("unit_autostart: ok\n");
  return 0;
}
