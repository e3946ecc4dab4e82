#include "tools/pack/captions.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <csv.h>
#include <nlohmann/json.hpp>

#include "base/file_util.h"
#include "base/json_text.h"
#include "fs/format/format.h"

namespace mmfs::pack {

namespace {

constexpr char kHfMetadata[] = "metadata.jsonl";
constexpr char kHfMetadataCsv[] = "metadata.csv";
constexpr uint64_t kMaxMetadataBytes = 16ull << 30;

bool IsDir(const SourceNode& n) { return (n.mode & format::kModeTypeMask) == format::kModeDirectory; }

// The node at `rel` ('/'-separated) under `dir`, or nullptr.
SourceNode* FindPath(SourceNode* dir, std::string_view rel) {
  SourceNode* cur = dir;
  size_t start = 0;
  while (cur != nullptr && start < rel.size()) {
    size_t slash = rel.find('/', start);
    if (slash == std::string_view::npos) slash = rel.size();
    std::string_view part = rel.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    if (!IsDir(*cur)) return nullptr;
    cur = FindChild(cur, part);
  }
  return cur;
}

// Files to add, by the '/'-separated path of their directory below the base the paths are
// relative to (normalised: NormalPath); added after all rows are read, so that node pointers
// stay valid meanwhile. `origin` remembers which row planned each path, for the message when
// another row plans it again.
struct Additions {
  std::map<std::string, std::vector<SourceNode>> files;
  std::map<std::string, std::string> origin;  // "dir/name" -> the row that planned it
};

// `origin` is the row ("metadata.jsonl line 3"), `image` the file name as it spells it.
Status Plan(Additions* add, SourceNode* dir, const std::string& dir_rel, std::string name,
            std::string data, int64_t mtime_ns, const std::string& origin,
            const std::string& image) {
  if (FindChild(dir, name) != nullptr) {
    return Status::AlreadyExists(origin + ": would create '" + name +
                                 "', which already exists in the source; rename one of them");
  }
  const std::string path = dir_rel.empty() ? name : dir_rel + "/" + name;
  std::string row = origin + " (\"" + image + "\")";
  auto [it, added] = add->origin.emplace(path, row);
  if (!added) {
    return Status::AlreadyExists(it->second + " and " + row + " both make '" + path +
                                 "' (the same image listed twice, or two images that share the "
                                 "key); remove one of the rows");
  }
  SourceNode f;
  f.name = std::move(name);
  f.mode = format::kModeRegular | 0644;
  f.mtime_ns = mtime_ns;
  f.size = data.size();
  f.has_inline_data = true;
  f.inline_data = std::move(data);
  add->files[dir_rel].push_back(std::move(f));
  return Status::Ok();
}

// Deepest directories first: adding to a directory moves its children in memory, so a
// subdirectory is looked up again only after everything below it is done.
void Apply(Additions& add, SourceNode* base, CaptionCounts* counts) {
  std::vector<std::string> dirs;
  for (const auto& [rel, files] : add.files) dirs.push_back(rel);
  std::sort(dirs.begin(), dirs.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& rel : dirs) {
    SourceNode* dir = FindPath(base, rel);
    if (dir == nullptr) continue;  // cannot happen: planned from an existing node
    counts->files_added += add.files[rel].size();
    for (SourceNode& f : add.files[rel]) {
      counts->bytes_added += f.size;
      dir->children.push_back(std::move(f));
    }
    std::sort(dir->children.begin(), dir->children.end(),
              [](const SourceNode& a, const SourceNode& b) { return a.name < b.name; });
  }
  add.files.clear();
  add.origin.clear();
}

// `rel` without empty and "." components: "./a//b.jpg" -> "a/b.jpg", the path FindPath finds.
std::string NormalPath(std::string_view rel) {
  std::string out;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t slash = rel.find('/', start);
    if (slash == std::string_view::npos) slash = rel.size();
    std::string_view part = rel.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

// `file_name`'s directory and key: "images/0001.png" -> (node of images, "images", "0001").
SourceNode* ParentAndKey(SourceNode* base, const std::string& raw_name, std::string* parent_rel,
                         std::string* key) {
  // One image has one set of paths however a row spells it ("img1.jpg", "./img1.jpg").
  const std::string file_name = NormalPath(raw_name);
  size_t slash = file_name.rfind('/');
  *parent_rel = slash == std::string::npos ? "" : file_name.substr(0, slash);
  SourceNode* parent = FindPath(base, *parent_rel);
  std::string base_name = slash == std::string::npos ? file_name : file_name.substr(slash + 1);
  *key = std::string(SampleKeyOf(base_name));
  return parent;
}

// One metadata row with where it came from ("metadata.jsonl line 3").
struct MetadataRow {
  std::string where;
  nlohmann::json row;
};

Status ReadJsonl(const std::string& path, std::string_view text, std::vector<MetadataRow>* out) {
  size_t line_no = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    std::string where = path + " line " + std::to_string(line_no);
    nlohmann::json row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (row.is_discarded() || !row.is_object()) {
      return Status::InvalidArgument(where + ": not a JSON object");
    }
    out->push_back({std::move(where), std::move(row)});
  }
  return Status::Ok();
}

// libcsv trims spaces and tabs around unquoted fields unless told that nothing is a space;
// Python's csv.writer leaves "  a caption  " unquoted, and the datasets library keeps its spaces.
int NothingIsSpace(unsigned char) { return 0; }

// metadata.csv through libcsv (RFC 4180 quoting): the first row names the columns; each row
// becomes an object of strings, byte for byte, as the datasets library reads it.
Status ReadCsv(const std::string& path, std::string_view text, std::vector<MetadataRow>* out) {
  struct State {
    std::vector<std::string> header, fields;
    std::vector<MetadataRow>* out;
    const std::string* path;
    size_t row_no = 0;
    std::string error;
  } st;
  st.out = out;
  st.path = &path;
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
    return Status::ResourceExhausted("csv_init");
  }
  csv_set_space_func(&parser, NothingIsSpace);
  auto on_field = [](void* data, size_t len, void* user) {
    auto* s = static_cast<State*>(user);
    s->fields.emplace_back(data != nullptr ? static_cast<const char*>(data) : "", len);
  };
  auto on_row = [](int, void* user) {
    auto* s = static_cast<State*>(user);
    ++s->row_no;
    if (s->row_no == 1) {
      s->header = std::move(s->fields);
    } else if (s->error.empty()) {
      std::string where = *s->path + " row " + std::to_string(s->row_no);
      if (s->fields.size() != s->header.size()) {
        s->error = where + ": " + std::to_string(s->fields.size()) + " fields, the header has " +
                   std::to_string(s->header.size());
      } else {
        nlohmann::json row = nlohmann::json::object();
        for (size_t i = 0; i < s->fields.size(); ++i) row[s->header[i]] = s->fields[i];
        s->out->push_back({std::move(where), std::move(row)});
      }
    }
    s->fields.clear();
  };
  size_t parsed = csv_parse(&parser, text.data(), text.size(), on_field, on_row, &st);
  int rc = parsed == text.size() ? csv_fini(&parser, on_field, on_row, &st) : -1;
  std::string parse_error = rc != 0 ? csv_strerror(csv_error(&parser)) : "";
  csv_free(&parser);
  if (rc != 0) {
    return Status::InvalidArgument(path + ": not valid CSV near row " +
                                   std::to_string(st.row_no + 1) + " (" + parse_error + ")");
  }
  // The header is checked before the rows, so a file without the column says so, not "row 2".
  if (st.row_no > 0 &&
      std::find(st.header.begin(), st.header.end(), "file_name") == st.header.end()) {
    std::string columns;
    for (const std::string& h : st.header) columns += (columns.empty() ? "" : ", ") + h;
    return Status::InvalidArgument("no \"file_name\" column in the header: " + path +
                                   " (its columns: " + columns + ")");
  }
  if (!st.error.empty()) return Status::InvalidArgument(st.error);
  return Status::Ok();
}

Status AddHfIn(SourceNode* dir, const std::vector<std::string>& fields, PackReporter& reporter,
               CaptionCounts* counts) {
  for (SourceNode& child : dir->children) {
    if (IsDir(child)) MMFS_RETURN_IF_ERROR(AddHfIn(&child, fields, reporter, counts));
  }
  SourceNode* jsonl = FindChild(dir, kHfMetadata);
  SourceNode* csv = FindChild(dir, kHfMetadataCsv);
  if (jsonl != nullptr && (IsDir(*jsonl) || jsonl->source_path.empty())) jsonl = nullptr;
  if (csv != nullptr && (IsDir(*csv) || csv->source_path.empty())) csv = nullptr;
  if (jsonl != nullptr && csv != nullptr) {
    reporter.Warning(csv->source_path + ": ignored, " + kHfMetadata + " is used");
    csv = nullptr;
  }
  SourceNode* meta = jsonl != nullptr ? jsonl : csv;
  if (meta == nullptr) return Status::Ok();
  const std::string& path = meta->source_path;
  MMFS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, kMaxMetadataBytes));
  // Spreadsheet programs start a CSV (and some editors a JSONL) with a UTF-8 byte order mark; it
  // is not part of the first column's name.
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);
  std::vector<MetadataRow> rows;
  MMFS_RETURN_IF_ERROR(jsonl != nullptr ? ReadJsonl(path, body, &rows) : ReadCsv(path, body, &rows));
  Additions add;
  uint64_t missing = 0, uncaptioned = 0;
  for (const MetadataRow& r : rows) {
    const nlohmann::json& row = r.row;
    auto fn = row.find("file_name");
    if (fn == row.end() || !fn->is_string()) {
      return Status::InvalidArgument(r.where + ": no \"file_name\" string");
    }
    std::string file_name = fn->get<std::string>();
    const std::string& where = r.where;
    SourceNode* image = FindPath(dir, file_name);
    if (image == nullptr || IsDir(*image)) {
      ++missing;
      continue;
    }
    std::string key, parent_rel;
    SourceNode* parent = ParentAndKey(dir, file_name, &parent_rel, &key);
    const nlohmann::json* caption = nullptr;
    for (const std::string& f : fields) {
      auto it = row.find(f);
      if (it != row.end() && it->is_string()) {
        caption = &*it;
        break;
      }
    }
    if (caption != nullptr) {
      MMFS_RETURN_IF_ERROR(Plan(&add, parent, parent_rel, key + ".txt",
                                caption->get<std::string>(), meta->mtime_ns, where, file_name));
    } else {
      ++uncaptioned;
    }
    MMFS_RETURN_IF_ERROR(Plan(&add, parent, parent_rel, key + ".json", JsonText(row) + "\n",
                              meta->mtime_ns, where, file_name));
  }
  if (missing > 0) {
    reporter.Warning(path + ": " + std::to_string(missing) +
                     " rows name an image that is not in the folder; their captions are left out");
  }
  if (uncaptioned > 0) {
    std::string names;
    for (const std::string& f : fields) names += (names.empty() ? "" : ", ") + f;
    reporter.Warning(path + ": " + std::to_string(uncaptioned) + " rows have no caption field (" +
                     names + "; choose with --caption-field); only their .json is made");
  }
  counts->rows_without_image += missing;
  counts->captions_without_image += missing;
  counts->rows_without_caption += uncaptioned;
  Apply(add, dir, counts);
  return Status::Ok();
}

