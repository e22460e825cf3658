/* The HUD inside a Vulkan program's own frame (see vk_layer.h): blended over the presented
 * swapchain image just before the real present, as MangoHud draws into it.
 *
 * The HUD image (cairo's premultiplied ARGB32) goes into a host-visible buffer of the layer's,
 * and a command buffer of the layer's draws it over the image's corner (vk_blend.c: a render
 * pass that keeps the image, a fragment shader that reads the buffer, alpha blending), so the
 * program's pixels show through the HUD's translucent parts. That command buffer is submitted
 * on the present's queue, waiting on the semaphores the present would have waited on, and
 * signals a semaphore of the layer's that the real present waits on instead. Each swapchain
 * image has its own buffer, command buffer, fence and semaphore, so a draw never overwrites one
 * still in flight. Surfaces whose images cannot be a colour attachment get no HUD. */
#include "vk_layer.h"

#include "lagscope.h"

#include <stdint.h>
#include <string.h>

#define MAX_SWAPCHAINS 32
#define MAX_IMAGES LAGSCOPE__VK_MAX_IMAGES

typedef struct hud_target {
  VkCommandBuffer commands;
  VkFence fence;
  VkSemaphore done;
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped;
  VkDeviceSize size;
  int pending; /* a draw was submitted with fence */
} hud_target;

typedef struct hud_swapchain {
  lagscope__vk_device *device; /* NULL: a free slot */
  VkSwapchainKHR handle;
  VkFormat format;
  VkExtent2D extent;
  int failed;
  uint32_t count, family;
  VkImage images[MAX_IMAGES];
  hud_target targets[MAX_IMAGES];
  VkCommandPool pool;
  lagscope__vk_blend blend; /* made with the swapchain */
} hud_swapchain;

static hud_swapchain swapchains[MAX_SWAPCHAINS];

/* ---- swapchains ---------------------------------------------------------------------------- */

void lagscope__vk_hud_swapchain_usage(const lagscope__vk_device *d,
                                      const VkSwapchainCreateInfoKHR *info,
                                      VkSwapchainCreateInfoKHR *out) {
  *out = *info;
  VkSurfaceCapabilitiesKHR caps;
  if (d->surface_capabilities == NULL ||
      d->surface_capabilities(d->physical, info->surface, &caps) != VK_SUCCESS)
    return;
  if (caps.supportedUsageFlags & VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT)
    out->imageUsage |= VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
}

void lagscope__vk_hud_swapchain_made(lagscope__vk_device *d, VkSwapchainKHR swapchain,
                                     const VkSwapchainCreateInfoKHR *info) {
  if (!(info->imageUsage & VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT) || d->GetSwapchainImagesKHR == NULL)
    return;
  for (int i = 0; i < MAX_SWAPCHAINS; i++) {
    hud_swapchain *s = &swapchains[i];
    if (s->device != NULL) continue;
    memset(s, 0, sizeof(*s));
    s->count = MAX_IMAGES;
    VkResult rc = d->GetSwapchainImagesKHR(d->handle, swapchain, &s->count, s->images);
    if (rc != VK_SUCCESS && rc != VK_INCOMPLETE) return;
    s->handle = swapchain;
    s->format = info->imageFormat;
    s->extent = info->imageExtent;
    s->family = UINT32_MAX;
    /* Made now, in the program's own vkCreateSwapchainKHR, not at the first present: a
     * driver compiles the pipeline's shaders here, and made at a present it was a hang of the
     * watched thread in one loaded run on lavapipe. */
    if (lagscope__vk_blend_make(d, &s->blend, s->format, s->extent, s->images, s->count) != 0)
      return;
    s->device = d;
    return;
  }
}

static void free_target(lagscope__vk_device *d, hud_target *t) {
  if (t->pending && t->fence != VK_NULL_HANDLE)
    d->WaitForFences(d->handle, 1, &t->fence, VK_TRUE, UINT64_MAX);
  if (t->fence != VK_NULL_HANDLE) d->DestroyFence(d->handle, t->fence, NULL);
  if (t->done != VK_NULL_HANDLE) d->DestroySemaphore(d->handle, t->done, NULL);
  if (t->buffer != VK_NULL_HANDLE) d->DestroyBuffer(d->handle, t->buffer, NULL);
  if (t->memory != VK_NULL_HANDLE) d->FreeMemory(d->handle, t->memory, NULL); /* unmaps */
  memset(t, 0, sizeof(*t));
}

static void free_swapchain(hud_swapchain *s) {
  lagscope__vk_device *d = s->device;
  for (uint32_t i = 0; i < MAX_IMAGES; i++) free_target(d, &s->targets[i]);
  lagscope__vk_blend_free(d, &s->blend);
  if (s->pool != VK_NULL_HANDLE) d->DestroyCommandPool(d->handle, s->pool, NULL); /* frees them */
  memset(s, 0, sizeof(*s));
}

