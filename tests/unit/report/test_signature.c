/* The signature (core/report/signature.c) from stacks written as lagscope writes them: the
 * same names give the same id whatever the addresses, offsets and lines; the kind, the app's
 * frames and their order tell stalls apart; lagscope's and the system's frames, clone suffixes
 * and a recursion's depth do not; hostile stacks give an id and never read past their end. */
#include "check.h"
#include "cases.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

static void sig(const char *kind, const char *stack, lagscope__signature *out) {
  lagscope__signature_of(kind, stack, out);
  CHECK_EQ_INT((int)strlen(out->id), 16);
  for (int i = 0; i < 16; i++) CHECK(strchr("0123456789abcdef", out->id[i]) != NULL);
}

#define APP(fn, addr, off) \
  "{\"address\":\"" addr "\",\"function\":\"" fn "\",\"offset\":" off \
  ",\"module\":\"/build/a/demo\",\"build_id\":\"\",\"load_address\":\"0x5500\",\"module_offset\":\"" addr "\",\"code\":\"app\"}"
#define SYS(fn) \
  "{\"address\":\"0x7f01\",\"function\":\"" fn "\",\"offset\":3,\"module\":\"/usr/lib/libc.so.6\"," \
  "\"build_id\":\"\",\"load_address\":\"0x7f00\",\"module_offset\":\"0x1\",\"code\":\"system\"}"
#define OWN(fn) \
  "{\"address\":\"0x9\",\"function\":\"" fn "\",\"offset\":1,\"module\":\"/x/liblagscope.so\"," \
  "\"build_id\":\"\",\"load_address\":\"0x0\",\"module_offset\":\"0x9\",\"code\":\"lagscope\"}"

static void test_same_names_same_id(void) {
  lagscope__signature a, b;
  sig("sleep", "[" SYS("nanosleep") "," APP("stall", "0x1130", "16") "," APP("main", "0x1200", "40") "]", &a);
  /* another build: every address and offset moved, another libc frame, a line added */
  sig("sleep", "[" SYS("clock_nanosleep") "," APP("stall", "0x2230", "20") "," APP("main", "0x2300", "44") "]", &b);
  CHECK_MSG(strcmp(a.id, b.id) == 0, "%s vs %s", a.id, b.id);
  CHECK_EQ_INT((int)a.entry_count, 2);
  CHECK(strcmp(a.entries[0], "stall") == 0 && strcmp(a.entries[1], "main") == 0);
  CHECK(strcmp(a.kind, "sleep") == 0);
}

static void test_kind_and_frames_tell_apart(void) {
  lagscope__signature a, b, c, d;
  sig("sleep", "[" APP("stall", "0x1", "1") "," APP("main", "0x2", "2") "]", &a);
  sig("lock", "[" APP("stall", "0x1", "1") "," APP("main", "0x2", "2") "]", &b);
  sig("sleep", "[" APP("other", "0x1", "1") "," APP("main", "0x2", "2") "]", &c);
  sig("sleep", "[" APP("main", "0x2", "2") "," APP("stall", "0x1", "1") "]", &d);
  CHECK(strcmp(a.id, b.id) != 0);
  CHECK(strcmp(a.id, c.id) != 0);
  CHECK(strcmp(a.id, d.id) != 0);
  /* names are separated: "ab","c" is not "a","bc" */
  lagscope__signature e, f;
  sig("cpu", "[" APP("ab", "0x1", "1") "," APP("c", "0x2", "2") "]", &e);
  sig("cpu", "[" APP("a", "0x1", "1") "," APP("bc", "0x2", "2") "]", &f);
  CHECK(strcmp(e.id, f.id) != 0);
}

static void test_lagscope_and_suffixes_left_out(void) {
  lagscope__signature a, b;
  sig("cpu", "[" APP("spin.constprop.0", "0x1", "1") "," OWN("lagscope__hook") "," APP("main", "0x2", "2") "]", &a);
  sig("cpu", "[" APP("spin.isra.1", "0x3", "1") "," APP("main", "0x4", "2") "]", &b);
  CHECK_MSG(strcmp(a.id, b.id) == 0, "%s vs %s", a.id, b.id);
  CHECK(strcmp(a.entries[0], "spin") == 0);
}