bool HasHfIn(const SourceNode& dir) {
  for (const SourceNode& c : dir.children) {
    if (IsDir(c) ? HasHfIn(c) : (c.name == kHfMetadata || c.name == kHfMetadataCsv)) return true;
  }
  return false;
}

}  // namespace

SourceNode* FindChild(SourceNode* dir, std::string_view name) {
  auto it = std::lower_bound(dir->children.begin(), dir->children.end(), name,
                             [](const SourceNode& n, std::string_view v) { return n.name < v; });
  return it != dir->children.end() && it->name == name ? &*it : nullptr;
}

void SortTree(SourceNode* dir) {
  std::sort(dir->children.begin(), dir->children.end(),
            [](const SourceNode& a, const SourceNode& b) { return a.name < b.name; });
  for (SourceNode& c : dir->children) {
    if (IsDir(c)) SortTree(&c);
  }
}

bool HasHfMetadata(const SourceNode& root) { return HasHfIn(root); }

Status AddHfMetadataCaptions(SourceNode* root, const std::vector<std::string>& caption_fields,
                             PackReporter& reporter, CaptionCounts* counts) {
  return AddHfIn(root, caption_fields, reporter, counts);
}

Status AddCocoCaptions(SourceNode* root, const std::string& annotations_path,
                       PackReporter& reporter, CaptionCounts* counts) {
  MMFS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(annotations_path, kMaxMetadataBytes));
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(annotations_path + ": not COCO captions (" + why + ")");
  };
  if (doc.is_discarded()) return bad("not valid JSON");
  if (!doc.is_object() || !doc.contains("images") || !doc["images"].is_array() ||
      !doc.contains("annotations") || !doc["annotations"].is_array()) {
    return bad("needs \"images\" and \"annotations\" arrays");
  }
  std::map<int64_t, std::string> file_of;
  for (const auto& im : doc["images"]) {
    if (!im.is_object() || !im.contains("id") || !im["id"].is_number_integer() ||
        !im.contains("file_name") || !im["file_name"].is_string()) {
      return bad("an image without an integer \"id\" and a \"file_name\"");
    }
    file_of[im["id"].get<int64_t>()] = im["file_name"].get<std::string>();
  }
  std::map<int64_t, std::string> captions;
  std::map<int64_t, uint64_t> annotations_of;  // image_id -> number of captions
  for (const auto& an : doc["annotations"]) {
    if (!an.is_object() || !an.contains("image_id") || !an["image_id"].is_number_integer() ||
        !an.contains("caption") || !an["caption"].is_string()) {
      return bad("an annotation without an integer \"image_id\" and a \"caption\"");
    }
    std::string c = an["caption"].get<std::string>();
    while (!c.empty() && (c.back() == '\n' || c.back() == ' ')) c.pop_back();
    std::replace(c.begin(), c.end(), '\n', ' ');  // one caption per line
    captions[an["image_id"].get<int64_t>()] += c + "\n";
    annotations_of[an["image_id"].get<int64_t>()]++;
  }
  // Annotations of an image_id that no entry of "images" has: their captions have nowhere to go.
  uint64_t unmatched = 0;
  int64_t unmatched_example = 0;
  for (const auto& [id, n] : annotations_of) {
    if (file_of.count(id) > 0) continue;
    if (unmatched == 0) unmatched_example = id;
    unmatched += n;
  }
  struct stat st;
  int64_t mtime = ::stat(annotations_path.c_str(), &st) == 0
                      ? static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec
                      : 0;
  Additions add;
  uint64_t missing = 0, uncaptioned = 0, missing_captions = 0;
  for (const auto& [id, file_name] : file_of) {
    SourceNode* image = FindPath(root, file_name);
    if (image == nullptr || IsDir(*image)) {
      ++missing;
      auto n = annotations_of.find(id);
      if (n != annotations_of.end()) missing_captions += n->second;
      continue;
    }
    auto it = captions.find(id);
    if (it == captions.end()) {
      ++uncaptioned;
      continue;
    }
    std::string key, parent_rel;
    SourceNode* parent = ParentAndKey(root, file_name, &parent_rel, &key);
    MMFS_RETURN_IF_ERROR(Plan(&add, parent, parent_rel, key + ".txt", it->second, mtime,
                              annotations_path + " (image " + std::to_string(id) + ")",
                              file_name));
  }
  if (missing > 0) {
    reporter.Warning(annotations_path + ": " + std::to_string(missing) + " of " +
                     std::to_string(file_of.size()) +
                     " images are not in the source folder; their captions are left out");
  }
  if (unmatched > 0) {
    reporter.Warning(annotations_path + ": " + std::to_string(unmatched) +
                     " annotations have an image_id that no image has (the first: " +
                     std::to_string(unmatched_example) + "); their captions are left out");
  }
  if (uncaptioned > 0) {
    reporter.Warning(annotations_path + ": " + std::to_string(uncaptioned) +
                     " images have no caption");
  }
  counts->captions_without_image += missing_captions + unmatched;
  counts->rows_without_image += missing;
  counts->rows_without_caption += uncaptioned;
  Apply(add, root, counts);
  return Status::Ok();
}

}  // namespace mmfs::pack