void lagscope__vk_hud_swapchain_gone(lagscope__vk_device *d, VkSwapchainKHR swapchain) {
  for (int i = 0; i < MAX_SWAPCHAINS; i++)
    if (swapchains[i].device == d && swapchains[i].handle == swapchain) free_swapchain(&swapchains[i]);
}

void lagscope__vk_hud_device_gone(lagscope__vk_device *d) {
  for (int i = 0; i < MAX_SWAPCHAINS; i++)
    if (swapchains[i].device == d) free_swapchain(&swapchains[i]);
}

/* ---- the objects a draw needs, made once per image --------------------------------------- */

static uint32_t host_memory_type(const lagscope__vk_device *d, uint32_t allowed) {
  VkPhysicalDeviceMemoryProperties props;
  if (d->memory_properties == NULL) return UINT32_MAX;
  d->memory_properties(d->physical, &props);
  VkMemoryPropertyFlags want =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < props.memoryTypeCount; i++)
    if ((allowed & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) return i;
  return UINT32_MAX;
}

/* A host-visible buffer of size bytes, mapped. 0, or -1. */
static int make_buffer(lagscope__vk_device *d, hud_target *t, VkDeviceSize size) {
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = size,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  if (d->CreateBuffer(d->handle, &info, NULL, &t->buffer) != VK_SUCCESS) return -1;
  VkMemoryRequirements needs;
  d->GetBufferMemoryRequirements(d->handle, t->buffer, &needs);
  VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = needs.size,
                                .memoryTypeIndex = host_memory_type(d, needs.memoryTypeBits)};
  if (alloc.memoryTypeIndex == UINT32_MAX ||
      d->AllocateMemory(d->handle, &alloc, NULL, &t->memory) != VK_SUCCESS ||
      d->BindBufferMemory(d->handle, t->buffer, t->memory, 0) != VK_SUCCESS ||
      d->MapMemory(d->handle, t->memory, 0, VK_WHOLE_SIZE, 0, &t->mapped) != VK_SUCCESS)
    return -1;
  t->size = size;
  return 0;
}

/* The command pool on family (one per swapchain), the target's command buffer, fence and
 * semaphore, and a buffer of at least size bytes, the blend's set pointing at it. 0, or -1. */
static int ready_target(hud_swapchain *s, uint32_t index, uint32_t family, VkDeviceSize size) {
  lagscope__vk_device *d = s->device;
  hud_target *t = &s->targets[index];
  if (s->pool == VK_NULL_HANDLE) {
    VkCommandPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                    .queueFamilyIndex = family};
    if (d->CreateCommandPool(d->handle, &info, NULL, &s->pool) != VK_SUCCESS) return -1;
    s->family = family;
  }
  if (s->family != family) return -1; /* presented on another family: one pool only */
  if (t->commands == VK_NULL_HANDLE) {
    VkCommandBufferAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                        .commandPool = s->pool,
                                        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                        .commandBufferCount = 1};
    if (d->AllocateCommandBuffers(d->handle, &info, &t->commands) != VK_SUCCESS) return -1;
    /* A dispatchable object made below the loader: it gets the loader's table. */
    if (d->set_loader_data != NULL)
      d->set_loader_data(d->handle, t->commands);
    else
      *(void **)t->commands = lagscope__vk_key(d->handle);
    VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkSemaphoreCreateInfo semaphore = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    if (d->CreateFence(d->handle, &fence, NULL, &t->fence) != VK_SUCCESS ||
        d->CreateSemaphore(d->handle, &semaphore, NULL, &t->done) != VK_SUCCESS)
      return -1;
  }
  if (t->size < size) {
    if (t->buffer != VK_NULL_HANDLE) d->DestroyBuffer(d->handle, t->buffer, NULL);
    if (t->memory != VK_NULL_HANDLE) d->FreeMemory(d->handle, t->memory, NULL);
    t->buffer = VK_NULL_HANDLE, t->memory = VK_NULL_HANDLE, t->mapped = NULL, t->size = 0;
    if (make_buffer(d, t, size) != 0) return -1;
    lagscope__vk_blend_buffer(d, &s->blend, index, t->buffer);
  }
  return 0;
}

/* ---- the draw ------------------------------------------------------------------------------ */

