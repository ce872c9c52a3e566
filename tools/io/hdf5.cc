// Copyright 2026 The Sieve Authors.

#include "tools/io/hdf5.h"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <new>
#include <vector>

#include "tools/io/file_util.h"

namespace sieve::io {
namespace {

// Debian's libhdf5 is built without its thread-safety option.
std::mutex& Hdf5Mutex() {
  static std::mutex mu;
  return mu;
}

// Rows are converted through a buffer of about this many bytes.
constexpr size_t kChunkBytes = size_t{4} << 20;

constexpr const char* kExtensions[] = {".hdf5", ".h5", ".he5"};

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// Closes an HDF5 handle (file, dataset, dataspace, type, property list) at scope exit.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  Closer close_;
};

std::string FilePrefix(const std::string& path) { return "file " + Printable(path) + ": "; }
std::string DatasetPrefix(const std::string& path, const std::string& dataset) {
  return "file " + Printable(path) + ", dataset '" + Printable(dataset) + "': ";
}

// The names of the root group's datasets, for messages ("train, test, ...").
std::string TopLevelDatasets(hid_t file) {
  std::vector<std::string> names;
  auto visit = [](hid_t group, const char* name, const H5L_info_t*, void* data) -> herr_t {
    H5O_info_t info;
    if (H5Oget_info_by_name(group, name, &info, H5P_DEFAULT) >= 0 &&
        info.type == H5O_TYPE_DATASET) {
      static_cast<std::vector<std::string>*>(data)->push_back(name);
    }
    return static_cast<std::vector<std::string>*>(data)->size() >= 20 ? 1 : 0;
  };
  hsize_t idx = 0;
  H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, &idx, visit, &names);
  if (names.empty()) return "the file holds no top-level datasets";
  std::string s = "datasets:";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : " ") + Printable(names[i]);
  return Printable(s, 200);
}

// True when every group on the way to `dataset` and `dataset` itself exist (H5Lexists fails,
// rather than answering false, for a path through a missing group).
bool LinkExists(hid_t file, const std::string& dataset) {
  size_t pos = 0;
  while (true) {
    size_t slash = dataset.find('/', pos + 1);
    const std::string prefix = dataset.substr(0, slash);
    if (!prefix.empty() && prefix != "/" && H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
      return false;
    }
    if (slash == std::string::npos) return true;
    pos = slash;
  }
}

std::string TypeName(hid_t type) {
  const size_t size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return std::string(H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") +
             std::to_string(size * 8) + " integers";
    case H5T_FLOAT:
      return "float" + std::to_string(size * 8);
    case H5T_STRING:
      return "strings";
    case H5T_COMPOUND:
      return "compound records";
    case H5T_ARRAY:
      return "arrays";
    default:
      return "values of an unsupported type";
  }
}

// Reads rows [begin, begin + n) of a 2-D dataset as `mem_type` into `buf`.
herr_t ReadRows(hid_t dset, hid_t space, hid_t mem_type, hsize_t begin, hsize_t n, hsize_t cols,
                void* buf) {
  hsize_t start[2] = {begin, 0};
  hsize_t count[2] = {n, cols};
  if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0) return -1;
  Handle mem(H5Screate_simple(2, count, nullptr), H5Sclose);
  if (!mem.ok()) return -1;
  return H5Dread(dset, mem_type, mem.get(), space, H5P_DEFAULT, buf);
}

