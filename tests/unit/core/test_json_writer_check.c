/* JSON without cJSON trees: the writer (core/base/json_writer.c) that reports are written with, and
 * the check and the reader (core/base/json_check.c) that the store and the hang list read report
 * files with. cJSON is the oracle: what the writer writes, cJSON reads back as the values
 * written; what the check accepts, cJSON parses, to its last byte; the member and the element
 * the reader finds are cJSON's; the telling frame of a stack, read in place, is the one the
 * rule picks among cJSON's items; and the check's verdicts on a table of texts. */
#include "check.h"
#include "internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* ---- the writer ---- */

static void writer_writes_what_cjson_reads(void) {
  lagscope__json_writer w = {0};
  lagscope__jw_begin_object(&w, NULL);
  lagscope__jw_string(&w, "plain", "main");
  lagscope__jw_string(&w, "escaped", "q\"b\\s/\n\t\r\b\f\x01\x1f");
  lagscope__jw_string(&w, "bad utf-8", "a\xff" "b\xc3");
  lagscope__jw_string(&w, "utf-8", "caf\xc3\xa9 \xf0\x9f\x98\x80");
  lagscope__jw_string(&w, "none", NULL);
  lagscope__jw_hex(&w, "hex", (uintptr_t)0xdeadbeef);
  lagscope__jw_hex(&w, "zero", 0);
  lagscope__jw_u64(&w, "u64", UINT64_MAX);
  lagscope__jw_i64(&w, "i64", INT64_MIN);
  lagscope__jw_measure(&w, "measure", 12.3456);
  lagscope__jw_measure(&w, "nan", NAN);
  lagscope__jw_measure(&w, "huge", 1e300);
  lagscope__jw_bool(&w, "yes", 1);
  lagscope__jw_null(&w, "nothing");
  lagscope__jw_raw(&w, "raw", "[1,{\"a\":[]}]");
  lagscope__jw_begin_array(&w, "empty");
  lagscope__jw_end_array(&w);
  lagscope__jw_begin_array(&w, "items");
  lagscope__jw_u64(&w, NULL, 1);
  lagscope__jw_begin_object(&w, NULL);
  lagscope__jw_end_object(&w);
  lagscope__jw_string(&w, NULL, "x");
  lagscope__jw_end_array(&w);
  lagscope__jw_end_object(&w);
  char *text = lagscope__jw_finish(&w);
  CHECK(text != NULL && w.text == NULL);
  CHECK_MSG(strstr(text, "\"i64\":-9223372036854775808,") != NULL, "%s", text);
  CHECK_MSG(strstr(text, "\"u64\":18446744073709551615,") != NULL, "%s", text);
  CHECK_MSG(strstr(text, "\"items\":[1,{},\"x\"]}") != NULL, "%s", text);
  cJSON *doc = cJSON_Parse(text);
  CHECK_MSG(doc != NULL, "not JSON: %s", text);
  const char *escaped = cJSON_GetObjectItem(doc, "escaped")->valuestring;
  CHECK(strcmp(escaped, "q\"b\\s/\n\t\r\b\f\x01\x1f") == 0);
  CHECK(strcmp(cJSON_GetObjectItem(doc, "bad utf-8")->valuestring,
               "a\xEF\xBF\xBD" "b\xEF\xBF\xBD") == 0);
  CHECK(strcmp(cJSON_GetObjectItem(doc, "utf-8")->valuestring, "caf\xc3\xa9 \xf0\x9f\x98\x80") ==
        0);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(doc, "none")));
  CHECK(strcmp(cJSON_GetObjectItem(doc, "hex")->valuestring, "0xdeadbeef") == 0);
  CHECK(strcmp(cJSON_GetObjectItem(doc, "zero")->valuestring, "0x0") == 0);
  CHECK(cJSON_GetObjectItem(doc, "measure")->valuedouble == 12.346);
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(doc, "nan")));
  CHECK(cJSON_GetObjectItem(doc, "huge")->valuedouble == 1e300);
  CHECK(cJSON_IsTrue(cJSON_GetObjectItem(doc, "yes")));
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(doc, "nothing")));
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "raw")) == 2);
  CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "empty")) == 0);
  cJSON_Delete(doc);
  lagscope__dealloc(text);
}

