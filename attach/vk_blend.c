/* The HUD blended over a Vulkan frame (see vk_layer.h): a render pass of the layer's that
 * loads the presented image as it is, and one triangle whose viewport is the HUD's place; its
 * fragment shader (vk_hud.frag, SPIR-V in vk_hud_spirv.h) reads the HUD's pixel from the
 * buffer vk_hud.c filled, and the pipeline blends it over the program's (premultiplied alpha:
 * ONE, ONE_MINUS_SRC_ALPHA). The objects are a swapchain's: its format's render pass and
 * pipeline, a view and a framebuffer per image, a descriptor set per image's buffer. */
#include "vk_layer.h"

#include "vk_hud_spirv.h"

#include <string.h>

/* The fragment shader's push constants (vk_hud.frag's Place). */
typedef struct place_constants {
  int32_t at_x, at_y, width, srgb;
} place_constants;

static int is_srgb(VkFormat format) {
  return format == VK_FORMAT_B8G8R8A8_SRGB || format == VK_FORMAT_R8G8B8A8_SRGB ||
         format == VK_FORMAT_A8B8G8R8_SRGB_PACK32;
}

/* The image is presented before and after: loaded as it is, stored, left to present. */
static int make_pass(const lagscope__vk_device *d, lagscope__vk_blend *b, VkFormat format) {
  VkAttachmentDescription image = {.format = format,
                                   .samples = VK_SAMPLE_COUNT_1_BIT,
                                   .loadOp = VK_ATTACHMENT_LOAD_OP_LOAD,
                                   .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
                                   .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                   .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                   .initialLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
                                   .finalLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR};
  VkAttachmentReference color = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription subpass = {.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
                                  .colorAttachmentCount = 1,
                                  .pColorAttachments = &color};
  /* After the program's writes to the image (which the present's semaphores covered). */
  VkSubpassDependency after = {.srcSubpass = VK_SUBPASS_EXTERNAL,
                               .dstSubpass = 0,
                               .srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                               .dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                               .dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_READ_BIT |
                                                VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT};
  VkRenderPassCreateInfo info = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
                                 .attachmentCount = 1,
                                 .pAttachments = &image,
                                 .subpassCount = 1,
                                 .pSubpasses = &subpass,
                                 .dependencyCount = 1,
                                 .pDependencies = &after};
  return d->CreateRenderPass(d->handle, &info, NULL, &b->pass) == VK_SUCCESS ? 0 : -1;
}

/* One storage buffer for the fragment shader, and its push constants. */
static int make_layout(const lagscope__vk_device *d, lagscope__vk_blend *b) {
  VkDescriptorSetLayoutBinding buffer = {.binding = 0,
                                         .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                         .descriptorCount = 1,
                                         .stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT};
  VkDescriptorSetLayoutCreateInfo set = {.sType =
                                             VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = 1,
                                         .pBindings = &buffer};
  if (d->CreateDescriptorSetLayout(d->handle, &set, NULL, &b->set_layout) != VK_SUCCESS) return -1;
  VkPushConstantRange range = {VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(place_constants)};
  VkPipelineLayoutCreateInfo info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &b->set_layout,
                                     .pushConstantRangeCount = 1,
                                     .pPushConstantRanges = &range};
  return d->CreatePipelineLayout(d->handle, &info, NULL, &b->layout) == VK_SUCCESS ? 0 : -1;
}

static VkShaderModule make_module(const lagscope__vk_device *d, const uint32_t *code, size_t size) {
  VkShaderModuleCreateInfo info = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = size,
                                   .pCode = code};
  VkShaderModule module = VK_NULL_HANDLE;
  d->CreateShaderModule(d->handle, &info, NULL, &module);
  return module;
}

/* The states of a pipeline that draws one triangle, blended, viewport and scissor given at
 * each draw; into pipeline with the stages. */
