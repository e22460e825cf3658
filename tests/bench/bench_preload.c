/*
 * bench_preload: what lagscope-run costs an idle GTK application. Debian's gtk3-widget-factory
 * (and Debian's l3afpad, an editor that draws nothing while idle, when installed) runs under Xvfb for --seconds (after 3 s of start-up, not counted), alone (the baseline) and
 * under lagscope-run with its defaults (the viewer on, on 127.0.0.1 port 0; the HUD in lagscope's
 * overlay window, as for every GTK program, and the display's rate read from RandR: lagscope's
 * own X connection) and with --no-hud --refresh-hz 60 (no X connection of lagscope's), --runs
 * times each,
 * alternating; the table gives the medians: the process's CPU (% of one core, from
 * /proc/PID/stat), lagscope's own threads' CPU (their schedstat), its resident memory (Rss, and
 * Pss: a page shared with other processes counted as its share) and its threads at the end.
 *
 * Then the same, alone and with lagscope-run's defaults, for gtk4-widget-factory (idle) and
 * vkcube (drawing, on Mesa's lavapipe: the HUD copied into its frames by the preload's Vulkan
 * layer), each where installed, its rows beside its baseline.
 *
 * Usage: bench_preload [--seconds N] [--runs N]. Exits 77 without Xvfb or the program.
 */
#define _GNU_SOURCE
#include "bench.h"
#include "bench_temp.h"
#include "spawn.h"
#include "xvfb.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#define WARM_UP_MS 3000

typedef struct sample {
  double cpu_percent; /* of one core */
  double rss_kib;
  double pss_kib;        /* each page divided by the processes that map it (smaps_rollup) */
  double anon_kib;       /* of rss: anonymous (heaps, stacks, arenas) */
  double own_files_kib;  /* of rss: files mapped only with lagscope (its preload, libraries) */
  double threads;
  double own_cpu_percent; /* lagscope's own threads (lagscope-*), from schedstat; -1 alone */
} sample;

/* The CPU time of pid's threads named lagscope-*, in ns, from their schedstat (the scheduler's
 * own count, exact); -1 when the task list cannot be read. Read directly rather than from
 * lagscope's metrics: an --events file to read them from would cost lagscope's threads the
 * writing of every event. */
static double own_threads_ns(pid_t pid) {
  char path[320];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *tasks = opendir(path);
  if (tasks == NULL) return -1;
  double total = 0;
  struct dirent *entry;
  while ((entry = readdir(tasks)) != NULL) {
    if (entry->d_name[0] == '.') continue;
    char comm[64] = "", stat[128] = "";
    snprintf(path, sizeof path, "/proc/%d/task/%s/comm", (int)pid, entry->d_name);
    FILE *in = fopen(path, "r");
    if (in == NULL) continue;
    if (fgets(comm, sizeof comm, in) == NULL) comm[0] = '\0';
    fclose(in);
    if (strncmp(comm, "lagscope", 8) != 0) continue;
    snprintf(path, sizeof path, "/proc/%d/task/%s/schedstat", (int)pid, entry->d_name);
    in = fopen(path, "r");
    if (in == NULL) continue;
    if (fgets(stat, sizeof stat, in) != NULL) total += strtod(stat, NULL);
    fclose(in);
  }
  closedir(tasks);
  return total;
}

/* utime + stime of pid, in clock ticks; -1 when it is gone. */
static long long cpu_ticks(pid_t pid) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *in = fopen(path, "r");
  if (in == NULL) return -1;
  size_t n = fread(text, 1, sizeof text - 1, in);
  fclose(in);
  text[n] = '\0';
  const char *p = strrchr(text, ')'); /* the name may hold spaces */
  unsigned long long utime, stime;
  if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                          &stime) != 2)
    return -1;
  return (long long)(utime + stime);
}

/* A "Name: value" line of /proc/PID/FILE as a number: Threads in status; Rss in kB in
 * smaps_rollup, exact, where status's VmRSS is a per-CPU counter read without summing. */
static double proc_number(pid_t pid, const char *file, const char *name) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
  FILE *in = fopen(path, "r");
  double value = -1;
  size_t len = strlen(name);
  while (in != NULL && fgets(line, sizeof line, in) != NULL)
    if (strncmp(line, name, len) == 0 && line[len] == ':') value = strtod(line + len + 1, NULL);
  if (in != NULL) fclose(in);
  return value;
}

