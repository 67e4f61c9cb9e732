#include "suite/registry/registry.h"

#include "suite/core/errors.h"

namespace lrb {

template <class Entry>
void Registry<Entry>::duplicate(const std::string& name) {
  LRB_CHECK(false, "two registrations under the name '" + name + "'");
  std::abort();
}

template class Registry<ModelEntry>;
template class Registry<TaskEntry>;

}  // namespace lrb
