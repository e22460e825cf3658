/* A fingerprint rules file (docs/guide.md, "Fingerprint rules"), for lagscope-compare --rules
 * and lagscope-run --baseline --rules: one rule a line, '#' to the line's end a comment.
 *   merge SIG SIG...   the signatures are one (counted as the first): the same stall, named two
 *                      ways (two builds' optimisers, a rename)
 *   accept SIG...      a known stall: still told, never failing the gate
 * A line that is none of these is refused with its number: a rule the gate silently skipped
 * would pass what it did not see. */
#define _POSIX_C_SOURCE 200809L
#include "compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RULES_LINE 4096 /* a line past it is refused: no rule is that long */

static int is_signature(const char *s) {
  return strlen(s) == 16 && strspn(s, "0123456789abcdef") == 16;
}

/* Appends sig to the list; 0, or -1 without memory. Allocates. */
static int add(lagscope__compare_rule **list, size_t *count, const char *sig, const char *to,
               unsigned line) {
  lagscope__compare_rule *more = realloc(*list, (*count + 1) * sizeof(**list));
  if (more == NULL) return -1;
  *list = more;
  lagscope__compare_rule *r = &more[(*count)++];
  memcpy(r->signature, sig, 17);
  memcpy(r->to, to, 17);
  r->line = line;
  return 0;
}

static const lagscope__compare_rule *find(const lagscope__compare_rule *list, size_t count,
                                          const char *sig) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(list[i].signature, sig) == 0) return &list[i];
  return NULL;
}

/* One line's words; 0, or -1 with why. Allocates. */
static int parse_line(lagscope__compare_rules *r, char *text, unsigned line, const char *path,
                      char *why, size_t why_size) {
  char *hash = strchr(text, '#');
  if (hash != NULL) *hash = '\0';
  char *save = NULL, *verb = strtok_r(text, " \t\r\n", &save);
  if (verb == NULL) return 0;
  int merge = strcmp(verb, "merge") == 0;
  if (!merge && strcmp(verb, "accept") != 0) {
    snprintf(why, why_size, "%s:%u: unknown rule '%.40s' (merge SIG SIG... or accept SIG...)",
             path, line, verb);
    return -1;
  }
  char first[17] = "";
  int n = 0;
  static const char *const space = " \t\r\n";
  for (char *w = strtok_r(NULL, space, &save); w != NULL; w = strtok_r(NULL, space, &save), n++) {
    if (!is_signature(w)) {
      snprintf(why, why_size, "%s:%u: '%.40s' is not a signature (16 lowercase hex digits)", path,
               line, w);
      return -1;
    }
    if (n == 0) memcpy(first, w, 17);
    const lagscope__compare_rule *seen = merge ? find(r->merges, r->merge_count, w) : NULL;
    if (seen != NULL) {
      snprintf(why, why_size, "%s:%u: %s is merged already, at line %u", path, line, w, seen->line);
      return -1;
    }
    if ((merge ? add(&r->merges, &r->merge_count, w, first, line)
               : add(&r->accepted, &r->accept_count, w, w, line)) != 0) {
      snprintf(why, why_size, "%s:%u: no memory", path, line);
      return -1;
    }
  }
  if (n < (merge ? 2 : 1)) {
    snprintf(why, why_size, "%s:%u: %s needs %s", path, line, verb,
             merge ? "two signatures or more" : "one signature or more");
    return -1;
  }
  return 0;
}

int lagscope__compare_read_rules(lagscope__compare *c, const char *path, char *why,
                                 size_t why_size) {
  FILE *in = fopen(path, "r");
  if (in == NULL) {
    snprintf(why, why_size, "%s: %s", path, strerror(errno));
    return -1;
  }
  char text[RULES_LINE];
  unsigned line = 0;
  int rc = 0;
  while (rc == 0 && fgets(text, sizeof(text), in) != NULL) {
    line++;
    if (strchr(text, '\n') == NULL && !feof(in)) {
      snprintf(why, why_size, "%s:%u: line longer than %d bytes", path, line, RULES_LINE - 1);
      rc = -1;
    } else {
      rc = parse_line(&c->rules, text, line, path, why, why_size);
    }
  }
  if (rc == 0 && ferror(in)) {
    snprintf(why, why_size, "%s: cannot read", path);
    rc = -1;
  }
  fclose(in);
  return rc;
}

const char *lagscope__compare_merged(const lagscope__compare *c, const char *signature) {
  const lagscope__compare_rule *m = find(c->rules.merges, c->rules.merge_count, signature);
  return m != NULL ? m->to : signature;
}

int lagscope__compare_accepted(const lagscope__compare *c, const char *signature) {
  for (size_t i = 0; i < c->rules.accept_count; i++)
    if (strcmp(lagscope__compare_merged(c, c->rules.accepted[i].signature), signature) == 0)
      return 1;
  return 0;
}

void lagscope__compare_free_rules(lagscope__compare *c) {
  free(c->rules.merges);
  free(c->rules.accepted);
  memset(&c->rules, 0, sizeof(c->rules));
}
