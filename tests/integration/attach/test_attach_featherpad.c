/* lagscope-run on Debian's Qt 5 editor featherpad, unchanged (test_attach.c lists the cases):
 * its CPU hangs, each named by one function in its label, its sentence and its longest CPU
 * phase (issue 45, item 5). */
#define _GNU_SOURCE
#include "attach_support.h"
#include "attach_cases.h"

/* The whole file at path (a report passes read_file's 64 KiB). Allocates. */
static char *whole_file(const char *path) {
  FILE *in = fopen(path, "r");
  CHECK_MSG(in != NULL, "no file %s", path);
  CHECK(fseek(in, 0, SEEK_END) == 0);
  long size = ftell(in);
  CHECK(size >= 0 && fseek(in, 0, SEEK_SET) == 0);
  char *text = malloc((size_t)size + 1);
  CHECK(text != NULL && fread(text, 1, (size_t)size, in) == (size_t)size);
  text[size] = '\0';
  fclose(in);
  return text;
}

static const char *string_in(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* The function a CPU hang's report names, three ways: its label ("cpu · F"), its sentence
 * (the first "… ms in F"), and its longest CPU phase's ("function"). Each must be the same;
 * 1 when the hang was on the CPU (and so checked). */
static int check_cpu_names(const cJSON *ended) {
  const char *path = string_in(ended, "report_path");
  CHECK(path != NULL);
  char *text = whole_file(path);
  cJSON *report = cJSON_Parse(text);
  free(text);
  CHECK_MSG(report != NULL, "the report %s is not JSON", path);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(report, "cause");
  const char *kind = string_in(cause, "kind"), *label = string_in(cause, "label");
  const char *summary = string_in(cause, "summary");
  CHECK(kind != NULL && label != NULL && summary != NULL);
  char *phases_text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(cause, "phases"));
  printf("hang %d: kind %s, label \"%s\", summary \"%s\", phases %s\n",
         (int)spawn_json_number(ended, "hang_id", -1), kind, label, summary, phases_text);
  free(phases_text);
  if (strcmp(kind, "cpu") != 0) {
    cJSON_Delete(report);
    return 0;
  }
  static const char dot[] = "cpu \xC2\xB7 ";
  CHECK_MSG(strncmp(label, dot, strlen(dot)) == 0, "label \"%s\"", label);
  const char *in_label = label + strlen(dot);
  const cJSON *p, *longest = NULL;
  cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(cause, "phases")) {
    const char *pk = string_in(p, "kind");
    if (pk == NULL || strcmp(pk, "cpu") != 0) continue;
    if (longest == NULL || spawn_json_number(p, "ms", 0) > spawn_json_number(longest, "ms", 0)) longest = p;
  }
  if (longest != NULL) {
    const char *in_phase = string_in(longest, "function");
    CHECK_MSG(in_phase != NULL && strcmp(in_phase, in_label) == 0,
              "the longest CPU phase names %s, the label \"%s\"", in_phase ? in_phase : "(none)", label);
  }
  /* The sentence: "On the CPU for N ms in F" for one phase told; with more, each phase's
   * function in turn ("…, then on the CPU for N ms in G"), F's among them. */
  char want[300];
  snprintf(want, sizeof want, " in %s", in_label);
  int told = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cause, "phases"));
  const char *at = strstr(summary, " in ");
  while (told >= 2 && at != NULL && strncmp(at, want, strlen(want)) != 0) at = strstr(at + 1, " in ");
  CHECK_MSG(at != NULL && strncmp(at, want, strlen(want)) == 0 &&
                (at[strlen(want)] == '\0' || strchr(" ,(", at[strlen(want)]) != NULL),
            "the sentence \"%s\" does not name %s, as the label \"%s\"", summary, in_label, label);
  cJSON_Delete(report);
  return 1;
}

