#include "fs/origin/s3_xml.h"

#include <libxml/parser.h>

#include <climits>

namespace mmfs::origin::s3xml {
namespace {

struct FreeParser {
  void operator()(xmlParserCtxt* ctxt) const { xmlFreeParserCtxt(ctxt); }
};

// libxml2 sets up its globals on first use, which is not safe from two threads at once: it is
// done once here, before any parse.
void InitLibxml() {
  static const bool done = [] {
    xmlInitParser();
    return true;
  }();
  (void)done;
}

}  // namespace

Result<XmlDoc> Parse(std::string_view xml) {
  if (xml.size() > static_cast<size_t>(INT_MAX)) {
    return Status::InvalidArgument("an XML document of " + std::to_string(xml.size()) +
                                   " bytes is too large to parse");
  }
  InitLibxml();
  std::unique_ptr<xmlParserCtxt, FreeParser> ctxt(xmlNewParserCtxt());
  if (ctxt == nullptr) return Status::ResourceExhausted("libxml2: no memory for a parser");
  XmlDoc doc(xmlCtxtReadMemory(ctxt.get(), xml.data(), static_cast<int>(xml.size()), nullptr,
                               nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
  if (doc == nullptr) {
    std::string why = "not well-formed XML";
    const xmlError* e = xmlCtxtGetLastError(ctxt.get());
    if (e != nullptr && e->message != nullptr) {
      std::string message = e->message;
      while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
        message.pop_back();
      }
      why += " (line " + std::to_string(e->line) + ": " + message + ")";
    }
    return Status::InvalidArgument(why);
  }
  if (doc->intSubset != nullptr || doc->extSubset != nullptr) {
    return Status::InvalidArgument("the XML document has a DTD (<!DOCTYPE>), which S3 never sends");
  }
  return doc;
}

bool Named(const xmlNode* node, const char* name) {
  return node->type == XML_ELEMENT_NODE &&
         xmlStrEqual(node->name, reinterpret_cast<const xmlChar*>(name));
}

// The first child element of `parent` named `name`; null if none.
const xmlNode* Child(const xmlNode* parent, const char* name) {
  for (const xmlNode* c = parent->children; c != nullptr; c = c->next) {
    if (Named(c, name)) return c;
  }
  return nullptr;
}

// The text of `element` (its text and CDATA children; the predefined entities, &amp; and the
// like, are already decoded by the parser).
std::string Text(const xmlNode* element) {
  std::string out;
  if (element == nullptr) return out;
  for (const xmlNode* c = element->children; c != nullptr; c = c->next) {
    if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content != nullptr) {
      out += reinterpret_cast<const char*>(c->content);
    }
  }
  return out;
}

// "CODE: MESSAGE" of an S3 <Error> document `root`, or of what is there of the two; empty when
// it has neither.
std::string ErrorOf(const xmlNode* root) {
  std::string code = Text(Child(root, "Code"));
  const std::string message = Text(Child(root, "Message"));
  // A message is shown in one line, and not at any length.
  std::string out = code;
  if (!message.empty()) out += (out.empty() ? "" : ": ") + message.substr(0, 300);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return out;
}

// S3's Code and Message in an error answer's body (what the transport kept of it), or empty when
// it holds no S3 error document.
std::string S3ErrorOf(std::string_view body) {
  if (body.empty()) return "";
  Result<XmlDoc> doc = Parse(body);
  if (!doc.ok()) return "";
  const xmlNode* root = xmlDocGetRootElement(doc->get());
  if (root == nullptr || !Named(root, "Error")) return "";
  return ErrorOf(root);
}

}  // namespace mmfs::origin::s3xml
