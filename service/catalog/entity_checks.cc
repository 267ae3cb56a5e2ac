#include "service/catalog/entity_checks.h"

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"

namespace capplan::service {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The length of the UTF-8 sequence starting at text[i], or 0 when it is not
// well formed.
size_t SequenceLength(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = 0;
  uint8_t low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

// The value as a finding shows it: escaped, at most 64 bytes.
std::string Show(absl::string_view value) {
  constexpr size_t kShown = 64;
  std::string shown = absl::CHexEscape(value.substr(0, kShown));
  return absl::StrCat("\"", shown, value.size() > kShown ? "\"..." : "\"");
}

// Repeated messages whose order carries the meaning, where the same entry
// may well come twice: a model's stack of layers.
bool IsSequence(const FieldDescriptor* f) {
  return f->full_name() == "capplan.v1.Model.layer_blocks" ||
         f->full_name() == "capplan.v1.LayerBlock.layers";
}

const FieldDescriptor* KeyField(const Descriptor* type) {
  for (const char* name : {"id", "name"}) {
    const FieldDescriptor* f = type->FindFieldByName(name);
    if (f != nullptr && !f->is_repeated() && f->type() == FieldDescriptor::TYPE_STRING) return f;
  }
  return nullptr;
}

class StructureWalk {
 public:
  std::vector<Finding> Take() { return std::move(findings_); }

  void Walk(const Message& m, const std::string& prefix) {
    const Reflection* r = m.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    r->ListFields(m, &fields);
    for (const FieldDescriptor* f : fields) {
      if (Full()) return;
      const std::string base = prefix.empty() ? f->name() : absl::StrCat(prefix, ".", f->name());
      if (!f->is_repeated()) {
        if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          Walk(r->GetMessage(m, f), base);
        } else if (f->type() == FieldDescriptor::TYPE_STRING) {
          CheckUtf8(base, r->GetString(m, f));
        }
        continue;
      }
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        RepeatedMessages(m, f, base);
      } else if (f->type() == FieldDescriptor::TYPE_STRING) {
        RepeatedStrings(m, f, base);
      }
    }
  }

 private:
  bool Full() const { return findings_.size() >= kMaxStructureFindings; }

  void Add(const std::string& path, const std::string& message) {
    if (!Full()) findings_.push_back({path, absl::StrCat(path, message)});
  }

  void CheckUtf8(const std::string& path, const std::string& value) {
    const size_t bad = FirstInvalidUtf8(value);
    if (bad == absl::string_view::npos) return;
    Add(path, absl::StrFormat(" = %s; must be valid UTF-8 (byte %d is not)", Show(value), bad + 1));
  }

  // `key` at `path` must not have been seen in this repeated field.
  void Unique(absl::flat_hash_map<std::string, int>& seen, const std::string& key, int index,
              const std::string& path, const std::string& base, const std::string& key_suffix) {
    auto [it, inserted] = seen.emplace(key, index);
    if (inserted) return;
    Add(path, absl::StrFormat(" = %s; must be unique (%s[%d]%s has it)", Show(key), base,
                              it->second, key_suffix));
  }

  void RepeatedStrings(const Message& m, const FieldDescriptor* f, const std::string& base) {
    const Reflection* r = m.GetReflection();
    absl::flat_hash_map<std::string, int> seen;
    for (int i = 0; i < r->FieldSize(m, f) && !Full(); ++i) {
      const std::string path = absl::StrCat(base, "[", i, "]");
      const std::string value = r->GetRepeatedString(m, f, i);
      CheckUtf8(path, value);
      Unique(seen, value, i, path, base, "");
    }
  }

  void RepeatedMessages(const Message& m, const FieldDescriptor* f, const std::string& base) {
    const Reflection* r = m.GetReflection();
    const FieldDescriptor* key = KeyField(f->message_type());
    absl::flat_hash_map<std::string, int> seen;
    for (int i = 0; i < r->FieldSize(m, f) && !Full(); ++i) {
      const Message& element = r->GetRepeatedMessage(m, f, i);
      const std::string path = absl::StrCat(base, "[", i, "]");
      const size_t before = findings_.size();
      Walk(element, path);
      // An element with findings inside (invalid UTF-8 above all, which
      // protobuf would complain about when serialising it) is not compared.
      const bool clean = findings_.size() == before;
      if (key != nullptr) {
        const std::string value = element.GetReflection()->GetString(element, key);
        if (!value.empty()) {
          Unique(seen, value, i, absl::StrCat(path, ".", key->name()), base,
                 absl::StrCat(".", key->name()));
        }
      } else if (clean && !IsSequence(f)) {
        std::string bytes;
        element.SerializeToString(&bytes);
        auto [it, inserted] = seen.emplace(std::move(bytes), i);
        if (!inserted) {
          Add(path,
              absl::StrFormat("; must not repeat %s[%d] (the same entry twice)", base, it->second));
        }
      }
    }
  }

  std::vector<Finding> findings_;
};

}  // namespace

size_t FirstInvalidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = SequenceLength(text, i);
    if (length == 0) return i;
    i += length;
  }
  return absl::string_view::npos;
}

std::vector<Finding> CheckEntityStructure(const Message& entity) {
  StructureWalk walk;
  walk.Walk(entity, "");
  return walk.Take();
}

}  // namespace capplan::service
