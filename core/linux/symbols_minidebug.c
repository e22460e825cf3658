/*
 * MiniDebugInfo for the Linux symbol index (symbols.h): the .gnu_debugdata section Fedora's
 * find-debuginfo adds to the stripped objects it ships, an xz-compressed ELF whose .symtab holds
 * the function symbols that stripping took away and .dynsym lacks (static functions above all).
 * Read once per object, when its index is built and no .symtab of its own or of a debug file was
 * found (symbols_elf.c); its symbols go into the index, which copies their names, and the
 * decompressed ELF is let go right after.
 *
 * liblzma is loaded (dlopen of liblzma.so.5) at the first object that has the section, not
 * linked, for libdw's reason (symbols_dwarf.c): Debian's objects carry no MiniDebugInfo, and an
 * app would map liblzma's pages for nothing. Built without lzma.h (CMake found no LibLZMA), the
 * section is never read: the object's static functions are module + offset.
 *
 * Bounded against a hostile or corrupt section: its compressed size, what it decompresses to and
 * the decoder's memory (a memlimit). A first pass decodes into a small scratch buffer only to
 * count the bytes, so a bomb costs the scratch and the decoder's dictionary, never its size, and
 * a real section is then given exactly its size. Each pass stops at the bound, so time is
 * bounded too. All memory, the decoder's included, is lagscope's counted heap.
 */
#define _GNU_SOURCE
#include "symbols.h"

#include <gelf.h>
#include <string.h>

#if LAGSCOPE_HAVE_LZMA

#include <lzma.h>

/* The decoder's own memory (mostly its dictionary): xz's presets up to -7 fit (find-debuginfo
 * uses xz's default, -6, 9 MiB); a larger dictionary is refused rather than allocated. */
#define DECODER_MEMORY (32u << 20)
#define SCRATCH_BYTES (16u << 10) /* on the monitor's stack (1 MiB) */

/* ---- liblzma, loaded when needed ------------------------------------------------------------- */

/* liblzma's functions that lagscope calls, from liblzma.so.5 (its soname since 5.0) loaded at
 * the first object with a .gnu_debugdata section (lagscope__lazy_library_load: RTLD_LOCAL,
 * never unloaded). The loader's lock is taken then, once. Tried once: when it cannot be loaded,
 * no MiniDebugInfo, nothing else lost. */
#define LZMA_CALLS(XX) XX(lzma_stream_decoder) XX(lzma_code) XX(lzma_end)

typedef LAGSCOPE__LAZY_TABLE(LZMA_CALLS) lzma_calls;
static lzma_calls liblzma;
static const char *const liblzma_names[] = {LZMA_CALLS(LAGSCOPE__LAZY_NAME)};
static lagscope__lazy_library liblzma_library =
    LAGSCOPE__LAZY_LIBRARY("liblzma.so.5", liblzma_names, liblzma.found, 0);

/* The decoder allocates through lagscope's counted heap, so its memory shows in the metrics
 * and leaves the process when freed. A (and the heap's lock). */
static void *decoder_hold(void *opaque, size_t count, size_t size) {
  (void)opaque;
  return lagscope__alloc_array(count, size);
}

static void decoder_let_go(void *opaque, void *p) {
  (void)opaque;
  lagscope__dealloc(p);
}

static const lzma_allocator decoder_allocator = {decoder_hold, decoder_let_go, NULL};

/* ---- decoding -------------------------------------------------------------------------------- */

/* Decodes the whole stream: into out (of exactly out_size bytes), or with out NULL into a
 * scratch buffer, only counting. *produced is the bytes it decodes to. 0; ELIMIT when that is
 * more than max (or out_size) or the decoder would need more than its memory; EPARSE when it
 * is no complete xz stream; ENOMEM. A */