static void test_recursion_counted_once(void) {
  lagscope__signature a, b;
  sig("cpu", "[" APP("walk", "0x1", "1") "," APP("walk", "0x1", "1") "," APP("walk", "0x1", "1") "," APP("main", "0x2", "2") "]", &a);
  sig("cpu", "[" APP("walk", "0x1", "1") "," APP("main", "0x2", "2") "]", &b);
  CHECK(strcmp(a.id, b.id) == 0);
}

static void test_unnamed_app_frames_by_module_offset(void) {
  const char *stack =
      "[{\"address\":\"0x55551a2b\",\"function\":null,\"module\":\"/usr/bin/mousepad\","
      "\"build_id\":\"ab\",\"load_address\":\"0x55550000\",\"module_offset\":\"0x1a2b\",\"code\":\"app\"}]";
  lagscope__signature a;
  sig("io", stack, &a);
  CHECK_EQ_INT((int)a.entry_count, 1);
  CHECK_MSG(strcmp(a.entries[0], "mousepad+0x1a2b") == 0, "%s", a.entries[0]);
}

static void test_no_app_frame_falls_back_to_named(void) {
  lagscope__signature a, b;
  sig("io", "[" SYS("read") "," SYS("g_io_channel_read") "," OWN("lagscope_x") "]", &a);
  CHECK_EQ_INT((int)a.entry_count, 2);
  sig("io", "[" SYS("write") "]", &b);
  CHECK(strcmp(a.id, b.id) != 0);
}

static void test_at_most_eight_frames(void) {
  char stack[8192] = "[";
  for (int i = 0; i < 20; i++) {
    char name[16], frame[512];
    snprintf(name, sizeof(name), "f%d", i);
    snprintf(frame, sizeof(frame), "%s" APP("%s", "0x1", "1"), i > 0 ? "," : "", name);
    strcat(stack, frame);
  }
  strcat(stack, "]");
  lagscope__signature a;
  sig("cpu", stack, &a);
  CHECK_EQ_INT((int)a.entry_count, LAGSCOPE__SIGNATURE_ENTRIES);
  CHECK(strcmp(a.entries[0], "f0") == 0);
}

static void test_hostile_stacks(void) {
  const char *bad[] = {NULL, "", "[", "]", "{}", "[1,2,3]", "[{\"code\":\"app\"}]",
                       "[{\"code\":\"app\",\"function\":", "[\"x\"", "[[[[[[",
                       "[{\"function\":\"x\\u0000y\",\"code\":\"app\"}]"};
  lagscope__signature none, s;
  sig(NULL, NULL, &none);
  CHECK(strcmp(none.kind, "unknown") == 0 && none.entry_count == 0);
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) sig("", bad[i], &s);
  char long_name[1200];
  memset(long_name, 'n', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  char stack[1400];
  snprintf(stack, sizeof(stack), "[{\"function\":\"%s\",\"code\":\"app\"}]", long_name);
  sig("cpu", stack, &s); /* too long for a name: not a frame, still an id */
  char kind[64];
  memset(kind, 'k', sizeof(kind) - 1);
  kind[sizeof(kind) - 1] = '\0';
  sig(kind, "[]", &s);
  CHECK(strlen(s.kind) < sizeof(s.kind));
}

static void test_written_as_json(void) {
  lagscope__signature a;
  sig("lock", "[" APP("stall_lock", "0x1", "1") "," APP("main", "0x2", "2") "]", &a);
  lagscope__json_writer w = {0};
  lagscope__jw_begin_object(&w, NULL);
  lagscope__signature_write(&w, &a);
  lagscope__jw_end_object(&w);
  char *text = lagscope__jw_finish(&w);
  CHECK(text != NULL);
  char expect[256];
  snprintf(expect, sizeof(expect), "{\"signature\":\"%s\",\"signature_frames\":[\"stall_lock\",\"main\"]}", a.id);
  CHECK_MSG(strcmp(text, expect) == 0, "%s", text);
  lagscope__dealloc(text);
}

/* A recovered report's heaviest stack and cause, read from a file anyone could have planted
 * (lagscope__hang_report_read_parts): members of the wrong type are left out, strings
 * written again, and the hang_recovered event's text stays one valid JSON object. */
/* An -O2 frame as symbols_dwarf.c gives it: its inlined functions and a tail-called one put
 * back, so that it names what the -O0 build's frames named; a tail_called that is the frame
 * above (no tail call) and one of a system frame's are not added twice nor at all. */
#define APP_O2(fn, extra) \
  "{\"address\":\"0x5\",\"function\":\"" fn "\",\"offset\":9,\"module\":\"/build/a/demo\"," \
  "\"build_id\":\"\",\"load_address\":\"0x0\",\"module_offset\":\"0x5\"," extra "\"code\":\"app\"}"

