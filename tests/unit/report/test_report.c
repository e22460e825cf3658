/* Hang reports: synthetic samples through a fake symbol table. Checks the call tree (counts,
 * self counts, order, merging of return addresses within a function), the heaviest stack,
 * the return-address flag, one resolve per distinct address, exact 64-bit values, states,
 * threads, empty and truncated trees, and a 6000 × 64 record for time and leaks.
 *
 * `test_report --example` prints a small report, pretty, for docs/hang-report.md. */
#define _POSIX_C_SOURCE 200809L

#include "cases.h"
#include "check.h"
#include "internal.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

/* ---- a fake symbol table ---- */

typedef struct fake_function {
  const char *name;
  uintptr_t start, end;
  const char *module;
  uintptr_t load;
  int leaf; /* only ever seen as the PC */
} fake_function;

static const fake_function functions[] = {
    {"main", 0x401000, 0x401100, "/usr/bin/demo", 0x400000, 0},
    {"a", 0x402000, 0x402100, "/usr/bin/demo", 0x400000, 0},
    {"b", 0x403000, 0x403100, "/usr/bin/demo", 0x400000, 0},
    {"c", 0x404000, 0x404100, "/usr/bin/demo", 0x400000, 0},
    {"spin", 0x405000, 0x405100, "/usr/bin/demo", 0x400000, 1},
    {"__poll", 0x7f0000001000, 0x7f0000001200, "/usr/lib/libc.so.6", 0x7f0000000000, 1},
    /* Darwin's trap stubs, as libsystem_kernel names them */
    {"__psynch_mutexwait", 0x180001000, 0x180001040, "/usr/lib/system/libsystem_kernel.dylib",
     0x180000000, 1},
    {"__ulock_wait", 0x180002000, 0x180002040, "/usr/lib/system/libsystem_kernel.dylib",
     0x180000000, 1},
    {"__semwait_signal", 0x180003000, 0x180003040, "/usr/lib/system/libsystem_kernel.dylib",
     0x180000000, 1},
    /* libdispatch's, on the way from dispatch_sync to its wait (src/queue.c) */
    {"_dispatch_sync_f_slow", 0x180004000, 0x180004100, "/usr/lib/system/libdispatch.dylib",
     0x180000000, 0},
    /* issue 46: what a device shows. Statics of the shared cache are nameless (dyld's
     * "<redacted>"), in their image. */
    {NULL, 0x180004100, 0x180004400, "/usr/lib/system/libdispatch.dylib", 0x180000000, 0},
    {"dispatch_sync", 0x180004400, 0x180004500, "/usr/lib/system/libdispatch.dylib", 0x180000000, 0},
    {"kevent_id", 0x180005000, 0x180005040, "/usr/lib/system/libsystem_kernel.dylib", 0x180000000, 1},
    {"__fcntl", 0x180006000, 0x180006040, "/usr/lib/system/libsystem_kernel.dylib", 0x180000000, 1},
    {"__psynch_rw_wrlock", 0x180007000, 0x180007040, "/usr/lib/system/libsystem_kernel.dylib",
     0x180000000, 1},
    {"mach_msg2_trap", 0x180008000, 0x180008040, "/usr/lib/system/libsystem_kernel.dylib",
     0x180000000, 1},
    {"mach_msg2_internal", 0x180008100, 0x180008200, "/usr/lib/system/libsystem_kernel.dylib",
     0x180000000, 0},
    {"mach_msg_overwrite", 0x180008200, 0x180008300, "/usr/lib/system/libsystem_kernel.dylib",
     0x180000000, 0},
    {"mach_msg", 0x180008300, 0x180008400, "/usr/lib/system/libsystem_kernel.dylib", 0x180000000, 0},
    {NULL, 0x181000000, 0x181001000, "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation",
     0x181000000, 0},
    {"_CFRunLoopRunSpecificWithOptions", 0x181001000, 0x181001100,
     "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation", 0x181000000, 0},
    {"GSEventRunModal", 0x182000000, 0x182000100,
     "/System/Library/PrivateFrameworks/GraphicsServices.framework/GraphicsServices", 0x182000000, 0},
};
#define FUNCTIONS (sizeof(functions) / sizeof(functions[0]))

#define MAX_CALLS 4096
typedef struct resolver {
  uint32_t calls;
  uint32_t wrong_flag; /* leaf functions looked up as return addresses, or the reverse */
  uintptr_t called[MAX_CALLS];
  int generic;         /* any address: a made-up function per 0x100 bytes */
  int lines;           /* main and a have line numbers: a's by where in a */
} resolver;

static int fake_resolve(void *ctx, uintptr_t address, int is_return, lagscope__stack_frame *out) {
  resolver *r = ctx;
  if (r->calls < MAX_CALLS) r->called[r->calls] = address;
  r->calls++;
  if (r->generic) {
    static char names[64][16];
    unsigned k = (unsigned)((address >> 8) % 64);
    snprintf(names[k], sizeof(names[k]), "fn%u", k);
    out->function = names[k];
    out->function_offset = address & 0xff;
    out->module = "/usr/bin/big";
    out->build_id = "";
    return 0;
  }
  uintptr_t lookup = is_return ? address - 1 : address;
  for (size_t i = 0; i < FUNCTIONS; i++) {
    const fake_function *f = &functions[i];
    if (lookup < f->start || lookup >= f->end) continue;
    if (f->leaf == is_return) r->wrong_flag++;
    out->function = f->name;
    out->function_offset = address - f->start;
    out->module = f->module;
    out->build_id = "4f1c9a7e2b";
    out->load_address = f->load;
    out->module_offset = address - f->load;
    if (f->name == NULL) return 0;
    if (strcmp(f->name, "spin") == 0) out->file = "demo.c", out->line = 42;
    if (r->lines && strcmp(f->name, "a") == 0)
      out->file = "a.c", out->line = lookup - f->start < 0x40 ? 10 : 20;
    if (r->lines && strcmp(f->name, "main") == 0) out->file = "main.c", out->line = 5;
    return 0;
  }
  return LAGSCOPE_ENOENT;
}

/* ---- records ---- */

static void set_stack(lagscope__stack *s, int32_t tid, const uintptr_t *frames, uint32_t depth) {
  memset(s, 0, sizeof(*s));
  s->tid = tid;
  s->walk = LAGSCOPE__WALK_COMPLETE;
  s->depth = depth;
  if (depth > 0) memcpy(s->frames, frames, depth * sizeof(uintptr_t));
}

/* 70 samples main → a → b → spin and 30 main → a → c → __poll; the PCs in spin move around and
 * a calls b and c from different places, so the tree must merge by function. */
static lagscope__stack samples[100];
static lagscope__stack threads[3];
static lagscope__thread_usage thread_info[3], thread_before[2];

static lagscope__report_data make_record(void) {
  for (int i = 0; i < 100; i++) {
    if (i % 10 < 7) {
      uintptr_t f[] = {0x405010 + (uintptr_t)(i % 5) * 4, 0x403020, 0x402020, 0x401050};
      set_stack(&samples[i], 100, f, 4);
    } else {
      uintptr_t f[] = {0x7f0000001010, 0x404030, 0x402060, 0x401050};
      set_stack(&samples[i], 100, f, 4);
    }
    samples[i].time_ns = 5000000000 + 260000000 + (uint64_t)i * 10000000; /* every 10 ms */
  }
  uintptr_t main_frames[] = {0x405010, 0x403020, 0x402020, 0x401050};
  set_stack(&threads[0], 100, main_frames, 4);
  uintptr_t worker_frames[] = {0x7f0000001010, 0xdead0000}; /* the caller is in no object */
  set_stack(&threads[1], 101, worker_frames, 2);
  set_stack(&threads[2], 102, NULL, 0);
  threads[2].walk = LAGSCOPE__WALK_NO_REPLY;

  thread_info[0] = (lagscope__thread_usage){.tid = 100, .name = "demo", .state = 'R',
                                             .cpu_ns = 2000000000};
  thread_info[1] = (lagscope__thread_usage){.tid = 101, .name = "io\xff", .state = 'S',
                                             .cpu_ns = 300000000};
  thread_info[2] = (lagscope__thread_usage){.tid = 102, .name = "late", .state = 'D', .cpu_ns = 5};
  thread_before[0] = (lagscope__thread_usage){.tid = 101, .cpu_ns = 300000000};
  thread_before[1] = (lagscope__thread_usage){.tid = 100, .cpu_ns = 1950000000};

  lagscope__report_data r = {0};
  snprintf(r.id, sizeof(r.id), "20240405T101112Z-4242-1");
  r.hang_id = 1;
  r.state = LAGSCOPE__REPORT_ENDED;
  r.start_wall_ms = 1712311872000;
  r.start_ns = 5000000000;
  r.duration_ns = 1003500000;
  r.threshold_ms = 250;
  r.sample_interval_ms = 10;
  r.app_name = "demo";
  r.pid = 4242;
  r.main_tid = 100;
  r.samples = samples;
  r.sample_count = 100;
  r.threads = threads;
  r.thread_info = thread_info;
  r.thread_count = 3;
  r.thread_cpu_window_ns = 100000000; /* 100 ms: main used 50 ms of it */
  r.thread_info_before = thread_before;
  r.thread_count_before = 2;
  r.before.cpu_percent = 12.5;
  r.before.rss_bytes = 50331648;
  r.before.pss_bytes = 41943040;
  r.before.frames.fps = 60;
  r.before.frames.band = LAGSCOPE_HITCH_GOOD;
  r.during.cpu_percent = 99.75;
  r.during.rss_bytes = 52428800;
  r.during.pss_bytes = 44040192;
  r.during.frames.fps = 0;
  r.during.frames.hitch_ms_per_s = 1000;
  r.during.frames.dropped = 60;
  r.during.frames.band = LAGSCOPE_HITCH_BAD;
  r.have_during = 1;
  return r;
}