/* Any bytes as a string: cJSON reads back the bytes when they are UTF-8, and valid JSON
 * always; a text grown past many doublings keeps every value. */
static void writer_strings_of_any_bytes(void) {
  lagscope__json_writer w = {0};
  char values[2000][12];
  lagscope__jw_begin_array(&w, NULL);
  for (int i = 0; i < 2000; i++) {
    size_t len = next_random() % 11;
    for (size_t k = 0; k < len; k++) {
      unsigned char b = (unsigned char)(next_random() % 255 + 1);
      values[i][k] = (char)(i % 2 == 0 ? b % 128 : b); /* half ASCII, half anything */
      if (values[i][k] == '\0') values[i][k] = 'z';
    }
    values[i][len] = '\0';
    lagscope__jw_string(&w, NULL, values[i]);
  }
  lagscope__jw_end_array(&w);
  char *text = lagscope__jw_finish(&w);
  CHECK(text != NULL);
  cJSON *doc = cJSON_Parse(text);
  CHECK(doc != NULL && cJSON_GetArraySize(doc) == 2000);
  for (int i = 0; i < 2000; i += 2)
    CHECK_MSG(strcmp(cJSON_GetArrayItem(doc, i)->valuestring, values[i]) == 0, "item %d", i);
  cJSON_Delete(doc);
  lagscope__dealloc(text);
}

/* ---- the check ---- */

typedef struct verdict_case {
  const char *text;
  int valid;
  size_t end; /* valid: where the value ends */
} verdict_case;

static void check_verdicts(void) {
  static const verdict_case cases[] = {
      {"{}", 1, 2},
      {" [1, 2.5, -0, 1e3, 1E+3, 2e-7, true, false, null, \"s\"] ", 1, 54},
      {"{\"a\":{\"b\":[[],{}]}} x", 1, 19},
      {"\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\"", 1, 36},
      {"0", 1, 1},
      {"-", 0, 0},
      {"01", 1, 1}, /* one value, "0"; what follows is not the check's business */
      {"1.", 0, 0},
      {".5", 0, 0},
      {"+1", 0, 0},
      {"1e", 0, 0},
      {"\"\\ud83d\"", 0, 0},       /* a high surrogate alone */
      {"\"\\ude00\"", 0, 0},       /* a low surrogate first */
      {"\"\\ud83d\\u0041\"", 0, 0}, /* a high surrogate, then no low one */
      {"\"\\x\"", 0, 0},
      {"\"\\u12g4\"", 0, 0},
      {"\"open", 0, 0},
      {"{\"a\" 1}", 0, 0},
      {"{\"a\":1,}", 0, 0},
      {"[1,]", 0, 0},
      {"[1 2]", 0, 0},
      {"{1:2}", 0, 0},
      {"{\"a\":1]", 0, 0},
      {"tru", 0, 0},
      {"nul", 0, 0},
      {"", 0, 0},
      {"   ", 0, 0},
      {"\xEF\xBB\xBF{}", 0, 0}, /* a byte order mark */
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    size_t end = 12345;
    int valid = lagscope__json_check(cases[i].text, strlen(cases[i].text), &end);
    CHECK_MSG(valid == cases[i].valid, "%s: %d", cases[i].text, valid);
    if (valid) CHECK_MSG(end == cases[i].end, "%s: ends at %zu", cases[i].text, end);
    else CHECK(end <= strlen(cases[i].text));
  }
}

/* LAGSCOPE__JSON_DEPTH_MAX levels are JSON to the check, one more is not (lagscope parses no
 * deeper text: cJSON would recurse past a viewer thread's stack); cJSON parses both. */
