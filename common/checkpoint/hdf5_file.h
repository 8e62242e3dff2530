// A thin, checked layer over the HDF5 C API for checkpoint files: RAII handles, named arrays
// with a per-dataset SHA-256 attribute, and scalar int / string attributes.  Every H5* return
// code is checked; HDF5's own error printing is switched off and failures become exceptions
// that name the file, the object and HDF5's reason:
//   * while writing: SystemError;
//   * while reading: CheckpointCorruptError (a file whose bytes passed the whole-file digest
//     but that HDF5 cannot parse, or whose data fails its dataset checksum, is damaged), or
//     InputError for a missing dataset/attribute or an unsupported type.
// Object paths are absolute ("/model/enc/w").  Internal to common/checkpoint/ (and its tests):
// this is the only header that includes <hdf5.h>.
//
// Thread safety: an H5File is used by one thread at a time; distinct H5Files may be used from
// different threads (Debian's libhdf5 is built thread-safe and serialises internally).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/checkpoint/named_array.h"

namespace placeto {

// Owns one HDF5 identifier and releases it with the matching H5?close.
class H5Id {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Id() = default;
  H5Id(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~H5Id() { reset(); }
  H5Id(H5Id&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  H5Id& operator=(H5Id&& o) noexcept;
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and returns the close status (the destructor ignores it).
  herr_t close();
  void reset() { (void)close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

class H5File {
 public:
  // Creates an HDF5 file for writing in memory only (core driver, no backing store): libhdf5
  // never touches the disk, so a full disk cannot leave it with a half-closed file.  `path`
  // is used in messages; take the bytes with image() and write them yourself.
  static H5File create(const std::string& path);
  // Flushes and returns the file image (writing mode only).
  std::string image();
  // Opens the HDF5 image `bytes` read-only in memory; `path` is used in messages only.
  static H5File open_image(const std::string& path, const std::string& bytes);

  H5File(H5File&&) = default;
  H5File& operator=(H5File&&) = default;

  const std::string& path() const { return path_; }

  void create_group(const std::string& group);   // parents are created too
  bool exists(const std::string& object) const;  // every component of the path exists

  // Writes a dataset (parent groups created) and its "sha256" attribute.
  void write_array(const std::string& dataset, const NamedArray& array);
  // Reads a dataset and verifies its "sha256" attribute.
  NamedArray read_array(const std::string& dataset) const;

  void write_int_attr(const std::string& object, const std::string& name, int64_t value);
  void write_string_attr(const std::string& object, const std::string& name,
                         const std::string& value);
  bool has_attr(const std::string& object, const std::string& name) const;
  int64_t read_int_attr(const std::string& object, const std::string& name) const;
  std::string read_string_attr(const std::string& object, const std::string& name) const;
  std::vector<std::string> attr_names(const std::string& object) const;

  // Datasets below `group`, recursively, as paths relative to it ("enc/w"), sorted.
  std::vector<std::string> datasets_under(const std::string& group) const;

  // Flushes and closes; throws when HDF5 reports a failure.  The destructor closes silently.
  void close();

 private:
  H5File(std::string path, H5Id file, bool writing, uint64_t image_bytes = 0)
      : path_(std::move(path)),
        file_(std::move(file)),
        writing_(writing),
        image_bytes_(image_bytes) {}
  [[noreturn]] void fail(const std::string& object, const std::string& what) const;
  H5Id open_object(const std::string& object) const;
  H5Id open_attr(const std::string& object, const std::string& name) const;

  std::string path_;
  H5Id file_;
  bool writing_ = false;
  // Size of the image opened by open_image (0 otherwise): no dataset of ours (contiguous,
  // uncompressed) can hold more bytes, so a larger claim is damage, refused before allocating.
  uint64_t image_bytes_ = 0;
};

}  // namespace placeto
