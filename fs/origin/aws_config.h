// AWS settings for an S3 origin: the region and the credentials, found where the AWS CLI finds
// them, in the same order: the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION, AWS_DEFAULT_REGION), then the profile (AWS_PROFILE, else
// "default") in the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
// ~/.aws/credentials) and the config file (AWS_CONFIG_FILE, else ~/.aws/config, where a
// profile's section is "[profile NAME]", except "[default]"). The region defaults to us-east-1.
// The endpoint comes from AWS_ENDPOINT_URL (a --endpoint option overrides it).
//
// The environment and the files are read through AwsSources, so that tests give their own.
// Nothing here logs or puts a secret in a message.
//
// Thread-safety: pure functions of their arguments (AwsSources' callbacks are called on the
// calling thread).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"

namespace mmfs::origin {

// An INI file as the AWS files write it: section -> key -> value. Keys are lower-cased; blank
// lines and lines starting with '#' or ';' are skipped; a "key =" with nothing after it and the
// indented lines under it (nested settings such as "s3 =") are skipped too. InvalidArgument
// naming the line for a line that is neither a section, a setting nor a comment.
using IniFile = std::map<std::string, std::map<std::string, std::string>>;
Result<IniFile> ParseIni(const std::string& text, const std::string& name);

struct AwsSources {
  // The value of an environment variable, or nullopt when it is not set.
  std::function<std::optional<std::string>(const std::string&)> env;
  // A file's contents; nullopt when it does not exist (an unreadable file is an error).
  std::function<Result<std::optional<std::string>>(const std::string&)> read_file;
  // The real ones: getenv and the local filesystem.
  static AwsSources System();
};

struct AwsSettings {
  std::string profile;
  std::string region;
  std::string endpoint;  // AWS_ENDPOINT_URL; empty if not set
  std::string access_key, secret_key, session_token;
  bool has_credentials() const { return !access_key.empty() && !secret_key.empty(); }
};

// The settings from `sources`. A profile named by AWS_PROFILE that no file has is an error; no
// credentials at all is not (an anonymous read of a public bucket), and the caller decides.
Result<AwsSettings> LoadAwsSettings(const AwsSources& sources);

}  // namespace mmfs::origin