#define PATHS_MAX 1024

/* The files a process maps, from /proc/PID/maps (each once). */
typedef struct mapped_files {
  char *paths[PATHS_MAX];
  int count;
} mapped_files;

static void mapped_files_clear(mapped_files *f) {
  for (int i = 0; i < f->count; i++) free(f->paths[i]);
  f->count = 0;
}

static int mapped_files_has(const mapped_files *f, const char *path) {
  for (int i = 0; i < f->count; i++)
    if (strcmp(f->paths[i], path) == 0) return 1;
  return 0;
}

/* The path of a /proc/PID/smaps or maps range line ("" for none or a [name]). */
static const char *range_path(char *line) {
  char *path = strchr(line, '/');
  if (path == NULL) return "";
  path[strcspn(path, "\n")] = '\0';
  return path;
}

/* 1 if line opens a mapping's lines in smaps ("start-end perms ..."). */
static int is_range_line(const char *line) {
  return strchr(line, '-') != NULL && strchr(line, ':') != NULL && line[0] != ' ' &&
         strspn(line, "0123456789abcdef") == strcspn(line, "-");
}

/* The files pid maps, into f. */
static void read_mapped_files(pid_t pid, mapped_files *f) {
  char path[64], line[1024];
  mapped_files_clear(f);
  snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
  FILE *in = fopen(path, "r");
  while (in != NULL && fgets(line, sizeof line, in) != NULL) {
    const char *file = range_path(line);
    if (file[0] != '\0' && !mapped_files_has(f, file) && f->count < PATHS_MAX)
      f->paths[f->count++] = strdup(file);
  }
  if (in != NULL) fclose(in);
}

/* Resident KiB of pid's mappings of files that `without` does not map. */
static double resident_in_files_not_in(pid_t pid, const mapped_files *without) {
  char path[64], line[1024];
  snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
  FILE *in = fopen(path, "r");
  double kib = 0;
  int counted = 0;
  while (in != NULL && fgets(line, sizeof line, in) != NULL) {
    if (is_range_line(line)) {
      const char *file = range_path(line);
      counted = file[0] != '\0' && !mapped_files_has(without, file);
    } else if (counted && strncmp(line, "Rss:", 4) == 0) {
      kib += strtod(line + 4, NULL);
    }
  }
  if (in != NULL) fclose(in);
  return kib;
}

/* The program's pid: the child lagscope-run started (its first child), or pid itself. */
static pid_t program_pid(pid_t pid, int through_launcher) {
  if (!through_launcher) return pid;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
  for (int tries = 0; tries < 500; tries++) {
    FILE *in = fopen(path, "r");
    int child = 0;
    if (in != NULL) {
      if (fscanf(in, "%d", &child) != 1) child = 0;
      fclose(in);
    }
    if (child > 0) return child;
    usleep(10000);
  }
  return -1;
}

/* One run: the program alone or under lagscope-run, measured for seconds after the warm-up.
 * alone_files: the files a run alone mapped (read by such a run, compared by one with). */
