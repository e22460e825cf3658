/*
 * The Mach-O index (core/darwin/macho.c) on a real zig-built Mach-O file, loaded the way dyld lays it
 * out (tests/support/macho_load.c), against what LLVM's tools say of the same file (the oracle
 * that tests/unit/macho/build-fixtures writes beside it):
 *   - the UUID is llvm-objdump's LC_UUID, the arch the file's;
 *   - every function symbol llvm-nm lists in an instruction section resolves to itself at
 *     offset 0 (at one address: the external name, then the smallest);
 *   - random addresses resolve to the nm symbol with the greatest address <= them in the same
 *     section, found here by a plain scan; addresses outside every instruction section, in
 *     __DATA, at the header, resolve to nothing;
 *   - C++ and Swift names go to their demanglers, others do not;
 *   - the same with LAGSCOPE__MACHO_SIZE_UNKNOWN (as the Darwin port calls it);
 *   - every byte the index held is given back.
 *
 * Usage: test_macho_image FILE   (FILE.oracle beside it; exit 77 when FILE is missing)
 */
#include "check.h"
#include "internal.h"
#include "macho.h"
#include "macho_load.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *length, int *status); /* libstdc++ */

typedef struct oracle_symbol {
  uint64_t address;
  char type; /* nm's letter: upper case for external */
  char name[256];
} oracle_symbol;

typedef struct oracle_section {
  uint64_t start, end;
} oracle_section;

typedef struct oracle {
  char uuid[64];
  oracle_section sections[16];
  size_t section_count;
  oracle_symbol *symbols; /* every nm line, by address */
  size_t symbol_count;
} oracle;

static void read_oracle(const char *path, oracle *o) {
  FILE *f = fopen(path, "r");
  CHECK_MSG(f != NULL, "cannot open %s", path);
  char line[512];
  size_t cap = 0;
  memset(o, 0, sizeof(*o));
  while (fgets(line, sizeof(line), f) != NULL) {
    unsigned long long a, b;
    char type, name[256];
    if (sscanf(line, "uuid %63s", o->uuid) == 1) continue;
    if (sscanf(line, "section %llx %llx", &a, &b) == 2 && o->section_count < 16) {
      o->sections[o->section_count++] = (oracle_section){a, a + b};
    } else if (sscanf(line, "symbol %llx %c %255s", &a, &type, name) == 3) {
      if (o->symbol_count == cap) {
        cap = cap ? cap * 2 : 1024;
        o->symbols = realloc(o->symbols, cap * sizeof(oracle_symbol));
        CHECK(o->symbols != NULL);
      }
      oracle_symbol *s = &o->symbols[o->symbol_count++];
      s->address = a;
      s->type = type;
      snprintf(s->name, sizeof(s->name), "%s", name);
    }
  }
  fclose(f);
  CHECK_MSG(o->uuid[0] != '\0' && o->section_count > 0 && o->symbol_count > 100,
            "%s: the oracle is incomplete", path);
}

static const oracle_section *section_of(const oracle *o, uint64_t address) {
  for (size_t i = 0; i < o->section_count; i++)
    if (address >= o->sections[i].start && address < o->sections[i].end) return &o->sections[i];
  return NULL;
}

/* Of two nm symbols at one address, the one the index keeps: external, then smallest. */
static int preferred(const oracle_symbol *a, const oracle_symbol *b) {
  int a_ext = a->type >= 'A' && a->type <= 'Z', b_ext = b->type >= 'A' && b->type <= 'Z';
  if (a_ext != b_ext) return a_ext;
  return strcmp(a->name, b->name) < 0;
}

/* The oracle's answer, by a plain scan: the name (without its underscore) of the preferred
 * symbol at the greatest address <= address in address's instruction section; NULL if none. */
static const char *expect(const oracle *o, uint64_t address, uint64_t *start) {
  const oracle_section *section = section_of(o, address);
  const oracle_symbol *best = NULL;
  for (size_t i = 0; section != NULL && i < o->symbol_count; i++) {
    const oracle_symbol *s = &o->symbols[i];
    if (s->address < section->start || s->address > address) continue;
    if (best == NULL || s->address > best->address ||
        (s->address == best->address && preferred(s, best)))
      best = s;
  }
  if (best == NULL) return NULL;
  *start = best->address;
  return best->name[0] == '_' ? best->name + 1 : best->name;
}

