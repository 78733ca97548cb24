#include "hyloop/recording/run_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "hyloop/recording/run_directory.hpp"

namespace hyloop::recording {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kBufferBytes = 64 * 1024;

[[noreturn]] void refuse(const fs::path& path, const std::string& why, int error_number) {
  throw RunDirectoryError(path.string() + ": " + why, error_number);
}

std::string limit_text(std::uint64_t bytes) {
  if (bytes % (std::uint64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes % (std::uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

[[noreturn]] void refuse_kind(const fs::path& path, mode_t mode) {
  refuse(path,
         kind_of(mode) +
             ": refused (a run directory's files are read only as regular files inside it, "
             "never through a link)",
         0);
}

void check_name(const fs::path& dir, std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    refuse(dir / std::string(name), "not a file name inside the run directory", EINVAL);
  }
}

void check_size(const fs::path& path, std::uint64_t size, std::uint64_t max_bytes) {
  if (size > max_bytes) {
    refuse(path,
           std::to_string(size) + " bytes, larger than the limit of " + limit_text(max_bytes) +
               " for this file of a run directory",
           EFBIG);
  }
}

// lstat of dir/name relative to the open directory `dir_fd`; refuses all but a regular file.
struct stat regular_entry(int dir_fd, const fs::path& path, std::string_view name,
                          std::uint64_t max_bytes) {
  struct stat st {};
  const std::string n(name);
  if (::fstatat(dir_fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    const int e = errno;
    refuse(path, std::strerror(e), e);
  }
  if (!S_ISREG(st.st_mode)) refuse_kind(path, st.st_mode);
  check_size(path, static_cast<std::uint64_t>(st.st_size), max_bytes);
  return st;
}

int open_dir(const fs::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    refuse(dir, std::string("cannot open the run directory: ") + std::strerror(e), e);
  }
  return fd;
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

RunFile::RunFile(const fs::path& dir, std::string_view name, std::uint64_t max_bytes)
    : path_(dir / std::string(name)), max_bytes_(max_bytes) {
  check_name(dir, name);
  const FdCloser dir_fd{open_dir(dir)};
  const struct stat before = regular_entry(dir_fd.fd, path_, name, max_bytes);
  const std::string n(name);
  fd_ = ::openat(dir_fd.fd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) {
    const int e = errno;
    if (e == ELOOP) refuse_kind(path_, S_IFLNK);
    refuse(path_, std::strerror(e), e);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != before.st_ino ||
      st.st_dev != before.st_dev) {
    ::close(fd_);
    fd_ = -1;
    refuse(path_, "changed while it was being opened: refused", EAGAIN);
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  try {
    check_size(path_, size_, max_bytes_);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  buffer_.resize(kBufferBytes);
}

RunFile::~RunFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool RunFile::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    std::copy(buffer_.begin() + static_cast<std::ptrdiff_t>(begin_),
              buffer_.begin() + static_cast<std::ptrdiff_t>(end_), buffer_.begin());
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  for (;;) {
    const ssize_t n = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      refuse(path_, std::string("reading: ") + std::strerror(e), e);
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    read_ += static_cast<std::uint64_t>(n);
    check_size(path_, read_, max_bytes_);  // it grew while being read
    end_ += static_cast<std::size_t>(n);
    return true;
  }
}

bool RunFile::getline(std::string& line) {
  std::size_t scanned = begin_;
  for (;;) {
    const void* nl = std::memchr(buffer_.data() + scanned, '\n', end_ - scanned);
    if (nl != nullptr) {
      const auto at = static_cast<std::size_t>(static_cast<const char*>(nl) - buffer_.data());
      line.assign(buffer_.data() + begin_, buffer_.data() + at);
      begin_ = at + 1;
      break;
    }
    const std::size_t pending = end_ - begin_;
    if (pending > kMaxRunLineBytes) {
      refuse(path_, "a line longer than " + limit_text(kMaxRunLineBytes) + ": not a table", EFBIG);
    }
    if (!fill()) {
      if (begin_ == end_) return false;
      line.assign(buffer_.data() + begin_, buffer_.data() + end_);
      begin_ = end_;
      break;
    }
    scanned = begin_ + pending;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

std::string RunFile::read_all() {
  while (fill()) {
  }
  std::string text(buffer_.begin() + static_cast<std::ptrdiff_t>(begin_),
                   buffer_.begin() + static_cast<std::ptrdiff_t>(end_));
  begin_ = end_;
  return text;
}

bool has_run_entry(const fs::path& dir, std::string_view name) {
  struct stat st {};
  return ::lstat((dir / std::string(name)).c_str(), &st) == 0;
}

std::string read_run_file(const fs::path& dir, std::string_view name, std::uint64_t max_bytes) {
  RunFile file(dir, name, max_bytes);
  return file.read_all();
}

void check_run_file(const fs::path& dir, std::string_view name, std::uint64_t max_bytes) {
  check_name(dir, name);
  const FdCloser dir_fd{open_dir(dir)};
  (void)regular_entry(dir_fd.fd, dir / std::string(name), name, max_bytes);
}

void refuse_special_entries(const fs::path& dir) {
  const FdCloser dir_fd{open_dir(dir)};
  DIR* d = ::fdopendir(::dup(dir_fd.fd));
  if (d == nullptr) refuse(dir, std::strerror(errno), errno);
  struct Closer {
    DIR* d;
    ~Closer() { ::closedir(d); }
  } closer{d};
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(dir_fd.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) refuse_kind(dir / name, st.st_mode);
  }
}

}  // namespace hyloop::recording
