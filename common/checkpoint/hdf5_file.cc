#include "common/checkpoint/hdf5_file.h"

#include <algorithm>

#include "common/checkpoint/checkpoint_error.h"
#include "common/checkpoint/file_digest.h"

namespace placeto {
namespace {

constexpr const char* kChecksumAttr = "sha256";

// HDF5 keeps its error stack per thread in thread-safe builds, so automatic printing is
// switched off in every thread that touches a file; our exceptions carry the text instead.
void quiet_hdf5_errors() {
  thread_local bool done = false;
  if (!done) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    done = true;
  }
}

herr_t collect_error(unsigned, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::vector<std::string>*>(data);
  if (err->desc && *err->desc && std::find(out->begin(), out->end(), err->desc) == out->end() &&
      out->size() < 3)
    out->push_back(err->desc);
  return 0;
}

// HDF5's reasons for the last failure in this thread, outermost first.
std::string hdf5_reason() {
  std::vector<std::string> parts;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_error, &parts);
  H5Eclear2(H5E_DEFAULT);
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s.empty() ? "no detail from HDF5" : s;
}

// The HDF5 types of a DType: little-endian in the file, native in memory.  (Not a table:
// the H5T_* names are run-time values, valid once the library is initialised.)
struct H5Types {
  hid_t file;
  hid_t memory;
};

H5Types h5_types(DType d) {
  switch (d) {
    case DType::kF32:
      return {H5T_IEEE_F32LE, H5T_NATIVE_FLOAT};
    case DType::kF64:
      return {H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE};
    case DType::kI64:
      return {H5T_STD_I64LE, H5T_NATIVE_INT64};
    case DType::kU8:
      return {H5T_STD_U8LE, H5T_NATIVE_UINT8};
  }
  return {H5I_INVALID_HID, H5I_INVALID_HID};
}

// The DType of a stored dataset type; false for types this format does not use.
bool stored_dtype(hid_t type, DType* out) {
  const H5T_class_t cls = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT && size == 4)
    *out = DType::kF32;
  else if (cls == H5T_FLOAT && size == 8)
    *out = DType::kF64;
  else if (cls == H5T_INTEGER && size == 8 && H5Tget_sign(type) == H5T_SGN_2)
    *out = DType::kI64;
  else if (cls == H5T_INTEGER && size == 1 && H5Tget_sign(type) == H5T_SGN_NONE)
    *out = DType::kU8;
  else
    return false;
  return true;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

struct VisitState {
  hid_t group;
  std::vector<std::string>* names;
  bool failed = false;
};

herr_t visit_link(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto* st = static_cast<VisitState*>(data);
  if (info->type != H5L_TYPE_HARD) return 0;
  hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
  if (obj < 0) {
    st->failed = true;
    return -1;
  }
  if (H5Iget_type(obj) == H5I_DATASET) st->names->push_back(name);
  H5Oclose(obj);
  return 0;
}

herr_t visit_attr(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->push_back(name);
  return 0;
}

}  // namespace

