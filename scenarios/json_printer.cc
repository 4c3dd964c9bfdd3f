#include "scenarios/json_printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/type.pb.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>

namespace btsim::scenarios {
namespace {

namespace pb = ::google::protobuf;

constexpr char kUrlPrefix[] = "type.googleapis.com";

// True when every field of `type`, and of the messages it holds, has
// presence (proto3 `optional`, or a message field) and none is repeated:
// then printing primitive fields regardless of their value changes nothing.
bool EveryFieldHasPresence(const pb::Descriptor* type,
                           std::set<const pb::Descriptor*>& seen) {
  if (!seen.insert(type).second) return true;
  for (int i = 0; i < type->field_count(); ++i) {
    const pb::FieldDescriptor* field = type->field(i);
    if (field->is_repeated() || !field->has_presence()) return false;
    if (field->message_type() != nullptr &&
        !EveryFieldHasPresence(field->message_type(), seen)) {
      return false;
    }
  }
  return true;
}

}  // namespace

// Protobuf's JSON printer asks a TypeResolver for the schema of every
// message it prints; the resolver over the generated descriptors builds it
// anew each time, which costs more than printing a small message. This one
// builds each type once.
class JsonPrinter::TypeCache : public pb::util::TypeResolver {
 public:
  struct Info {
    std::string url;
    // See EveryFieldHasPresence: such types skip protobuf's pass that adds
    // default values (a third of the time of a history line).
    bool every_field_has_presence = false;
  };

  TypeCache()
      : resolver_(pb::util::NewTypeResolverForDescriptorPool(
            kUrlPrefix, pb::DescriptorPool::generated_pool())) {}

  const Info& InfoOf(const pb::Descriptor* type) {
    auto it = infos_.find(type);
    if (it == infos_.end()) {
      Info info;
      info.url = std::string(kUrlPrefix) + "/" + type->full_name();
      std::set<const pb::Descriptor*> seen;
      info.every_field_has_presence = EveryFieldHasPresence(type, seen);
      it = infos_.emplace(type, std::move(info)).first;
    }
    return it->second;
  }

  pb::util::Status ResolveMessageType(const std::string& url,
                                      pb::Type* type) override {
    auto it = types_.find(url);
    if (it == types_.end()) {
      pb::Type resolved;
      pb::util::Status status = resolver_->ResolveMessageType(url, &resolved);
      if (!status.ok()) return status;
      it = types_.emplace(url, std::move(resolved)).first;
    }
    *type = it->second;
    return pb::util::Status();
  }

  pb::util::Status ResolveEnumType(const std::string& url,
                                   pb::Enum* type) override {
    return resolver_->ResolveEnumType(url, type);
  }

 private:
  std::unique_ptr<pb::util::TypeResolver> resolver_;
  std::map<std::string, pb::Type> types_;
  std::map<const pb::Descriptor*, Info> infos_;
};

JsonPrinter::JsonPrinter(Layout layout) : types_(new TypeCache) {
  options_.preserve_proto_field_names = true;
  options_.add_whitespace = layout == Layout::kIndented;
}

JsonPrinter::~JsonPrinter() = default;

Status JsonPrinter::Print(const pb::Message& message, std::string& out) {
  const TypeCache::Info& info = types_->InfoOf(message.GetDescriptor());
  binary_.clear();
  {
    pb::io::StringOutputStream stream(&binary_);
    pb::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);  // map keys sorted
    if (!message.SerializeToCodedStream(&coded)) {
      return Internal("cannot serialize a " + message.GetTypeName());
    }
  }
  options_.always_print_primitive_fields = !info.every_field_has_presence;
  // Into a buffer of its own: protobuf's string stream first grows the
  // string to its capacity, zeroing it, and `out` may be large.
  json_.clear();
  pb::util::Status status = pb::util::BinaryToJsonString(
      types_.get(), info.url, binary_, &json_, options_);
  if (!status.ok()) {
    return Internal("cannot print a " + message.GetTypeName() +
                    " as JSON: " + status.ToString());
  }
  // The indented layout ends with a newline; the one-line layout does not.
  if (json_.ends_with('\n')) json_.pop_back();
  out += json_;
  return OkStatus();
}

void AssignJsonText(std::string_view bytes, std::string& out) {
  size_t high = 0;  // bytes >= 0x80 take two bytes of UTF-8
  for (unsigned char c : bytes) high += c >> 7;
  if (high == 0) {
    out.assign(bytes);
    return;
  }
  out.resize(bytes.size() + high);
  char* p = out.data();
  for (unsigned char c : bytes) {
    if (c < 0x80) {
      *p++ = static_cast<char>(c);
    } else {
      *p++ = static_cast<char>(0xc0 | (c >> 6));
      *p++ = static_cast<char>(0x80 | (c & 0x3f));
    }
  }
}

std::string JsonText(std::string_view bytes) {
  std::string out;
  AssignJsonText(bytes, out);
  return out;
}

bool BytesOfJsonText(std::string_view text, std::string& bytes) {
  bytes.clear();
  bytes.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      bytes.push_back(static_cast<char>(c));
      continue;
    }
    // U+0080..U+00FF: 0xc2 or 0xc3, then a continuation byte.
    if ((c != 0xc2 && c != 0xc3) || i + 1 == text.size()) return false;
    const auto next = static_cast<unsigned char>(text[++i]);
    if ((next & 0xc0) != 0x80) return false;
    bytes.push_back(static_cast<char>(((c & 0x03) << 6) | (next & 0x3f)));
  }
  return true;
}

double RoundToDecimals(double v, int decimals) {
  // From 2^52 on every double is a whole number.
  if (!std::isfinite(v) || std::fabs(v) >= 0x1p52) return v;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return std::strtod(buffer, nullptr);
}

double RoundToSignificant(double v, int digits) {
  if (!std::isfinite(v)) return v;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
  return std::strtod(buffer, nullptr);
}

}  // namespace btsim::scenarios