/* Where the image goes: its pixel size, 8 points from its corner, cut to the extent. */
static int place(const lagscope_hud_image *image, VkExtent2D extent, VkOffset2D *at,
                 VkExtent2D *size) {
  int margin = (int)(8 * image->scale);
  int right = image->corner == LAGSCOPE_HUD_TOP_RIGHT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int bottom = image->corner == LAGSCOPE_HUD_BOTTOM_LEFT || image->corner == LAGSCOPE_HUD_BOTTOM_RIGHT;
  int w = image->width, h = image->height;
  if (w > (int)extent.width - margin) w = (int)extent.width - margin;
  if (h > (int)extent.height - margin) h = (int)extent.height - margin;
  if (w <= 0 || h <= 0) return 0;
  at->x = right ? (int)extent.width - margin - w : margin;
  at->y = bottom ? (int)extent.height - margin - h : margin;
  size->width = (uint32_t)w, size->height = (uint32_t)h;
  return 1;
}

/* The image's top-left size->width x size->height pixels into the buffer, rows packed. */
static void fill(const lagscope_hud_image *image, VkExtent2D size, void *out) {
  char *to = out;
  for (uint32_t y = 0; y < size.height; y++, to += size.width * 4u)
    memcpy(to, (const char *)image->pixels + (size_t)y * image->stride, size.width * 4u);
}

static int record(const hud_swapchain *s, hud_target *t, uint32_t index, VkOffset2D at,
                  VkExtent2D size) {
  const lagscope__vk_device *d = s->device;
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
  if (d->ResetCommandBuffer(t->commands, 0) != VK_SUCCESS ||
      d->BeginCommandBuffer(t->commands, &begin) != VK_SUCCESS)
    return -1;
  lagscope__vk_blend_record(d, &s->blend, t->commands, index, at, size);
  return d->EndCommandBuffer(t->commands) == VK_SUCCESS ? 0 : -1;
}

static int submit(const lagscope__vk_device *d, hud_target *t, VkQueue queue,
                  const VkPresentInfoKHR *info) {
  VkPipelineStageFlags stages[16];
  uint32_t waits = info->waitSemaphoreCount;
  if (waits > 16) return -1;
  for (uint32_t i = 0; i < waits; i++) stages[i] = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  VkSubmitInfo s = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                    .waitSemaphoreCount = waits,
                    .pWaitSemaphores = info->pWaitSemaphores,
                    .pWaitDstStageMask = stages,
                    .commandBufferCount = 1,
                    .pCommandBuffers = &t->commands,
                    .signalSemaphoreCount = 1,
                    .pSignalSemaphores = &t->done};
  if (d->QueueSubmit(queue, 1, &s, t->fence) != VK_SUCCESS) return -1;
  t->pending = 1;
  return 0;
}

static hud_swapchain *find(const lagscope__vk_device *d, VkSwapchainKHR handle) {
  for (int i = 0; i < MAX_SWAPCHAINS; i++)
    if (swapchains[i].device == d && swapchains[i].handle == handle && !swapchains[i].failed)
      return &swapchains[i];
  return NULL;
}

/* The HUD drawn over image index of s; 1 when submitted. */
static int draw_into(hud_swapchain *s, uint32_t index, VkQueue queue,
                     const VkPresentInfoKHR *info, const lagscope_hud_image *image) {
  lagscope__vk_device *d = s->device;
  uint32_t family = lagscope__vk_queue_family(d, queue);
  VkOffset2D at;
  VkExtent2D size;
  if (index >= s->count || index >= MAX_IMAGES || family == UINT32_MAX ||
      !place(image, s->extent, &at, &size))
    return 0;
  hud_target *t = &s->targets[index];
  /* The image was acquired again, so its last present, and the draw before it, are done. */
  if (t->pending && d->WaitForFences(d->handle, 1, &t->fence, VK_TRUE, UINT64_MAX) != VK_SUCCESS)
    return 0;
  if (t->pending) d->ResetFences(d->handle, 1, &t->fence);
  t->pending = 0;
  if (ready_target(s, index, family, (VkDeviceSize)size.width * size.height * 4u) != 0) {
    s->failed = 1; /* never again on this swapchain */
    return 0;
  }
  fill(image, size, t->mapped);
  if (record(s, t, index, at, size) != 0 || submit(d, t, queue, info) != 0) {
    s->failed = 1;
    return 0;
  }
  return 1;
}

int lagscope__vk_hud_draw(lagscope__vk_device *d, VkQueue queue, const VkPresentInfoKHR *info,
                          VkSemaphore *wait) {
  for (uint32_t i = 0; i < info->swapchainCount; i++) {
    hud_swapchain *s = find(d, info->pSwapchains[i]);
    if (s == NULL) continue;
    lagscope_hud_image image;
    if (lagscope_hud_take(&image) != LAGSCOPE_OK || image.pixels == NULL || image.width <= 0 ||
        image.height <= 0 || image.stride < image.width * 4)
      return 0;
    if (!draw_into(s, info->pImageIndices[i], queue, info, &image)) return 0;
    *wait = s->targets[info->pImageIndices[i]].done;
    return 1;
  }
  return 0;
}