H5Id& H5Id::operator=(H5Id&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

herr_t H5Id::close() {
  herr_t rc = 0;
  if (id_ >= 0 && closer_) rc = closer_(id_);
  id_ = H5I_INVALID_HID;
  return rc;
}

void H5File::fail(const std::string& object, const std::string& what) const {
  std::string msg =
      path_ + (object.empty() ? "" : ": " + object) + ": " + what + ": " + hdf5_reason();
  if (writing_) throw SystemError(msg);
  throw CheckpointCorruptError(msg);
}

H5File H5File::create(const std::string& path) {
  quiet_hdf5_errors();
  H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.valid() || H5Pset_fapl_core(fapl.get(), 1 << 20, 0) < 0 ||
      H5Pset_file_locking(fapl.get(), 0, 1) < 0)
    throw SystemError(path + ": cannot set up an in-memory HDF5 file: " + hdf5_reason());
  // A name that can never exist on disk, as in open_image().
  hid_t id =
      H5Fcreate("/dev/null/placeto-checkpoint-new.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  if (id < 0) throw SystemError(path + ": cannot create HDF5 file: " + hdf5_reason());
  return H5File(path, H5Id(id, H5Fclose), true);
}

std::string H5File::image() {
  PLACETO_CHECK(writing_ && file_.valid());
  if (H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) fail("", "cannot flush");
  ssize_t size = H5Fget_file_image(file_.get(), nullptr, 0);
  if (size < 0) fail("", "cannot get the file image");
  std::string bytes(static_cast<size_t>(size), '\0');
  if (H5Fget_file_image(file_.get(), bytes.data(), bytes.size()) != size)
    fail("", "cannot copy the file image");
  return bytes;
}

H5File H5File::open_image(const std::string& path, const std::string& bytes) {
  quiet_hdf5_errors();
  H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // The core driver without a backing store reads only the image we pass, never the disk.
  if (!fapl.valid() ||
      H5Pset_file_image(fapl.get(), const_cast<char*>(bytes.data()), bytes.size()) < 0 ||
      H5Pset_fapl_core(fapl.get(), 1 << 20, 0) < 0)
    throw SystemError(path + ": cannot set up an in-memory HDF5 image: " + hdf5_reason());
  // With an image the core driver refuses a name that exists on disk ("file already exists"),
  // so it gets one that never can: nothing exists below /dev/null.
  const std::string image_name = "/dev/null/placeto-checkpoint-image.h5";
  hid_t id = H5Fopen(image_name.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (id < 0) throw CheckpointCorruptError(path + ": HDF5 cannot open the file: " + hdf5_reason());
  return H5File(path, H5Id(id, H5Fclose), false, bytes.size());
}

void H5File::create_group(const std::string& group) {
  H5Id lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  if (!lcpl.valid() || H5Pset_create_intermediate_group(lcpl.get(), 1) < 0)
    fail(group, "cannot create link property list");
  H5Id g(H5Gcreate2(file_.get(), group.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail(group, "cannot create group");
  if (g.close() < 0) fail(group, "cannot close group");
}

bool H5File::exists(const std::string& object) const {
  std::string prefix;
  for (const std::string& part : split_path(object)) {
    prefix += "/" + part;
    htri_t rc = H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT);
    if (rc < 0) fail(prefix, "cannot look up link");
    if (rc == 0) return false;
  }
  return true;
}

H5Id H5File::open_object(const std::string& object) const {
  if (!exists(object)) throw InputError(path_ + ": " + object + ": missing");
  H5Id obj(H5Oopen(file_.get(), object.c_str(), H5P_DEFAULT), H5Oclose);
  if (!obj.valid()) fail(object, "cannot open object");
  return obj;
}

void H5File::write_array(const std::string& dataset, const NamedArray& array) {
  array.validate(path_ + ": " + dataset);
  std::vector<hsize_t> dims(array.shape.begin(), array.shape.end());
  H5Id space(array.shape.empty()
                 ? H5Screate(H5S_SCALAR)
                 : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
             H5Sclose);
  if (!space.valid()) fail(dataset, "cannot create dataspace " + shape_string(array.shape));
  H5Id lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  if (!lcpl.valid() || H5Pset_create_intermediate_group(lcpl.get(), 1) < 0)
    fail(dataset, "cannot create link property list");
  H5Id dset(H5Dcreate2(file_.get(), dataset.c_str(), h5_types(array.dtype).file, space.get(),
                       lcpl.get(), H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose);
  if (!dset.valid()) fail(dataset, "cannot create dataset");
  // HDF5 rejects a null buffer even for zero elements, and there is nothing to write.
  if (array.numel() > 0 && H5Dwrite(dset.get(), h5_types(array.dtype).memory, H5S_ALL, H5S_ALL,
                                    H5P_DEFAULT, array.bytes.data()) < 0)
    fail(dataset, "cannot write data");
  if (dset.close() < 0) fail(dataset, "cannot close dataset");
  write_string_attr(dataset, kChecksumAttr, sha256_hex(array.bytes.data(), array.bytes.size()));
}

NamedArray H5File::read_array(const std::string& dataset) const {
  if (!exists(dataset)) throw InputError(path_ + ": dataset " + dataset + " is missing");
  H5Id dset(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) fail(dataset, "cannot open dataset");
  H5Id type(H5Dget_type(dset.get()), H5Tclose);
  if (!type.valid()) fail(dataset, "cannot read the datatype");
  NamedArray a;
  if (!stored_dtype(type.get(), &a.dtype))
    throw InputError(path_ + ": " + dataset +
                     ": unsupported datatype (expected f32, f64, i64 or u8)");
  H5Id space(H5Dget_space(dset.get()), H5Sclose);
  if (!space.valid()) fail(dataset, "cannot read the dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail(dataset, "cannot read the rank");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    fail(dataset, "cannot read the dimensions");
  // The dimensions come from the file: check their product before it sizes an allocation
  // (a damaged file asked for 240 TiB; found by fuzzing, tests/fuzz/regressions/).
  uint64_t total = dtype_size(a.dtype);
  for (hsize_t d : dims)
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(d), &total) ||
        total > static_cast<uint64_t>(INT64_MAX))
      throw CheckpointCorruptError(path_ + ": " + dataset + ": impossible dimensions");
  if (image_bytes_ > 0 && total > image_bytes_)
    throw CheckpointCorruptError(path_ + ": " + dataset + ": claims " + std::to_string(total) +
                                 " bytes of data in a file of " + std::to_string(image_bytes_));
  a.shape.assign(dims.begin(), dims.end());
  a.bytes.resize(static_cast<size_t>(total));
  if (a.numel() > 0 && H5Dread(dset.get(), h5_types(a.dtype).memory, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                               a.bytes.data()) < 0)
    fail(dataset, "cannot read data");
  if (!has_attr(dataset, kChecksumAttr))
    throw CheckpointCorruptError(path_ + ": " + dataset + ": no sha256 checksum attribute");
  const std::string expected = read_string_attr(dataset, kChecksumAttr);
  const std::string actual = sha256_hex(a.bytes.data(), a.bytes.size());
  if (actual != expected)
    throw CheckpointCorruptError(path_ + ": " + dataset + ": data checksum mismatch (data " +
                                 actual + ", attribute " + expected + "): the dataset is damaged");
  return a;
}

void H5File::write_int_attr(const std::string& object, const std::string& name, int64_t value) {
  H5Id obj = open_object(object);
  H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  if (!space.valid()) fail(object, "cannot create dataspace for attribute " + name);
  H5Id attr(
      H5Acreate2(obj.get(), name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  if (!attr.valid()) fail(object, "cannot create attribute " + name);
  if (H5Awrite(attr.get(), H5T_NATIVE_INT64, &value) < 0 || attr.close() < 0)
    fail(object, "cannot write attribute " + name);
}

void H5File::write_string_attr(const std::string& object, const std::string& name,
                               const std::string& value) {
  H5Id obj = open_object(object);
  // Variable-length UTF-8 so that h5py returns a str and long YAML texts need no size limit.
  H5Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!type.valid() || H5Tset_size(type.get(), H5T_VARIABLE) < 0 ||
      H5Tset_cset(type.get(), H5T_CSET_UTF8) < 0)
    fail(object, "cannot create string type for attribute " + name);
  H5Id space(H5Screate(H5S_SCALAR), H5Sclose);
  if (!space.valid()) fail(object, "cannot create dataspace for attribute " + name);
  H5Id attr(H5Acreate2(obj.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
            H5Aclose);
  if (!attr.valid()) fail(object, "cannot create attribute " + name);
  const char* cstr = value.c_str();
  if (H5Awrite(attr.get(), type.get(), &cstr) < 0 || attr.close() < 0)
    fail(object, "cannot write attribute " + name);
}

bool H5File::has_attr(const std::string& object, const std::string& name) const {
  if (!exists(object)) return false;
  htri_t rc = H5Aexists_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT);
  if (rc < 0) fail(object, "cannot look up attribute " + name);
  return rc > 0;
}

H5Id H5File::open_attr(const std::string& object, const std::string& name) const {
  if (!has_attr(object, name))
    throw InputError(path_ + ": " + object + ": attribute " + name + " is missing");
  H5Id attr(H5Aopen_by_name(file_.get(), object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
            H5Aclose);
  if (!attr.valid()) fail(object, "cannot open attribute " + name);
  H5Id space(H5Aget_space(attr.get()), H5Sclose);
  if (!space.valid()) fail(object, "cannot read the dataspace of attribute " + name);
  if (H5Sget_simple_extent_npoints(space.get()) != 1)
    throw InputError(path_ + ": " + object + ": attribute " + name + " is not a scalar");
  return attr;
}

int64_t H5File::read_int_attr(const std::string& object, const std::string& name) const {
  H5Id attr = open_attr(object, name);
  H5Id type(H5Aget_type(attr.get()), H5Tclose);
  if (!type.valid()) fail(object, "cannot read the type of attribute " + name);
  if (H5Tget_class(type.get()) != H5T_INTEGER)
    throw InputError(path_ + ": " + object + ": attribute " + name + " is not an integer");
  int64_t v = 0;
  if (H5Aread(attr.get(), H5T_NATIVE_INT64, &v) < 0) fail(object, "cannot read attribute " + name);
  return v;
}

std::string H5File::read_string_attr(const std::string& object, const std::string& name) const {
  H5Id attr = open_attr(object, name);
  H5Id type(H5Aget_type(attr.get()), H5Tclose);
  if (!type.valid()) fail(object, "cannot read the type of attribute " + name);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw InputError(path_ + ": " + object + ": attribute " + name + " is not a string");
  const htri_t vlen = H5Tis_variable_str(type.get());
  if (vlen < 0) fail(object, "cannot inspect attribute " + name);
  H5Id mem(H5Tcopy(type.get()), H5Tclose);
  if (!mem.valid()) fail(object, "cannot copy the type of attribute " + name);
  if (vlen > 0) {
    char* p = nullptr;
    if (H5Aread(attr.get(), mem.get(), &p) < 0) fail(object, "cannot read attribute " + name);
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  // Fixed-length strings (written by other tools) are padded; keep what precedes the padding.
  std::string s(H5Tget_size(type.get()), '\0');
  if (H5Aread(attr.get(), mem.get(), s.data()) < 0) fail(object, "cannot read attribute " + name);
  s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
  return s;
}

std::vector<std::string> H5File::attr_names(const std::string& object) const {
  H5Id obj = open_object(object);
  std::vector<std::string> names;
  hsize_t idx = 0;
  if (H5Aiterate2(obj.get(), H5_INDEX_NAME, H5_ITER_INC, &idx, visit_attr, &names) < 0)
    fail(object, "cannot list attributes");
  return names;
}

std::vector<std::string> H5File::datasets_under(const std::string& group) const {
  H5Id g = open_object(group);
  std::vector<std::string> names;
  VisitState st{g.get(), &names};
  if (H5Lvisit(g.get(), H5_INDEX_NAME, H5_ITER_INC, visit_link, &st) < 0 || st.failed)
    fail(group, "cannot list datasets");
  std::sort(names.begin(), names.end());
  return names;
}

void H5File::close() {
  if (!file_.valid()) return;
  if (writing_ && H5Fflush(file_.get(), H5F_SCOPE_GLOBAL) < 0) fail("", "cannot flush");
  if (file_.close() < 0) fail("", "cannot close");
}

}  // namespace placeto
