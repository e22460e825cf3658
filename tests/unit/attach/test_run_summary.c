/* lagscope-run's run summary from channel files written here: the hangs and their own frames, a
 * hang the program's end cut short, the budget, JUnit XML that escapes what it quotes and
 * parses whatever bytes it quotes, lines that are not what the preload writes (skipped and
 * counted, nothing else lost), and the result files' opening (what could block is refused). */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "run_summary.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char folder[256], channel[320], xml_path[320];

static void write_channel(const char *text) {
  const char *tmp = getenv("TMPDIR");
  snprintf(folder, sizeof folder, "%s/lagscope-run-summary-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  CHECK(mkdtemp(folder) != NULL);
  snprintf(channel, sizeof channel, "%s/hangs.jsonl", folder);
  snprintf(xml_path, sizeof xml_path, "%s/hangs.xml", folder);
  FILE *out = fopen(channel, "w");
  CHECK(out != NULL);
  fputs(text, out);
  CHECK(fclose(out) == 0);
}

static void remove_channel(void) {
  unlink(channel);
  unlink(xml_path);
  rmdir(folder);
}

static char *read_text(const char *path) {
  static char text[65536];
  FILE *in = fopen(path, "r");
  CHECK(in != NULL);
  size_t n = fread(text, 1, sizeof text - 1, in);
  text[n] = '\0';
  fclose(in);
  return text;
}

static char *summary_of(const lagscope__run_summary *v, uint32_t budget_ms) {
  static char *text;
  size_t size;
  free(text);
  FILE *out = open_memstream(&text, &size);
  CHECK(out != NULL);
  lagscope__run_summary_print(out, v, "app", budget_ms);
  CHECK(fclose(out) == 0);
  return text;
}

/* Frames that say whose code they are: only the app's are quoted, innermost first. */
#define STACK                                                                                  \
  "[{\"function\":\"memcpy\",\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"code\":\"system\"}," \
  "{\"function\":\"load_level\",\"module\":\"/opt/app/bin/app\",\"file\":\"/src/level.c\",\"line\":88," \
  "\"code\":\"app\"},{\"function\":\"g_main_dispatch\",\"module\":\"/lib/x86_64-linux-gnu/libglib-2.0.so.0\"," \
  "\"code\":\"system\"},{\"function\":\"main\",\"module\":\"/opt/app/bin/app\",\"file\":\"/src/main.c\"," \
  "\"line\":12,\"code\":\"app\"}]"

static void test_hangs_and_own_frames(void) {
  write_channel(
      "{\"type\":\"server_started\",\"seq\":1}\n"
      "{\"type\":\"run_loops\",\"glib\":true,\"sdl\":false,\"gl\":false,\"x11\":true}\n"
      "{\"type\":\"hang_began\",\"hang_id\":1,\"start_ns\":1000000000}\n"
      "{\"type\":\"hang_ended\",\"hang_id\":1,\"start_ns\":1000000000,\"duration_ms\":812.4,"
      "\"cause\":{\"kind\":\"io\",\"summary\":\"Blocked in read() on /data/app.db\"},"
      "\"heaviest_stack\":" STACK "}\n"
      "{\"type\":\"hang_began\",\"hang_id\":2,\"start_ns\":5000000000}\n"
      "{\"type\":\"hang_began\",\"hang_id\":3,\"start_ns\":6000000000}\n"
      "{\"type\":\"hang_ended\",\"hang_id\":2,\"start_ns\":5000000000,\"duration_ms\":300,"
      "\"heaviest_stack\":[]}\n"
      /* idle (a modal loop): reported, not counted, not a hang of the run */
      "{\"type\":\"hang_ended\",\"hang_id\":3,\"start_ns\":6000000000,\"duration_ms\":990,"
      "\"counted\":false,\"cause\":{\"kind\":\"idle\",\"summary\":\"Idle\"},"
      "\"heaviest_stack\":[]}\n");
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 9000000000ull, NULL, &v), 0);
  CHECK_EQ_INT(v.count, 2);
  CHECK_EQ_INT(v.bad_lines, 0);
  CHECK(v.loops_known && v.glib && !v.sdl && v.x11);
  CHECK(v.hangs[0].ended);
  CHECK_NEAR(v.hangs[0].duration_ms, 812.4, 0.01);
  CHECK(strcmp(v.hangs[0].cause, "io: Blocked in read() on /data/app.db") == 0);
  CHECK_MSG(strcmp(v.hangs[0].own_frames, "load_level (level.c:88) <- main (main.c:12)") == 0, "%s",
            v.hangs[0].own_frames);
  CHECK(strcmp(v.hangs[1].own_frames, "") == 0);
  CHECK_EQ_INT(lagscope__run_over_budget(&v, 500), 1);
  CHECK_EQ_INT(lagscope__run_over_budget(&v, 0), 0);
  CHECK_EQ_INT(lagscope__run_over_budget(&v, 100), 2);
  const char *text = summary_of(&v, 500);
  CHECK_MSG(strstr(text, "app: 2 hangs, 1 over the budget of 500 ms\n") != NULL, "%s", text);
  CHECK_MSG(strstr(text, "  hang 1: 812 ms, over budget, io: Blocked in read() on /data/app.db\n"
                         "    in load_level (level.c:88) <- main (main.c:12)\n") != NULL, "%s", text);
  CHECK_MSG(strstr(text, "  hang 2: 300 ms\n") != NULL, "%s", text);
  CHECK(strstr(text, "no GLib") == NULL);
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* Frames that say whose code they are (lagscope's one rule, "code"): the program's own frames
 * are those of the app (its private library included, a stripped frame by its offset), never
 * the preload's hook named like GLib's (issue 32, section 4: l3afpad's summary said "in
 * g_main_loop_run (hooks.c:214)", mousepad's "in main <- _start"). */
static void test_own_frames_by_code(void) {
  write_channel(
      "{\"type\":\"run_loops\",\"glib\":true}\n"
      "{\"type\":\"hang_began\",\"hang_id\":1,\"start_ns\":1000000000}\n"
      "{\"type\":\"hang_ended\",\"hang_id\":1,\"start_ns\":1000000000,\"duration_ms\":900,"
      "\"heaviest_stack\":["
      "{\"function\":\"read\",\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"code\":\"system\"},"
      "{\"function\":\"mousepad_file_open\",\"module\":\"/usr/lib/x86_64-linux-gnu/mousepad/"
      "libmousepad.so.0\",\"file\":\"/src/mousepad-file.c\",\"line\":412,\"code\":\"app\"},"
      "{\"module\":\"/usr/bin/mousepad\",\"module_offset\":\"0x1a2b\",\"code\":\"app\"},"
      "{\"function\":\"g_main_loop_run\",\"module\":\"/usr/lib/lagscope/liblagscope-preload.so\","
      "\"file\":\"hooks.c\",\"line\":214,\"code\":\"lagscope\"},"
      "{\"function\":\"main\",\"module\":\"/usr/bin/mousepad\",\"code\":\"app\"}]}\n");
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK_EQ_INT(v.count, 1);
  CHECK_MSG(strcmp(v.hangs[0].own_frames,
                   "mousepad_file_open (mousepad-file.c:412) <- mousepad+0x1a2b <- main") == 0,
            "%s", v.hangs[0].own_frames);
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* A hang in the start-up (before the program's first sign of life: "app_state": "startup") is
 * said so, and judged by the start-up's budget when one is given (issue 32, section 5:
 * mousepad's 292 ms start-up inside g_application_run was a hang like any other). */
static void test_startup_budget(void) {
  write_channel(
      "{\"type\":\"run_loops\",\"glib\":true}\n"
      "{\"type\":\"hang_began\",\"hang_id\":1,\"start_ns\":1000000000,\"app_state\":\"startup\"}\n"
      "{\"type\":\"hang_ended\",\"hang_id\":1,\"duration_ms\":900,\"app_state\":\"startup\"}\n"
      "{\"type\":\"hang_began\",\"hang_id\":2,\"start_ns\":5000000000,\"app_state\":\"running\"}\n"
      "{\"type\":\"hang_ended\",\"hang_id\":2,\"duration_ms\":700,\"app_state\":\"running\"}\n");
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK_EQ_INT(v.count, 2);
  CHECK(v.hangs[0].startup && !v.hangs[1].startup);
  /* No start-up budget: the budget's. */
  CHECK_EQ_INT(lagscope__run_over_budget(&v, 500), 2);
  /* 1000 ms for the start-up: only the running hang is over. */
  v.startup_budget_ms = 1000;
  CHECK_EQ_INT(lagscope__run_over_budget(&v, 500), 1);
  const char *text = summary_of(&v, 500);
  CHECK_MSG(strstr(text, "2 hangs, 1 over the budget of 500 ms, 1000 ms in the start-up\n") &&
                strstr(text, "  hang 1: 900 ms (start-up)\n") &&
                strstr(text, "  hang 2: 700 ms, over budget\n"),
            "%s", text);
  /* 0: start-up hangs do not count, however long. */
  v.startup_budget_ms = 0;
  v.hangs[0].duration_ms = 90000;
  CHECK_EQ_INT(lagscope__run_over_budget(&v, 500), 1);
  CHECK_MSG(strstr(summary_of(&v, 500), "; start-up hangs do not count") != NULL, "%s",
            summary_of(&v, 500));
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* The events of a lagscope from before the rename call it "phase": still read. */
static void test_startup_from_old_events(void) {
  write_channel(
      "{\"type\":\"run_loops\",\"glib\":true}\n"
      "{\"type\":\"hang_began\",\"hang_id\":1,\"start_ns\":1000000000,\"phase\":\"startup\"}\n"
      "{\"type\":\"hang_ended\",\"hang_id\":1,\"duration_ms\":900,\"phase\":\"startup\"}\n"
      "{\"type\":\"hang_began\",\"hang_id\":2,\"start_ns\":5000000000,\"phase\":\"running\"}\n"
      "{\"type\":\"hang_ended\",\"hang_id\":2,\"duration_ms\":700,\"phase\":\"running\"}\n");
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK_EQ_INT(v.count, 2);
  CHECK(v.hangs[0].startup && !v.hangs[1].startup);
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* A hang the program's exit (or a kill) cut short lasts until the exit. */
static void test_hang_cut_short_by_exit(void) {
  write_channel("{\"type\":\"hang_began\",\"hang_id\":1,\"start_ns\":2000000000}\n");
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 4500000000ull, NULL, &v), 0);
  CHECK_EQ_INT(v.count, 1);
  CHECK(!v.hangs[0].ended);
  CHECK_NEAR(v.hangs[0].duration_ms, 2500, 0.01);
  CHECK_EQ_INT(lagscope__run_over_budget(&v, 1000), 1);
  const char *text = summary_of(&v, 1000);
  CHECK_MSG(strstr(text, "hang 1: 2500 ms (the program ended during it), over budget") != NULL, "%s", text);
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* The time the program was stopped (SIGSTOP) during a hang its end cut short is not counted:
 * a stop inside the hang, one that began before it, and one still on at the exit (killed while
 * stopped); a stop that ended before the hang counts nothing. */
static void test_stopped_time_not_counted(void) {
  write_channel("{\"type\":\"hang_began\",\"hang_id\":1,\"start_ns\":2000000000}\n");
  lagscope__run_stops stops = {0};
  lagscope__run_stops_note(&stops, 1000000000ull, 1); /* before the hang: not counted */
  lagscope__run_stops_note(&stops, 1500000000ull, 0);
  lagscope__run_stops_note(&stops, 1900000000ull, 1); /* 0.1 s before it, 0.3 s in it */
  lagscope__run_stops_note(&stops, 2300000000ull, 0);
  lagscope__run_stops_note(&stops, 2300000000ull, 0); /* said twice: once */
  lagscope__run_stops_note(&stops, 3000000000ull, 1); /* 0.5 s in it */
  lagscope__run_stops_note(&stops, 3500000000ull, 0);
  lagscope__run_stops_note(&stops, 4000000000ull, 1); /* on at the exit: 0.5 s */
  CHECK_EQ_INT(lagscope__run_stopped_within(&stops, 2000000000ull, 4500000000ull) / 1000000,
               1300);
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 4500000000ull, &stops, &v), 0);
  CHECK_EQ_INT(v.count, 1);
  CHECK_NEAR(v.hangs[0].duration_ms, 1200, 0.01);
  CHECK_NEAR(v.hangs[0].stopped_ms, 1300, 0.01);
  const char *text = summary_of(&v, 0);
  CHECK_MSG(strstr(text, "hang 1: 1200 ms (the program ended during it; 1300 ms stopped not "
                         "counted)") != NULL, "%s", text);
  lagscope__run_summary_free(&v);
  /* Past the kept stops, the oldest are forgotten, the newest kept. */
  lagscope__run_stops many = {0};
  for (uint64_t i = 0; i < 3 * LAGSCOPE_RUN_STOPS_KEPT; i++) {
    lagscope__run_stops_note(&many, 1000000000ull * i, 1);
    lagscope__run_stops_note(&many, 1000000000ull * i + 1000000ull, 0);
  }
  uint64_t last = 3 * LAGSCOPE_RUN_STOPS_KEPT - 1;
  CHECK_EQ_INT(lagscope__run_stopped_within(&many, 1000000000ull * last, UINT64_MAX), 1000000);
  remove_channel();
}

/* Lines that are not the preload's: skipped, counted, said; the good ones still count. */
static void test_bad_lines_skipped(void) {
  write_channel("not json\n"
                "{\"type\":\"hang_ended\",\"hang_id\":\"one\"}\n"
                "{\"type\":\"hang_ended\",\"hang_id\":-4,\"duration_ms\":900}\n"
                "[1,2,3]\n"
                "{\"hang_id\":3}\n"
                "{\"type\":\"hang_ended\",\"hang_id\":3,\"duration_ms\":400,\"heaviest_stack\":{\"a\":1},"
                "\"cause\":\"cpu\"}\n"
                "{\"type\":\"hang_ended\",\"hang_id\":3\n");
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK_EQ_INT(v.bad_lines, 6);
  CHECK_EQ_INT(v.count, 1);
  CHECK_NEAR(v.hangs[0].duration_ms, 400, 0.01);
  CHECK(strcmp(v.hangs[0].cause, "") == 0);
  CHECK(!v.loops_known);
  const char *text = summary_of(&v, 0);
  CHECK_MSG(strstr(text, "6 lines of the preload's channel could not be read") != NULL, "%s", text);
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* Spells in which lagscope could not watch (monitor_blind) are summed and said: a stall in
 * them may be missing from the hangs. A spell without a length is a bad line. */
static void test_blind_spells_said(void) {
  write_channel("{\"type\":\"monitor_blind\",\"start_ns\":5,\"duration_ms\":120.4,\"busy_ms\":120}\n"
                "{\"type\":\"monitor_blind\",\"start_ns\":9,\"duration_ms\":300,\"busy_ms\":0}\n"
                "{\"type\":\"monitor_blind\",\"start_ns\":9,\"duration_ms\":\"long\"}\n");
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK_EQ_INT(v.blind_spells, 2);
  CHECK_NEAR(v.blind_ms, 420.4, 0.01);
  CHECK_EQ_INT(v.bad_lines, 1);
  const char *text = summary_of(&v, 0);
  CHECK_MSG(strstr(text, "could not watch app's main thread for 420 ms in 2 spells") != NULL, "%s",
            text);
  lagscope__run_summary_free(&v);
  remove_channel();
  write_channel("{\"type\":\"hang_ended\",\"hang_id\":1,\"duration_ms\":700}\n");
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK(strstr(summary_of(&v, 0), "could not watch") == NULL);
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* The overlay's failure (its X server died under it), passed on by the preload as an error
 * event, is said in the summary; other error events are not the summary's. */
static void test_overlay_failure_said(void) {
  write_channel("{\"type\":\"error\",\"code\":\"ESYS\",\"message\":\"something else\"}\n"
                "{\"type\":\"error\",\"code\":\"ESYS\",\"message\":\"no HUD overlay on display "
                ":7: the connection to the X server was lost (the server died or closed it, XCB "
                "error 1): the overlay is gone, lagscope goes on without it\"}\n"
                "{\"type\":\"error\",\"code\":\"ESYS\"}\n");
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK_EQ_INT(v.bad_lines, 1);
  const char *text = summary_of(&v, 0);
  CHECK_MSG(strstr(text, "lagscope-run: app: no HUD overlay on display :7: the connection to the "
                         "X server was lost") != NULL, "%s", text);
  CHECK_MSG(strstr(text, "something else") == NULL, "%s", text);
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* No channel at all (the program never started lagscope): no hang. A program without a loop
 * the hooks know is told how to integrate by code. */
static void test_no_channel_and_no_loop(void) {
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read("/nonexistent/hangs.jsonl", 0, NULL, &v), 0);
  CHECK_EQ_INT(v.count, 0);
  CHECK(strstr(summary_of(&v, 0), "app: no hang\n") != NULL);
  write_channel("{\"type\":\"run_loops\",\"glib\":false,\"sdl\":false,\"gl\":false,\"x11\":false}\n");
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK(strstr(summary_of(&v, 0), "no GLib, SDL2, OpenGL (glX, EGL), Xlib, Vulkan or Wayland loop was seen in app") != NULL);
  lagscope__run_summary_free(&v);
  remove_channel();
}

static void write_file(const char *path, const char *text) {
  FILE *out = fopen(path, "w");
  CHECK(out != NULL);
  fputs(text, out);
  CHECK(fclose(out) == 0);
}

/* A hang not ended (the program killed during it) takes its cause, own frames and signature
 * from its report's last rewrite in the run's report folder (run_started's report_dir), by the
 * name "<time>-<pid>-<hang id>.json", checked inside (pid, hang id); a link, a FIFO and
 * another pid's or hang's report are not taken. Said in the summary and the JUnit. */
static void test_open_hang_from_its_report(void) {
  write_channel("");
  char reports[400], path[600], line[1024];
  snprintf(reports, sizeof reports, "%s/reports", folder);
  CHECK(mkdir(reports, 0700) == 0);
  const char *report_fmt =
      "{\"hang_id\":%d,\"state\":\"in_progress\",\"app\":{\"pid\":%d},\"duration_ms\":1800,"
      "\"heaviest_stack\":" STACK ",\"cause\":{\"kind\":\"sleep\",\"summary\":\"Slept %s\","
      "\"label\":\"sleep \u00b7 load_level\"},\"signature\":\"8e3ab586346780c3\"}";
  char text[4096];
  snprintf(text, sizeof text, report_fmt, 1, 4242, "1700 ms");
  snprintf(path, sizeof path, "%s/20261128T000000.000Z-4242-1.json", reports);
  write_file(path, text);
  snprintf(text, sizeof text, report_fmt, 2, 4242, "wrong hang");
  snprintf(path, sizeof path, "%s/20261128T000001.000Z-4242-12.json", reports);
  write_file(path, text); /* hang 12's: its name does not end in -4242-2 */
  snprintf(path, sizeof path, "%s/20261128T000002.000Z-4242-2.json", reports);
  CHECK(symlink("/etc/passwd", path) == 0);
  snprintf(path, sizeof path, "%s/20261128T000003.000Z-4242-3.json", reports);
  CHECK(mkfifo(path, 0600) == 0);
  snprintf(text, sizeof text, report_fmt, 4, 999, "another pid");
  snprintf(path, sizeof path, "%s/20261128T000004.000Z-4242-4.json", reports);
  write_file(path, text);
  FILE *out = fopen(channel, "w");
  CHECK(out != NULL);
  snprintf(line, sizeof line, "{\"type\":\"run_started\",\"run_id\":\"r1\",\"pid\":4242,"
           "\"report_dir\":\"%s\"}\n", reports);
  fputs(line, out);
  fputs("{\"type\":\"run_loops\",\"glib\":true,\"sdl\":false,\"gl\":false,\"x11\":false}\n", out);
  for (int id = 1; id <= 4; id++)
    fprintf(out, "{\"type\":\"hang_began\",\"hang_id\":%d,\"start_ns\":2000000000}\n", id);
  CHECK(fclose(out) == 0);
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 4000000000ull, NULL, &v), 0);
  CHECK_EQ_INT(v.count, 4);
  CHECK(strcmp(v.run_id, "r1") == 0 && v.pid == 4242);
  CHECK(v.hangs[0].recovered && !v.hangs[0].ended);
  CHECK(strcmp(v.hangs[0].signature, "8e3ab586346780c3") == 0);
  CHECK(strcmp(v.hangs[0].cause, "sleep: Slept 1700 ms") == 0);
  CHECK(strstr(v.hangs[0].own_frames, "load_level (level.c:88)") != NULL);
  CHECK_NEAR(v.hangs[0].duration_ms, 2000, 0.01); /* to the exit, not the report's 1800 */
  for (int i = 1; i < 4; i++)
    CHECK_MSG(!v.hangs[i].recovered && v.hangs[i].cause[0] == '\0' && v.hangs[i].signature[0] == '\0',
              "hang %d took %s", i + 1, v.hangs[i].cause);
  const char *said = summary_of(&v, 0);
  CHECK_MSG(strstr(said, "hang 1: 2000 ms (the program ended during it), sleep: Slept 1700 ms\n"
                         "    in load_level (level.c:88) <- main (main.c:12)\n"
                         "    not ended: its cause and frames as of its report's last rewrite, ") != NULL,
            "%s", said);
  CHECK_MSG(strstr(said, "hang 2: 2000 ms (the program ended during it)\n    not ended: no report of it in ") != NULL,
            "%s", said);
  char why[256];
  CHECK_EQ_INT(lagscope__run_junit(xml_path, &v, "app", 0, why, sizeof why), 0);
  const char *xml = read_text(xml_path);
  CHECK_MSG(strstr(xml, "(not ended: the program ended during it); sleep: Slept 1700 ms; in load_level") != NULL,
            "%s", xml);
  lagscope__run_summary_free(&v);
  char rm[700];
  snprintf(rm, sizeof rm, "rm -rf -- '%s'", reports);
  CHECK(system(rm) == 0);
  remove_channel();
}

/* A run in which lagscope saw no loop it hooks was not watched: said, and unless allowed a
 * JUnit error. */
static void test_unwatched_said(void) {
  write_channel("{\"type\":\"run_loops\",\"glib\":false,\"sdl\":false,\"gl\":false,\"x11\":false}\n");
  lagscope__run_summary v;
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK(lagscope__run_unwatched(&v));
  CHECK(strstr(summary_of(&v, 0), "app: not watched (no hang could be seen)\n") != NULL);
  CHECK(strstr(summary_of(&v, 0), "Not watched: exit 5") != NULL);
  char why[256];
  CHECK_EQ_INT(lagscope__run_junit(xml_path, &v, "app", 0, why, sizeof why), 0);
  CHECK(strstr(read_text(xml_path), "errors=\"1\"") != NULL);
  CHECK(strstr(read_text(xml_path), "<error type=\"unwatched\"") != NULL);
  v.allow_unwatched = 1;
  CHECK(strstr(summary_of(&v, 0), "Allowed (--allow-unwatched).") != NULL);
  CHECK_EQ_INT(lagscope__run_junit(xml_path, &v, "app", 0, why, sizeof why), 0);
  CHECK(strstr(read_text(xml_path), "<error") == NULL);
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* JUnit for a CI history: one testcase per signature, named by the kind and the top own
 * frames' functions (no duration, no line), its time the hangs' total, the signature and the
 * reports in properties, each hang in the body; a name two signatures share gets the
 * signature. */
static void test_junit_one_case_per_signature(void) {
#define HANG(id, ms, sig)                                                                        \
  "{\"type\":\"hang_ended\",\"hang_id\":" #id ",\"duration_ms\":" #ms ",\"signature\":\"" sig "\","  \
  "\"report_path\":\"/r/" #id ".json\",\"cause\":{\"kind\":\"sleep\",\"summary\":\"Slept\"},"         \
  "\"heaviest_stack\":" STACK "}\n"
  write_channel(HANG(1, 400, "8e3ab586346780c3") HANG(2, 500, "8e3ab586346780c3")
                HANG(3, 300, "0000000000000003"));
  lagscope__run_summary v;
  char why[256];
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK_EQ_INT(lagscope__run_junit(xml_path, &v, "app", 450, why, sizeof why), 0);
  const char *xml = read_text(xml_path);
  CHECK_MSG(strstr(xml, "tests=\"2\" failures=\"1\"") != NULL, "%s", xml);
  CHECK_MSG(strstr(xml, "name=\"sleep in load_level &lt;- main\" time=\"0.900\">") != NULL, "%s", xml);
  CHECK_MSG(strstr(xml, "name=\"sleep in load_level &lt;- main [0000000000000003]\" time=\"0.300\">") != NULL,
            "%s", xml);
  CHECK(strstr(xml, "<property name=\"signature\" value=\"8e3ab586346780c3\"/>") != NULL);
  CHECK(strstr(xml, "<property name=\"hangs\" value=\"2\"/>") != NULL);
  CHECK(strstr(xml, "<property name=\"report\" value=\"/r/1.json\"/>") != NULL);
  CHECK(strstr(xml, "<property name=\"report\" value=\"/r/2.json\"/>") != NULL);
  CHECK_MSG(strstr(xml, "hang 1: a hang of 400 ms; sleep: Slept; in load_level (level.c:88)") != NULL, "%s", xml);
  CHECK(strstr(xml, "message=\"hang 2: a hang of 500 ms, over the budget; sleep: Slept") != NULL);
  CHECK(strstr(xml, "ms\"") == NULL || strstr(xml, "name=\"hang 1:") == NULL);
  lagscope__run_summary_free(&v);
  remove_channel();
#undef HANG
}

/* What the XML quotes is escaped: a function named like markup stays text. */
static void test_junit_escapes(void) {
  write_channel("{\"type\":\"hang_ended\",\"hang_id\":1,\"duration_ms\":700,"
                "\"cause\":{\"kind\":\"cpu\",\"summary\":\"in a<b> & \\\"c\\\" 'd'\"},"
                "\"heaviest_stack\":[{\"function\":\"</failure><x>\",\"module\":\"/opt/a\",\"code\":\"app\"},"
                "{\"function\":\"main\",\"module\":\"/opt/a\",\"code\":\"app\"}]}\n"
                "{\"type\":\"hang_ended\",\"hang_id\":2,\"duration_ms\":260}\n");
  lagscope__run_summary v;
  char why[256];
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK_EQ_INT(lagscope__run_junit(xml_path, &v, "a&b", 500, why, sizeof why), 0);
  const char *xml = read_text(xml_path);
  CHECK_MSG(strstr(xml, "<testsuite name=\"a&amp;b\" tests=\"2\" failures=\"1\">") != NULL, "%s", xml);
  CHECK_MSG(strstr(xml, "in a&lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;") != NULL, "%s", xml);
  CHECK_MSG(strstr(xml, "&lt;/failure&gt;&lt;x&gt; &lt;- main") != NULL, "%s", xml);
  CHECK(strstr(xml, "<x>") == NULL);
  /* Within the budget: a passing testcase, no failure element. */
  const char *passing = strstr(xml, "name=\"hang (no report)\" time=\"0.260\">");
  CHECK_MSG(passing != NULL, "%s", xml);
  CHECK(strstr(passing, "<failure") == NULL);
  /* Without a budget every hang fails. */
  CHECK_EQ_INT(lagscope__run_junit(xml_path, &v, "app", 0, why, sizeof why), 0);
  CHECK(strstr(read_text(xml_path), "tests=\"2\" failures=\"2\"") != NULL);
  lagscope__run_summary_free(&v);
  /* No hang: one passing testcase. */
  lagscope__run_summary none = {0};
  CHECK_EQ_INT(lagscope__run_junit(xml_path, &none, "app", 500, why, sizeof why), 0);
  xml = read_text(xml_path);
  CHECK(strstr(xml, "tests=\"1\" failures=\"0\"") != NULL);
  CHECK(strstr(xml, "<testcase classname=\"lagscope-run.app\" name=\"no hang over 500 ms\"/>") != NULL);
  CHECK_EQ_INT(lagscope__run_junit("/nonexistent/dir/x.xml", &none, "app", 0, why, sizeof why), -1);
  CHECK_MSG(strcmp(why, "No such file or directory") == 0, "%s", why);
  remove_channel();
}

/* Whether an XML parser (xmllint, libxml2-utils: .ci/install-deps) accepts the file. */
static int xml_parses(const char *path) {
  char command[512];
  snprintf(command, sizeof command, "xmllint --noout '%s'", path);
  int rc = system(command);
  CHECK_MSG(rc != -1 && WEXITSTATUS(rc) != 127, "xmllint is not installed (libxml2-utils)");
  return rc == 0;
}

/* Whatever bytes a program's names and a cause's text hold (here a summary with "]]>", markup,
 * control bytes, bytes that are not UTF-8, a cut sequence, a surrogate, an overlong form and
 * U+FFFF), the JUnit file parses as XML (issue 42, item 7): what is no character of XML's is
 * U+FFFD, good UTF-8 (an "é", a "·") stays. */
static void test_junit_any_bytes_parse(void) {
  write_channel("{\"type\":\"hang_ended\",\"hang_id\":1,\"duration_ms\":700,"
                "\"cause\":{\"kind\":\"cpu\",\"summary\":\"]]> <a b='c'> & \\u0001\\u001b[31m"
                "\xff\xfe \xe2\x82 \xed\xa0\x80 \xc0\xaf \xef\xbf\xbf \xc3\xa9 \xc2\xb7 \\\"\"}}\n");
  lagscope__run_summary v;
  char why[256];
  CHECK_EQ_INT(lagscope__run_summary_read(channel, 0, NULL, &v), 0);
  CHECK_EQ_INT(lagscope__run_junit(xml_path, &v, "pro\xffgram\x01<>", 500, why, sizeof why), 0);
  const char *xml = read_text(xml_path);
  printf("%s\n", xml);
  CHECK_MSG(xml_parses(xml_path), "not XML:\n%s", xml);
  CHECK(strstr(xml, "]]&gt; &lt;a b=&apos;c&apos;&gt; &amp; [31m") != NULL);
  CHECK(strstr(xml, "\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd"
                    "\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd \xc3\xa9 \xc2\xb7 &quot;") != NULL);
  CHECK(strstr(xml, "name=\"pro\xef\xbf\xbdgram&lt;&gt;\"") != NULL);
  lagscope__run_summary_free(&v);
  remove_channel();
}

/* A result file that could make the writer wait for ever is refused at once, said (issue 42,
 * item 5): a FIFO that no one reads; a socket and a folder are no files. What users give and
 * what does not block is taken: a regular file (emptied), /dev/null, a pipe with a reader. */
static void test_output_refuses_what_blocks(void) {
  write_channel("");
  char fifo[400], why[256];
  snprintf(fifo, sizeof fifo, "%s/fifo", folder);
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK(lagscope__output_open(fifo, why, sizeof why) == NULL);
  CHECK_MSG(strstr(why, "a FIFO that no one reads") != NULL, "%s", why);
  CHECK(lagscope__output_open(folder, why, sizeof why) == NULL);
  CHECK_MSG(strcmp(why, "a folder") == 0, "%s", why);
  char sock_path[400];
  snprintf(sock_path, sizeof sock_path, "%s/sock", folder);
  int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  CHECK(strlen(sock_path) < sizeof addr.sun_path);
  memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
  CHECK(sock >= 0 && bind(sock, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(sock, 1) == 0);
  CHECK(lagscope__output_open(sock_path, why, sizeof why) == NULL);
  CHECK_MSG(strstr(why, "a socket") != NULL, "%s", why);
  close(sock);
  /* Taken: a file, emptied; /dev/null; a pipe's write end while it has a reader. */
  FILE *out = fopen(xml_path, "w");
  CHECK(out != NULL && fputs("old and longer", out) >= 0 && fclose(out) == 0);
  out = lagscope__output_open(xml_path, why, sizeof why);
  CHECK_MSG(out != NULL, "%s", why);
  fputs("new", out);
  CHECK_EQ_INT(lagscope__output_close(out, why, sizeof why), 0);
  CHECK(strcmp(read_text(xml_path), "new") == 0);
  out = lagscope__output_open("/dev/null", why, sizeof why);
  CHECK_MSG(out != NULL, "%s", why);
  CHECK_EQ_INT(lagscope__output_close(out, why, sizeof why), 0);
  int pipe_fds[2];
  CHECK(pipe(pipe_fds) == 0);
  char via[64];
  snprintf(via, sizeof via, "/proc/self/fd/%d", pipe_fds[1]);
  out = lagscope__output_open(via, why, sizeof why);
  CHECK_MSG(out != NULL, "%s", why);
  fputs("piped", out);
  CHECK_EQ_INT(lagscope__output_close(out, why, sizeof why), 0);
  close(pipe_fds[1]);
  char got[16] = "";
  CHECK_EQ_INT(read(pipe_fds[0], got, sizeof got - 1), 5);
  CHECK(strcmp(got, "piped") == 0);
  close(pipe_fds[0]);
  unlink(fifo);
  unlink(sock_path);
  remove_channel();
}

static const test_case cases[] = {
    TEST_CASE(hangs_and_own_frames),
    TEST_CASE(own_frames_by_code),
    TEST_CASE(startup_budget),
    TEST_CASE(startup_from_old_events),
    TEST_CASE(hang_cut_short_by_exit),
    TEST_CASE(stopped_time_not_counted),
    TEST_CASE(bad_lines_skipped),
    TEST_CASE(blind_spells_said),
    TEST_CASE(overlay_failure_said),
    TEST_CASE(no_channel_and_no_loop),
    TEST_CASE(junit_escapes),
    TEST_CASE(junit_any_bytes_parse),
    TEST_CASE(output_refuses_what_blocks),
    TEST_CASE(open_hang_from_its_report),
    TEST_CASE(unwatched_said),
    TEST_CASE(junit_one_case_per_signature),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