static int measure(char *program, int variant, unsigned seconds, mapped_files *alone_files,
                   sample *out) {
  int with_lagscope = variant != 0, no_hud = variant == 2;
  /* A fresh report folder: each start reads the reports it finds, so the user's folder,
   * growing by a report a run, would make the figures drift. */
  char report_dir[512];
  if (with_lagscope && bench_temp_folder(report_dir, sizeof report_dir, "bench-preload") != 0) {
    perror("bench_preload: mkdtemp");
    return -1;
  }
  char *alone[] = {program, NULL};
  char *launched[] = {LAGSCOPE_RUN_PATH, "--quiet", "--port", "0", "--bind", "127.0.0.1",
                      "--report-dir", report_dir, "--", program, NULL};
  char *without_hud[] = {LAGSCOPE_RUN_PATH, "--quiet", "--port", "0", "--bind", "127.0.0.1",
                         "--report-dir", report_dir, "--no-hud", "--refresh-hz", "60", "--",
                         program, NULL};
  char **argv = !with_lagscope ? alone : no_hud ? without_hud : launched;
  spawn_proc p;
  if (spawn_start(&p, argv[0], argv, SPAWN_CAPTURE_STDERR) != 0) {
    if (with_lagscope) bench_remove_folder(report_dir);
    return -1;
  }
  pid_t pid = program_pid(p.pid, with_lagscope);
  spawn_sleep_ms(WARM_UP_MS);
  long long ticks0 = pid > 0 ? cpu_ticks(pid) : -1;
  double own0 = with_lagscope && pid > 0 ? own_threads_ns(pid) : -1;
  uint64_t t0 = bench_now_ns();
  spawn_sleep_ms((int)seconds * 1000);
  long long ticks1 = pid > 0 ? cpu_ticks(pid) : -1;
  double own1 = with_lagscope && pid > 0 ? own_threads_ns(pid) : -1;
  uint64_t t1 = bench_now_ns();
  out->rss_kib = proc_number(pid, "smaps_rollup", "Rss");
  out->pss_kib = proc_number(pid, "smaps_rollup", "Pss");
  out->anon_kib = proc_number(pid, "smaps_rollup", "Anonymous");
  if (with_lagscope && !no_hud)
    out->own_files_kib = resident_in_files_not_in(pid, alone_files);
  else if (with_lagscope)
    out->own_files_kib = 0;
  else
    read_mapped_files(pid, alone_files);
  out->threads = proc_number(pid, "status", "Threads");
  spawn_signal(&p, SIGTERM);
  spawn_wait(&p, 10000);
  spawn_close(&p);
  out->own_cpu_percent = own0 >= 0 && own1 >= own0 ? 100.0 * (own1 - own0) / (double)(t1 - t0) : -1;
  if (with_lagscope) bench_remove_folder(report_dir);
  if (ticks0 < 0 || ticks1 < 0) return -1;
  double cpu_s = (double)(ticks1 - ticks0) / (double)sysconf(_SC_CLK_TCK);
  out->cpu_percent = 100.0 * cpu_s / ((double)(t1 - t0) / 1e9);
  return 0;
}