static void check_address(const lagscope__macho_image *img, const oracle *o, uintptr_t slide,
                          uint64_t address) {
  uint64_t start = 0;
  const char *want = expect(o, address, &start);
  const char *got = NULL;
  uintptr_t got_start = 0;
  int rc = lagscope__macho_image_lookup(img, (uintptr_t)address + slide, &got, &got_start);
  if (want == NULL) {
    CHECK_MSG(rc == LAGSCOPE_ENOENT, "0x%llx: expected nothing, got %s", (unsigned long long)address,
              rc == 0 ? got : "?");
    return;
  }
  CHECK_MSG(rc == 0, "0x%llx: expected %s, got nothing", (unsigned long long)address, want);
  CHECK_MSG(strcmp(got, want) == 0, "0x%llx: expected %s, got %s", (unsigned long long)address,
            want, got);
  CHECK_MSG(got_start - slide == start, "0x%llx: %s starts at 0x%llx, not 0x%llx",
            (unsigned long long)address, want, (unsigned long long)(got_start - slide),
            (unsigned long long)start);
}

static uint64_t rng_state = 0x2545f4914f6cdd1du;
static uint64_t rng(void) { /* xorshift64*: the same addresses every run */
  rng_state ^= rng_state >> 12, rng_state ^= rng_state << 25, rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717u;
}

/* Every function symbol, the byte before each, random addresses, and addresses outside. */
static size_t check_all(const lagscope__macho_image *img, const oracle *o, uintptr_t slide) {
  size_t functions = 0;
  for (size_t i = 0; i < o->symbol_count; i++) {
    uint64_t a = o->symbols[i].address;
    if (section_of(o, a) == NULL) continue;
    functions += i == 0 || o->symbols[i - 1].address != a;
    check_address(img, o, slide, a);
    check_address(img, o, slide, a - 1);
    check_address(img, o, slide, a + 1);
  }
  uint64_t low = o->sections[0].start - 256, high = o->sections[0].end + 256;
  for (size_t i = 1; i < o->section_count; i++) {
    if (o->sections[i].start - 256 < low) low = o->sections[i].start - 256;
    if (o->sections[i].end + 256 > high) high = o->sections[i].end + 256;
  }
  for (int i = 0; i < 20000; i++) check_address(img, o, slide, low + rng() % (high - low));
  for (size_t i = 0; i < o->section_count; i++) {
    check_address(img, o, slide, o->sections[i].end - 1);
    check_address(img, o, slide, o->sections[i].end);
  }
  for (size_t i = 0; i < o->symbol_count; i++) /* data, the mach header symbol: nothing */
    if (section_of(o, o->symbols[i].address) == NULL)
      check_address(img, o, slide, o->symbols[i].address);
  CHECK(lagscope__macho_image_lookup(img, 0, NULL, NULL) == LAGSCOPE_ENOENT);
  CHECK(lagscope__macho_image_lookup(img, UINTPTR_MAX, NULL, NULL) == LAGSCOPE_ENOENT);
  CHECK(lagscope__macho_image_lookup(img, lagscope__macho_image_load_address(img), NULL, NULL) ==
        LAGSCOPE_ENOENT);
  return functions;
}

static uintptr_t address_of(const oracle *o, const char *nm_name) {
  for (size_t i = 0; i < o->symbol_count; i++)
    if (strcmp(o->symbols[i].name, nm_name) == 0) return (uintptr_t)o->symbols[i].address;
  CHECK_MSG(0, "%s is not in the oracle", nm_name);
  return 0;
}

static int swift_calls;
static char *fake_swift_demangle(const char *mangled, size_t length, char *out, size_t *out_size,
                                 uint32_t flags) {
  swift_calls++;
  CHECK(out == NULL && out_size == NULL && flags == 0);
  CHECK_EQ_INT(length, strlen(mangled));
  if (strcmp(mangled, "$s4main5StallV3runyyF") != 0) return NULL;
  char *result = malloc(32);
  CHECK(result != NULL);
  snprintf(result, 32, "main.Stall.run() -> ()");
  return result;
}

