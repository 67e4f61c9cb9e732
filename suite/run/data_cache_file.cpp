#include "suite/run/data_cache_file.h"

#include <ATen/ATen.h>
#include <fmt/core.h>

#include <system_error>

#include "suite/core/shape_text.h"
#include "suite/hdf5/h5.h"
#include "suite/store/text_dataset.h"

namespace lrb {

namespace {

namespace fs = std::filesystem;

constexpr const char* kFormatAttr = "format_version";
constexpr const char* kKeyAttr = "key";
constexpr const char* kRowsAttr = "rows";
constexpr const char* kCompleteAttr = "complete";

// The dtypes a task may produce, with their stored (little-endian) and in-memory HDF5 types.
struct Dtype {
  at::ScalarType scalar;
  H5T_class_t type_class;
  std::size_t size;
  bool is_signed;
  hid_t (*file_type)();
  hid_t (*mem_type)();
};

// H5T_* are macros that open the library at run time, hence functions rather than values.
const std::vector<Dtype>& dtypes() {
  static const std::vector<Dtype> d = {
      {at::kLong, H5T_INTEGER, 8, true, [] { return H5T_STD_I64LE; }, [] { return H5T_NATIVE_INT64; }},
      {at::kInt, H5T_INTEGER, 4, true, [] { return H5T_STD_I32LE; }, [] { return H5T_NATIVE_INT32; }},
      {at::kShort, H5T_INTEGER, 2, true, [] { return H5T_STD_I16LE; }, [] { return H5T_NATIVE_INT16; }},
      {at::kChar, H5T_INTEGER, 1, true, [] { return H5T_STD_I8LE; }, [] { return H5T_NATIVE_INT8; }},
      {at::kByte, H5T_INTEGER, 1, false, [] { return H5T_STD_U8LE; }, [] { return H5T_NATIVE_UINT8; }},
      {at::kFloat, H5T_FLOAT, 4, true, [] { return H5T_IEEE_F32LE; }, [] { return H5T_NATIVE_FLOAT; }},
      {at::kDouble, H5T_FLOAT, 8, true, [] { return H5T_IEEE_F64LE; }, [] { return H5T_NATIVE_DOUBLE; }},
  };
  return d;
}

const Dtype* dtype_of(at::ScalarType t) {
  for (const auto& d : dtypes())
    if (d.scalar == t) return &d;
  return nullptr;
}

const Dtype* dtype_of(const h5::ElementType& e) {
  for (const auto& d : dtypes())
    if (d.type_class == e.type_class && d.size == e.size && (d.type_class == H5T_FLOAT || d.is_signed == e.is_signed))
      return &d;
  return nullptr;
}


void write_tensor(const h5::Object& group, const std::string& name, const at::Tensor& t) {
  const Dtype* d = dtype_of(t.scalar_type());
  if (!d)
    throw std::runtime_error(std::string("the data cache does not store tensors of type ") +
                             c10::toString(t.scalar_type()) + " (add it to suite/run/data_cache_file.cpp)");
  const at::Tensor c = t.contiguous();
  std::vector<hsize_t> dims(c.sizes().begin(), c.sizes().end());
  h5::write_array_dataset(group, name, d->file_type(), d->mem_type(), dims, c.data_ptr());
}

at::Tensor read_tensor(const h5::Object& group, const std::string& where, const std::string& name) {
  if (!h5::link_exists(group, name)) throw BadData("missing " + where);
  try {
    h5::Dataset ds = h5::open_dataset(group, name);
    if (!h5::has_fletcher32(ds)) throw BadData("no Fletcher32 checksum on " + where);
    const Dtype* d = dtype_of(h5::dataset_element_type(ds));
    if (!d) throw BadData(where + " has an element type the data cache does not write");
    const auto dims = h5::dataset_dims(ds);
    if (dims.empty()) throw BadData(where + " is a scalar, not an array");
    std::vector<std::int64_t> sizes(dims.begin(), dims.end());
    at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(d->scalar));
    h5::read_array_dataset(ds, d->mem_type(), t.data_ptr());
    return t;
  } catch (const h5::Error& e) {
    if (e.is_checksum_failure()) throw BadData("checksum error in " + where);
    throw BadData("cannot read " + where + " (" + e.operation() + ": " + e.stack() + ")");
  }
}

Split read_split(const h5::Object& root, const std::string& name) {
  if (!h5::link_exists(root, name)) throw BadData("missing /" + name);
  h5::Group g = h5::open_group(root, name);
  const auto rows = h5::read_int_attribute(g, kRowsAttr);
  if (!rows) throw BadData("no rows attribute on /" + name);
  Split s{read_tensor(g, "/" + name + "/x", "x"), read_tensor(g, "/" + name + "/y", "y")};
  for (const auto& [t, what] : {std::pair{&s.x, "x"}, std::pair{&s.y, "y"}})
    if (t->size(0) != *rows)
      throw BadData(fmt::format("/{}/{} has {} rows, the file says {}", name, what, t->size(0), *rows));
  return s;
}

std::string split_problem(const Split& s, const TaskInfo& info, const std::string& name) {
  const bool tokens = info.modality == Modality::Tokens;
  const at::ScalarType want_x = tokens ? at::kLong : at::kFloat;
  if (s.x.scalar_type() != want_x)
    return fmt::format("{}/x is {}, a {} task has {}", name, c10::toString(s.x.scalar_type()),
                       modality_name(info.modality), c10::toString(want_x));
  const std::int64_t n = s.x.dim() > 0 ? s.x.size(0) : -1;
  std::vector<std::int64_t> want{n};
  want.insert(want.end(), info.input_shape.begin(), info.input_shape.end());
  if (s.x.sizes().vec() != want)
    return fmt::format("{}/x has shape {}, expected {}", name, shape_text(s.x.sizes()), shape_text(want));
  const at::ScalarType want_y = info.multilabel ? at::kFloat : at::kLong;
  if (s.y.scalar_type() != want_y)
    return fmt::format("{}/y is {}, expected {}", name, c10::toString(s.y.scalar_type()), c10::toString(want_y));
  const std::vector<std::int64_t> want_y_shape =
      info.multilabel ? std::vector<std::int64_t>{n, info.num_classes} : std::vector<std::int64_t>{n};
  if (s.y.sizes().vec() != want_y_shape)
    return fmt::format("{}/y has shape {}, expected {}", name, shape_text(s.y.sizes()), shape_text(want_y_shape));
  return "";
}

}  // namespace

