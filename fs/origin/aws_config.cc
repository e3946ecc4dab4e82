#include "fs/origin/aws_config.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace mmfs::origin {
namespace {

std::string Strip(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Result<IniFile> ParseIni(const std::string& text, const std::string& name) {
  IniFile ini;
  std::istringstream in(text);
  std::string raw;
  std::string section;
  bool have_section = false;
  bool in_nested = false;  // under a "key =" with no value: its indented lines are skipped
  for (int number = 1; std::getline(in, raw); ++number) {
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string line = Strip(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    const bool indented = std::isspace(static_cast<unsigned char>(raw[0]));
    if (in_nested && indented) continue;
    in_nested = false;
    if (line.front() == '[') {
      if (line.back() != ']') {
        return Status::InvalidArgument(name + ":" + std::to_string(number) +
                                       ": a section line without ']'");
      }
      section = Strip(line.substr(1, line.size() - 2));
      have_section = true;
      ini[section];
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos || !have_section) {
      return Status::InvalidArgument(
          name + ":" + std::to_string(number) +
          (have_section ? ": not a 'key = value' line" : ": a setting before any [section]"));
    }
    const std::string key = Lower(Strip(line.substr(0, eq)));
    const std::string value = Strip(line.substr(eq + 1));
    if (key.empty()) {
      return Status::InvalidArgument(name + ":" + std::to_string(number) +
                                     ": a setting without "
                                     "a name");
    }
    if (value.empty()) {
      in_nested = true;
      continue;
    }
    ini[section][key] = value;
  }
  return ini;
}

AwsSources AwsSources::System() {
  AwsSources s;
  s.env = [](const std::string& var) -> std::optional<std::string> {
    const char* v = std::getenv(var.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  s.read_file = [](const std::string& path) -> Result<std::optional<std::string>> {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
      if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
      return Status::FromErrno(errno, "open " + path);
    }
    std::ostringstream text;
    text << f.rdbuf();
    if (f.bad()) return Status::IoError("read " + path);
    return std::optional<std::string>(text.str());
  };
  return s;
}

Result<AwsSettings> LoadAwsSettings(const AwsSources& sources) {
  auto env = [&](const char* var) {
    std::optional<std::string> v = sources.env(var);
    return v.has_value() ? *v : std::string();
  };
  AwsSettings out;
  const std::string named_profile = env("AWS_PROFILE");
  out.profile = named_profile.empty() ? "default" : named_profile;
  const std::string home = env("HOME");
  std::string credentials_path = env("AWS_SHARED_CREDENTIALS_FILE");
  if (credentials_path.empty() && !home.empty()) credentials_path = home + "/.aws/credentials";
  std::string config_path = env("AWS_CONFIG_FILE");
  if (config_path.empty() && !home.empty()) config_path = home + "/.aws/config";

  std::map<std::string, std::string> from_credentials, from_config;
  bool profile_seen = false;
  if (!credentials_path.empty()) {
    MMFS_ASSIGN_OR_RETURN(std::optional<std::string> text, sources.read_file(credentials_path));
    if (text) {
      MMFS_ASSIGN_OR_RETURN(IniFile ini, ParseIni(*text, credentials_path));
      if (auto it = ini.find(out.profile); it != ini.end()) {
        from_credentials = it->second;
        profile_seen = true;
      }
    }
  }
  if (!config_path.empty()) {
    MMFS_ASSIGN_OR_RETURN(std::optional<std::string> text, sources.read_file(config_path));
    if (text) {
      MMFS_ASSIGN_OR_RETURN(IniFile ini, ParseIni(*text, config_path));
      const std::string section = out.profile == "default" ? "default" : "profile " + out.profile;
      if (auto it = ini.find(section); it != ini.end()) {
        from_config = it->second;
        profile_seen = true;
      }
    }
  }
  if (!named_profile.empty() && !profile_seen) {
    return Status::NotFound("AWS profile '" + named_profile + "' is in neither " +
                            credentials_path + " nor " + config_path);
  }
  auto from_files = [&](const std::string& key) {
    if (auto it = from_credentials.find(key); it != from_credentials.end()) return it->second;
    if (auto it = from_config.find(key); it != from_config.end()) return it->second;
    return std::string();
  };

  // Keys from the environment come as a pair: a key id without its secret is not mixed with
  // a profile's secret.
  if (!env("AWS_ACCESS_KEY_ID").empty() && !env("AWS_SECRET_ACCESS_KEY").empty()) {
    out.access_key = env("AWS_ACCESS_KEY_ID");
    out.secret_key = env("AWS_SECRET_ACCESS_KEY");
    out.session_token = env("AWS_SESSION_TOKEN");
  } else {
    out.access_key = from_files("aws_access_key_id");
    out.secret_key = from_files("aws_secret_access_key");
    out.session_token = from_files("aws_session_token");
  }
  out.region = env("AWS_REGION");
  if (out.region.empty()) out.region = env("AWS_DEFAULT_REGION");
  if (out.region.empty()) out.region = from_files("region");
  if (out.region.empty()) out.region = "us-east-1";
  out.endpoint = env("AWS_ENDPOINT_URL");
  if (out.endpoint.empty()) out.endpoint = from_files("endpoint_url");
  return out;
}

}  // namespace mmfs::origin