Status Read(const std::string& path, const std::string& dataset, NpyMatrix* out) {
  {
    InputFile probe;  // says "cannot be opened" / "no such file" as the other readers do
    SIEVE_RETURN_IF_ERROR(probe.Open(path));
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    return Status::InvalidArgument(FilePrefix(path) + "not an HDF5 file");
  }
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return Status::IOError(FilePrefix(path) + "HDF5 cannot open it");
  if (dataset.empty()) {
    return Status::InvalidArgument(FilePrefix(path) + "name the dataset after a colon, as in '" +
                                   Printable(path) + ":train' (" + TopLevelDatasets(file.get()) +
                                   ")");
  }
  if (!LinkExists(file.get(), dataset)) {
    return Status::InvalidArgument(FilePrefix(path) + "no dataset '" + Printable(dataset) + "' (" +
                                   TopLevelDatasets(file.get()) + ")");
  }
  const std::string where = DatasetPrefix(path, dataset);
  H5O_info_t info;
  if (H5Oget_info_by_name(file.get(), dataset.c_str(), &info, H5P_DEFAULT) < 0) {
    return Status::InvalidArgument(where + "cannot be read");
  }
  if (info.type != H5O_TYPE_DATASET) {
    return Status::InvalidArgument(where + "is a group, not a dataset (" +
                                   TopLevelDatasets(file.get()) + ")");
  }
  Handle dset(H5Dopen2(file.get(), dataset.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.ok()) return Status::InvalidArgument(where + "cannot be opened");
  Handle space(H5Dget_space(dset.get()), H5Sclose);
  if (!space.ok()) return Status::InvalidArgument(where + "has no readable shape");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  hsize_t dims[H5S_MAX_RANK] = {};
  if (rank < 0 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0) {
    return Status::InvalidArgument(where + "has no readable shape");
  }
  if (rank != 2) {
    std::string shape = "(";
    for (int i = 0; i < rank; ++i) shape += (i ? ", " : "") + std::to_string(dims[i]);
    shape += rank == 1 ? ",)" : ")";
    return Status::InvalidArgument(where + "expected a 2-D dataset (rows, dim), found shape " +
                                   shape);
  }
  Handle type(H5Dget_type(dset.get()), H5Tclose);
  if (!type.ok()) return Status::InvalidArgument(where + "has no readable type");
  if (H5Tget_class(type.get()) != H5T_FLOAT) {
    return Status::InvalidArgument(where + "holds " + TypeName(type.get()) +
                                   "; expected float32 or float64 vectors");
  }
  const hsize_t rows = dims[0], cols = dims[1];
  if (cols == 0) {
    return Status::InvalidArgument(where + "shape (" + std::to_string(rows) + ", 0) has 0 columns");
  }
  if (rows > std::numeric_limits<size_t>::max() / sizeof(float) / cols) {
    return Status::ResourceExhausted(where + "shape (" + std::to_string(rows) + ", " +
                                     std::to_string(cols) + ") is too large to hold");
  }
  out->rows = static_cast<size_t>(rows);
  out->cols = static_cast<size_t>(cols);
  out->data.clear();
  out->data.resize(static_cast<size_t>(rows * cols));
  if (rows == 0) return Status::OK();
  const size_t item = H5Tget_size(type.get());
  if (item <= sizeof(float)) {
    // float32 (or narrower): HDF5 reads, and converts, straight into the result.
    if (H5Dread(dset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out->data.data()) <
        0) {
      return Status::InvalidArgument(where + "its data cannot be read (truncated or damaged)");
    }
    return Status::OK();
  }
  // Wider types are read as double a chunk of rows at a time; the narrowing is ours, so that
  // overflow gives ±inf (reported by CheckFiniteVectors) rather than HDF5's saturation.
  const hsize_t per_chunk = std::max<hsize_t>(1, kChunkBytes / sizeof(double) / cols);
  std::vector<double> buf(static_cast<size_t>(std::min(rows, per_chunk) * cols));
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (hsize_t done = 0; done < rows;) {
    const hsize_t n = std::min(rows - done, per_chunk);
    if (ReadRows(dset.get(), space.get(), H5T_NATIVE_DOUBLE, done, n, cols, buf.data()) < 0) {
      return Status::InvalidArgument(where + "rows " + std::to_string(done) + " to " +
                                     std::to_string(done + n - 1) +
                                     " cannot be read (truncated or damaged)");
    }
    float* dst = out->data.data() + done * cols;
    for (size_t i = 0; i < n * cols; ++i) {
      const double d = buf[i];
      if (std::fabs(d) <= std::numeric_limits<float>::max() || std::isnan(d)) {
        dst[i] = static_cast<float>(d);
      } else {
        dst[i] = d > 0 ? kInf : -kInf;
      }
    }
    done += n;
  }
  return Status::OK();
}

}  // namespace

bool IsHdf5Spec(const std::string& spec) {
  std::string file, dataset;
  SplitHdf5Spec(spec, &file, &dataset);
  const std::string lower = Lower(file);
  for (const char* ext : kExtensions) {
    if (lower.ends_with(ext)) return true;
  }
  return false;
}

void SplitHdf5Spec(const std::string& spec, std::string* file, std::string* dataset) {
  const std::string lower = Lower(spec);
  size_t best = std::string::npos;  // the position of the ':' after the last extension
  for (const char* ext : kExtensions) {
    const std::string marker = std::string(ext) + ":";
    size_t at = lower.rfind(marker);
    if (at != std::string::npos) {
      const size_t colon = at + marker.size() - 1;
      if (best == std::string::npos || colon > best) best = colon;
    }
  }
  if (best == std::string::npos) {
    *file = spec;
    dataset->clear();
  } else {
    *file = spec.substr(0, best);
    *dataset = spec.substr(best + 1);
  }
}

Status ReadHdf5Matrix(const std::string& path, const std::string& dataset, NpyMatrix* out) {
  std::lock_guard<std::mutex> lock(Hdf5Mutex());
  // The library's own error stack printing would put many lines on stderr; the messages
  // returned here say what went wrong.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  try {
    return Read(path, dataset, out);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted(FilePrefix(path) + "not enough memory to hold dataset '" +
                                     Printable(dataset) + "'");
  } catch (const std::exception& e) {
    return Status::Internal(FilePrefix(path) + e.what());
  }
}

Status WriteHdf5Matrix(const std::string& path, const std::string& dataset, const float* data,
                       size_t rows, size_t cols, bool float64) {
  std::lock_guard<std::mutex> lock(Hdf5Mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return Status::IOError(FilePrefix(path) + "cannot be created");
  hsize_t dims[2] = {rows, cols};
  Handle space(H5Screate_simple(2, dims, nullptr), H5Sclose);
  Handle dset(H5Dcreate2(file.get(), dataset.c_str(), float64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                         space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
              H5Dclose);
  if (!space.ok() || !dset.ok()) {
    return Status::IOError(DatasetPrefix(path, dataset) + "cannot be created");
  }
  if (rows * cols > 0 &&
      H5Dwrite(dset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    return Status::IOError(DatasetPrefix(path, dataset) + "cannot be written");
  }
  return Status::OK();
}

}  // namespace sieve::io