static int make_pipeline(const lagscope__vk_device *d, lagscope__vk_blend *b,
                         const VkPipelineShaderStageCreateInfo stages[2]) {
  VkPipelineVertexInputStateCreateInfo input = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  VkPipelineInputAssemblyStateCreateInfo assembly = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
      .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST};
  VkPipelineViewportStateCreateInfo viewport = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
      .viewportCount = 1,
      .scissorCount = 1};
  VkPipelineRasterizationStateCreateInfo raster = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
      .polygonMode = VK_POLYGON_MODE_FILL,
      .cullMode = VK_CULL_MODE_NONE,
      .lineWidth = 1};
  VkPipelineMultisampleStateCreateInfo samples = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
      .rasterizationSamples = VK_SAMPLE_COUNT_1_BIT};
  VkPipelineColorBlendAttachmentState over = {
      .blendEnable = VK_TRUE,
      .srcColorBlendFactor = VK_BLEND_FACTOR_ONE,
      .dstColorBlendFactor = VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA,
      .colorBlendOp = VK_BLEND_OP_ADD,
      .srcAlphaBlendFactor = VK_BLEND_FACTOR_ONE,
      .dstAlphaBlendFactor = VK_BLEND_FACTOR_ONE_MINUS_SRC_ALPHA,
      .alphaBlendOp = VK_BLEND_OP_ADD,
      .colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                        VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT};
  VkPipelineColorBlendStateCreateInfo blend = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
      .attachmentCount = 1,
      .pAttachments = &over};
  VkDynamicState dynamic_states[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dynamic = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO,
      .dynamicStateCount = 2,
      .pDynamicStates = dynamic_states};
  VkGraphicsPipelineCreateInfo info = {.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
                                       .stageCount = 2,
                                       .pStages = stages,
                                       .pVertexInputState = &input,
                                       .pInputAssemblyState = &assembly,
                                       .pViewportState = &viewport,
                                       .pRasterizationState = &raster,
                                       .pMultisampleState = &samples,
                                       .pColorBlendState = &blend,
                                       .pDynamicState = &dynamic,
                                       .layout = b->layout,
                                       .renderPass = b->pass};
  return d->CreateGraphicsPipelines(d->handle, VK_NULL_HANDLE, 1, &info, NULL, &b->pipeline) ==
                 VK_SUCCESS
             ? 0
             : -1;
}

static int make_shaders_and_pipeline(const lagscope__vk_device *d, lagscope__vk_blend *b) {
  VkShaderModule vert = make_module(d, lagscope__vk_hud_vert, sizeof(lagscope__vk_hud_vert));
  VkShaderModule frag = make_module(d, lagscope__vk_hud_frag, sizeof(lagscope__vk_hud_frag));
  VkPipelineShaderStageCreateInfo stages[2] = {
      {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
       .stage = VK_SHADER_STAGE_VERTEX_BIT,
       .module = vert,
       .pName = "main"},
      {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
       .stage = VK_SHADER_STAGE_FRAGMENT_BIT,
       .module = frag,
       .pName = "main"}};
  int rc = vert != VK_NULL_HANDLE && frag != VK_NULL_HANDLE ? make_pipeline(d, b, stages) : -1;
  /* A pipeline keeps what it needs of its modules. */
  if (vert != VK_NULL_HANDLE) d->DestroyShaderModule(d->handle, vert, NULL);
  if (frag != VK_NULL_HANDLE) d->DestroyShaderModule(d->handle, frag, NULL);
  return rc;
}

/* A view and a framebuffer per image, a descriptor set per image's buffer. */
static int make_targets(const lagscope__vk_device *d, lagscope__vk_blend *b, VkFormat format,
                        VkExtent2D extent, const VkImage *images, uint32_t count) {
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, count};
  VkDescriptorPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = count,
                                     .poolSizeCount = 1,
                                     .pPoolSizes = &size};
  if (d->CreateDescriptorPool(d->handle, &pool, NULL, &b->pool) != VK_SUCCESS) return -1;
  for (uint32_t i = 0; i < count; i++) {
    VkImageViewCreateInfo view = {.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
                                  .image = images[i],
                                  .viewType = VK_IMAGE_VIEW_TYPE_2D,
                                  .format = format,
                                  .subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1}};
    if (d->CreateImageView(d->handle, &view, NULL, &b->views[i]) != VK_SUCCESS) return -1;
    VkFramebufferCreateInfo frame = {.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
                                     .renderPass = b->pass,
                                     .attachmentCount = 1,
                                     .pAttachments = &b->views[i],
                                     .width = extent.width,
                                     .height = extent.height,
                                     .layers = 1};
    if (d->CreateFramebuffer(d->handle, &frame, NULL, &b->framebuffers[i]) != VK_SUCCESS) return -1;
    VkDescriptorSetAllocateInfo set = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                       .descriptorPool = b->pool,
                                       .descriptorSetCount = 1,
                                       .pSetLayouts = &b->set_layout};
    if (d->AllocateDescriptorSets(d->handle, &set, &b->sets[i]) != VK_SUCCESS) return -1;
  }
  b->count = count;
  return 0;
}