/* The program's runs, alternating, and its two tables; -1 when a run failed. */
static int bench_program(char *program, unsigned seconds, unsigned runs) {
  const char *name = strrchr(program, '/') != NULL ? strrchr(program, '/') + 1 : program;
  printf("bench_preload: %s idle, %u s measured after %d s of start-up, %u runs alone, %u under "
         "lagscope-run and %u with --no-hud --refresh-hz 60, alternating...\n",
         name, seconds, WARM_UP_MS / 1000, runs, runs, runs);
  double cpu[3][64], rss[3][64], pss[3][64], anon[3][64], files[3][64], threads[3][64], own[64],
      own_file[64];
  static mapped_files alone_files;
  if (runs > 64) runs = 64;
  for (unsigned r = 0; r < runs; r++) {
    for (int with = 0; with < 3; with++) {
      sample s;
      if (measure(program, with, seconds, &alone_files, &s) != 0) {
        fprintf(stderr, "bench_preload: a run of %s %s lagscope failed\n", name,
                with ? "with" : "without");
        mapped_files_clear(&alone_files);
        return -1;
      }
      cpu[with][r] = s.cpu_percent;
      rss[with][r] = s.rss_kib;
      pss[with][r] = s.pss_kib;
      anon[with][r] = s.anon_kib;
      files[with][r] = s.rss_kib - s.anon_kib;
      threads[with][r] = s.threads;
      if (with == 1) own[r] = s.own_cpu_percent, own_file[r] = s.own_files_kib;
    }
  }
  mapped_files_clear(&alone_files);
  double cpu0 = bench_median(cpu[0], runs), cpu1 = bench_median(cpu[1], runs);
  double rss0 = bench_median(rss[0], runs), rss1 = bench_median(rss[1], runs);
  double pss0 = bench_median(pss[0], runs), pss1 = bench_median(pss[1], runs);
  double th0 = bench_median(threads[0], runs), th1 = bench_median(threads[1], runs);
  double own_cpu = bench_median(own, runs);
  double cpu2 = bench_median(cpu[2], runs), rss2 = bench_median(rss[2], runs);
  double th2 = bench_median(threads[2], runs);
  double anon0 = bench_median(anon[0], runs), anon1 = bench_median(anon[1], runs);
  double files0 = bench_median(files[0], runs), files1 = bench_median(files[1], runs);
  double own_files = bench_median(own_file, runs);
  double files_low = files[0][0], files_high = files[0][0];
  for (unsigned r = 1; r < runs; r++) {
    if (files[0][r] < files_low) files_low = files[0][r];
    if (files[0][r] > files_high) files_high = files[0][r];
  }
  char v[64], b[64], ratio[32], title[160];
  snprintf(title, sizeof title, "lagscope-run on %s, idle (medians)", name);
  bench_table_begin(title);
  snprintf(v, sizeof v, "%.3f %%", cpu1);
  snprintf(b, sizeof b, "%.3f %% alone", cpu0);
  bench_row("process CPU, % of one core", v, b, bench_ratio(ratio, sizeof ratio, cpu1, cpu0), "-");
  snprintf(v, sizeof v, "%+.3f %%", cpu1 - cpu0);
  bench_row("lagscope's share (the difference)", v, "-", "-", "≤ 0.2 % of a core");
  snprintf(v, sizeof v, "%.3f %%", own_cpu);
  bench_row("lagscope's own threads (schedstat)", v, "-", "-", "≤ 0.2 % of a core");
  snprintf(v, sizeof v, "%.0f KiB", rss1);
  snprintf(b, sizeof b, "%.0f KiB alone", rss0);
  bench_row("resident memory at the end", v, b, bench_ratio(ratio, sizeof ratio, rss1, rss0), "-");
  snprintf(v, sizeof v, "%+.0f KiB", rss1 - rss0);
  bench_row("lagscope's memory (the difference)", v, "-", "-", "< 1 MiB (1024 KiB)");
  snprintf(v, sizeof v, "%+.0f KiB", anon1 - anon0);
  snprintf(b, sizeof b, "%.0f KiB alone", anon0);
  bench_row("  of it, anonymous (the difference)", v, b, "-", "-");
  snprintf(v, sizeof v, "%.0f KiB", own_files);
  bench_row("  of it, files only lagscope maps", v, "-", "-", "-");
  snprintf(v, sizeof v, "%+.0f KiB", files1 - files0 - own_files);
  snprintf(b, sizeof b, "spread %.0f KiB alone", files_high - files_low);
  bench_row("  of it, the program's files (the difference)", v, b, "-", "-");
  /* The same pages as the machine pays for them: a page of a library that the program maps
   * already (libc, GTK's, a font) is resident once for every process that maps it; Rss counts
   * it whole in each, Pss a share. lagscope's own pages (its heap, stacks, the preload) are
   * counted whole in both. */
  snprintf(v, sizeof v, "%.0f KiB", pss1);
  snprintf(b, sizeof b, "%.0f KiB alone", pss0);
  bench_row("proportional memory at the end (Pss)", v, b, bench_ratio(ratio, sizeof ratio, pss1, pss0),
            "-");
  snprintf(v, sizeof v, "%+.0f KiB", pss1 - pss0);
  bench_row("lagscope's proportional memory (Pss difference)", v, "-", "-", "< 1 MiB (1024 KiB)");
  snprintf(v, sizeof v, "%.0f", th1);
  snprintf(b, sizeof b, "%.0f alone", th0);
  bench_row("threads", v, b, "-", "-");
  bench_table_begin("of it, lagscope's X connection: the HUD's overlay window and the rate's "
                    "reading (the default minus --no-hud --refresh-hz 60, medians)");
  snprintf(v, sizeof v, "%+.3f %%", cpu1 - cpu2);
  snprintf(b, sizeof b, "%.3f %% without", cpu2);
  bench_row("process CPU, % of one core", v, b, "-", "-");
  snprintf(v, sizeof v, "%+.0f KiB", rss1 - rss2);
  snprintf(b, sizeof b, "%.0f KiB without", rss2);
  bench_row("resident memory at the end", v, b, "-", "-");
  snprintf(v, sizeof v, "%+.0f", th1 - th2);
  snprintf(b, sizeof b, "%.0f without", th2);
  bench_row("threads", v, b, "-", "-");
  return 0;
}

/* One more program alone and under lagscope-run (its defaults), runs times alternating: its
 * rows (CPU and resident memory, medians) beside its baseline; skipped (said) when missing. */
