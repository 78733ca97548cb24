#pragma once
// Signal layouts on the wire (loop contract v2): a kind's hal::SignalLayout as the
// hyloop.v2.ChannelLayout the coordinator sends in ConfigureRequest.layouts, and the check
// every service makes on the channels it sends or receives. Configure time only (allocates).

#include <google/protobuf/repeated_ptr_field.h>
#include <hyloop/v2/loop.pb.h>

#include <string_view>

#include "hyloop/hal/signal_layout.hpp"

namespace hyloop::transport {

using ChannelLayouts = google::protobuf::RepeatedPtrField<v2::ChannelLayout>;

/// Appends `layout` as channel `channel` to `out`.
void add_layout(std::string_view channel, const hal::SignalLayout& layout, ChannelLayouts& out);
/// Appends the two loop channels: "measurement" and "command".
void add_loop_layouts(const hal::SignalLayout& measurement, const hal::SignalLayout& command,
                      ChannelLayouts& out);
/// The layout of `channel` in `layouts`. @throws std::invalid_argument when the request has none.
[[nodiscard]] hal::SignalLayout find_layout(const ChannelLayouts& layouts,
                                            std::string_view channel);
/// Refuses a request whose layout of `channel` is not `expected` (or that has none).
/// @throws std::invalid_argument naming the channel and the first signal that differs.
void require_layout(const ChannelLayouts& layouts, std::string_view channel,
                    const hal::SignalLayout& expected);
/// require_layout of both loop channels: "measurement", then "command".
void require_loop_layouts(const ChannelLayouts& layouts, const hal::SignalLayout& measurement,
                          const hal::SignalLayout& command);
/// Empties `frame` and gives it `layout`'s number of values (0.0), once at configure: a cycle
/// then only sets values, never allocates.
void size_frame(v2::Frame& frame, const hal::SignalLayout& layout);

}  // namespace hyloop::transport