int lagscope__vk_blend_make(const lagscope__vk_device *d, lagscope__vk_blend *b, VkFormat format,
                            VkExtent2D extent, const VkImage *images, uint32_t count) {
  memset(b, 0, sizeof(*b));
  b->srgb = is_srgb(format);
  if (count > LAGSCOPE__VK_MAX_IMAGES || make_pass(d, b, format) != 0 ||
      make_layout(d, b) != 0 || make_shaders_and_pipeline(d, b) != 0 ||
      make_targets(d, b, format, extent, images, count) != 0) {
    lagscope__vk_blend_free(d, b);
    return -1;
  }
  b->made = 1;
  return 0;
}

void lagscope__vk_blend_free(const lagscope__vk_device *d, lagscope__vk_blend *b) {
  for (uint32_t i = 0; i < LAGSCOPE__VK_MAX_IMAGES; i++) {
    if (b->framebuffers[i] != VK_NULL_HANDLE) d->DestroyFramebuffer(d->handle, b->framebuffers[i], NULL);
    if (b->views[i] != VK_NULL_HANDLE) d->DestroyImageView(d->handle, b->views[i], NULL);
  }
  if (b->pool != VK_NULL_HANDLE) d->DestroyDescriptorPool(d->handle, b->pool, NULL); /* its sets */
  if (b->pipeline != VK_NULL_HANDLE) d->DestroyPipeline(d->handle, b->pipeline, NULL);
  if (b->layout != VK_NULL_HANDLE) d->DestroyPipelineLayout(d->handle, b->layout, NULL);
  if (b->set_layout != VK_NULL_HANDLE) d->DestroyDescriptorSetLayout(d->handle, b->set_layout, NULL);
  if (b->pass != VK_NULL_HANDLE) d->DestroyRenderPass(d->handle, b->pass, NULL);
  memset(b, 0, sizeof(*b));
}

void lagscope__vk_blend_buffer(const lagscope__vk_device *d, lagscope__vk_blend *b,
                               uint32_t index, VkBuffer buffer) {
  VkDescriptorBufferInfo info = {buffer, 0, VK_WHOLE_SIZE};
  VkWriteDescriptorSet write = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                .dstSet = b->sets[index],
                                .dstBinding = 0,
                                .descriptorCount = 1,
                                .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                .pBufferInfo = &info};
  d->UpdateDescriptorSets(d->handle, 1, &write, 0, NULL);
}

void lagscope__vk_blend_record(const lagscope__vk_device *d, const lagscope__vk_blend *b,
                               VkCommandBuffer c, uint32_t index, VkOffset2D at, VkExtent2D size) {
  VkRenderPassBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                                 .renderPass = b->pass,
                                 .framebuffer = b->framebuffers[index],
                                 .renderArea = {at, size}};
  d->CmdBeginRenderPass(c, &begin, VK_SUBPASS_CONTENTS_INLINE);
  d->CmdBindPipeline(c, VK_PIPELINE_BIND_POINT_GRAPHICS, b->pipeline);
  d->CmdBindDescriptorSets(c, VK_PIPELINE_BIND_POINT_GRAPHICS, b->layout, 0, 1, &b->sets[index],
                           0, NULL);
  place_constants place = {at.x, at.y, (int32_t)size.width, b->srgb};
  d->CmdPushConstants(c, b->layout, VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(place), &place);
  VkViewport viewport = {(float)at.x, (float)at.y, (float)size.width, (float)size.height, 0, 1};
  VkRect2D scissor = {at, size};
  d->CmdSetViewport(c, 0, 1, &viewport);
  d->CmdSetScissor(c, 0, 1, &scissor);
  d->CmdDraw(c, 3, 1, 0, 0);
  d->CmdEndRenderPass(c);
}
