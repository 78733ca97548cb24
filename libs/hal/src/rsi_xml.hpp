#pragma once
// The XML subset RSI speaks (rsi_codec.hpp), as a pull reader over one datagram: start tags
// with their attributes, text, end tags (a self-closing tag gives its end at once). Bounded by
// rsi::kMaxDepth, kMaxElements, kMaxAttributes and kMaxName; no allocation, no exception.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "hyloop/hal/rsi_codec.hpp"

namespace hyloop::hal::rsi::detail {

struct Attribute {
  std::string_view name;
  std::string_view value;
};

class XmlReader {
 public:
  enum class Token : std::uint8_t { kStart, kText, kEnd, kDone, kError };

  explicit XmlReader(std::string_view doc) noexcept : doc_(doc) {}

  Token next() noexcept;
  /// The element of the last kStart or kEnd.
  [[nodiscard]] std::string_view name() const noexcept { return name_; }
  /// The text of the last kText (raw).
  [[nodiscard]] std::string_view text() const noexcept { return text_; }
  /// Depth of the last kStart/kText/kEnd: 1 = the root element.
  [[nodiscard]] std::size_t depth() const noexcept { return level_; }
  [[nodiscard]] std::span<const Attribute> attributes() const noexcept {
    return {attributes_.data(), attribute_count_};
  }

 private:
  Token fail() noexcept;
  Token start_tag() noexcept;
  Token end_tag() noexcept;
  Token close() noexcept;
  bool skip_markup() noexcept;
  bool read_attributes(bool& self_closing) noexcept;
  bool read_name(std::string_view& out) noexcept;
  void skip_space() noexcept;

  std::string_view doc_;
  std::size_t pos_ = 0;
  std::size_t depth_ = 0;  ///< elements open
  std::size_t level_ = 0;  ///< reported by depth()
  std::size_t elements_ = 0;
  bool root_done_ = false;
  bool pending_end_ = false;
  bool failed_ = false;
  std::string_view name_;
  std::string_view text_;
  std::array<std::string_view, kMaxDepth> open_{};
  std::array<Attribute, kMaxAttributes> attributes_{};
  std::size_t attribute_count_ = 0;
};

}  // namespace hyloop::hal::rsi::detail
