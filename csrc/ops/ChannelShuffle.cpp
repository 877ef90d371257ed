// channel_shuffle / native_channel_shuffle (nn.ChannelShuffle, ShuffleNet): the channels of
// groups g, viewed as [N, g, C / g, ...], transposed to [N, C / g, g, ...]. The op is a
// permutation, so it is this view and one launch of the native strided copy (Copy.cpp), into the
// input's suggested memory format as on the CPU; any dtype. The CPU's checks and messages.
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <vector>

namespace torch_ocl {
namespace {

at::Tensor channel_shuffle_impl(const at::Tensor& self, int64_t groups) {
  TORCH_CHECK(self.dim() > 2, "channel_shuffle expects input with > 2 dims, but got input with ",
              "sizes ", self.sizes());
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive.",
              " Value of groups:", groups);
  const int64_t c = self.size(1);
  TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c,
              " channels and ", groups, " groups.");
  c10::DeviceGuard guard(self.device());
  at::Tensor out =
      at::empty(self.sizes(), self.options().memory_format(self.suggest_memory_format()));
  if (self.numel() == 0) return out;
  // out viewed as [N, C / g, g, ...] receives self viewed as [N, g, C / g, ...] transposed
  std::vector<int64_t> split(self.sizes().begin(), self.sizes().end());
  split[1] = groups;
  split.insert(split.begin() + 2, c / groups);
  std::vector<int64_t> out_split(self.sizes().begin(), self.sizes().end());
  out_split[1] = c / groups;
  out_split.insert(out_split.begin() + 2, groups);
  // views of arbitrary strides: split dim 1 of each by its own strides
  auto split_view = [](const at::Tensor& t, int64_t outer, int64_t inner) {
    std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
    std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
    const int64_t s1 = strides[1];
    sizes[1] = outer;
    strides[1] = s1 * inner;
    sizes.insert(sizes.begin() + 2, inner);
    strides.insert(strides.begin() + 2, s1);
    return t.as_strided(sizes, strides, t.storage_offset());
  };
  const at::Tensor src = split_view(self, groups, c / groups).transpose(1, 2);
  split_view(out, c / groups, groups).copy_(src);
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("channel_shuffle", channel_shuffle_impl);
  m.impl("native_channel_shuffle", channel_shuffle_impl);
}

}  // namespace torch_ocl
