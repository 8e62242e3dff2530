#include "common/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/error.h"

namespace placeto {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open file: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read error");
  return ss.str();
}

std::string parent_directory(const std::string& path) {
  auto p = std::filesystem::path(path).parent_path();
  return p.empty() ? std::string(".") : p.string();
}

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

void make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw SystemError(path + ": cannot create directory: " + ec.message());
}

FileLock::FileLock(const std::string& path, const std::string& what, double wait_s) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw SystemError(path + ": cannot open lock file: " + std::strerror(errno));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(0.0, wait_s));
  int rc;
  while ((rc = ::flock(fd_, LOCK_EX | LOCK_NB)) != 0 && errno == EWOULDBLOCK &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (rc != 0) {
    const int err = errno;
    std::string holder;
    char buf[256];
    ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    if (n > 0) holder.assign(buf, static_cast<size_t>(n));
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\r')) holder.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw InputError(path + ": " + what + " is in use by another process (" +
                       (holder.empty() ? std::string("holder unknown") : printable_name(holder)) +
                       "); wait for it to end or choose another directory");
    throw SystemError(path + ": cannot lock: " + std::strerror(err));
  }
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = 0;
  char when[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm tm_utc{};
  ::gmtime_r(&now, &tm_utc);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
  const std::string text = "pid " + std::to_string(static_cast<long>(::getpid())) + " on host " +
                           host + " since " + when + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, text.data(), text.size(), 0) < 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw SystemError(path + ": cannot write lock holder: " + std::strerror(err));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

namespace {
void fsync_path(const std::string& path, int flags, const char* what) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags);
  if (fd < 0)
    throw SystemError(path + ": cannot open " + what + " for fsync: " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) throw SystemError(path + ": fsync of " + what + " failed: " + std::strerror(err));
}
}  // namespace

void fsync_directory(const std::string& dir) { fsync_path(dir, O_DIRECTORY, "directory"); }

void fsync_file(const std::string& path) { fsync_path(path, 0, "file"); }

namespace {
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}
}  // namespace

void check_output_path(const std::string& path, const std::vector<std::string>& inputs,
                       const std::string& option) {
  const std::string where = option.empty() ? path : option + " " + path;
  if (path.empty()) throw InputError(option + ": the output path is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      struct stat lst;
      const bool link = ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
      throw InputError(where + ": refusing to write: the path " +
                       (link ? "is a symbolic link to " : "is ") + file_kind(st.st_mode) +
                       " (give the path of a regular file)");
    }
    for (const auto& in : inputs) {
      struct stat ist;
      if (!in.empty() && ::stat(in.c_str(), &ist) == 0 && ist.st_dev == st.st_dev &&
          ist.st_ino == st.st_ino)
        throw InputError(where + ": refusing to write: it is the input file " + in +
                         " (choose another output path)");
    }
  } else if (errno == ENOTDIR) {
    throw InputError(where + ": cannot write: a component of the path is not a directory");
  } else if (errno != ENOENT) {
    throw InputError(where + ": cannot write: " + std::strerror(errno));
  } else {
    struct stat lst;
    if (::lstat(path.c_str(), &lst) == 0)  // a dangling symbolic link
      throw InputError(where +
                       ": refusing to write: the path is a symbolic link to a missing file");
  }
  const std::string dir = parent_directory(path);
  struct stat dst;
  if (::stat(dir.c_str(), &dst) != 0)
    throw InputError(where + ": cannot write: the folder " + dir + " does not exist");
  if (!S_ISDIR(dst.st_mode))
    throw InputError(where + ": cannot write: " + dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(where + ": cannot write into the folder " + dir + ": " + std::strerror(errno));
}

void write_file_atomic(const std::string& requested, const std::string& content) {
  check_output_path(requested, {}, "");
  // A link to a regular file: replace the file it names and keep the link.
  std::string path = requested;
  struct stat lst;
  if (::lstat(requested.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    auto target = std::filesystem::canonical(requested, ec);
    if (ec) throw SystemError(requested + ": cannot resolve symbolic link: " + ec.message());
    path = target.string();
  }
  const std::string tmp = path + ".tmp";
  // O_NOFOLLOW and O_NONBLOCK: a planted link or FIFO at path.tmp is refused, not followed or
  // waited on; whatever is there must then be a regular file that we own the writing of.
  int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) throw SystemError(tmp + ": cannot create: " + std::strerror(errno));
  struct stat tst;
  if (::fstat(fd, &tst) != 0 || !S_ISREG(tst.st_mode)) {
    ::close(fd);
    throw SystemError(tmp + ": cannot create: the temporary path exists and is not a regular file");
  }
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw SystemError(tmp + ": write failed: " + std::strerror(err));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw SystemError(tmp + ": fsync failed: " + std::strerror(err));
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw SystemError(tmp + ": close failed: " + std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw SystemError(path + ": rename from " + tmp + " failed: " + std::strerror(err));
  }
  fsync_directory(parent_directory(path));
}

}  // namespace placeto
