// The XML of S3's answers (a listing's page, a multipart upload's id and result, an error
// document), read with libxml2: no network, no DTD, no entity substituted, nothing printed.
// What a parsed document holds is read with the few helpers below, so that each S3 request
// reads its answer in a few lines and every one refuses the same things.
//
// Ownership: an XmlDoc owns its tree; the nodes it hands out live as long as it does.
// Thread-safety: reentrant (libxml2's globals are set up once, before the first parse).
#pragma once

#include <libxml/tree.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mmfs::origin::s3xml {

struct FreeDoc {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using XmlDoc = std::unique_ptr<xmlDoc, FreeDoc>;

// `xml` parsed. InvalidArgument for a document that is not well-formed (with libxml2's line and
// message), too large to parse, or has a DTD (<!DOCTYPE>: S3 never sends one, and it is the only
// way to declare entities).
Result<XmlDoc> Parse(std::string_view xml);

// Whether `node` is an element named `name`.
bool Named(const xmlNode* node, const char* name);
// The first child element of `parent` named `name`; null if none.
const xmlNode* Child(const xmlNode* parent, const char* name);
// The text of `element` (its text and CDATA children, entities decoded); empty for null.
std::string Text(const xmlNode* element);
// "CODE: MESSAGE" of an S3 <Error> element, on one line and at most ~300 bytes of message;
// empty when it has neither.
std::string ErrorOf(const xmlNode* error);
// The same for an answer's body; empty when the body is no S3 <Error> document.
std::string S3ErrorOf(std::string_view body);

}  // namespace mmfs::origin::s3xml
