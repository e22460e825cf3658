/* An app that uses an installed lagscope. argv[1] says what it expects: "enabled" (a Debug
 * install: start, one frame, stop all work) or "disabled" (a Release install: inert). */
#include <lagscope.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  int expect_enabled = argc > 1 && strcmp(argv[1], "enabled") == 0;
  lagscope_config c = lagscope_config_default();
  c.server_port = 0, c.server_bind = "127.0.0.1"; /* a test: never the LAN port */
  int rc = lagscope_start(&c);
  lagscope_frame();
  int stop_rc = lagscope_stop();
  printf("consumer: lagscope %s, start: %s, stop: %s\n", LAGSCOPE_VERSION_STRING,
         lagscope_error_name(rc), lagscope_error_name(stop_rc));
  if (expect_enabled) return rc == LAGSCOPE_OK && stop_rc == LAGSCOPE_OK ? 0 : 1;
  return rc == LAGSCOPE_DISABLED && stop_rc == LAGSCOPE_DISABLED ? 0 : 1;
}