static int decode(const lzma_calls *xz, const void *in, size_t in_size, unsigned char *out,
                  size_t out_size, size_t max, size_t *produced) {
  unsigned char scratch[SCRATCH_BYTES];
  lzma_stream strm = LZMA_STREAM_INIT;
  strm.allocator = &decoder_allocator;
  lzma_ret ret = xz->call.lzma_stream_decoder(&strm, DECODER_MEMORY, 0);
  if (ret != LZMA_OK) return ret == LZMA_MEM_ERROR ? LAGSCOPE_ENOMEM : LAGSCOPE_EPARSE;
  strm.next_in = in;
  strm.avail_in = in_size;
  size_t total = 0;
  int rc = 0;
  for (;;) {
    strm.next_out = out != NULL ? out + total : scratch;
    strm.avail_out = out != NULL ? out_size - total : sizeof(scratch);
    /* LZMA_FINISH: all the input is here, so a truncated stream ends in LZMA_BUF_ERROR rather
     * than a wait for more. Each call makes progress or fails. */
    ret = xz->call.lzma_code(&strm, LZMA_FINISH);
    total += (size_t)(strm.next_out - (out != NULL ? out + total : scratch));
    if (total > max) rc = LAGSCOPE_ELIMIT;
    else if (ret == LZMA_STREAM_END) break;
    else if (ret == LZMA_MEMLIMIT_ERROR) rc = LAGSCOPE_ELIMIT;
    else if (ret == LZMA_MEM_ERROR) rc = LAGSCOPE_ENOMEM;
    else if (ret == LZMA_BUF_ERROR && out != NULL && total == out_size) rc = LAGSCOPE_ELIMIT;
    else if (ret != LZMA_OK) rc = LAGSCOPE_EPARSE;
    if (rc != 0) break;
  }
  xz->call.lzma_end(&strm);
  *produced = total;
  return rc;
}

/* Two passes: the size with a scratch buffer, then into exactly that (symbols.h). A, L */
int lagscope__elf_unxz(const void *in, size_t in_size, size_t max, unsigned char **out,
                       size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  if (in_size > LAGSCOPE__MINIDEBUG_MAX_PACKED) return LAGSCOPE_ELIMIT;
  if (lagscope__lazy_library_load(&liblzma_library, NULL, 0) != LAGSCOPE_OK) return LAGSCOPE_ENOENT;
  const lzma_calls *xz = &liblzma;
  size_t size = 0, again = 0;
  int rc = decode(xz, in, in_size, NULL, 0, max, &size);
  if (rc != 0) return rc;
  if (size == 0) return LAGSCOPE_EPARSE;
  unsigned char *bytes = lagscope__alloc(size);
  if (bytes == NULL) return LAGSCOPE_ENOMEM;
  rc = decode(xz, in, in_size, bytes, size, size, &again);
  if (rc != 0 || again != size) {
    lagscope__dealloc(bytes);
    return rc != 0 ? rc : LAGSCOPE_EPARSE;
  }
  *out = bytes;
  *out_size = size;
  return 0;
}

#else /* without lzma.h: MiniDebugInfo is not read */

int lagscope__elf_unxz(const void *in, size_t in_size, size_t max, unsigned char **out,
                       size_t *out_size) {
  (void)in, (void)in_size, (void)max;
  *out = NULL;
  *out_size = 0;
  return LAGSCOPE_ENOENT;
}

#endif

/* ---- the section and the ELF inside it ------------------------------------------------------- */

/* The .gnu_debugdata section's bytes in the object's file, or NULL. A: libelf's, at its first
 * read of a section */
static Elf_Data *debugdata_section(Elf *elf) {
  size_t names;
  if (elf_getshdrstrndx(elf, &names) != 0) return NULL;
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn != NULL; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    const char *name = gelf_getshdr(scn, &sh) != NULL ? elf_strptr(elf, names, sh.sh_name) : NULL;
    if (name == NULL || strcmp(name, ".gnu_debugdata") != 0 || sh.sh_type != SHT_PROGBITS) continue;
    Elf_Data *data = elf_rawdata(scn, NULL);
    return data != NULL && data->d_buf != NULL && data->d_size > 0 ? data : NULL;
  }
  return NULL;
}

int lagscope__elf_open_minidebug(Elf *elf, lagscope__elf_minidebug *out) {
  out->bytes = NULL;
  out->size = 0;
  out->elf = NULL;
  Elf_Data *data = debugdata_section(elf);
  if (data == NULL) return LAGSCOPE_ENOENT;
  int rc = lagscope__elf_unxz(data->d_buf, data->d_size, LAGSCOPE__MINIDEBUG_MAX_BYTES,
                              &out->bytes, &out->size);
  if (rc != 0) return rc;
  out->elf = elf_memory((char *)out->bytes, out->size);
  if (out->elf != NULL && elf_kind(out->elf) == ELF_K_ELF) return 0;
  lagscope__elf_close_minidebug(out);
  return LAGSCOPE_EPARSE;
}

void lagscope__elf_close_minidebug(lagscope__elf_minidebug *m) {
  if (m->elf != NULL) elf_end(m->elf);
  lagscope__dealloc(m->bytes);
  m->elf = NULL;
  m->bytes = NULL;
  m->size = 0;
}
