#pragma once
// parasim::exporter::ExportContext — what one export records while it maps a scenario: the
// ledger of fields (export_types.hpp), the notes for the user, and the settings the target
// cannot express. The mappers always write the closest configuration; finish() then either
// returns it (nothing inexpressible, or --allow-approximate: every difference listed) or throws
// cost::InputError with one problem per inexpressible setting, each naming its JSON path, the
// feature and the targets that support it (exit 2, nothing written).

#include <string>
#include <vector>

#include "planner/export/export_types.hpp"

namespace parasim::exporter {

class ExportContext {
 public:
  // `file` and `path_prefix` ("/scenario" in a plan file) place the problems of finish().
  ExportContext(std::string file, std::string path_prefix, std::string target_label,
                bool allow_approximate)
      : file_(std::move(file)),
        prefix_(std::move(path_prefix)),
        label_(std::move(target_label)),
        allow_approximate_(allow_approximate) {}

  const std::string& target_label() const { return label_; }
  bool approximate() const { return allow_approximate_; }

  // The field became `key` (a flag, a JSON key path, a constructor argument).
  void mapped(std::string path, std::string key);
  // The target takes it from code or the launcher; `note` says where (printed to the user).
  void stated(std::string path, std::string note);
  // Hardware, a cost-model figure or metadata: nothing to write.
  void not_trainer(std::string path, std::string why);
  // No effect in this scenario.
  void unused(std::string path, std::string why);
  // The target cannot express `feature`; the caller writes `closest` instead.
  void cannot(std::string path, std::string feature, std::string supported_by, std::string closest);
  // Has no setting of its own: it goes with a feature refused at another path.
  void part_of_refused(std::string path, std::string why);
  // A note that belongs to no single field (the launch command).
  void note(std::string text) { notes_.push_back(std::move(text)); }

  const std::vector<Difference>& differences() const { return differences_; }
  const std::vector<std::string>& notes() const { return notes_; }

  // The result with `text`; throws cost::InputError when a setting is inexpressible and
  // approximation was not allowed.
  ExportResult finish(std::string text) const;

 private:
  std::string file_;
  std::string prefix_;
  std::string label_;
  bool allow_approximate_;
  std::vector<FieldRecord> ledger_;
  std::vector<std::string> notes_;
  std::vector<Difference> differences_;
};

// "PATH: FEATURE is not expressible in TARGET; supported by: ...; --allow-approximate writes ..."
// without the file: one line per difference, for messages, headers and stderr.
std::string difference_text(const Difference& d, const std::string& target_label);

}  // namespace parasim::exporter