std::string task_data_problem(const TaskData& data, const TaskInfo& info, std::int64_t eval_size) {
  if (auto p = split_problem(data.train, info, "/train"); !p.empty()) return p;
  if (auto p = split_problem(data.eval, info, "/eval"); !p.empty()) return p;
  if (data.eval.size() != eval_size)
    return fmt::format("/eval has {} samples, {} were asked for", data.eval.size(), eval_size);
  return "";
}

void write_data_cache_file(const fs::path& path, const std::string& key, const std::string& description,
                           const TaskData& data) {
  // Built in memory, then published with its whole-file digest (h5::MemoryFile).
  h5::MemoryFile file(path);
  h5::Group root = h5::open_group(file.file(), "/");
  h5::write_int_attribute(root, kFormatAttr, kDataCacheFormat);
  h5::write_string_attribute(root, kKeyAttr, key);
  write_text_dataset(root, "description", description);
  for (const auto& [name, split] : {std::pair<const char*, const Split*>{"train", &data.train}, {"eval", &data.eval}}) {
    h5::Group g = h5::create_group(root, name);
    h5::write_int_attribute(g, kRowsAttr, split->size());
    write_tensor(g, "x", split->x);
    write_tensor(g, "y", split->y);
  }
  // Last: a reader that finds the marker knows everything above was written.
  h5::write_int_attribute(root, kCompleteAttr, 1);
  root.close();
  h5::publish_memory_file(file, path);
}

DataCacheCheck read_data_cache_file(const fs::path& path, const std::string& key, const std::string& description,
                                    const TaskInfo& info, std::int64_t eval_size) {
  DataCacheCheck out;
  try {
    h5::File file = h5::open_for_validation(path, out.reason);
    if (!file) return out;
    h5::Group root = h5::open_group(file, "/");
    const auto format = h5::read_int_attribute(root, kFormatAttr);
    if (!format) throw BadData("not a data cache file: no format_version attribute");
    if (*format != kDataCacheFormat)
      throw BadData(fmt::format("format_version {} (this lrbench writes {})", *format, kDataCacheFormat));
    const auto complete = h5::read_int_attribute(root, kCompleteAttr);
    if (!complete || *complete != 1) throw BadData("incomplete: no complete marker");
    const auto stored_key = h5::read_string_attribute(root, kKeyAttr);
    if (!stored_key || *stored_key != key) throw BadData("written for another key");
    if (read_text_dataset(root, "description", "/description") != description)
      throw BadData("/description is not the data's description");
    TaskData d{read_split(root, "train"), read_split(root, "eval")};
    if (auto p = task_data_problem(d, info, eval_size); !p.empty()) throw BadData(p);
    out.data = std::move(d);
  } catch (const std::exception& e) {
    out.reason = validation_reason(e);
  }
  return out;
}

}  // namespace lrb