/* ---- helpers ---- */

static const char *function_of(const cJSON *frame) {
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(frame, "function");
  return cJSON_IsString(f) ? f->valuestring : "(null)";
}

static double number_of(const cJSON *o, const char *name) {
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, name);
  CHECK_MSG(cJSON_IsNumber(n), "%s is not a number", name);
  return n->valuedouble;
}

static const cJSON *child(const cJSON *node, int i) {
  return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(node, "children"), i);
}

static int children_count(const cJSON *node) {
  return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(node, "children"));
}

static void check_node(const cJSON *node, const char *function, int count, int self,
                       int children) {
  CHECK_MSG(node != NULL, "no node for %s", function);
  CHECK_MSG(strcmp(function_of(node), function) == 0, "%s instead of %s", function_of(node),
            function);
  CHECK_EQ_INT(number_of(node, "count"), count);
  CHECK_EQ_INT(number_of(node, "self"), self);
  CHECK_EQ_INT(children_count(node), children);
}

static const char *string_of(const cJSON *o, const char *name) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, name);
  CHECK_MSG(cJSON_IsString(s), "%s is not a string", name);
  return s->valuestring;
}

/* ---- tests ---- */

static void test_tree_and_heaviest(void) {
  uint64_t memory = lagscope__memory_in_use();
  lagscope__report_data r = make_record();
  resolver res = {0};
  char *json = NULL, *heaviest = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, &heaviest), 0);
  CHECK(json != NULL && heaviest != NULL); /* in lagscope's heap: checked once freed */

  /* Resolved once per distinct (address, kind): 5 spin PCs, b, a (twice), main, __poll, c,
   * and the worker's unknown caller; the main thread's stack repeats sample addresses. */
  CHECK_EQ_INT(res.calls, 12);
  for (uint32_t i = 0; i < res.calls; i++)
    for (uint32_t j = i + 1; j < res.calls; j++)
      CHECK_MSG(res.called[i] != res.called[j], "0x%lx resolved twice",
                (unsigned long)res.called[i]);
  CHECK_EQ_INT(res.wrong_flag, 0);

  cJSON *doc = cJSON_Parse(json);
  CHECK(doc != NULL);
  CHECK_EQ_INT(number_of(doc, "schema_version"), LAGSCOPE__REPORT_SCHEMA_VERSION);
  CHECK(strcmp(string_of(doc, "id"), "20240405T101112Z-4242-1") == 0);
  CHECK(strcmp(string_of(doc, "state"), "ended") == 0);

  const cJSON *root = cJSON_GetObjectItemCaseSensitive(doc, "call_tree");
  check_node(root, "(all samples)", 100, 0, 1);
  CHECK(cJSON_GetObjectItemCaseSensitive(root, "truncated") == NULL);
  const cJSON *main_node = child(root, 0);
  check_node(main_node, "main", 100, 0, 1);
  const cJSON *a = child(main_node, 0);
  check_node(a, "a", 100, 0, 2);
  check_node(child(a, 0), "b", 70, 0, 1);      /* heaviest first */
  check_node(child(a, 1), "c", 30, 0, 1);
  check_node(child(child(a, 0), 0), "spin", 70, 70, 0);
  check_node(child(child(a, 1), 0), "__poll", 30, 30, 0);
  /* A node shows the frame of the first sample that reached it. */
  const cJSON *spin = child(child(a, 0), 0);
  CHECK(strcmp(string_of(spin, "address"), "0x405010") == 0);
  CHECK_EQ_INT(number_of(spin, "offset"), 0x10);
  CHECK(strcmp(string_of(spin, "module"), "/usr/bin/demo") == 0);
  CHECK(strcmp(string_of(spin, "build_id"), "4f1c9a7e2b") == 0);
  CHECK(strcmp(string_of(spin, "load_address"), "0x400000") == 0);
  CHECK(strcmp(string_of(spin, "module_offset"), "0x5010") == 0);
  CHECK(strcmp(string_of(spin, "file"), "demo.c") == 0);
  CHECK_EQ_INT(number_of(spin, "line"), 42);
  CHECK(cJSON_GetObjectItemCaseSensitive(a, "file") == NULL); /* only when known */
  CHECK(cJSON_GetObjectItemCaseSensitive(a, "line") == NULL);

  /* The heaviest stack, innermost first, in the report and alone. */
  const cJSON *stack = cJSON_GetObjectItemCaseSensitive(doc, "heaviest_stack");
  const char *expected[] = {"spin", "b", "a", "main"};
  CHECK_EQ_INT(cJSON_GetArraySize(stack), 4);
  for (int i = 0; i < 4; i++)
    CHECK(strcmp(function_of(cJSON_GetArrayItem(stack, i)), expected[i]) == 0);
  cJSON *alone = cJSON_Parse(heaviest);
  CHECK(alone != NULL && cJSON_Compare(alone, stack, 1));
  cJSON_Delete(alone);

  /* Node ids are preorder positions as written, so the timeline can name nodes. */
  CHECK_EQ_INT(number_of(root, "id"), 0);
  CHECK_EQ_INT(number_of(main_node, "id"), 1);
  CHECK_EQ_INT(number_of(a, "id"), 2);
  CHECK_EQ_INT(number_of(child(a, 0), "id"), 3);
  CHECK_EQ_INT(number_of(spin, "id"), 4);
  CHECK_EQ_INT(number_of(child(a, 1), "id"), 5);
  CHECK_EQ_INT(number_of(child(child(a, 1), 0), "id"), 6);

  /* The timeline: each sample in order, its time since the start and where it ended. */
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "samples");
  const cJSON *timeline = cJSON_GetObjectItemCaseSensitive(s, "timeline");
  const cJSON *t_ms = cJSON_GetObjectItemCaseSensitive(timeline, "t_ms");
  const cJSON *ends = cJSON_GetObjectItemCaseSensitive(timeline, "node");
  CHECK_EQ_INT(cJSON_GetArraySize(t_ms), 100);
  CHECK_EQ_INT(cJSON_GetArraySize(ends), 100);
  for (int i = 0; i < 100; i++) {
    CHECK_NEAR(cJSON_GetArrayItem(t_ms, i)->valuedouble, 260.0 + 10.0 * i, 1e-9);
    CHECK_EQ_INT(cJSON_GetArrayItem(ends, i)->valuedouble, i % 10 < 7 ? 4 : 6);
  }

  /* Samples, clocks, metrics. */
  CHECK_EQ_INT(number_of(s, "count"), 100);
  CHECK_EQ_INT(number_of(s, "dropped"), 0);
  CHECK_EQ_INT(number_of(cJSON_GetObjectItemCaseSensitive(s, "walks"), "complete"), 100);
  CHECK_NEAR(number_of(doc, "duration_ms"), 1003.5, 1e-9);
  CHECK_EQ_INT(number_of(doc, "threshold_ms"), 250);
  CHECK_EQ_INT(number_of(doc, "sample_interval_ms"), 10);
  CHECK_EQ_INT(number_of(doc, "main_thread_tid"), 100);
  const cJSON *app = cJSON_GetObjectItemCaseSensitive(doc, "app");
  CHECK(strcmp(string_of(app, "name"), "demo") == 0);
  CHECK_EQ_INT(number_of(app, "pid"), 4242);
  const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(doc, "cpu");
  CHECK_NEAR(number_of(cpu, "before"), 12.5, 1e-9);
  CHECK_NEAR(number_of(cpu, "during"), 99.75, 1e-9);
  const cJSON *memory_during =
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "memory"), "during");
  CHECK_EQ_INT(number_of(memory_during, "rss_bytes"), 52428800);
  const cJSON *frames_during =
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "frames"), "during");
  CHECK_EQ_INT(number_of(frames_during, "dropped"), 60);
  CHECK(strcmp(string_of(frames_during, "hitch_band"), "bad") == 0);

  /* Threads. */
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(doc, "threads");
  CHECK_EQ_INT(cJSON_GetArraySize(ts), 3);
  const cJSON *t0 = cJSON_GetArrayItem(ts, 0), *t1 = cJSON_GetArrayItem(ts, 1),
              *t2 = cJSON_GetArrayItem(ts, 2);
  CHECK_EQ_INT(number_of(t0, "tid"), 100);
  CHECK(strcmp(string_of(t0, "name"), "demo") == 0);
  CHECK(strcmp(string_of(t0, "state"), "R") == 0);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t0, "is_main")));
  CHECK_NEAR(number_of(t0, "cpu_percent"), 50.0, 1e-9);
  CHECK(strcmp(string_of(t0, "walk"), "complete") == 0);
  CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t0, "stack")), 4);
  CHECK(strcmp(function_of(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t0, "stack"), 0)),
               "spin") == 0);
  CHECK(strcmp(string_of(t1, "name"), "io\xEF\xBF\xBD") == 0); /* invalid UTF-8 replaced */
  CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(t1, "is_main")));
  CHECK_NEAR(number_of(t1, "cpu_percent"), 0.0, 1e-9);
  const cJSON *unknown = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t1, "stack"), 1);
  CHECK(strcmp(string_of(unknown, "address"), "0xdead0000") == 0);
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(unknown, "function")));
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(unknown, "module")));
  CHECK(cJSON_GetObjectItemCaseSensitive(unknown, "offset") == NULL);
  CHECK(cJSON_GetObjectItemCaseSensitive(unknown, "build_id") == NULL);
  CHECK(cJSON_GetObjectItemCaseSensitive(t2, "cpu_percent") == NULL); /* no before */
  CHECK(strcmp(string_of(t2, "walk"), "no_reply") == 0);
  CHECK(strcmp(string_of(t2, "state"), "D") == 0);
  CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t2, "stack")), 0);

  cJSON_Delete(doc);
  lagscope__dealloc(json);
  lagscope__dealloc(heaviest);
  CHECK_EQ_INT(lagscope__memory_in_use(), memory); /* nothing held but the two texts */

  /* Either output alone. */
  char *only = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, NULL, &only), 0);
  CHECK(only != NULL && only[0] == '[');
  lagscope__dealloc(only);
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &only, NULL), 0);
  CHECK(only != NULL && only[0] == '{');
  lagscope__dealloc(only);
  CHECK_EQ_INT(lagscope__memory_in_use(), memory);
  printf("tree and heaviest stack: ok\n");
}

