/*
 * demo_cli: the demo's command line. --help succeeds, a bad option or value exits 2 naming it,
 * and a config lagscope refuses exits 1 with lagscope's reason on stderr.
 */
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "spawn.h"

#include <string.h>

#define WAIT_MS 10000

typedef struct cli_result {
  int code;
  char out[SPAWN_BUFFER]; /* stdout, lines joined by '\n' */
  char err[SPAWN_BUFFER];
} cli_result;

/* Runs the demo with up to 6 arguments and collects its exit code, stdout and stderr. */
static void run(const char *demo, const char *const *extra, cli_result *r) {
  char *args[8] = {(char *)demo};
  for (int i = 0; extra[i]; i++) args[i + 1] = (char *)extra[i];
  static spawn_proc p;
  CHECK(spawn_start(&p, demo, args, SPAWN_CAPTURE_STDERR) == 0);
  size_t used = 0;
  r->out[0] = '\0';
  char line[4096];
  int result;
  while ((result = spawn_read_line(&p, line, sizeof line, WAIT_MS)) == SPAWN_LINE)
    used += (size_t)snprintf(r->out + used, sizeof r->out - used, "%s\n", line);
  CHECK_MSG(result == SPAWN_EOF, "reading stdout: result %d", result);
  r->code = spawn_wait(&p, WAIT_MS);
  spawn_stderr(&p, r->err, sizeof r->err);
  spawn_close(&p);
  printf("%s %s ... -> exit %d\nstderr: %s\n", demo, extra[0] ? extra[0] : "", r->code, r->err);
}

static void expect(const char *demo, const char *const *extra, int code, const char *needle,
                   int in_stderr) {
  static cli_result r;
  run(demo, extra, &r);
  const char *text = in_stderr ? r.err : r.out;
  CHECK_MSG(r.code == code, "%s: exit %d, expected %d", extra[0], r.code, code);
  CHECK_MSG(strstr(text, needle) != NULL, "%s: \"%s\" not in %s:\n%s", extra[0], needle,
            in_stderr ? "stderr" : "stdout", text);
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 2, "usage: %s path/to/lagscope-demo", argv[0]);
  const char *demo = argv[1];

  expect(demo, (const char *const[]){"--help", NULL}, 0, "Usage", 0);
  expect(demo, (const char *const[]){"--help", NULL}, 0, "--stall-kind", 0);
  expect(demo, (const char *const[]){"--stall-kind", "nonsense", NULL}, 2, "--stall-kind", 1);
  expect(demo, (const char *const[]){"--stall-ms", "-5", NULL}, 2, "--stall-ms", 1);
  expect(demo, (const char *const[]){"--fps", "0", NULL}, 2, "--fps", 1);
  expect(demo, (const char *const[]){"--stall-every", "soon", NULL}, 2, "--stall-every", 1);
  expect(demo, (const char *const[]){"--no-such-option", NULL}, 2, "--no-such-option", 1);
  expect(demo, (const char *const[]){"--duration", NULL}, 2, "--duration", 1);
  expect(demo, (const char *const[]){"--help", NULL}, 0, "--hud-mode", 0);
  expect(demo, (const char *const[]){"--hud-mode", "sideways", NULL}, 2, "--hud-mode", 1);

  /* lagscope validates the threshold itself: 5 is below its 10..60000 ms range. The demo
   * prints lagscope_strerror(EINVAL); lagscope logs the field, its value and the range. */
  const char *const low[] = {"--threshold-ms", "5", "--duration", "1", NULL};
  expect(demo, low, 1, "invalid argument", 1);
  expect(demo, low, 1, "hang_threshold_ms", 1);

  printf("ok\n");
  return 0;
}
