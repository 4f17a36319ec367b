#pragma once
// parasim::exporter torchtitan's settings as the torchtitan export collects them: a TOML section
// and key each (0.2.2's job file), which 0.3.0 takes as --section.key flags. Internal to the
// torchtitan export.

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace parasim::exporter {

// One setting: TOML section and key; the 0.3 flag is --section.key.
struct Setting {
  std::string section;
  std::string key;
  nlohmann::ordered_json value;
};

class Settings {
 public:
  void set(std::string section, std::string key, nlohmann::ordered_json value) {
    for (Setting& s : items_) {
      if (s.section == section && s.key == key) {
        s.value = std::move(value);
        return;
      }
    }
    items_.push_back({std::move(section), std::move(key), std::move(value)});
  }
  const std::vector<Setting>& items() const { return items_; }

 private:
  std::vector<Setting> items_;
};

}  // namespace parasim::exporter
