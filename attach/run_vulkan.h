/* lagscope-run's side of the preload's Vulkan layer (attach/vk_layer.h): the layer named to the
 * Vulkan loader in the program's environment only, as MangoHud's runner does. */
#ifndef LAGSCOPE_ATTACH_RUN_VULKAN_H
#define LAGSCOPE_ATTACH_RUN_VULKAN_H

/* The layer's name, as its manifest and VK_INSTANCE_LAYERS say it. */
#define LAGSCOPE_RUN_VULKAN_LAYER_NAME "VK_LAYER_LAGSCOPE_hud"

/* Writes the layer's manifest (its library: preload, an absolute path) into lagscope-run's
 * private folder (folder, open as dir_fd: a new file, 0600) and names the folder and the layer
 * to the loader in this process's environment, which the program inherits: VK_ADD_LAYER_PATH
 * and VK_INSTANCE_LAYERS, before what they held. Does nothing in a build whose preload has no
 * layer (no Vulkan headers). 0, or -1 with errno. A */
int lagscope__run_vulkan_prepare(int dir_fd, const char *folder, const char *preload);

/* Removes the manifest from the private folder. F */
void lagscope__run_vulkan_remove(int dir_fd);

#endif
