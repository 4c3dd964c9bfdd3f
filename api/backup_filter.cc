#include "api/backup_filter.h"

#include <charconv>
#include <utility>

#include <google/protobuf/util/time_util.h>

namespace btsim::api {
namespace {

namespace admin = ::google::bigtable::admin::v2;
using google::protobuf::util::TimeUtil;

Status Bad(std::string_view why) {
  return InvalidArgument("filter: " + std::string(why) +
                         "; btsim takes comparisons \"FIELD OP VALUE\" joined "
                         "by AND (docs/backups.md)");
}

bool IsTime(std::string_view field) {
  return field == "start_time" || field == "end_time" || field == "expire_time";
}
bool IsText(std::string_view field) {
  return field == "name" || field == "source_table" || field == "source_backup";
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

int64_t Nanos(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1000000000 + t.nanos();
}

}  // namespace

Result<BackupFilter> BackupFilter::Parse(std::string_view text) {
  BackupFilter filter;
  text = Trim(text);
  while (!text.empty()) {
    const size_t and_at = text.find(" AND ");
    const std::string_view term_text = Trim(text.substr(0, and_at));
    text = and_at == std::string_view::npos ? std::string_view()
                                            : Trim(text.substr(and_at + 5));
    if (and_at != std::string_view::npos && text.empty()) {
      return Bad("nothing after AND");
    }
    // The operator: the first of these characters.
    const size_t op_at = term_text.find_first_of("=!<>:");
    if (op_at == std::string_view::npos || op_at == 0) {
      return Bad("expected FIELD OP VALUE in " + QuoteForError(term_text));
    }
    Term term;
    term.field = std::string(Trim(term_text.substr(0, op_at)));
    std::string_view rest = term_text.substr(op_at);
    static constexpr std::pair<std::string_view, Op> kOps[] = {
        {"!=", Op::kNe}, {"<=", Op::kLe}, {">=", Op::kGe}, {"=", Op::kEq},
        {":", Op::kHas}, {"<", Op::kLt},  {">", Op::kGt}};
    bool found = false;
    for (const auto& [spelling, op] : kOps) {
      if (rest.starts_with(spelling)) {
        term.op = op;
        rest.remove_prefix(spelling.size());
        found = true;
        break;
      }
    }
    if (!found) return Bad("unknown operator in " + QuoteForError(term_text));
    std::string_view value = Trim(rest);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    } else if (value.find_first_of(" ()\"") != std::string_view::npos) {
      // OR, NOT, parentheses, or a value that needs quotes.
      return Bad("cannot parse " + QuoteForError(term_text));
    }
    term.value = std::string(value);
    const bool equality = term.op == Op::kEq || term.op == Op::kNe;
    if (IsText(term.field)) {
      if (!equality && term.op != Op::kHas) {
        return Bad(term.field + " takes =, != or :");
      }
    } else if (term.field == "state") {
      if (!equality) return Bad("state takes = or !=");
      if (term.value != "READY" && term.value != "CREATING") {
        return Bad("state is READY or CREATING");
      }
    } else if (IsTime(term.field) || term.field == "size_bytes") {
      if (term.op == Op::kHas) return Bad(term.field + " does not take :");
      if (term.field == "size_bytes") {
        const auto [end, ec] =
            std::from_chars(term.value.data(),
                            term.value.data() + term.value.size(), term.number);
        if (ec != std::errc() || end != term.value.data() + term.value.size()) {
          return Bad("size_bytes takes an integer");
        }
      } else {
        google::protobuf::Timestamp t;
        if (!TimeUtil::FromString(term.value, &t)) {
          return Bad(term.field +
                     " takes an RFC 3339 time such as "
                     "2026-01-02T03:04:05Z");
        }
        term.number = Nanos(t);
      }
    } else {
      return Bad("unknown field " + QuoteForError(term.field));
    }
    filter.terms_.push_back(std::move(term));
  }
  return filter;
}

bool BackupFilter::Matches(const admin::Backup& backup) const {
  for (const Term& term : terms_) {
    const auto compare = [op = term.op](const auto& a, const auto& b) {
      switch (op) {
        case Op::kEq:
          return a == b;
        case Op::kNe:
          return a != b;
        case Op::kLt:
          return a < b;
        case Op::kLe:
          return a <= b;
        case Op::kGt:
          return a > b;
        case Op::kGe:
          return a >= b;
        case Op::kHas:
          break;  // handled by the caller
      }
      return false;
    };
    bool ok = false;
    if (IsText(term.field) || term.field == "state") {
      const std::string value = term.field == "name" ? backup.name()
                                : term.field == "source_table"
                                    ? backup.source_table()
                                : term.field == "source_backup"
                                    ? backup.source_backup()
                                    : admin::Backup::State_Name(backup.state());
      ok = term.op == Op::kHas
               ? value.find(term.value) != std::string::npos
               : compare(std::string_view(value), std::string_view(term.value));
    } else if (term.field == "size_bytes") {
      ok = compare(int64_t{backup.size_bytes()}, term.number);
    } else {
      const auto& t = term.field == "start_time" ? backup.start_time()
                      : term.field == "end_time" ? backup.end_time()
                                                 : backup.expire_time();
      ok = compare(Nanos(t), term.number);
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace btsim::api