static void check_nesting(void) {
  enum { MAX = LAGSCOPE__JSON_DEPTH_MAX };
  static char text[2 * (MAX + 1) + 1];
  for (int levels = MAX - 1; levels <= MAX + 1; levels++) {
    for (int i = 0; i < levels; i++) text[i] = '[', text[2 * levels - 1 - i] = ']';
    text[2 * levels] = '\0';
    size_t end;
    int valid = lagscope__json_check(text, 2 * (size_t)levels, &end);
    CHECK_MSG(valid == (levels <= MAX), "%d levels: %d", levels, valid);
    CHECK_MSG(valid || end == (size_t)MAX, "%d levels: stopped at %zu", levels, end);
    cJSON *doc = cJSON_Parse(text);
    CHECK_MSG(doc != NULL, "%d levels: cJSON refuses what lagscope's bound allows", levels);
    cJSON_Delete(doc);
  }
}

/* Texts from JSON's alphabet, shuffled: whatever the check accepts cJSON parses, to the
 * same byte; and the check accepts every text the writer makes. */
static void check_never_more_lenient(void) {
  static const char *const pieces[] = {"{", "}", "[", "]", ",", ":", "\"a\"", "\"\\u00e9\"",
                                       "\"\\ud800\"", "1", "-0.5e+2", "01", "true", "nul",
                                       " ", "\"", "\\", "null", "\"k\":", "2."};
  unsigned long accepted = 0;
  for (int round = 0; round < 200000; round++) {
    char text[128];
    size_t len = 0;
    int count = 1 + (int)(next_random() % 8);
    for (int k = 0; k < count; k++) {
      const char *p = pieces[next_random() % (sizeof(pieces) / sizeof(pieces[0]))];
      if (len + strlen(p) >= sizeof(text)) break;
      memcpy(text + len, p, strlen(p));
      len += strlen(p);
    }
    text[len] = '\0';
    size_t end;
    if (!lagscope__json_check(text, len, &end)) continue;
    accepted++;
    const char *parsed_end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(text, end, &parsed_end, 0);
    CHECK_MSG(doc != NULL && parsed_end == text + end, "\"%s\": cJSON disagrees", text);
    cJSON_Delete(doc);
  }
  CHECK_MSG(accepted > 1000, "only %lu texts accepted", accepted);
}

static void string_text_decodes(void) {
  char out[16];
  const char *s = "\"a\\u0041\\u00e9\\n\"";
  CHECK(lagscope__json_string_text(s, strlen(s), out, sizeof(out)));
  CHECK(strcmp(out, "aA\xc3\xa9\n") == 0);
  s = "\"\\ud83d\\ude00\"";
  CHECK(lagscope__json_string_text(s, strlen(s), out, sizeof(out)));
  CHECK(strcmp(out, "\xf0\x9f\x98\x80") == 0);
  s = "\"0123456789abcdef\""; /* 16 bytes do not fit 16 with the NUL */
  CHECK(!lagscope__json_string_text(s, strlen(s), out, sizeof(out)));
  s = "\"a\" ";
  CHECK(!lagscope__json_string_text(s, strlen(s), out, sizeof(out)));
  s = "12";
  CHECK(!lagscope__json_string_text(s, strlen(s), out, sizeof(out)));
}

/* ---- the reader ---- */

static char *span_text(const char *s, lagscope__json_span v) {
  static char out[256];
  snprintf(out, sizeof(out), "%.*s", (int)(v.end - v.start), s + v.start);
  return out;
}