static void test_exact_and_states(void) {
  lagscope__report_data r = make_record();
  r.hang_id = UINT64_MAX;
  r.start_ns = 1234567890123456789ULL;
  r.start_wall_ms = INT64_MIN + 1;
  r.before.rss_bytes = 9007199254740993ULL; /* 2^53 + 1: a double would round it */
  r.samples_dropped = 18000000000000000001ULL;
  r.duration_ns = 18446744073709551615ULL;
  resolver res = {0};
  char *json = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, NULL), 0);
  CHECK(strstr(json, "\"hang_id\":18446744073709551615,") != NULL);
  CHECK(strstr(json, "\"monotonic_ns\":1234567890123456789") != NULL);
  CHECK(strstr(json, "\"wall_ms\":-9223372036854775807") != NULL);
  CHECK(strstr(json, "\"rss_bytes\":9007199254740993") != NULL);
  CHECK(strstr(json, "\"dropped\":18000000000000000001") != NULL);
  CHECK(strstr(json, "\"duration_ns\":18446744073709551615") != NULL);
  lagscope__dealloc(json);

  const struct {
    lagscope__report_state state;
    const char *name;
  } states[] = {{LAGSCOPE__REPORT_IN_PROGRESS, "in_progress"},
                {LAGSCOPE__REPORT_ENDED, "ended"},
                {LAGSCOPE__REPORT_TERMINATED, "ended_by_termination"}};
  for (size_t i = 0; i < 3; i++) {
    r.state = states[i].state;
    CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, NULL), 0);
    cJSON *doc = cJSON_Parse(json);
    CHECK(strcmp(string_of(doc, "state"), states[i].name) == 0);
    cJSON_Delete(doc);
    lagscope__dealloc(json);
  }

  /* No metrics during the hang yet: nulls. */
  r.have_during = 0;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, NULL), 0);
  cJSON *doc = cJSON_Parse(json);
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "cpu"), "during")));
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "memory"), "during")));
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "frames"), "during")));
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  printf("exact integers and states: ok\n");
}

static void test_bad_and_empty(void) {
  uint64_t memory = lagscope__memory_in_use();
  char *json = (char *)1, *heaviest = (char *)1;
  CHECK_EQ_INT(lagscope__report_json(NULL, fake_resolve, NULL, &json, &heaviest), LAGSCOPE_EINVAL);
  CHECK(json == NULL && heaviest == NULL);

  lagscope__report_data r = make_record();
  r.state = (lagscope__report_state)7;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, NULL, &json, NULL), LAGSCOPE_EINVAL);
  r = make_record();
  r.samples = NULL; /* with a count */
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, NULL, &json, NULL), LAGSCOPE_EINVAL);
  CHECK(json == NULL);

  /* No samples at all: an empty tree, an empty heaviest stack. No resolver either. */
  r = make_record();
  r.sample_count = 0;
  r.samples = NULL;
  r.thread_count = 0;
  r.threads = NULL;
  r.thread_info = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, NULL, NULL, &json, &heaviest), 0);
  CHECK(strcmp(heaviest, "[]") == 0);
  cJSON *doc = cJSON_Parse(json);
  check_node(cJSON_GetObjectItemCaseSensitive(doc, "call_tree"), "(all samples)", 0, 0, 0);
  CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "heaviest_stack")), 0);
  CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "threads")), 0);
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  lagscope__dealloc(heaviest);

  /* Samples that captured nothing end at the root; no resolver: addresses only. */
  r = make_record();
  samples[0].depth = 0;
  samples[0].walk = LAGSCOPE__WALK_NO_REPLY;
  samples[1].depth = 999; /* more than a stack can hold: read as LAGSCOPE__MAX_STACK_FRAMES */
  CHECK_EQ_INT(lagscope__report_json(&r, NULL, NULL, &json, &heaviest), 0);
  doc = cJSON_Parse(json);
  const cJSON *root = cJSON_GetObjectItemCaseSensitive(doc, "call_tree");
  CHECK_EQ_INT(number_of(root, "count"), 100);
  CHECK_EQ_INT(number_of(root, "self"), 1);
  const cJSON *walks = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "samples"), "walks");
  CHECK_EQ_INT(number_of(walks, "no_reply"), 1);
  CHECK(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(child(root, 0), "function")));
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  lagscope__dealloc(heaviest);
  CHECK_EQ_INT(lagscope__memory_in_use(), memory);
  printf("bad input and empty samples: ok\n");
}

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

