#pragma once
// Image classification from idx files: the shared body of the "fashion-mnist" and
// "idx-file" tasks. Images are [n, H, W] or [n, C, H, W]; labels are [n] integers.
#include <cstdint>
#include <string>

#include "suite/contracts/task_info.h"
#include "suite/contracts/task.h"

namespace lrb {

struct ImageFileParams {
  std::string task;                          // for messages
  std::string train_images, train_labels;
  std::string eval_images, eval_labels;      // both empty: eval is split off the training file
  double eval_fraction = 0.1;                // share of the training file held out when splitting
  std::uint64_t split_seed = 0;              // which records are held out (fixed across run seeds)
  std::string view = "grid";                 // "grid" or "sequence"
  bool permute = false;                      // fixed random permutation of pixel positions
  std::uint64_t permute_seed = 0;            // which permutation (fixed across run seeds)
  std::int64_t train_size = 0;               // 0: every training record
  std::int64_t num_classes = 0;              // 0: max training label + 1
};

// Reads the headers (and, when num_classes is 0, the training labels) and checks the files
// agree: shapes, counts, element types for the view, and labels in range. UserError naming
// the file (and record) otherwise. Cached reads make the later generate() cheap.
TaskInfo describe_image_files(const ImageFileParams& p, std::vector<std::string> metrics);

// Training records: the run seed picks which train_size records and in what order. Eval:
// the first eval_size records of the eval file (or of the held-out part), the same for
// every seed.
TaskData generate_image_files(const ImageFileParams& p, const DataRequest& request);

// The pixel permutation used for `permute` (positions 0..pixels-1).
std::vector<std::int64_t> pixel_permutation(std::int64_t pixels, std::uint64_t permute_seed);

}  // namespace lrb