/* Waits (bounded) until two metrics lines more came (a second of the program's life) with no
 * hang in progress and every hang that began ended: what the last step caused is over. Qt's
 * frames are not counted (it draws with XPutImage or SHM), so the metrics say when it answers. */
static void await_quiet(void) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)WAIT_MS * 1000000u;
  int from = metrics_count();
  for (;;) {
    cJSON *all = read_events();
    const cJSON *last = last_of_type(all, "metrics");
    int quiet = count_type(all, "metrics") >= from + 2 && last != NULL &&
                !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(last, "hang_in_progress")) &&
                count_type(all, "hang_began") == count_type(all, "hang_ended");
    cJSON_Delete(all);
    if (quiet) return;
    CHECK_MSG(spawn_now_ns() < deadline, "featherpad not answering again within %d ms", WAIT_MS);
    spawn_sleep_ms(50);
  }
}

/* Issue 45, item 5, as it was seen: featherpad opening a large file (its text added to the
 * document on the main thread, laid out by Qt), then its window made larger (the document laid
 * out again, in resizeEvent). Every CPU hang of the run names one function in its label, its
 * sentence and its longest CPU phase. */
void test_featherpad_cpu_names(void) {
  skip_without(LAGSCOPE_FEATHERPAD_PATH);
  skip_without(LAGSCOPE_XDOTOOL_PATH);
  make_folder();
  with_screen();
  gtk_settings_in_folder(); /* featherpad's settings too: XDG_CONFIG_HOME */
  char text[320], reports[320];
  snprintf(text, sizeof text, "%s/large.txt", folder);
  snprintf(reports, sizeof reports, "%s/reports", folder);
  FILE *out = fopen(text, "w");
  CHECK(out != NULL);
  for (int i = 0; i < 200000; i++) fprintf(out, "line %d: the quick brown fox jumps over the lazy dog\n", i);
  CHECK(fclose(out) == 0);
  char *extra[] = {"--budget-ms", "300", "--report-dir", reports, NULL};
  char *program[] = {LAGSCOPE_FEATHERPAD_PATH, "--standalone", text, NULL};
  spawn_proc p;
  CHECK(spawn_start(&p, LAGSCOPE_RUN_PATH, run_args(extra, program), SPAWN_CAPTURE_STDERR) == 0);
  Display *d = screen_open(getenv("DISPLAY"), WAIT_MS);
  CHECK(d != NULL);
  Window win = await_window(d, text); /* its title once loaded */
  await_quiet(); /* the text added, laid out */
  char id[32];
  snprintf(id, sizeof id, "%lu", (unsigned long)win);
  /* Narrower then wider: each resize lays the long document out again. */
  char *narrow[] = {LAGSCOPE_XDOTOOL_PATH, "windowsize", "--sync", id, "300", "500", NULL};
  char *wide[] = {LAGSCOPE_XDOTOOL_PATH, "windowsize", "--sync", id, "1200", "900", NULL};
  xdotool(narrow);
  await_quiet();
  xdotool(wide);
  await_quiet();
  save_screen("featherpad-large.png");
  spawn_signal(&p, SIGTERM); /* passed on: featherpad ends */
  XCloseDisplay(d);
  char err[32768];
  wait_run(&p, err, sizeof err);
  cJSON *all = read_events();
  int cpu = 0, hangs = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    if (strcmp(spawn_json_type(e), "hang_ended") != 0 || string_in(e, "report_path") == NULL) continue;
    hangs++;
    cpu += check_cpu_names(e);
  }
  printf("%d hangs with a report, %d on the CPU\n", hangs, cpu);
  /* Laying the file out is one CPU hang on any machine; the resizes' relayouts pass the
   * threshold only on a slower or busier one (none on a quiet 2-core machine). */
  CHECK_MSG(cpu >= 1, "%d CPU hangs of %d: featherpad's large file made none", cpu, hangs);
  cJSON_Delete(all);
  xvfb_stop(&xvfb);
  remove_folder();
}