/* A 60 s hang: 6000 samples × 64 frames, a few call paths with jittering PCs. */
static void test_big(void) {
  static lagscope__stack big[6000];
  for (int i = 0; i < 6000; i++) {
    uintptr_t f[64];
    uint64_t path = rng() % 8; /* eight ways down from the same outer 48 frames */
    for (int k = 63; k >= 0; k--) {
      uintptr_t base = 0x10000000 + (uintptr_t)(63 - k) * 0x1000;
      if (k < 16) base += (uintptr_t)path * 0x100000;
      f[k] = base + (k == 0 ? (uintptr_t)(rng() % 64) : 0x20);
    }
    set_stack(&big[i], 1, f, 64);
  }
  lagscope__report_data r = make_record();
  r.samples = big;
  r.sample_count = 6000;
  resolver res = {.generic = 1};
  uint64_t memory = lagscope__memory_in_use();
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  char *json = NULL, *heaviest = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, &heaviest), 0);
  double took = seconds_since(&start);
  cJSON *doc = cJSON_Parse(json);
  CHECK(doc != NULL);
  const cJSON *root = cJSON_GetObjectItemCaseSensitive(doc, "call_tree");
  CHECK_EQ_INT(number_of(root, "count"), 6000);
  CHECK(cJSON_GetObjectItemCaseSensitive(root, "truncated") == NULL);
  CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "heaviest_stack")), 64);
  printf("6000 samples x 64 frames: %.3f s, %u resolves, %zu bytes of JSON\n", took, res.calls,
         strlen(json));
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  lagscope__dealloc(heaviest);
  CHECK_EQ_INT(lagscope__memory_in_use(), memory); /* nothing held but the two texts */

  /* The worst case: every frame of every sample distinct (384000 addresses to resolve); the
   * tree stops at its node bound. */
  for (int i = 0; i < 6000; i++) {
    uintptr_t f[64];
    for (int k = 0; k < 64; k++) f[k] = 0x20000000 + ((uintptr_t)i * 64 + (uintptr_t)k) * 0x10;
    set_stack(&big[i], 1, f, 64);
  }
  clock_gettime(CLOCK_MONOTONIC, &start);
  CHECK_EQ_INT(lagscope__report_json(&r, NULL, NULL, &json, &heaviest), 0);
  printf("6000 x 64 distinct frames: %.3f s, %zu bytes of JSON\n", seconds_since(&start),
         strlen(json));
  doc = cJSON_Parse(json);
  root = cJSON_GetObjectItemCaseSensitive(doc, "call_tree");
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "truncated")));
  CHECK(number_of(root, "truncated_samples") > 0);
  CHECK_EQ_INT(number_of(root, "count"), 6000);
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  lagscope__dealloc(heaviest);

  /* 1024 threads of 128 frames on top: stacks past the report's frame budget are left out,
   * and the whole report stays below the store's 16 MiB per file. */
  static lagscope__stack many[1024];
  static lagscope__thread_usage many_info[1024];
  for (int i = 0; i < 1024; i++) {
    uintptr_t f[128];
    for (int k = 0; k < 128; k++) f[k] = 0x30000000 + ((uintptr_t)i * 128 + (uintptr_t)k) * 0x100;
    set_stack(&many[i], 1000 + i, f, 128);
    many_info[i] = (lagscope__thread_usage){.tid = 1000 + i, .name = "worker", .state = 'S'};
  }
  r.threads = many;
  r.thread_info = many_info;
  r.thread_count = 1024;
  res = (resolver){.generic = 1};
  clock_gettime(CLOCK_MONOTONIC, &start);
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, &heaviest), 0);
  size_t size = strlen(json);
  printf("and 1024 threads x 128 frames: %.3f s, %zu bytes of JSON\n", seconds_since(&start), size);
  CHECK(size < 16u * 1024 * 1024);
  doc = cJSON_Parse(json);
  const cJSON *ts = cJSON_GetObjectItemCaseSensitive(doc, "threads");
  CHECK_EQ_INT(cJSON_GetArraySize(ts), 1024);
  CHECK(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ts, 0), "stack_omitted") == NULL);
  CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ts, 0), "stack")), 128);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ts, 1023), "stack_omitted")));
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  lagscope__dealloc(heaviest);
  CHECK_EQ_INT(lagscope__memory_in_use(), memory);
  printf("big and truncated trees: ok\n");
}

/* A small report for the documentation: 3 samples, 1 thread. */
static int print_example(void) {
  lagscope__report_data r = make_record();
  r.sample_count = 3;
  samples[2] = samples[7]; /* one sample in __poll */
  r.threads = &threads[1]; /* one thread: the worker, with a frame in no known object */
  r.thread_info = &thread_info[1];
  r.thread_count = 1;
  snprintf(thread_info[1].name, sizeof(thread_info[1].name), "io");
  char *json = NULL;
  resolver res = {0};
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, NULL), 0);
  cJSON *doc = cJSON_Parse(json);
  char *pretty = cJSON_Print(doc);
  printf("%s\n", pretty);
  free(pretty);
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  return 0;
}

/* A caller's node is per call site when lines are known: a calls b at a.c:10 and c at a.c:20,
 * so a is two nodes, each showing its own line. The heaviest stack ends where a node's own
 * samples outweigh its heaviest child. Every sample's state is in the timeline; every thread
 * says how it was taken and, blocked in a call, which and with what arguments. */
static void test_call_sites_states_and_stop(void) {
  lagscope__report_data r = make_record();
  /* 10 of the 70 samples in b go on into spin; 60 end in b itself (its PC). */
  for (int i = 0, n = 0; i < 100; i++) {
    if (i % 10 >= 7) continue;
    if (n++ < 60) {
      uintptr_t f[] = {0x403010, 0x402020, 0x401050};
      set_stack(&samples[i], 100, f, 3);
      samples[i].time_ns = 5000000000 + 260000000 + (uint64_t)i * 10000000;
    }
  }
  for (int i = 0; i < 100; i++) {
    samples[i].method = i < 50 ? LAGSCOPE__METHOD_SIGNAL : LAGSCOPE__METHOD_BLOCKED;
    samples[i].run_state = i < 50 ? LAGSCOPE__RUN_CPU : LAGSCOPE__RUN_SYSCALL;
    samples[i].syscall = i < 50 ? -1 : (i < 90 ? SYS_ppoll : -1); /* -1: Darwin's way */
    samples[i].frames_scanned = i == 99 ? 2 : 0;
  }
  threads[1].method = LAGSCOPE__METHOD_BLOCKED;
  threads[1].run_state = LAGSCOPE__RUN_SYSCALL;
  threads[1].syscall = SYS_futex;
  threads[1].frames_scanned = 1;
  for (int i = 0; i < 6; i++) threads[1].args[i] = (uintptr_t)0x7f0000000010 + (uintptr_t)i;
  threads[0].method = LAGSCOPE__METHOD_SIGNAL;
  threads[0].run_state = LAGSCOPE__RUN_CPU;

  resolver res = {.lines = 1};
  char *json = NULL, *heaviest = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, &heaviest), 0);
  cJSON *doc = cJSON_Parse(json);
  CHECK(doc != NULL);
  const cJSON *main_node = child(cJSON_GetObjectItemCaseSensitive(doc, "call_tree"), 0);
  check_node(main_node, "main", 100, 0, 2);
  const cJSON *a10 = child(main_node, 0), *a20 = child(main_node, 1);
  check_node(a10, "a", 70, 0, 1);
  check_node(a20, "a", 30, 0, 1);
  CHECK_EQ_INT(number_of(a10, "line"), 10);
  CHECK_EQ_INT(number_of(a20, "line"), 20);
  check_node(child(a10, 0), "b", 70, 60, 1);
  check_node(child(a20, 0), "c", 30, 0, 1);

  /* b: 60 of its own, 10 into spin: the heaviest stack stops at b. */
  cJSON *h = cJSON_Parse(heaviest);
  CHECK(cJSON_GetArraySize(h) == 3);
  CHECK(strcmp(function_of(cJSON_GetArrayItem(h, 0)), "b") == 0);
  CHECK_EQ_INT(number_of(cJSON_GetArrayItem(h, 1), "line"), 10);
  cJSON_Delete(h);

  const cJSON *samples_json = cJSON_GetObjectItemCaseSensitive(doc, "samples");
  const cJSON *states =
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(samples_json, "timeline"),
                                       "state");
  CHECK_EQ_INT(cJSON_GetArraySize(states), 100);
  CHECK(strcmp(cJSON_GetArrayItem(states, 0)->valuestring, "cpu") == 0);
  CHECK(strcmp(cJSON_GetArrayItem(states, 50)->valuestring, "ppoll") == 0);
  /* Sample 90 is main → a → c → __poll: with no number, the innermost frame names the call. */
  CHECK(strcmp(cJSON_GetArrayItem(states, 97)->valuestring, "__poll") == 0);
  const cJSON *methods = cJSON_GetObjectItemCaseSensitive(samples_json, "methods");
  CHECK_EQ_INT(number_of(methods, "signal"), 50);
  CHECK_EQ_INT(number_of(methods, "blocked"), 50);
  CHECK_EQ_INT(number_of(samples_json, "frames_scanned"), 2);

  const cJSON *thread_list = cJSON_GetObjectItemCaseSensitive(doc, "threads");
  const cJSON *main_thread = cJSON_GetArrayItem(thread_list, 0);
  CHECK(strcmp(string_of(main_thread, "method"), "signal") == 0);
  CHECK(cJSON_GetObjectItemCaseSensitive(main_thread, "syscall") == NULL);
  const cJSON *io = cJSON_GetArrayItem(thread_list, 1);
  CHECK(strcmp(string_of(io, "method"), "blocked") == 0);
  CHECK(strcmp(string_of(io, "syscall"), "futex") == 0);
  CHECK_EQ_INT(number_of(io, "frames_scanned"), 1);
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(io, "args");
  CHECK_EQ_INT(cJSON_GetArraySize(args), 6);
  CHECK(strcmp(cJSON_GetArrayItem(args, 5)->valuestring, "0x7f0000000015") == 0);
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  lagscope__dealloc(heaviest);
}

