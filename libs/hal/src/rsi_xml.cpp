#include "rsi_xml.hpp"

namespace hyloop::hal::rsi::detail {

namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_name_start(char c) noexcept {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':';
}
bool is_name_char(char c) noexcept {
  return is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

}  // namespace

XmlReader::Token XmlReader::fail() noexcept {
  failed_ = true;
  return Token::kError;
}

void XmlReader::skip_space() noexcept {
  while (pos_ < doc_.size() && is_space(doc_[pos_])) {
    ++pos_;
  }
}

bool XmlReader::read_name(std::string_view& out) noexcept {
  const std::size_t begin = pos_;
  if (pos_ >= doc_.size() || !is_name_start(doc_[pos_])) {
    return false;
  }
  while (pos_ < doc_.size() && is_name_char(doc_[pos_])) {
    ++pos_;
  }
  out = doc_.substr(begin, pos_ - begin);
  return out.size() <= kMaxName;
}

bool XmlReader::skip_markup() noexcept {
  // <?...?> before the root, <!--...--> anywhere; nothing else of the kind.
  const std::string_view rest = doc_.substr(pos_);
  std::string_view close;
  if (rest.starts_with("<?") && depth_ == 0 && elements_ == 0) {
    close = "?>";
  } else if (rest.starts_with("<!--")) {
    close = "-->";
  } else {
    return false;
  }
  const std::size_t end = doc_.find(close, pos_ + 2);
  if (end == std::string_view::npos) {
    return false;
  }
  pos_ = end + close.size();
  return true;
}

bool XmlReader::read_attributes(bool& self_closing) noexcept {
  attribute_count_ = 0;
  for (;;) {
    const std::size_t before = pos_;
    skip_space();
    if (pos_ >= doc_.size()) {
      return false;
    }
    if (doc_[pos_] == '>' || doc_.substr(pos_).starts_with("/>")) {
      self_closing = doc_[pos_] == '/';
      pos_ += self_closing ? 2 : 1;
      return true;
    }
    Attribute a;
    if (pos_ == before || attribute_count_ == kMaxAttributes || !read_name(a.name)) {
      return false;  // attributes are separated by white space
    }
    skip_space();
    if (pos_ >= doc_.size() || doc_[pos_] != '=') {
      return false;
    }
    ++pos_;
    skip_space();
    if (pos_ >= doc_.size() || (doc_[pos_] != '"' && doc_[pos_] != '\'')) {
      return false;
    }
    const std::size_t end = doc_.find(doc_[pos_], pos_ + 1);
    if (end == std::string_view::npos) {
      return false;
    }
    a.value = doc_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    if (a.value.find('<') != std::string_view::npos) {
      return false;
    }
    for (std::size_t i = 0; i < attribute_count_; ++i) {
      if (attributes_[i].name == a.name) {
        return false;
      }
    }
    attributes_[attribute_count_++] = a;
  }
}

XmlReader::Token XmlReader::start_tag() noexcept {
  ++pos_;
  std::string_view name;
  if (root_done_ || depth_ == kMaxDepth || elements_ == kMaxElements || !read_name(name)) {
    return fail();
  }
  bool self_closing = false;
  if (!read_attributes(self_closing)) {
    return fail();
  }
  ++elements_;
  open_[depth_++] = name;
  level_ = depth_;
  name_ = name;
  pending_end_ = self_closing;
  return Token::kStart;
}

XmlReader::Token XmlReader::end_tag() noexcept {
  pos_ += 2;
  std::string_view name;
  if (depth_ == 0 || !read_name(name) || name != open_[depth_ - 1]) {
    return fail();
  }
  skip_space();
  if (pos_ >= doc_.size() || doc_[pos_] != '>') {
    return fail();
  }
  ++pos_;
  return close();
}

XmlReader::Token XmlReader::close() noexcept {
  level_ = depth_;
  name_ = open_[--depth_];
  root_done_ = depth_ == 0;
  return Token::kEnd;
}

XmlReader::Token XmlReader::next() noexcept {
  if (failed_) {
    return Token::kError;
  }
  if (pending_end_) {
    pending_end_ = false;
    return close();
  }
  for (;;) {
    if (pos_ >= doc_.size()) {
      return root_done_ && depth_ == 0 ? Token::kDone : fail();
    }
    if (doc_[pos_] != '<') {
      const std::size_t end = doc_.find('<', pos_);
      text_ = doc_.substr(pos_, (end == std::string_view::npos ? doc_.size() : end) - pos_);
      pos_ += text_.size();
      if (depth_ == 0) {
        for (char c : text_) {
          if (!is_space(c)) return fail();
        }
        continue;
      }
      level_ = depth_;
      return Token::kText;
    }
    if (doc_.substr(pos_).starts_with("</")) {
      return end_tag();
    }
    if (doc_.substr(pos_).starts_with("<?") || doc_.substr(pos_).starts_with("<!")) {
      if (!skip_markup()) return fail();
      continue;
    }
    return start_tag();
  }
}

}  // namespace hyloop::hal::rsi::detail
