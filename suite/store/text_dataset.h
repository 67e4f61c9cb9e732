#pragma once
// Text (JSON, a status, an error message) stored as a variable-length UTF-8 string dataset
// that carries the sha256 of its text as an attribute. Fletcher32 cannot protect such data:
// it lives in the file's global heap, outside any chunk, so the reader checks the sha256.
#include <stdexcept>
#include <string>

#include "suite/store/h5.h"

namespace lrb {

// What makes stored data untrustworthy, as a reason for the user ("sha256 mismatch in /spec").
class BadData : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void write_text_dataset(const h5::Object& loc, const std::string& name, const std::string& text);
// Throws BadData naming `shown_as` (how the dataset is named in reasons, e.g. "/spec") when
// the dataset is missing, unreadable, without a sha256, or its text does not match it.
std::string read_text_dataset(const h5::Object& loc, const std::string& name, const std::string& shown_as);

}  // namespace lrb