/* Darwin, on synthetic thread states: the main thread waits in __psynch_mutexwait for a pthread
 * mutex whose owner (its 4th argument, a thread id) is thread A, which waits in __ulock_wait
 * for an os_unfair_lock whose value is B's port with the no-waiters bit cleared; B sleeps. The
 * verdict names the chain, A by its thread id, B by its port. */
static void test_darwin_lock_chain(void) {
  enum { MAIN = 0x103, A = 0x203, B = 0x303 };
  static lagscope__stack darwin_threads[3], darwin_samples[4];
  static lagscope__thread_usage info[3];
  uintptr_t main_frames[] = {0x180001010, 0x402020, 0x401050};
  uintptr_t a_frames[] = {0x180002010, 0x403020};
  uintptr_t b_frames[] = {0x180003010, 0x404030};
  set_stack(&darwin_threads[0], MAIN, main_frames, 3);
  set_stack(&darwin_threads[1], A, a_frames, 2);
  set_stack(&darwin_threads[2], B, b_frames, 2);
  for (int i = 0; i < 3; i++) {
    darwin_threads[i].run_state = LAGSCOPE__RUN_SYSCALL;
    darwin_threads[i].syscall = -1; /* Darwin: the innermost frame names the trap */
    darwin_threads[i].method = LAGSCOPE__METHOD_SUSPEND;
  }
  const uintptr_t mutex = 0x16f5a2c40, unfair = 0x600003a1c010;
  darwin_threads[0].args[0] = mutex, darwin_threads[0].args[3] = 7001; /* A's thread id */
  darwin_threads[1].args[0] = 0x01000002; /* UL_UNFAIR_LOCK | ULF_NO_ERRNO */
  darwin_threads[1].args[1] = unfair, darwin_threads[1].args[2] = B & ~1u;
  for (int i = 0; i < 4; i++) darwin_samples[i] = darwin_threads[0];
  /* The sleeper runs a Swift task: its logical callers (two resume functions) as
   * lagscope__stack_walk_async found them (issue 33, risk 9). */
  darwin_threads[2].async_depth = 2;
  darwin_threads[2].async_frames[0] = 0x403020, darwin_threads[2].async_frames[1] = 0x402020;
  info[1] = (lagscope__thread_usage){.tid = A, .name = "loader", .system_id = 7001};
  info[2] = (lagscope__thread_usage){.tid = B, .name = "sleeper", .system_id = 7002};
  lagscope__report_data r = make_record();
  r.main_tid = MAIN;
  r.samples = darwin_samples, r.sample_count = 4;
  r.threads = darwin_threads, r.thread_info = info, r.thread_count = 3;
  r.thread_info_before = NULL, r.thread_count_before = 0;
  resolver res = {0};
  char *json = NULL, *heaviest = NULL, *brief = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, &heaviest), 0);
  CHECK_EQ_INT(lagscope__report_cause_json(&r, heaviest, fake_resolve, &res, &brief), 0);
  cJSON *doc = cJSON_Parse(json);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  printf("darwin: %s\n", string_of(cause, "summary"));
  CHECK(strcmp(string_of(cause, "kind"), "lock") == 0);
  CHECK(strcmp(string_of(cause, "mutex"), "0x16f5a2c40") == 0);
  const cJSON *owner = cJSON_GetObjectItemCaseSensitive(cause, "owner");
  CHECK_MSG(owner != NULL && strcmp(string_of(owner, "name"), "loader") == 0,
            "the mutex's owner (thread id 7001) is not loader");
  const cJSON *owner_cause = cJSON_GetObjectItemCaseSensitive(owner, "cause");
  CHECK(strcmp(string_of(owner_cause, "kind"), "lock") == 0);
  CHECK(strcmp(string_of(owner_cause, "mutex"), "0x600003a1c010") == 0);
  const cJSON *second = cJSON_GetObjectItemCaseSensitive(owner_cause, "owner");
  CHECK_MSG(second != NULL && strcmp(string_of(second, "name"), "sleeper") == 0,
            "the unfair lock's owner (port 0x303) is not sleeper");
  CHECK(strcmp(string_of(cJSON_GetObjectItemCaseSensitive(second, "cause"), "kind"), "sleep") == 0);
  CHECK(strcmp(string_of(cause, "label"), "lock \xC2\xB7 loader") == 0);
  CHECK(strstr(brief, "held by thread loader") != NULL && strstr(brief, "held by sleeper") != NULL);
  /* The task's logical stack beside the physical one, for that thread only. */
  const cJSON *threads = cJSON_GetObjectItemCaseSensitive(doc, "threads");
  CHECK_EQ_INT(cJSON_GetArraySize(threads), 3);
  const cJSON *sleeper_async = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(threads, 2), "async_stack");
  CHECK_MSG(cJSON_GetArraySize(sleeper_async) == 2, "the sleeper's async_stack has %d frames",
            cJSON_GetArraySize(sleeper_async));
  CHECK(strcmp(string_of(cJSON_GetArrayItem(sleeper_async, 0), "address"), "0x403020") == 0);
  CHECK(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(threads, 0), "async_stack") == NULL);
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  lagscope__dealloc(heaviest);
  lagscope__dealloc(brief);
}

/* Issue 33, defect 3: the main thread in DispatchQueue.sync onto a busy queue waits in
 * __ulock_wait(UL_COMPARE_AND_WAIT) (libdispatch's _dispatch_thread_event_wait_slow, reached
 * from _dispatch_sync_f_slow): a wait for a dispatch queue, never "mutex 0x0". */
static void test_darwin_dispatch_sync(void) {
  static lagscope__stack darwin_threads[1], darwin_samples[4];
  static lagscope__thread_usage info[1];
  uintptr_t frames[] = {0x180002010, 0x180004040, 0x402020, 0x401050};
  set_stack(&darwin_threads[0], 0x103, frames, 4);
  darwin_threads[0].run_state = LAGSCOPE__RUN_SYSCALL;
  darwin_threads[0].syscall = -1;
  darwin_threads[0].method = LAGSCOPE__METHOD_SUSPEND;
  darwin_threads[0].args[0] = 0x01000001; /* UL_COMPARE_AND_WAIT | ULF_NO_ERRNO */
  darwin_threads[0].args[1] = 0x16f5a2c40, darwin_threads[0].args[2] = 0;
  for (int i = 0; i < 4; i++) darwin_samples[i] = darwin_threads[0];
  info[0] = (lagscope__thread_usage){.tid = 0x103, .name = "main", .system_id = 7000};
  lagscope__report_data r = make_record();
  r.main_tid = 0x103;
  r.samples = darwin_samples, r.sample_count = 4;
  r.threads = darwin_threads, r.thread_info = info, r.thread_count = 1;
  r.thread_info_before = NULL, r.thread_count_before = 0;
  resolver res = {0};
  char *json = NULL, *heaviest = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, &heaviest), 0);
  cJSON *doc = cJSON_Parse(json);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  const char *summary = string_of(cause, "summary");
  printf("darwin dispatch_sync: %s\n", summary);
  CHECK(strcmp(string_of(cause, "kind"), "wait") == 0);
  CHECK_MSG(strstr(summary, "for a busy dispatch queue (dispatch_sync)") != NULL &&
                strstr(summary, "mutex") == NULL, "%s", summary);
  cJSON_Delete(doc);
  lagscope__dealloc(json);
  lagscope__dealloc(heaviest);
}

