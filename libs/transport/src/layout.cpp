#include "hyloop/transport/layout.hpp"

#include <stdexcept>
#include <string>

namespace hyloop::transport {

void add_layout(std::string_view channel, const hal::SignalLayout& layout, ChannelLayouts& out) {
  v2::ChannelLayout& c = *out.Add();
  c.set_channel(std::string(channel));
  for (const hal::Signal& s : layout.signals) {
    v2::Signal& w = *c.add_signals();
    w.set_name(s.name);
    w.set_unit(s.unit);
    w.set_quantity(s.quantity);
  }
}

void add_loop_layouts(const hal::SignalLayout& measurement, const hal::SignalLayout& command,
                      ChannelLayouts& out) {
  add_layout("measurement", measurement, out);
  add_layout("command", command, out);
}

hal::SignalLayout find_layout(const ChannelLayouts& layouts, std::string_view channel) {
  for (const v2::ChannelLayout& c : layouts) {
    if (c.channel() != channel) continue;
    hal::SignalLayout layout;
    for (const v2::Signal& s : c.signals()) {
      layout.signals.push_back({s.name(), s.unit(), s.quantity()});
    }
    return layout;
  }
  throw std::invalid_argument("layouts: no layout of channel '" + std::string(channel) +
                              "' in the request (a coordinator older than loop contract v2?)");
}

void require_layout(const ChannelLayouts& layouts, std::string_view channel,
                    const hal::SignalLayout& expected) {
  const std::string why = hal::layout_mismatch(channel, expected, find_layout(layouts, channel));
  if (!why.empty()) {
    throw std::invalid_argument("layouts: " + why);
  }
}

void require_loop_layouts(const ChannelLayouts& layouts, const hal::SignalLayout& measurement,
                          const hal::SignalLayout& command) {
  require_layout(layouts, "measurement", measurement);
  require_layout(layouts, "command", command);
}

void size_frame(v2::Frame& frame, const hal::SignalLayout& layout) {
  frame.Clear();
  frame.mutable_values()->Resize(static_cast<int>(layout.size()), 0.0);
}

}  // namespace hyloop::transport
