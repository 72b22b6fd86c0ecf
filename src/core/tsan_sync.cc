#include "core/tsan_sync.h"

#include <map>
#include <memory>

#include "core/mutex.h"

namespace weft {

void* TsanSyncKey(const std::string& name) {
#ifdef WEFT_TSAN
  // Never freed: a key must outlive every view that uses it, and there is one per
  // segment direction, a few bytes each, in test processes only.
  static Mutex mu;
  static auto* keys = new std::map<std::string, std::unique_ptr<char>>();
  MutexLock lock(&mu);
  auto& key = (*keys)[name];
  if (key == nullptr) key = std::make_unique<char>(0);
  return key.get();
#else
  (void)name;
  return nullptr;
#endif
}

}  // namespace weft
