/* lagscope-run's --help: its options, their defaults and its exit codes (docs/guide.md says
 * more). Apart from run.c, which parses the options, so that each file has one job. */
#include "run_usage.h"

#include "loops.h"

void lagscope__run_usage(FILE *out) {
  fputs("usage: lagscope-run [options] -- PROGRAM [ARGS...]\n"
        "Runs PROGRAM with lagscope preloaded: its GLib, SDL2, OpenGL or Vulkan loop is\n"
        "watched, hangs are reported and the viewer's URL is printed.\n"
        "  --events FILE       append every event to FILE, one JSON object per line\n"
        "  --report-dir DIR    store hang reports in DIR\n"
        "  --port N            the viewer's port (default 8080; 0: any free port)\n"
        "  --bind ADDR         the viewer's address (default every interface)\n"
        "  --no-server         no viewer\n"
        "  --metrics-token T   a fixed bearer token /metrics also takes (16..128 characters;\n"
        "                      ps shows arguments: LAGSCOPE_METRICS_TOKEN keeps it out)\n"
        "  --threshold-ms N    a hang is no answer for N ms (default 250)\n"
        "  --refresh-hz N      the display's rate, frames' budget (default: read from the X\n"
        "                      server's RandR for the program's window, else 60)\n"
        "  --budget-ms N       exit 3 if a hang lasted longer than N ms\n"
        "  --budget-startup N  the budget of a hang in the start-up (before the program's\n"
        "                      first frame or answer), N ms; 0: they do not count (default:\n"
        "                      --budget-ms)\n"
        "  --junit FILE        write the hangs as JUnit XML to FILE (with --baseline: one\n"
        "                      testcase per signature)\n"
        "  --baseline FILE     compare the hangs by signature with an earlier run's (its\n"
        "                      --events FILE, or a report folder): exit 3 when a new or\n"
        "                      regressed signature has a hang over --budget-ms (every one\n"
        "                      without a budget), not for hangs the baseline had already\n"
        "  --tolerance-ms N    with --baseline: a signature's total may grow by N ms (250)\n"
        "  --tolerance-pct P   and by P % of the baseline's (25) and stay unchanged\n"
        "  --summary-md FILE   with --baseline: the comparison as Markdown (a CI summary)\n"
        "  --rules FILE        with --baseline: fingerprint rules (merge, accept: see the guide)\n"
        "  --json FILE         write the run as JSON to FILE: exit status, each hang's\n"
        "                      name, signature, cause, frames, report (with --baseline:\n"
        "                      the comparison too)\n",
        out);
  char loops[160]; /* "GLib, SDL2, GL or Xlib": loops.h */
  lagscope__run_loop_names(loops, sizeof(loops), 1);
  fprintf(out, "  --allow-unwatched   a program in which lagscope sees no\n"
               "                      %s loop\n", loops);
  fputs("                      is expected: its status, not exit 5\n"
        "  --pushgateway URL   at exit, push the run's final metrics (/metrics) to the\n"
        "                      Prometheus Pushgateway at URL (http://HOST:PORT), job the\n"
        "                      program's name; 2 s at most, a failure said, never fatal\n"
        "  --push-instance I   the push's instance label (default: host name:pid)\n"
        "  --quiet             no lagscope log lines; the summary only when over budget\n"
        "  --no-hud            no HUD at all (neither in frames nor in an overlay window)\n"
        "  --hud-mode M        frame: the HUD in OpenGL, SDL and Vulkan frames only;\n"
        "                      overlay: in a window of lagscope's over the program's, live\n"
        "                      during hangs (default: frames where the program draws them,\n"
        "                      else overlay)\n"
        "  --hud-corner C      the HUD's corner: tl, tr, bl (default), br\n"
        "  --hud-expanded      the expanded HUD (its graph, stats and last hang)\n"
        "  --help              this text\n"
        "Exit: PROGRAM's status; 3 a hang over the budget (or a failing signature); 2 bad\n"
        "usage, or lagscope did not start in PROGRAM; 4 the channel failed; 5 PROGRAM exited 0\n"
        "but no loop lagscope hooks was seen (not watched); 1 a result file not written;\n"
        "127 PROGRAM cannot be run. docs/guide.md, \"In CI\".\n",
        out);
}
