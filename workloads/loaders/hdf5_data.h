#pragma once
// A labelled data set in one HDF5 file: the way a user brings any real data (task
// `hdf5-file`, workloads/README.md). The file holds
//
//   /x      N x L integers            token ids (tokens)          -> int64 [N, L]
//           N x L x C floats          a signal, C channels        -> float32 [N, L, C]
//           N x C x H x W floats      an image grid               -> float32 [N, C, H, W]
//   /y      N integers                class ids 0..K-1            -> int64 [N]
//           N x K, 0 or 1 (any type)  multi-label targets         -> float32 [N, K]
//   /split  optional: N integers, 0 = train, 1 = evaluation, 2 = neither (a test part kept
//           aside); without it the task holds out a share of the records
//
// and, optionally, integer attributes on the root group: `num_classes` (labels must be
// below it; default: largest label + 1; multi-label: must equal K), and for tokens
// `vocab_size` (ids must be below it; default: largest id + 1) and `pad_token` (the id
// masked out of attention and pooling; default none). Other attributes are ignored.
// Any integer or float type, layout, chunking or compression HDF5 reads is accepted
// (h5py's defaults included); integers are read as int64, floats as float32.
//
// Everything is checked on reading, and each problem is a UserError naming the file, the
// dataset and, for values, the record (0-based, e.g. "/y[17]"), with what to do: a missing
// file or dataset, a wrong rank or shape (with the shape expected), N differing between
// /x, /y and /split, labels or token ids out of range, values that are not 0/1 in
// multi-label targets, non-finite floats, and damaged chunks.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "suite/contracts/task_info.h"

namespace lrb {

struct Hdf5Data {
  std::string path;
  Modality modality = Modality::Tokens;
  at::Tensor x;                    // see above
  at::Tensor y;                    // int64 [N], or float32 [N, K] when multilabel
  bool multilabel = false;
  std::vector<std::int8_t> split;  // per record 0, 1 or 2; empty when the file has no /split
  std::int64_t num_classes = 0;
  std::int64_t vocab_size = 0;     // tokens only
  std::int64_t pad_token = -1;     // tokens only; -1 none
  std::int64_t size() const { return x.size(0); }
};

Hdf5Data read_hdf5_data(const std::string& path);
// read_hdf5_data through a process-wide bounded cache (suite/core/file_cache.h) keyed by
// path, size and modification time, so that describing a task and generating its data
// read the file once. Read-only.
std::shared_ptr<const Hdf5Data> read_hdf5_data_cached(const std::string& path);

}  // namespace lrb
