/* The busy stall's heaviest stack names the stalling function and its callers down to main,
 * in order, exactly as gdb's `thread apply all bt` shows them for the same stalled process. */
#define _GNU_SOURCE
#include "check.h"
#include "demo_reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 128

/* The main thread's functions from gdb's output: the block of the thread whose LWP is pid. */
static size_t gdb_main_thread(int pid, char names[][128], size_t max) {
  char command[256];
  snprintf(command, sizeof(command),
           "timeout 60 gdb -nx -batch -p %d -ex 'thread apply all bt' 2>/dev/null", pid);
  FILE *gdb = popen(command, "r");
  CHECK(gdb != NULL);
  char line[4096], lwp[64];
  snprintf(lwp, sizeof(lwp), "(LWP %d)", pid);
  int in_main = 0;
  size_t n = 0;
  while (fgets(line, sizeof(line), gdb) != NULL) {
    if (strncmp(line, "Thread ", 7) == 0) in_main = strstr(line, lwp) != NULL;
    if (!in_main || line[0] != '#' || n == max) continue;
    /* "#3  0x... in name (args) at file:line" or "#0  name (args) at ..." */
    char *s = strstr(line, " in ");
    s = s != NULL ? s + 4 : strchr(line, ' ');
    while (*s == ' ') s++;
    size_t len = strcspn(s, " (");
    snprintf(names[n++], 128, "%.*s", (int)len, s);
  }
  pclose(gdb);
  return n;
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  char dir[64];
  demo_temp_dir(dir, sizeof(dir));
  char *args[] = {argv[1], "--headless", "--port", "0", "--bind", "127.0.0.1",
                  "--events", "jsonl", "--stall-kind", "busy", "--stall-ms", "3000",
                  "--stall-every", "0.5", "--duration", "4", "--report-dir", dir, NULL};
  static spawn_proc p;
  CHECK(spawn_start(&p, argv[1], args, SPAWN_INHERIT_STDERR) == 0);
  cJSON *began = demo_wait_for(&p, "hang_began", 10000);
  CHECK_MSG(began != NULL, "no hang_began");
  cJSON_Delete(began);

  static char gdb_names[MAX_FRAMES][128];
  size_t gdb_n = gdb_main_thread(p.pid, gdb_names, MAX_FRAMES);
  printf("gdb, main thread:");
  for (size_t i = 0; i < gdb_n; i++) printf(" %s", gdb_names[i]);
  printf("\n");

  cJSON *ended = demo_wait_for(&p, "hang_ended", 15000);
  CHECK_MSG(ended != NULL, "no hang_ended");
  const char *ours[MAX_FRAMES];
  size_t ours_n = demo_functions(cJSON_GetObjectItemCaseSensitive(ended, "heaviest_stack"), ours,
                                 MAX_FRAMES);
  printf("lagscope, heaviest stack:");
  for (size_t i = 0; i < ours_n; i++) printf(" %s", ours[i] ? ours[i] : "?");
  printf("\n");

  /* From the stalling function down to main, both lists must be the same. */
  const char *gdb_list[MAX_FRAMES];
  for (size_t i = 0; i < gdb_n; i++) gdb_list[i] = gdb_names[i];
  int g0 = demo_find(gdb_list, gdb_n, "demo_busy_spin", 0);
  int g1 = demo_find(gdb_list, gdb_n, "main", 0);
  int o0 = demo_find(ours, ours_n, "demo_busy_spin", 0);
  int o1 = demo_find(ours, ours_n, "main", 0);
  CHECK_MSG(g0 >= 0 && g1 > g0, "gdb did not show demo_busy_spin ... main");
  CHECK_MSG(o0 >= 0 && o1 > o0, "the heaviest stack does not hold demo_busy_spin ... main");
  CHECK_MSG(g1 - g0 == o1 - o0, "gdb has %d frames from demo_busy_spin to main, lagscope %d",
            g1 - g0 + 1, o1 - o0 + 1);
  for (int i = 0; i <= g1 - g0; i++)
    CHECK_MSG(strcmp(gdb_list[g0 + i], ours[o0 + i]) == 0, "frame %d: gdb %s, lagscope %s", i,
              gdb_list[g0 + i], ours[o0 + i]);
  cJSON_Delete(ended);
  demo_stop(&p);
  demo_remove_dir(dir);
  printf("demo_gdb: the same %d functions as gdb\n", g1 - g0 + 1);
  return 0;
}