static void reader_finds_members_and_elements(void) {
  const char *o = " { \"a\" : [1, {\"b\": \"]}\\\"\"}], \"k\":\"x\\\"y\" ,\"a\":2, \"n\":-1.5e3 } ";
  size_t n = strlen(o), close;
  int empty;
  lagscope__json_span v;
  CHECK(lagscope__json_find_member(o, n, "a", &v, &close, &empty) == 0 && !empty);
  CHECK_MSG(strcmp(span_text(o, v), "[1, {\"b\": \"]}\\\"\"}]") == 0, "%s", span_text(o, v));
  CHECK(o[close] == '}');
  CHECK(lagscope__json_find_member(o, n, "n", &v, &close, &empty) == 0);
  CHECK(strcmp(span_text(o, v), "-1.5e3") == 0);
  CHECK(lagscope__json_find_member(o, n, "b", &v, &close, &empty) == 0 && v.end == v.start);
  char text[8];
  CHECK(lagscope__json_member_text(o, n, "k", text, sizeof(text)) && strcmp(text, "x\"y") == 0);
  CHECK(!lagscope__json_member_text(o, n, "a", text, sizeof(text))); /* not a string */
  CHECK(lagscope__json_find_member("{ }", 3, "a", &v, &close, &empty) == 0 && empty);
  CHECK(lagscope__json_find_member("[1]", 3, "a", &v, &close, &empty) == -1);

  /* member_span works on an object inside a larger text, and answers in that text */
  CHECK(lagscope__json_find_member(o, n, "a", &v, &close, &empty) == 0);
  lagscope__json_span inner = {0, 0}, element;
  size_t at = 0;
  while (lagscope__json_next_element(o + v.start, v.end - v.start, &at, &element))
    inner = (lagscope__json_span){v.start + element.start, v.start + element.end};
  CHECK_MSG(strcmp(span_text(o, lagscope__json_member_span(o, inner, "b")), "\"]}\\\"\"") == 0,
            "%s", span_text(o, lagscope__json_member_span(o, inner, "b")));
  lagscope__json_span none = lagscope__json_member_span(o, inner, "k");
  CHECK(none.start == none.end);
  none = lagscope__json_member_span(o, v, "b"); /* v is an array, not an object */
  CHECK(none.start == none.end);

  const char *a = " [ {\"f\":\"[,]\"} ,2,\"s\" , [ [] ] ,{}] ";
  const char *want[] = {"{\"f\":\"[,]\"}", "2", "\"s\"", "[ [] ]", "{}"};
  size_t count = 0;
  at = 0;
  while (lagscope__json_next_element(a, strlen(a), &at, &v)) {
    CHECK(count < 5);
    CHECK_MSG(strcmp(span_text(a, v), want[count]) == 0, "%zu: %s", count, span_text(a, v));
    count++;
  }
  CHECK_EQ_INT((int)count, 5);
  at = 0;
  CHECK(!lagscope__json_next_element(" [ ] ", 5, &at, &v));
  at = 0;
  CHECK(!lagscope__json_next_element("{}", 2, &at, &v));
}

static int has_code(const cJSON *frame, const char *code) {
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(frame, "code");
  return cJSON_IsString(c) && strcmp(c->valuestring, code) == 0;
}

/* The rule, over cJSON's items: the innermost frame whose "code" is "app"; else the innermost
 * named frame in the module of the outermost "main" (of the frames without "code"); else the
 * innermost named one that is not lagscope's; else the innermost. */
static const cJSON *telling_by_cjson(const cJSON *stack) {
  const cJSON *frame, *main_frame = NULL, *named = NULL;
  cJSON_ArrayForEach(frame, stack) {
    if (has_code(frame, "app")) return frame;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(frame, "function");
    if (!cJSON_IsString(f) || has_code(frame, "lagscope")) continue;
    if (named == NULL) named = frame;
    if (strcmp(f->valuestring, "main") == 0 &&
        cJSON_GetObjectItemCaseSensitive(frame, "code") == NULL)
      main_frame = frame;
  }
  const cJSON *app = cJSON_GetObjectItemCaseSensitive(main_frame, "module");
  if (cJSON_IsString(app)) {
    cJSON_ArrayForEach(frame, stack) {
      const cJSON *m = cJSON_GetObjectItemCaseSensitive(frame, "module");
      if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(frame, "function")) &&
          cJSON_IsString(m) && strcmp(m->valuestring, app->valuestring) == 0)
        return frame;
    }
  }
  return named != NULL ? named : cJSON_GetArrayItem(stack, 0);
}

