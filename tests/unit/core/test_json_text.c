/* JSON without cJSON trees: the writer (core/json_writer.c) that reports are written with, and
 * the check (core/json_check.c) that the store reads report files with. cJSON is the oracle:
 * what the writer writes, cJSON reads back as the values written; what the check accepts,
 * cJSON parses, to its last byte; and the check's verdicts on a table of texts. */
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

/* cJSON's limit: 1000 levels parse, 1001 do not. */
static void check_nesting(void) {
  static char text[2 * 1001 + 1];
  for (int levels = 999; levels <= 1001; levels++) {
    for (int i = 0; i < levels; i++) text[i] = '[', text[2 * levels - 1 - i] = ']';
    text[2 * levels] = '\0';
    size_t end;
    int valid = lagscope__json_check(text, 2 * (size_t)levels, &end);
    CHECK_MSG(valid == (levels <= 1000), "%d levels: %d", levels, valid);
    cJSON *doc = cJSON_Parse(text);
    CHECK_MSG((doc != NULL) == valid, "%d levels: cJSON differs", levels);
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

int main(void) {
  writer_writes_what_cjson_reads();
  writer_strings_of_any_bytes();
  check_verdicts();
  check_nesting();
  check_never_more_lenient();
  string_text_decodes();
  printf("json_text: ok\n");
  return 0;
}