/* Issue 46: a Darwin main thread blocked in a trap for a whole hang, as a device shows it: the
 * frames (nameless statics of the shared cache), the trap's arguments, lock_owner as the
 * capture read it; a second thread "db" (port 0x1a03) on the CPU in c. The report's cause. */
static lagscope__stack darwin_one[2], darwin_one_samples[4];
static lagscope__thread_usage darwin_one_info[2];
static char *darwin_one_json;

static cJSON *darwin_one_report(const uintptr_t *frames, uint32_t depth, const uintptr_t *args,
                                int32_t lock_owner) {
  uintptr_t worker_frames[] = {0x404030, 0x401050};
  set_stack(&darwin_one[0], 0x103, frames, depth);
  darwin_one[0].run_state = LAGSCOPE__RUN_SYSCALL;
  darwin_one[0].syscall = -1;
  darwin_one[0].method = LAGSCOPE__METHOD_SUSPEND;
  memcpy(darwin_one[0].args, args, sizeof(darwin_one[0].args));
  darwin_one[0].lock_owner = lock_owner;
  set_stack(&darwin_one[1], 0x1a03, worker_frames, 2);
  darwin_one[1].run_state = LAGSCOPE__RUN_CPU;
  darwin_one[1].syscall = -1;
  darwin_one[1].method = LAGSCOPE__METHOD_SUSPEND;
  for (int i = 0; i < 4; i++) darwin_one_samples[i] = darwin_one[0];
  darwin_one_info[0] = (lagscope__thread_usage){.tid = 0x103, .name = "main", .system_id = 7000};
  darwin_one_info[1] = (lagscope__thread_usage){.tid = 0x1a03, .name = "db", .system_id = 7001};
  lagscope__report_data r = make_record();
  r.main_tid = 0x103;
  r.samples = darwin_one_samples, r.sample_count = 4;
  r.threads = darwin_one, r.thread_info = darwin_one_info, r.thread_count = 2;
  r.thread_info_before = NULL, r.thread_count_before = 0;
  resolver res = {0};
  char *heaviest = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &darwin_one_json, &heaviest), 0);
  lagscope__dealloc(heaviest);
  cJSON *doc = cJSON_Parse(darwin_one_json);
  CHECK(doc != NULL);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  printf("%s | %s\n", string_of(cause, "summary"), string_of(cause, "label"));
  return doc;
}

static void darwin_one_done(cJSON *doc) {
  cJSON_Delete(doc);
  lagscope__dealloc(darwin_one_json);
  darwin_one_json = NULL;
}

/* Defect 1: DispatchQueue.sync onto a busy serial queue. A default serial queue is a workloop
 * base (libdispatch queue.c, _dispatch_base_lane_is_wlh), so __DISPATCH_WAIT_FOR_QUEUE__ waits
 * in _dispatch_event_loop_wait_for_ownership's kevent_id(queue, ...) (xnu
 * filt_wlpost_register_wait): a wait on that queue, told with the thread draining it, never
 * "io · kevent_id". */
static void test_darwin_workloop_sync(void) {
  const uintptr_t frames[] = {0x180005010, 0x180004110, 0x180004210, 0x180004410, 0x403020, 0x401050};
  const uintptr_t args[6] = {0x600002d8c000, 0x16f5a2b80, 1, 0x16f5a2b80, 1, 0};
  cJSON *doc = darwin_one_report(frames, 6, args, 0x1a03);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  const char *summary = string_of(cause, "summary");
  CHECK_MSG(strcmp(string_of(cause, "kind"), "wait") == 0, "kind %s", string_of(cause, "kind"));
  CHECK_MSG(strstr(summary, "for a busy dispatch queue (dispatch_sync), queue 0x600002d8c000") != NULL &&
                strstr(summary, "run by thread db (tid 6659), itself running c") != NULL,
            "%s", summary);
  CHECK_MSG(strcmp(string_of(cause, "label"), "wait \xC2\xB7 queue run by db") == 0, "%s",
            string_of(cause, "label"));
  CHECK(strcmp(string_of(cause, "queue"), "0x600002d8c000") == 0);
  const cJSON *owner = cJSON_GetObjectItemCaseSensitive(cause, "owner");
  CHECK(owner != NULL && strcmp(string_of(owner, "name"), "db") == 0);
  darwin_one_done(doc);
  /* The owner not known (the queue had none when the waiter enqueued): the queue still. */
  doc = darwin_one_report(frames, 6, args, 0);
  cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  CHECK(strcmp(string_of(cause, "kind"), "wait") == 0);
  CHECK(strstr(string_of(cause, "summary"), "queue 0x600002d8c000") != NULL);
  CHECK(cJSON_GetObjectItemCaseSensitive(cause, "owner") == NULL);
  darwin_one_done(doc);
}

/* Defect 2 (and risk 11): an idle main run loop on iOS 26 / macOS 26 as a device shows it: no
 * CFRunLoopRunSpecific, CF's statics nameless, then _CFRunLoopRunSpecificWithOptions; the
 * mach_msg2_trap receives only (MACH_RCV_MSG | MACH_RCV_LARGE | MACH_RCV_TIMEOUT |
 * MACH_RCV_VOUCHER, CF's __CFRunLoopServiceMachPort). Idle, and said to be a mode that does not
 * serve the main queue. */
static void test_darwin_run_loop_26(void) {
  const uintptr_t frames[] = {0x180008010, 0x180008110, 0x180008210, 0x180008310,
                              0x181000110, 0x181000210, 0x181001010, 0x182000010, 0x401050};
  const uintptr_t receive[6] = {0x16f5a2a00, 0x906, 0, 0, 0, 0};
  cJSON *doc = darwin_one_report(frames, 9, receive, 0);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  CHECK_MSG(strcmp(string_of(cause, "kind"), "idle") == 0, "kind %s", string_of(cause, "kind"));
  CHECK_MSG(strstr(string_of(cause, "summary"), "a modal or tracking loop") != NULL, "%s",
            string_of(cause, "summary"));
  darwin_one_done(doc);
  /* The same frames sending and receiving (an RPC, CFMessagePortSendRequest's form): a wait. */
  const uintptr_t rpc[6] = {0x16f5a2a00, 0x903, 0, 0, 0, 0};
  doc = darwin_one_report(frames, 9, rpc, 0);
  CHECK(strcmp(string_of(cJSON_GetObjectItemCaseSensitive(doc, "cause"), "kind"), "wait") == 0);
  darwin_one_done(doc);
}

/* Defect 3: SQLite's commit on the main thread, fcntl(fd, F_FULLFSYNC) (Libc's fcntl calls the
 * __fcntl trap): io on that fd, not "Not known why". */
static void test_darwin_fullfsync(void) {
  const uintptr_t frames[] = {0x180006010, 0x403020, 0x401050};
  const uintptr_t args[6] = {7, 51, 0, 0, 0, 0};
  cJSON *doc = darwin_one_report(frames, 3, args, 0);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  CHECK_MSG(strcmp(string_of(cause, "kind"), "io") == 0, "kind %s", string_of(cause, "kind"));
  CHECK_MSG(strstr(string_of(cause, "summary"), "in __fcntl() on fd 7 (F_FULLFSYNC)") != NULL,
            "%s", string_of(cause, "summary"));
  CHECK(strcmp(string_of(cause, "label"), "io \xC2\xB7 __fcntl fd 7 (F_FULLFSYNC)") == 0);
  darwin_one_done(doc);
}

/* Defect 5: pthread_rwlock_wrlock blocked in __psynch_rw_wrlock(rwlock, ...) (libpthread's
 * pthread_rwlock.c): the rwlock's address from the first argument, never "mutex 0x0". */
