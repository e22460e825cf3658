/* lagscope-run names the preload's Vulkan layer to the loader (see run_vulkan.h).
 *
 * The layer is explicit: Debian 12's loader (1.3.239) reads no folder of implicit layers from
 * the environment, only VK_LAYER_PATH and VK_ADD_LAYER_PATH for explicit ones, which
 * VK_INSTANCE_LAYERS then enables in every instance the program makes. VK_ADD_LAYER_PATH keeps
 * the folders the user's VK_LAYER_PATH names. */
#define _GNU_SOURCE
#include "run_vulkan.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MANIFEST "lagscope-layer.json"

/* The manifest's text (cJSON escapes the path), or NULL. A */
static char *manifest_text(const char *preload) {
  cJSON *root = cJSON_CreateObject(), *layer = cJSON_CreateObject();
  char *text = NULL;
  if (root != NULL && layer != NULL) {
    cJSON_AddStringToObject(root, "file_format_version", "1.1.2");
    cJSON_AddStringToObject(layer, "name", LAGSCOPE_RUN_VULKAN_LAYER_NAME);
    cJSON_AddStringToObject(layer, "type", "GLOBAL");
    cJSON_AddStringToObject(layer, "library_path", preload);
    cJSON_AddStringToObject(layer, "api_version", "1.3.0");
    cJSON_AddStringToObject(layer, "implementation_version", "1");
    cJSON_AddStringToObject(layer, "description",
                            "lagscope-run: frames, the hang watch and the HUD in Vulkan programs");
    cJSON_AddItemToObject(root, "layer", layer);
    layer = NULL;
    text = cJSON_Print(root);
  }
  cJSON_Delete(layer);
  cJSON_Delete(root);
  return text;
}

/* name = value, then name's old value after a ':' when it had one. */
static int prepend(const char *name, const char *value) {
  const char *before = getenv(name);
  char *list = NULL;
  if (asprintf(&list, "%s%s%s", value, before && before[0] ? ":" : "",
               before && before[0] ? before : "") < 0)
    return -1;
  int rc = setenv(name, list, 1);
  free(list);
  return rc;
}

/* 1 when the preload has the layer (CMake: Vulkan's headers were found). */
#ifdef LAGSCOPE_RUN_VULKAN_LAYER
static const int layer_built = 1;
#else
static const int layer_built = 0;
#endif

int lagscope__run_vulkan_prepare(int dir_fd, const char *folder, const char *preload) {
  if (!layer_built) return 0;
  char *text = manifest_text(preload);
  if (text == NULL) return errno = ENOMEM, -1;
  int fd = openat(dir_fd, MANIFEST, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  size_t length = strlen(text);
  int ok = fd >= 0 && write(fd, text, length) == (ssize_t)length;
  int saved = errno;
  if (fd >= 0) close(fd);
  free(text);
  if (!ok) return errno = saved, -1;
  return prepend("VK_ADD_LAYER_PATH", folder) != 0 ||
                 prepend("VK_INSTANCE_LAYERS", LAGSCOPE_RUN_VULKAN_LAYER_NAME) != 0
             ? -1
             : 0;
}

void lagscope__run_vulkan_remove(int dir_fd) { unlinkat(dir_fd, MANIFEST, 0); }