static void check_names(const lagscope__macho_image *img, const oracle *o, uintptr_t slide) {
  lagscope__macho_demanglers d = {__cxa_demangle, fake_swift_demangle};
  const char *name = NULL;
  char buf[128], tiny[8];
  CHECK(lagscope__macho_image_lookup(img, address_of(o, "__ZN6widget4drawEi") + slide + 2, &name,
                                     NULL) == 0);
  CHECK(strcmp(name, "_ZN6widget4drawEi") == 0);
  CHECK(strcmp(lagscope__macho_demangle(&d, name, buf, sizeof(buf)), "widget::draw(int)") == 0);
  CHECK(strcmp(lagscope__macho_demangle(&d, name, tiny, sizeof(tiny)), "widget:") == 0);
  CHECK(lagscope__macho_demangle(NULL, name, buf, sizeof(buf)) == name);
  CHECK(lagscope__macho_image_lookup(img, address_of(o, "_$s4main5StallV3runyyF") + slide, &name,
                                     NULL) == 0);
  CHECK(strcmp(name, "$s4main5StallV3runyyF") == 0);
  CHECK(strcmp(lagscope__macho_demangle(&d, name, buf, sizeof(buf)), "main.Stall.run() -> ()") == 0);
  CHECK_EQ_INT(swift_calls, 1);
  CHECK(lagscope__macho_image_lookup(img, address_of(o, "_f1") + slide, &name, NULL) == 0);
  CHECK(lagscope__macho_demangle(&d, name, buf, sizeof(buf)) == name); /* C: untouched */
  CHECK(lagscope__macho_image_lookup(img, address_of(o, "_twin_local") + slide, &name, NULL) == 0);
  CHECK(strcmp(name, "twin_y") == 0); /* external before local, then the smallest */
  CHECK_EQ_INT(swift_calls, 1);
}

static void check_identity(const lagscope__macho_image *img, const oracle *o,
                           const macho_loaded *m, const char *path) {
  CHECK_MSG(strcmp(lagscope__macho_image_uuid_string(img), o->uuid) == 0, "uuid %s, not %s",
            lagscope__macho_image_uuid_string(img), o->uuid);
  const uint8_t *uuid = lagscope__macho_image_uuid(img);
  CHECK(uuid != NULL);
  char hex[3];
  snprintf(hex, sizeof(hex), "%02X", uuid[15]);
  CHECK(strcmp(hex, o->uuid + strlen(o->uuid) - 2) == 0);
  CHECK(lagscope__macho_image_load_address(img) == (uintptr_t)m->header);
  CHECK(lagscope__macho_image_slide(img) == m->slide);
  CHECK(lagscope__macho_image_text_vmaddr(img) == m->lowest_vmaddr);
  CHECK(strcmp(lagscope__macho_image_path(img), path) == 0);
  const char *arch = strstr(path, "aarch64") != NULL ? "arm64" : "x86_64";
  CHECK(strcmp(lagscope__macho_image_arch(img), arch) == 0);
}

int main(int argc, char **argv) {
  CHECK_MSG(argc == 2, "usage: test_macho_image FILE");
  const char *path = argv[1];
  char oracle_path[1024], why[256] = "";
  snprintf(oracle_path, sizeof(oracle_path), "%s.oracle", path);
  FILE *exists = fopen(oracle_path, "r");
  if (exists == NULL) {
    printf("skipped: %s was not built (the macho_fixtures test builds it; it needs zig and "
           "llvm-nm)\n", oracle_path);
    return TEST_SKIP_CODE;
  }
  fclose(exists);
  oracle o;
  read_oracle(oracle_path, &o);
  macho_loaded m;
  CHECK_MSG(macho_load(path, &m, why, sizeof(why)) == 0, "%s", why);

  uint64_t memory_before = lagscope__memory_in_use(), asked_before = lagscope__memory_asked();
  size_t sizes[2] = {m.mapped_size, LAGSCOPE__MACHO_SIZE_UNKNOWN};
  for (int i = 0; i < 2; i++) {
    lagscope__macho_image *img = NULL;
    int rc = lagscope__macho_image_index(m.header, sizes[i], m.slide, path, &img, why, sizeof(why));
    CHECK_MSG(rc == 0, "index: %s", why);
    check_identity(img, &o, &m, path);
    size_t functions = check_all(img, &o, m.slide);
    CHECK_EQ_INT(lagscope__macho_image_symbol_count(img), functions);
    if (i == 0) check_names(img, &o, m.slide);
    CHECK(lagscope__memory_asked() - asked_before == lagscope__macho_image_memory(img));
    printf("%s: %zu functions, uuid %s, %zu bytes of index: every one and 20000 random "
           "addresses agree with llvm-nm\n", path, functions,
           lagscope__macho_image_uuid_string(img), lagscope__macho_image_memory(img));
    lagscope__macho_image_free(img);
  }
  CHECK_EQ_INT(lagscope__memory_in_use(), memory_before);
  macho_unload(&m);
  free(o.symbols);
  return 0;
}