static void test_darwin_rwlock(void) {
  const uintptr_t frames[] = {0x180007010, 0x403020, 0x401050};
  const uintptr_t args[6] = {0x16f5a2d00, 0x300, 0x200, 0x100, 0, 0};
  cJSON *doc = darwin_one_report(frames, 3, args, 0);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  CHECK(strcmp(string_of(cause, "kind"), "lock") == 0);
  CHECK_MSG(strstr(string_of(cause, "summary"), "for rwlock 0x16f5a2d00") != NULL, "%s",
            string_of(cause, "summary"));
  CHECK(strcmp(string_of(cause, "mutex"), "0x16f5a2d00") == 0);
  CHECK(strcmp(string_of(cause, "label"), "lock \xC2\xB7 rwlock 0x16f5a2d00") == 0);
  darwin_one_done(doc);
}


/* Two blocked opens in one hang, of two files, each given relative to the working folder
 * (openat's first argument is AT_FDCWD for both): two phases, each with its own path. They were
 * one phase, placed at the first and named by the last path, when phases went by the first
 * argument. */
static void test_two_opens_two_phases(void) {
  lagscope__report_data r = make_record();
  static const char first[] = "/tmp/lagscope-test-first.fifo", second[] = "/tmp/lagscope-test-second.fifo";
  for (int i = 0; i < 100; i++) {
    samples[i].method = LAGSCOPE__METHOD_BLOCKED;
    samples[i].run_state = LAGSCOPE__RUN_SYSCALL;
    samples[i].syscall = SYS_openat;
    samples[i].args[0] = (uintptr_t)AT_FDCWD;
    samples[i].args[1] = (uintptr_t)(i < 60 ? first : second);
  }
  r.duration_ns = 1260000000; /* to the last sample's and one interval */
  resolver res = {0};
  char *json = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, NULL), 0);
  cJSON *doc = cJSON_Parse(json);
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  const char *summary = string_of(cause, "summary");
  printf("two opens: %s\n", summary);
  const cJSON *phases = cJSON_GetObjectItemCaseSensitive(cause, "phases");
  CHECK_EQ_INT(cJSON_GetArraySize(phases), 2);
  const cJSON *a = cJSON_GetArrayItem(phases, 0), *b = cJSON_GetArrayItem(phases, 1);
  CHECK_MSG(strcmp(string_of(a, "target"), first) == 0, "%s", string_of(a, "target"));
  CHECK_MSG(strcmp(string_of(b, "target"), second) == 0, "%s", string_of(b, "target"));
  /* Each phase's time by the samples' clock (first from the hang's start, samples from 260 ms
   * on every 10 ms): 0 to 860 ms, then 860 ms to the hang's end. */
  CHECK_MSG(number_of(a, "ms") == 860 && number_of(b, "ms") == 400, "%g, %g", number_of(a, "ms"),
            number_of(b, "ms"));
  CHECK(number_of(a, "to_ms") == number_of(b, "from_ms"));
  CHECK_MSG(strstr(summary, first) != NULL && strstr(summary, ", then blocked") != NULL &&
                strstr(summary, first) < strstr(summary, second), "%s", summary);
  cJSON_Delete(doc);
  lagscope__dealloc(json);
}

/* ---- phases: time order, time by the samples' clock, time elsewhere, a CPU phase's name ---- */

#define PHASE_SAMPLES 400
static lagscope__stack phase_samples[PHASE_SAMPLES];
static const char phase_path[] = "/tmp/lagscope-test-phase.fifo";

/* Sample i: blocked in call (SYS_openat on phase_path, SYS_read on fd 7 "pipe:[8812]") or, call
 * -1, on the CPU in c (a → c) or, call -2, in spin (a → b → spin), at ms from the hang's start. */
static void phase_sample(uint32_t i, long call, double ms) {
  lagscope__stack *s = &phase_samples[i];
  uintptr_t in_c[] = {0x404030, 0x402060, 0x401050}, in_spin[] = {0x405010, 0x403020, 0x402020, 0x401050};
  if (call == -2) set_stack(s, 100, in_spin, 4);
  else set_stack(s, 100, in_c, 3);
  s->method = call < 0 ? LAGSCOPE__METHOD_SIGNAL : LAGSCOPE__METHOD_BLOCKED;
  s->run_state = call < 0 ? LAGSCOPE__RUN_CPU : LAGSCOPE__RUN_SYSCALL;
  s->syscall = call < 0 ? -1 : (int32_t)call;
  if (call == SYS_openat) s->args[0] = (uintptr_t)AT_FDCWD, s->args[1] = (uintptr_t)phase_path;
  if (call == SYS_read) s->args[0] = 7;
  s->time_ns = 5000000000ull + (uint64_t)(ms * 1e6);
}

/* A report of n phase_samples over duration_ms; its cause (owned by the caller's doc). */
static cJSON *phase_report(uint32_t n, double duration_ms, cJSON **doc) {
  lagscope__report_data r = make_record();
  r.samples = phase_samples, r.sample_count = n;
  r.duration_ns = (uint64_t)(duration_ms * 1e6);
  r.threads = NULL, r.thread_info = NULL, r.thread_count = 0; /* the samples say it all */
  r.sample_targets[0] = (lagscope__report_target){SYS_read, 7, "pipe:[8812]"};
  r.sample_target_count = 1;
  resolver res = {0};
  char *json = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, NULL), 0);
  *doc = cJSON_Parse(json);
  lagscope__dealloc(json);
  CHECK(*doc != NULL);
  cJSON *cause = cJSON_GetObjectItemCaseSensitive(*doc, "cause");
  char *phases = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(cause, "phases"));
  printf("summary: %s\nlabel: %s\nphases: %s\n", string_of(cause, "summary"),
         string_of(cause, "label"), phases);
  free(phases);
  return cause;
}

/* Issue 45, item 2: open 1.5 s, read 1.0 s, open the same FIFO again 1.0 s: three phases in
 * time order, the open that came back a phase of its own. They were grouped by call and file:
 * "Blocked 2500 ms in openat() …, then blocked 1000 ms in read() …". */
static void test_phases_in_time_order(void) {
  uint32_t n = 0;
  for (int i = 0; i < 350; i++)
    phase_sample(n++, i < 150 ? SYS_openat : i < 250 ? SYS_read : SYS_openat, i * 10.0);
  cJSON *doc;
  const cJSON *cause = phase_report(n, 3500, &doc);
  const cJSON *phases = cJSON_GetObjectItemCaseSensitive(cause, "phases");
  CHECK_EQ_INT(cJSON_GetArraySize(phases), 3);
  static const char *const calls[] = {"openat", "read", "openat"};
  static const double from[] = {0, 1500, 2500}, ms[] = {1500, 1000, 1000};
  for (int i = 0; i < 3 && i < cJSON_GetArraySize(phases); i++) {
    const cJSON *p = cJSON_GetArrayItem(phases, i);
    CHECK_MSG(strcmp(string_of(p, "syscall"), calls[i]) == 0, "phase %d: %s", i, string_of(p, "syscall"));
    CHECK_MSG(number_of(p, "from_ms") == from[i] && number_of(p, "ms") == ms[i], "phase %d: %g, %g ms",
              i, number_of(p, "from_ms"), number_of(p, "ms"));
  }
  char want[600];
  snprintf(want, sizeof want, "Blocked 1500 ms in openat() on %s, then blocked 1000 ms in read() on "
           "pipe:[8812], then blocked 1000 ms in openat() on %s", phase_path, phase_path);
  CHECK_MSG(strcmp(string_of(cause, "summary"), want) == 0, "%s", string_of(cause, "summary"));
  cJSON_Delete(doc);
}

/* Issue 45, item 3: under load the monitor was starved 300 ms in the read: its samples every
 * 10 ms, then none for 300 ms, then every 10 ms again to the hang's end. The read runs from its
 * first sample to the hang's end (600 to 2000 ms): 1400 ms, not its share of the samples (111
 * of 171, 1298 ms); the phases' times add up to the hang's. */