static void test_inlined_and_tail_called_as_at_o0(void) {
  lagscope__signature o0, o2, same;
  sig("sleep", "[" SYS("g_usleep") "," APP("nap", "0x1", "1") "," APP("settle", "0x2", "2") ","
               APP("on_timeout", "0x3", "3") "," APP("main", "0x4", "4") "]", &o0);
  sig("sleep", "[" SYS("g_usleep") "," APP_O2("on_timeout", "\"inlined\":[\"settle\"],\"tail_called\":\"nap\",")
               "," APP_O2("main", "\"tail_called\":\"on_timeout\",") "]", &o2);
  CHECK_MSG(strcmp(o0.id, o2.id) == 0, "%s vs %s", o0.id, o2.id);
  CHECK_EQ_INT((int)o2.entry_count, 4);
  CHECK(strcmp(o2.entries[0], "nap") == 0 && strcmp(o2.entries[1], "settle") == 0);
  /* the call site names the frame above (g_usleep, no tail call): nothing added */
  sig("sleep", "[" SYS("g_usleep") "," APP_O2("nap", "\"tail_called\":\"g_usleep\",") ","
               APP("settle", "0x2", "2") "," APP("on_timeout", "0x3", "3") "," APP("main", "0x4", "4") "]",
      &same);
  CHECK_MSG(strcmp(o0.id, same.id) == 0, "%s vs %s", o0.id, same.id);
}

static void test_recovered_parts_from_hostile_files(void) {
  static const char *const files[] = {
      "{\"heaviest_stack\":5,\"cause\":\"cpu\"}",
      "{\"heaviest_stack\":{\"a\":1},\"cause\":[1,2]}",
      "{\"heaviest_stack\":[1,\"x\",null,{\"function\":7,\"code\":\"app\"}],"
      "\"cause\":{\"kind\":3,\"summary\":\"a\\u0000b\\\"c\",\"label\":{}}}",
      "{\"cause\":{\"kind\":\"cpu\",\"summary\":\"On the CPU\",\"label\":\"cpu · f\","
      "\"phases\":[{\"kind\":\"io\"}]},\"heaviest_stack\":[" APP("f", "0x10", "1") "]}",
      "[]",
      "",
  };
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    char *json = lagscope__strdup(files[i]);
    CHECK(json != NULL);
    lagscope_hang_report *r = lagscope__hang_report_new("20261128T000000.000Z-1-1", 0, "", json,
                                                        NULL);
    CHECK(r != NULL);
    lagscope__hang_report_read_parts(r);
    const char *stack = lagscope_report_heaviest_stack(r), *cause = lagscope_report_cause(r);
    CHECK_MSG(stack[0] == '\0' || stack[0] == '[', "file %zu: stack %s", i, stack);
    CHECK_MSG(cause[0] == '\0' || cause[0] == '{', "file %zu: cause %s", i, cause);
    lagscope_event e = {.type = LAGSCOPE_EVENT_HANG_RECOVERED};
    e.payload.report = r;
    char *text = lagscope__event_text(&e);
    CHECK(text != NULL);
    size_t end = 0;
    CHECK_MSG(lagscope__json_check(text, strlen(text), &end) && end == strlen(text),
              "file %zu: event %s", i, text);
    printf("file %zu: %s\n", i, text);
    if (i == 3)
      CHECK_MSG(strstr(text, "\"cause\":{\"kind\":\"cpu\",\"summary\":\"On the CPU\","
                             "\"label\":\"cpu · f\"}") != NULL &&
                    strstr(text, "\"function\":\"f\"") != NULL,
                "file 3: event %s", text);
    lagscope__dealloc(text);
    lagscope_release(r);
  }
}

static const test_case cases[] = {
    TEST_CASE(same_names_same_id),
    TEST_CASE(kind_and_frames_tell_apart),
    TEST_CASE(lagscope_and_suffixes_left_out),
    TEST_CASE(recursion_counted_once),
    TEST_CASE(unnamed_app_frames_by_module_offset),
    TEST_CASE(no_app_frame_falls_back_to_named),
    TEST_CASE(at_most_eight_frames),
    TEST_CASE(hostile_stacks),
    TEST_CASE(written_as_json),
    TEST_CASE(recovered_parts_from_hostile_files),
    TEST_CASE(inlined_and_tail_called_as_at_o0),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