/* What the telling function reads: the frame's function, else "module+offset" (the module's
 * file name), else nothing. */
static void telling_text_by_cjson(const cJSON *frame, char *out, size_t size) {
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(frame, "function");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(frame, "module");
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(frame, "module_offset");
  out[0] = '\0';
  if (cJSON_IsString(f)) {
    snprintf(out, size, "%s", f->valuestring);
  } else if (cJSON_IsString(m) && cJSON_IsString(o)) {
    const char *slash = strrchr(m->valuestring, '/');
    snprintf(out, size, "%s+%s", slash != NULL ? slash + 1 : m->valuestring, o->valuestring);
  }
}

static void telling_frame_as_cjson_picks(void) {
  static const char *functions[] = {"main", "g_main_loop_run", "q\"uote", "caf\xc3\xa9", "\xff",
                                    "std::vector<int>::at", "main2"};
  static const char *modules[] = {"/usr/bin/app", "/lib/libc.so.6", "/usr/bin/app\"", "app"};
  static const char *codes[] = {"app", "system", "lagscope"};
  for (int round = 0; round < 2000; round++) {
    lagscope__json_writer w = {0};
    lagscope__jw_begin_array(&w, NULL);
    int frames = (int)(next_random() % 7);
    for (int i = 0; i < frames; i++) {
      lagscope__jw_begin_object(&w, NULL);
      lagscope__jw_hex(&w, "address", (uintptr_t)next_random());
      if (next_random() % 4 != 0)
        lagscope__jw_string(&w, "function", functions[next_random() % 7]);
      else if (next_random() % 2)
        lagscope__jw_null(&w, "function");
      if (next_random() % 5 != 0) lagscope__jw_string(&w, "module", modules[next_random() % 4]);
      if (next_random() % 3 == 0) lagscope__jw_hex(&w, "module_offset", next_random() % 65536);
      if (round % 2 == 0) /* half the rounds as reports are written now, half as before */
        lagscope__jw_string(&w, "code", codes[next_random() % 3]);
      lagscope__jw_end_object(&w);
    }
    lagscope__jw_end_array(&w);
    char *text = lagscope__jw_finish(&w);
    CHECK(text != NULL);
    cJSON *doc = cJSON_Parse(text);
    const cJSON *want = telling_by_cjson(doc);
    lagscope__json_span frame;
    int found = lagscope__report_telling_entry(text, strlen(text), &frame);
    CHECK_MSG(found == (want != NULL), "%s", text);
    if (found) {
      cJSON *got = cJSON_ParseWithLength(text + frame.start, frame.end - frame.start);
      CHECK_MSG(cJSON_Compare(got, want, 1), "%s: picked %.*s", text,
                (int)(frame.end - frame.start), text + frame.start);
      cJSON_Delete(got);
    }
    char function[64], wanted[64];
    telling_text_by_cjson(want, wanted, sizeof(wanted));
    CHECK_EQ_INT(lagscope__report_telling_function(text, function, sizeof(function)),
                 wanted[0] != '\0');
    CHECK_MSG(strcmp(function, wanted) == 0, "%s: told %s, wanted %s", text, function, wanted);
    cJSON_Delete(doc);
    lagscope__dealloc(text);
  }
}

int main(void) {
  reader_finds_members_and_elements();
  telling_frame_as_cjson_picks();
  writer_writes_what_cjson_reads();
  writer_strings_of_any_bytes();
  check_verdicts();
  check_nesting();
  check_never_more_lenient();
  string_text_decodes();
  printf("json_text: ok\n");
  return 0;
}