static void test_phase_time_by_clock(void) {
  uint32_t n = 0;
  for (int i = 0; i < 60; i++) phase_sample(n++, SYS_openat, i * 10.0);
  for (int i = 0; i < 30; i++) phase_sample(n++, SYS_read, 600 + i * 10.0);
  for (int i = 0; i < 81; i++) phase_sample(n++, SYS_read, 1190 + i * 10.0); /* after the gap */
  cJSON *doc;
  const cJSON *cause = phase_report(n, 2000, &doc);
  CHECK_MSG(strstr(string_of(cause, "summary"), "then blocked 1400 ms in read() on pipe:[8812]") != NULL,
            "%s", string_of(cause, "summary"));
  const cJSON *phases = cJSON_GetObjectItemCaseSensitive(cause, "phases");
  CHECK_EQ_INT(cJSON_GetArraySize(phases), 2);
  const cJSON *read = cJSON_GetArrayItem(phases, 1);
  CHECK_MSG(number_of(read, "from_ms") == 600 && number_of(read, "to_ms") == 2000 &&
                number_of(read, "ms") == 1400 && number_of(read, "share") == 0.7,
            "read: %g to %g, %g ms, share %g", number_of(read, "from_ms"), number_of(read, "to_ms"),
            number_of(read, "ms"), number_of(read, "share"));
  double sum = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, phases) sum += number_of(p, "ms");
  CHECK_MSG(sum == 2000, "the phases add up to %g ms", sum);
  cJSON_Delete(doc);
}

/* Issue 45, item 4: a read of 850 ms, then an open of 150 ms, under a fifth of the hang: told in
 * one phase, the read's, with its own time and the open's said apart. The open's time was told
 * in the read's: "Blocked 1000 ms in read() …". */
static void test_one_phase_time_elsewhere(void) {
  uint32_t n = 0;
  for (int i = 0; i < 85; i++) phase_sample(n++, SYS_read, i * 10.0);
  for (int i = 0; i < 15; i++) phase_sample(n++, SYS_openat, 850 + i * 10.0);
  cJSON *doc;
  const cJSON *cause = phase_report(n, 1000, &doc);
  CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cause, "phases")), 1);
  CHECK_MSG(strcmp(string_of(cause, "summary"),
                   "Blocked 850 ms in read() on pipe:[8812] (and 150 ms elsewhere)") == 0,
            "%s", string_of(cause, "summary"));
  CHECK(strcmp(string_of(cause, "label"), "io \xC2\xB7 read pipe:[8812]") == 0);
  cJSON_Delete(doc);
  /* The read comes back after a short open: one phase's sentence, the read's two runs its time. */
  n = 0;
  for (int i = 0; i < 70; i++) phase_sample(n++, SYS_read, i * 10.0);
  for (int i = 0; i < 15; i++) phase_sample(n++, SYS_openat, 700 + i * 10.0);
  for (int i = 0; i < 15; i++) phase_sample(n++, SYS_read, 850 + i * 10.0);
  cause = phase_report(n, 1000, &doc);
  CHECK_MSG(strcmp(string_of(cause, "summary"),
                   "Blocked 850 ms in read() on pipe:[8812] (and 150 ms elsewhere)") == 0,
            "%s", string_of(cause, "summary"));
  cJSON_Delete(doc);
}

/* Issue 45, item 5: a CPU hang whose samples split across two functions, 60 in c then 40 in
 * spin (the heaviest stack's is c, the last sample's spin): the label, the sentence and the
 * phase name the same function, the one most samples were in. The phase named the last
 * sample's (spin), the label and the sentence the heaviest stack's (c). */
static void test_cpu_phase_function(void) {
  uint32_t n = 0;
  for (int i = 0; i < 100; i++) phase_sample(n++, i < 60 ? -1 : -2, i * 10.0);
  cJSON *doc;
  const cJSON *cause = phase_report(n, 1000, &doc);
  const cJSON *phases = cJSON_GetObjectItemCaseSensitive(cause, "phases");
  CHECK_EQ_INT(cJSON_GetArraySize(phases), 1);
  CHECK_MSG(strcmp(string_of(cJSON_GetArrayItem(phases, 0), "function"), "c") == 0, "%s",
            string_of(cJSON_GetArrayItem(phases, 0), "function"));
  CHECK_MSG(strcmp(string_of(cause, "label"), "cpu \xC2\xB7 c") == 0, "%s", string_of(cause, "label"));
  CHECK_MSG(strcmp(string_of(cause, "summary"), "On the CPU for 1000 ms in c") == 0, "%s",
            string_of(cause, "summary"));
  cJSON_Delete(doc);
  /* c and spin interleaved, two in three samples in spin: one phase on the CPU, named spin by
   * the label, the sentence and the phase alike. */
  n = 0;
  for (int i = 0; i < 100; i++) phase_sample(n++, i % 3 == 0 ? -1 : -2, i * 10.0);
  cause = phase_report(n, 1000, &doc);
  phases = cJSON_GetObjectItemCaseSensitive(cause, "phases");
  CHECK(strcmp(string_of(cJSON_GetArrayItem(phases, 0), "function"), "spin") == 0);
  CHECK_MSG(strcmp(string_of(cause, "label"), "cpu \xC2\xB7 spin") == 0, "%s", string_of(cause, "label"));
  CHECK(strcmp(string_of(cause, "summary"), "On the CPU for 1000 ms in spin") == 0);
  cJSON_Delete(doc);
}

/* Samples whose clock cannot be trusted (backwards, before the hang's start, past its end),
 * and samples dropped past the buffer: every phase within the hang, in order, none negative;
 * with samples dropped, the last phase kept runs to the hang's end (a 382 s open is told as
 * such, not as the buffer's 60 s and the rest elsewhere). */
static void test_phase_clock_crafted(void) {
  uint32_t n = 0;
  for (int i = 0; i < 40; i++) phase_sample(n++, SYS_read, i * 10.0);
  for (int i = 0; i < 30; i++) phase_sample(n++, SYS_openat, i % 2 ? 300 - i * 10.0 : 5000 + i);
  phase_samples[n - 1].time_ns = 0; /* long before the hang's start */
  for (int i = 0; i < 30; i++) phase_sample(n++, SYS_read, 700 + i * 10.0);
  cJSON *doc;
  const cJSON *cause = phase_report(n, 1000, &doc);
  double last_to = 0, sum = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(cause, "phases")) {
    CHECK(number_of(p, "from_ms") >= last_to && number_of(p, "ms") >= 0 && number_of(p, "to_ms") <= 1000);
    last_to = number_of(p, "to_ms");
    sum += number_of(p, "ms");
  }
  CHECK_MSG(sum <= 1000, "%g ms of phases in a hang of 1000", sum);
  cJSON_Delete(doc);
  /* 100 samples kept of a 3000 ms hang, the rest dropped: the read runs to the hang's end. */
  n = 0;
  for (int i = 0; i < 100; i++) phase_sample(n++, SYS_read, i * 10.0);
  lagscope__report_data r = make_record();
  r.samples = phase_samples, r.sample_count = n, r.samples_dropped = 200;
  r.duration_ns = 3000000000ull;
  r.threads = NULL, r.thread_info = NULL, r.thread_count = 0;
  r.sample_targets[0] = (lagscope__report_target){SYS_read, 7, "pipe:[8812]"};
  r.sample_target_count = 1;
  resolver res = {0};
  char *json = NULL;
  CHECK_EQ_INT(lagscope__report_json(&r, fake_resolve, &res, &json, NULL), 0);
  doc = cJSON_Parse(json);
  lagscope__dealloc(json);
  cause = cJSON_GetObjectItemCaseSensitive(doc, "cause");
  CHECK_MSG(strcmp(string_of(cause, "summary"),
                   "Blocked 3000 ms in read() on pipe:[8812]") == 0, "%s",
            string_of(cause, "summary"));
  cJSON_Delete(doc);
}

static const test_case cases[] = {
    TEST_CASE(tree_and_heaviest),
    TEST_CASE(darwin_lock_chain),
    TEST_CASE(darwin_dispatch_sync),
    TEST_CASE(darwin_workloop_sync),
    TEST_CASE(darwin_run_loop_26),
    TEST_CASE(darwin_fullfsync),
    TEST_CASE(darwin_rwlock),
    TEST_CASE(call_sites_states_and_stop),
    TEST_CASE(exact_and_states),
    TEST_CASE(bad_and_empty),
    TEST_CASE(big),
    TEST_CASE(two_opens_two_phases),
    TEST_CASE(phases_in_time_order),
    TEST_CASE(phase_time_by_clock),
    TEST_CASE(one_phase_time_elsewhere),
    TEST_CASE(cpu_phase_function),
    TEST_CASE(phase_clock_crafted),
};

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--example") == 0) return print_example();
  return run_test_case(argc, argv, cases, CASE_COUNT(cases));
}