static void other_program(const char *name, char *program, unsigned seconds, unsigned runs) {
  if (access(program, X_OK) != 0) {
    printf("%s: skipped, not installed\n", name);
    return;
  }
  double cpu[2][64], rss[2][64];
  static mapped_files files;
  for (unsigned r = 0; r < runs; r++) {
    for (int with = 0; with < 2; with++) {
      sample s;
      if (measure(program, with, seconds, &files, &s) != 0) {
        printf("%s: a run %s lagscope failed\n", name, with ? "with" : "without");
        mapped_files_clear(&files);
        return;
      }
      cpu[with][r] = s.cpu_percent;
      rss[with][r] = s.rss_kib;
    }
  }
  mapped_files_clear(&files);
  double cpu0 = bench_median(cpu[0], runs), cpu1 = bench_median(cpu[1], runs);
  double rss0 = bench_median(rss[0], runs), rss1 = bench_median(rss[1], runs);
  char row[96], v[64], b[64], ratio[32];
  snprintf(row, sizeof row, "%s: process CPU, %% of one core", name);
  snprintf(v, sizeof v, "%.3f %% (%+.3f)", cpu1, cpu1 - cpu0);
  snprintf(b, sizeof b, "%.3f %% alone", cpu0);
  bench_row(row, v, b, bench_ratio(ratio, sizeof ratio, cpu1, cpu0), "-");
  snprintf(row, sizeof row, "%s: resident memory at the end", name);
  snprintf(v, sizeof v, "%.0f KiB (%+.0f)", rss1, rss1 - rss0);
  snprintf(b, sizeof b, "%.0f KiB alone", rss0);
  bench_row(row, v, b, bench_ratio(ratio, sizeof ratio, rss1, rss0), "-");
}

/* GTK 4 (its widget factory, idle: GL frames of its own) and Vulkan (vkcube, drawing without
 * pause on Mesa's software lavapipe, the HUD copied into each frame by the preload's layer)
 * beside GTK 3's table. */
static void others(unsigned seconds, unsigned runs) {
  bench_table_begin("lagscope-run on GTK 4 and Vulkan programs (medians; in brackets, the "
                    "difference)");
  other_program("gtk4-widget-factory (idle)", LAGSCOPE_GTK4_WIDGET_FACTORY_PATH, seconds, runs);
  if (access(LAGSCOPE_LAVAPIPE_ICD, R_OK) == 0) setenv("VK_ICD_FILENAMES", LAGSCOPE_LAVAPIPE_ICD, 1);
  other_program("vkcube (lavapipe, drawing)", LAGSCOPE_VKCUBE_PATH, seconds, runs);
  unsetenv("VK_ICD_FILENAMES");
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  unsigned seconds = bench_arg_uint(argc, argv, "--seconds", 30, 1);
  unsigned runs = bench_arg_uint(argc, argv, "--runs", 3, 1);
  if (access(LAGSCOPE_WIDGET_FACTORY_PATH, X_OK) != 0 || access(LAGSCOPE_XVFB_PATH, X_OK) != 0) {
    printf("bench_preload: skipped: needs gtk3-widget-factory (gtk-3-examples) and Xvfb\n");
    return BENCH_SKIP;
  }
  spawn_proc xvfb;
  char display[32], why[4096];
  if (xvfb_start(&xvfb, LAGSCOPE_XVFB_PATH, display, sizeof display, 10000, why, sizeof why) != 0) {
    fprintf(stderr, "bench_preload: %s\n", why);
    return 1;
  }
  setenv("DISPLAY", display, 1);
  if (runs > 64) runs = 64;
  int rc = bench_program(LAGSCOPE_WIDGET_FACTORY_PATH, seconds, runs);
  if (rc == 0 && LAGSCOPE_L3AFPAD_PATH[0] != '\0' && access(LAGSCOPE_L3AFPAD_PATH, X_OK) == 0)
    rc = bench_program(LAGSCOPE_L3AFPAD_PATH, seconds, runs);
  else if (rc == 0)
    printf("bench_preload: l3afpad's table skipped: not installed\n");
  if (rc == 0) others(seconds, runs);
  xvfb_stop(&xvfb);
  printf("note: idle, gtk3-widget-factory draws its spinner at 60 Hz, whose frames spare it\n"
         "lagscope's pings; lagscope samples every 500 ms, with the viewer listening. The\n"
         "difference also holds the main thread's share and the run-to-run noise; the own\n"
         "threads' figure is lagscope's monitor, dispatcher, subscribers and viewer alone,\n"
         "over the whole measured time. Memory: the anonymous part varies by a few KiB from\n"
         "run to run; the program's own file pages (libraries mapped 64 KiB around each\n"
         "fault) vary by the spread shown even alone, which the difference carries. Pss\n"
         "divides a library's page among the processes that map it at that moment: other\n"
         "programs starting or ending between the runs move it, by hundreds of KiB.\n");
  return rc == 0 ? 0 : 1;
}
